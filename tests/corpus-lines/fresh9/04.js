// A right answer of arrow-function one-liners: every product through one mm helper whose right operand's transpose is memoised in a WeakMap, a head's scores by mmT, the softmax as a nested one-liner, the heads by Array.from with an index callback and joined by a reduce of concat.
const tCache = new WeakMap();
const tr = (M) => tCache.get(M) ?? (tCache.set(M, M[0].map((_, c) => M.map((r) => r[c]))), tCache.get(M));
const dotp = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
const mm = (A, B) => A.map((a) => tr(B).map((col) => dotp(a, col)));
const mmT = (A, B) => A.map((a) => B.map((b) => dotp(a, b)));
const cols = (M, from, n) => M.map((r) => r.slice(from, from + n));
const scaleAll = (M, f) => M.map((r) => r.map((x) => x * f));
const softmaxRow = (r, m = Math.max(...r)) => ((e) => ((z) => e.map((x) => x / z))(e.reduce((a, b) => a + b, 0)))(r.map((x) => Math.exp(x - m)));
const fmt = (M) => `${M.length}×${M[0].length}`;

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if (X[0].length !== C) throw new RangeError(`X is ${fmt(X)} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  Object.entries({ W_Q, W_K, W_V, W_O }).forEach(([label, W]) => {
    if (W.length !== C || W[0].length !== C) throw new RangeError(`${label} is ${fmt(W)} but must be C×C = ${C}×${C}`);
  });
  const queries = mm(X, W_Q);
  const keys = mm(X, W_K);
  const values = mm(X, W_V);
  const heads = Array.from({ length: numberOfHeads }, (_, h) => {
    const at = h * headDimensions;
    const logits = mmT(cols(queries, at, headDimensions), cols(keys, at, headDimensions));
    const weights = scaleAll(logits, 1 / Math.sqrt(headDimensions)).map((r) => softmaxRow(r));
    return mm(weights, cols(values, at, headDimensions));
  });
  const joined = X.map((_, t) => heads.reduce((row, head) => row.concat(head[t]), []));
  return mm(joined, W_O);
}
