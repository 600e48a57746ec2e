// expect: none
// A right answer with nested for-loops in one function.
function shapeText(M) { return `${M.length}×${M[0].length}`; }
function check(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
}
export function dotProductAttention(Q, K, V) {
  check(Q, K, V);
  const T = Q.length, dk = Q[0].length, dv = V[0].length;
  const out = [];
  for (let i = 0; i < T; i++) {
    const s = [];
    let max = -Infinity;
    for (let j = 0; j < T; j++) {
      let dot = 0;
      for (let c = 0; c < dk; c++) dot += Q[i][c] * K[j][c];
      s.push(dot / Math.sqrt(dk));
      if (s[j] > max) max = s[j];
    }
    let z = 0;
    for (let j = 0; j < T; j++) { s[j] = Math.exp(s[j] - max); z += s[j]; }
    const row = new Array(dv).fill(0);
    for (let j = 0; j < T; j++) for (let c = 0; c < dv; c++) row[c] += (s[j] / z) * V[j][c];
    out.push(row);
  }
  return out;
}
