// expect: softmax
// exp() of the raw scores: Infinity / Infinity on large scores.
function shapeText(M) { return `${M.length}×${M[0].length}`; }
function check(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
}
export function dotProductAttention(Q, K, V) {
  check(Q, K, V);
  const d = Q[0].length;
  const weights = Q.map((q) => {
    const e = K.map((k) => Math.exp(k.reduce((s, x, c) => s + x * q[c], 0) / Math.sqrt(d)));
    const z = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / z);
  });
  return weights.map((w) => V[0].map((_, c) => w.reduce((s, wj, j) => s + wj * V[j][c], 0)));
}
