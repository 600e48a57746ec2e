// expect: weighted-sum
// Sizes each output row with d_k (the width of Q) instead of d_v (the width of V).
function shapeText(M) { return `${M.length}×${M[0].length}`; }
function check(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
}
export function dotProductAttention(Q, K, V) {
  check(Q, K, V);
  const T = Q.length, d = Q[0].length;
  const out = [];
  for (let i = 0; i < T; i++) {
    const s = K.map((k) => k.reduce((acc, x, c) => acc + x * Q[i][c], 0) / Math.sqrt(d));
    const m = Math.max(...s);
    const e = s.map((x) => Math.exp(x - m));
    const z = e.reduce((a, b) => a + b, 0);
    const row = [];
    for (let c = 0; c < d; c++) row.push(e.reduce((acc, ej, j) => acc + (ej / z) * V[j][c], 0));
    out.push(row);
  }
  return out;
}
