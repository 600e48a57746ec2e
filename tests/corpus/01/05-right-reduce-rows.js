// expect: none
// A right answer that scales Q before the product (Q/√d_k)·Kᵀ, then for...of loops.
function shapeText(M) { return `${M.length}×${M[0].length}`; }
function check(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
}
export function dotProductAttention(Q, K, V) {
  check(Q, K, V);
  const r = Math.sqrt(Q[0].length);
  const scaledQ = Q.map((row) => row.map((x) => x / r));
  const result = [];
  for (const q of scaledQ) {
    const scores = K.map((k) => k.reduce((s, x, c) => s + x * q[c], 0));
    const top = scores.reduce((a, b) => (a > b ? a : b));
    const e = scores.map((s) => Math.exp(s - top));
    const z = e.reduce((a, b) => a + b);
    result.push(V[0].map((_, c) => e.reduce((s, ej, j) => s + ej * V[j][c], 0) / z));
  }
  return result;
}
