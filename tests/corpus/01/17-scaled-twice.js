// expect: scale
// Scales inside the dot product and again before the softmax: 1/d_k in all.
function shapeText(M) { return `${M.length}×${M[0].length}`; }
function check(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
}
export function dotProductAttention(Q, K, V) {
  check(Q, K, V);
  const r = Math.sqrt(Q[0].length);
  const scores = Q.map((q) => K.map((k) => k.reduce((s, x, c) => s + (x * q[c]) / r, 0)));
  const scaled = scores.map((row) => row.map((x) => x / r));
  const w = scaled.map((row) => { const m = Math.max(...row); const e = row.map((x) => Math.exp(x - m)); const z = e.reduce((a, b) => a + b, 0); return e.map((x) => x / z); });
  return w.map((wi) => V[0].map((_, c) => wi.reduce((s, wj, j) => s + wj * V[j][c], 0)));
}
