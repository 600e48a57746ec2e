// expect: concat
// Writes the head outputs column by column, alternating heads: out[t][c * numberOfHeads + h].
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const T = Q.length;
  const out = Array.from({ length: T }, () => new Array(C).fill(0));
  for (let h = 0; h < numberOfHeads; h++) {
    const o = h * headDimensions;
    for (let i = 0; i < T; i++) {
      const sc = K.map((k) => { let s = 0; for (let c = 0; c < headDimensions; c++) s += Q[i][o + c] * k[o + c]; return s / Math.sqrt(headDimensions); });
      const m = Math.max(...sc);
      const e = sc.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b, 0);
      for (let c = 0; c < headDimensions; c++) {
        let v = 0;
        for (let j = 0; j < T; j++) v += (e[j] / z) * V[j][o + c];
        out[i][c * numberOfHeads + h] = v;
      }
    }
  }
  if (!W_O) return out;
  return out.map((r) => W_O[0].map((_, j) => r.reduce((s, x, k) => s + x * W_O[k][j], 0)));
}
