// expect: none
// A right answer with Float64Array buffers and index arithmetic, one head at a time.
export function multiHeadAttention(Q, K, V, { numberOfHeads: H, headDimensions: D, W_O }) {
  const T = Q.length, C = H * D;
  if (K.length !== T || V.length !== T || [Q, K, V].some((M) => M.some((r) => r.length !== C))) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const concat = new Float64Array(T * C);
  const w = new Float64Array(T);
  const inv = 1 / Math.sqrt(D);
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < T; i++) {
      let max = -Infinity;
      for (let j = 0; j < T; j++) {
        let s = 0;
        for (let c = h * D; c < h * D + D; c++) s += Q[i][c] * K[j][c];
        w[j] = s * inv;
        if (w[j] > max) max = w[j];
      }
      let z = 0;
      for (let j = 0; j < T; j++) { w[j] = Math.exp(w[j] - max); z += w[j]; }
      for (let j = 0; j < T; j++) for (let c = h * D; c < h * D + D; c++) concat[i * C + c] += (w[j] / z) * V[j][c];
    }
  }
  const out = [];
  for (let i = 0; i < T; i++) {
    const row = [];
    for (let j = 0; j < C; j++) {
      if (!W_O) { row.push(concat[i * C + j]); continue; }
      let s = 0;
      for (let k = 0; k < C; k++) s += concat[i * C + k] * W_O[k][j];
      row.push(s);
    }
    out.push(row);
  }
  return out;
}
