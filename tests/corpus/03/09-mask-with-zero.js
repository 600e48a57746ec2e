// expect: mask
// Sets masked scores to 0, as with a 0/1 mask multiplied into the scores.
function shapeText(M) { return `${M.length}×${M[0].length}`; }
function check(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
}
const transpose = (M) => M[0].map((_, j) => M.map((r) => r[j]));
const matMul = (A, B) => A.map((r) => B[0].map((_, j) => r.reduce((s, a, k) => s + a * B[k][j], 0)));
function softmax(row) {
  const m = Math.max(...row);
  const e = row.map((x) => Math.exp(x - m));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}
export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  check(Q, K, V);
  const T = Q.length;
  const keep = Array.from({ length: T }, (_, i) => Array.from({ length: T }, (_, j) => (causal && j > i ? 0 : 1)));
  const scaled = matMul(Q, transpose(K)).map((r, i) => r.map((x, j) => (x / Math.sqrt(Q[0].length)) * keep[i][j]));
  return matMul(scaled.map(softmax), V);
}
