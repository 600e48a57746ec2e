// expect: scores
// Builds the score matrix as K·Qᵀ (scores[j][i]), so each row belongs to a key.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const T = Q.length;
  const concat = Q.map(() => new Array(C).fill(0));
  for (let h = 0; h < numberOfHeads; h++) {
    const o = h * headDimensions;
    const scores = K.map((k) => Q.map((q) => { let s = 0; for (let c = 0; c < headDimensions; c++) s += k[o + c] * q[o + c]; return s / Math.sqrt(headDimensions); }));
    for (let i = 0; i < T; i++) {
      const m = Math.max(...scores[i]);
      const e = scores[i].map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b, 0);
      for (let j = 0; j < T; j++) for (let c = 0; c < headDimensions; c++) concat[i][o + c] += (e[j] / z) * V[j][o + c];
    }
  }
  return W_O ? concat.map((r) => W_O[0].map((_, j) => r.reduce((s, x, k) => s + x * W_O[k][j], 0))) : concat;
}
