// expect: check
// Right math, but the shape error has its own message, so only the error cases fail: the headline names that check (the message), never a step of the math.
const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
const softmax = (xs) => {
  const m = Math.max(...xs);
  const es = xs.map((x) => Math.exp(x - m));
  const z = es.reduce((a, b) => a + b);
  return es.map((e) => e / z);
};

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M.some((r) => r.length !== C))) {
    throw new RangeError('bad shapes');
  }
  const split = (M) => Array.from({ length: numberOfHeads }, (_, h) => M.map((r) => r.slice(h * headDimensions, (h + 1) * headDimensions)));
  const [qs, ks, vs] = [split(Q), split(K), split(V)];
  const heads = qs.map((q, h) => q.map((qi) => {
    const w = softmax(ks[h].map((kj) => dot(qi, kj) / Math.sqrt(headDimensions)));
    return vs[h][0].map((_, c) => w.reduce((s, wj, j) => s + wj * vs[h][j][c], 0));
  }));
  const concat = Q.map((_, t) => heads.flatMap((head) => head[t]));
  return W_O ? concat.map((row) => W_O[0].map((_, j) => row.reduce((s, x, k) => s + x * W_O[k][j], 0))) : concat;
}
