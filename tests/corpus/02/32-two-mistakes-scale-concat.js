// expect: scale
// Two mistakes: scores divided by headDimensions AND heads interleaved. The located step is the first, the scale.
export function multiHeadAttention(Q, K, V, { numberOfHeads: h, headDimensions: d, W_O }) {
  const C = h * d;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const T = Q.length;
  const out = Q.map(() => new Array(C).fill(0));
  for (let i = 0; i < h; i++) {
    for (let q = 0; q < T; q++) {
      const s = K.map((k) => { let x = 0; for (let c = 0; c < d; c++) x += Q[q][i * d + c] * k[i * d + c]; return x / d; });
      const m = Math.max(...s);
      const e = s.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b, 0);
      for (let c = 0; c < d; c++) out[q][c * h + i] = e.reduce((acc, ej, j) => acc + (ej / z) * V[j][i * d + c], 0);
    }
  }
  return W_O ? out.map((r) => W_O[0].map((_, j) => r.reduce((acc, x, k) => acc + x * W_O[k][j], 0))) : out;
}
