// Self-attention with learned projections as one pipe(...) of small pure stages, each taking the
// state object so far and returning it with one more field.

const pipe = (...stages) => (input) => stages.reduce((state, stage) => stage(state), input);

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if (X[0].length !== C) {
    throw new RangeError(`X is ${X.length}×${X[0].length} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  }
  for (const [name, W] of Object.entries({ W_Q, W_K, W_V, W_O })) {
    if (W.length !== C || W[0].length !== C) {
      throw new RangeError(`${name} is ${W.length}×${W[0].length} but must be C×C = ${C}×${C}`);
    }
  }
  const d = headDimensions;
  const run = pipe(
    (s) => ({ ...s, Q: matMul(s.X, W_Q) }),
    (s) => ({ ...s, K: matMul(s.X, W_K) }),
    (s) => ({ ...s, V: matMul(s.X, W_V) }),
    (s) => ({ ...s, offsets: Array.from({ length: numberOfHeads }, (_, h) => h * d) }),
    (s) => ({ ...s, scores: s.offsets.map((o) => matMul(cut(s.Q, o, d), transpose(cut(s.K, o, d)))) }),
    (s) => ({ ...s, scaled: s.scores.map((S) => S.map((row) => row.map((x) => x / Math.sqrt(d)))) }),
    (s) => ({ ...s, weights: s.scaled.map((S) => S.map(softmax)) }),
    (s) => ({ ...s, outs: s.weights.map((W, h) => matMul(W, cut(s.V, s.offsets[h], d))) }),
    (s) => ({ ...s, joined: s.X.map((_, t) => s.outs.flatMap((O) => O[t])) }),
    (s) => matMul(s.joined, W_O),
  );
  return run({ X });
}

const cut = (M, from, width) => M.map((row) => row.slice(from, from + width));

const transpose = (M) => M[0].map((_, j) => M.map((row) => row[j]));

const matMul = (A, B) => A.map((row) => B[0].map((_, j) => row.reduce((s, a, k) => s + a * B[k][j], 0)));

function softmax(row) {
  const top = Math.max(...row);
  const exps = row.map((x) => Math.exp(x - top));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
}
