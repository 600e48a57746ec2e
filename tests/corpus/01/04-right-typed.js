// expect: none
// A right answer on Float64Array rows, weights computed in place.
function shapeText(M) { return `${M.length}×${M[0].length}`; }
function check(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
}
export function dotProductAttention(Q, K, V) {
  check(Q, K, V);
  const T = Q.length, d = Q[0].length, dv = V[0].length, inv = 1 / Math.sqrt(d);
  const w = new Float64Array(T);
  return Q.map((q) => {
    let m = -Infinity;
    for (let j = 0; j < T; j++) { let s = 0; for (let c = 0; c < d; c++) s += q[c] * K[j][c]; w[j] = s * inv; m = Math.max(m, w[j]); }
    let z = 0;
    for (let j = 0; j < T; j++) { w[j] = Math.exp(w[j] - m); z += w[j]; }
    const out = new Float64Array(dv);
    for (let j = 0; j < T; j++) for (let c = 0; c < dv; c++) out[c] += (w[j] / z) * V[j][c];
    return Array.from(out);
  });
}
