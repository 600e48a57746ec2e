// Challenge 09 as a tiny interpreter: the layer and each head are programs, lists of op names, run in
// order by a reducer over one state object; OPS maps every name to a function from state to state.

const cut = (M, from, width) => M.map((row) => row.slice(from, from + width));

function softmaxRow(row) {
  const top = Math.max(...row);
  const exps = row.map((y) => Math.exp(y - top));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
}

const OPS = {
  slice: (s) => ({
    ...s,
    q: cut(s.Q, s.from, s.d),
    k: cut(s.K, s.from, s.d),
    v: cut(s.V, s.from, s.d),
  }),
  scores: (s) => ({ ...s, x: s.q.map((qi) => s.k.map((kj) => kj.reduce((t, y, c) => t + y * qi[c], 0))) }),
  scale: (s) => ({ ...s, x: s.x.map((row) => row.map((y) => y / Math.sqrt(s.d))) }),
  mask: (s) => (s.causal ? { ...s, x: s.x.map((row, i) => row.map((y, j) => (j > i ? -Infinity : y))) } : s),
  softmax: (s) => ({ ...s, x: s.x.map(softmaxRow) }),
  blend: (s) => ({ ...s, out: s.x.map((w) => s.v[0].map((_, c) => w.reduce((t, wj, j) => t + wj * s.v[j][c], 0))) }),
  heads: (s) => ({ ...s, outs: Array.from({ length: s.h }, (_, head) => run(HEAD, { ...s, from: head * s.d }).out) }),
  concat: (s) => ({ ...s, joined: s.Q.map((_, t) => s.outs.flatMap((o) => o[t])) }),
  project: (s) => ({
    ...s,
    result: s.W_O ? s.joined.map((row) => s.W_O[0].map((_, o) => row.reduce((t, y, i) => t + y * s.W_O[i][o], 0))) : s.joined,
  }),
};

const HEAD = ['slice', 'scores', 'scale', 'mask', 'softmax', 'blend'];
const LAYER = ['heads', 'concat', 'project'];

const run = (program, state) => program.reduce((s, op) => OPS[op](s), state);

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const state = { Q, K, V, W_O, causal, h: numberOfHeads, d: headDimensions };
  return run(LAYER, state).result;
}
