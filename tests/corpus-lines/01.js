// A right answer in flat buffers: the matrices as Float64Arrays, row after row; scores filled column by column.
export function dotProductAttention(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  const T = Q.length;
  const d = Q[0].length;
  const dv = V[0].length;
  const q = Float64Array.from(Q.flat());
  const k = Float64Array.from(K.flat());
  const scores = new Float64Array(T * T);
  for (let j = 0; j < T; j++) {
    for (let i = 0; i < T; i++) {
      let dot = 0;
      for (let c = 0; c < d; c++) dot += q[i * d + c] * k[j * d + c];
      scores[i * T + j] = dot;
    }
  }
  const scale = 1 / Math.sqrt(d);
  for (let n = 0; n < T * T; n++) scores[n] *= scale;
  const weights = new Float64Array(T * T);
  for (let i = 0; i < T; i++) {
    let max = -Infinity;
    for (let j = 0; j < T; j++) max = Math.max(max, scores[i * T + j]);
    let sum = 0;
    for (let j = 0; j < T; j++) {
      weights[i * T + j] = Math.exp(scores[i * T + j] - max);
      sum += weights[i * T + j];
    }
    for (let j = 0; j < T; j++) weights[i * T + j] /= sum;
  }
  const out = [];
  for (let i = 0; i < T; i++) {
    const row = new Array(dv).fill(0);
    for (let c = 0; c < dv; c++) {
      for (let j = 0; j < T; j++) row[c] += weights[i * T + j] * V[j][c];
    }
    out.push(row);
  }
  return out;
}
