// expect: weighted-sum
// Accumulates the output with weights[j][i] (column i of the weights) instead of weights[i][j].
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const T = Q.length;
  const out = Q.map(() => new Array(C).fill(0));
  for (let h = 0; h < numberOfHeads; h++) {
    const o = h * headDimensions;
    const weights = Q.map((q) => {
      const s = K.map((k) => { let d = 0; for (let c = 0; c < headDimensions; c++) d += q[o + c] * k[o + c]; return d / Math.sqrt(headDimensions); });
      const m = Math.max(...s);
      const e = s.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b, 0);
      return e.map((x) => x / z);
    });
    for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) for (let c = 0; c < headDimensions; c++) out[i][o + c] += weights[j][i] * V[j][o + c];
  }
  return W_O ? out.map((r) => W_O[0].map((_, j) => r.reduce((s, x, k) => s + x * W_O[k][j], 0))) : out;
}
