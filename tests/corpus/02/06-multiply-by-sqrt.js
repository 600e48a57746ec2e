// expect: scale
// Multiplies the scores by √headDimensions instead of dividing.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if (Q[0].length !== C || K[0].length !== C || V[0].length !== C || K.length !== Q.length || V.length !== Q.length) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const T = Q.length;
  const result = Array.from({ length: T }, () => Array(C).fill(0));
  for (let h = 0; h < numberOfHeads; h++) {
    for (let i = 0; i < T; i++) {
      const sc = [];
      for (let j = 0; j < T; j++) {
        let dot = 0;
        for (let c = h * headDimensions; c < (h + 1) * headDimensions; c++) dot += Q[i][c] * K[j][c];
        sc.push(dot * Math.sqrt(headDimensions));
      }
      const mx = Math.max(...sc);
      const ex = sc.map((s) => Math.exp(s - mx));
      const tot = ex.reduce((a, b) => a + b, 0);
      for (let j = 0; j < T; j++) for (let c = h * headDimensions; c < (h + 1) * headDimensions; c++) result[i][c] += (ex[j] / tot) * V[j][c];
    }
  }
  if (!W_O) return result;
  return result.map((row) => W_O[0].map((_, j) => row.reduce((s, x, k) => s + x * W_O[k][j], 0)));
}
