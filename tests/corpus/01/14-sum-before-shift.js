// expect: softmax
// Subtracts the maximum in the numerator but sums the unshifted exponentials.
function shapeText(M) { return `${M.length}×${M[0].length}`; }
function check(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
}
export function dotProductAttention(Q, K, V) {
  check(Q, K, V);
  const d = Q[0].length;
  return Q.map((q) => {
    const s = K.map((k) => k.reduce((acc, x, c) => acc + x * q[c], 0) / Math.sqrt(d));
    const m = Math.max(...s);
    const total = s.reduce((acc, x) => acc + Math.exp(x), 0);
    const w = s.map((x) => Math.exp(x - m) / total);
    return V[0].map((_, c) => w.reduce((acc, wj, j) => acc + wj * V[j][c], 0));
  });
}
