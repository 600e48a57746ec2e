// expect: scores
// The dot-product loop runs to T (the number of tokens) instead of d_k.
function shapeText(M) { return `${M.length}×${M[0].length}`; }
function check(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
}
export function dotProductAttention(Q, K, V) {
  check(Q, K, V);
  const T = Q.length, d = Q[0].length;
  return Q.map((q) => {
    const s = [];
    for (let j = 0; j < T; j++) { let dot = 0; for (let c = 0; c < T; c++) dot += q[c] * K[j][c]; s.push(dot / Math.sqrt(d)); }
    const m = Math.max(...s);
    const e = s.map((x) => Math.exp(x - m));
    const z = e.reduce((a, b) => a + b, 0);
    return V[0].map((_, c) => e.reduce((acc, ej, j) => acc + (ej / z) * V[j][c], 0));
  });
}
