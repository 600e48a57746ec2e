// expect: scale
// Divides by d_k instead of √d_k.
function shapeText(M) { return `${M.length}×${M[0].length}`; }
function check(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
}
export function dotProductAttention(Q, K, V) {
  check(Q, K, V);
  const dk = Q[0].length;
  return Q.map((q) => {
    const s = K.map((k) => k.reduce((acc, x, c) => acc + x * q[c], 0) / dk);
    const m = Math.max(...s);
    const e = s.map((x) => Math.exp(x - m));
    const z = e.reduce((a, b) => a + b, 0);
    return V[0].map((_, c) => e.reduce((acc, ej, j) => acc + (ej / z) * V[j][c], 0));
  });
}
