// A right answer over a small helper library of zip, zipWith, sum, dot, transpose and scaleRow: every product is a zip, the weighted sum a dot of the weights with each column of V.
const zip = (a, b) => a.map((x, i) => [x, b[i]]);
const zipWith = (f) => (a, b) => zip(a, b).map(([x, y]) => f(x, y));
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const dot = (a, b) => sum(zipWith((x, y) => x * y)(a, b));
const transpose = (M) => M[0].map((_, c) => M.map((row) => row[c]));
const scaleRow = (row, f) => row.map((x) => x * f);

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  const d = Q[0].length;
  const out = [];
  for (const [i, q] of Q.entries()) {
    const scores = K.map((k) => dot(q, k));
    const scaled = scaleRow(scores, 1 / Math.sqrt(d));
    const masked = scaled.map((s, j) => (causal && j > i ? -Infinity : s));
    const top = Math.max(...masked);
    const exps = masked.map((s) => Math.exp(s - top));
    const weights = scaleRow(exps, 1 / sum(exps));
    out.push(transpose(V).map((col) => dot(weights, col)));
  }
  return out;
}
