// expect: softmax
// Divides every exponential by the sum over the whole score matrix instead of its row.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const T = Q.length;
  const concat = Array.from({ length: T }, () => []);
  for (let h = 0; h < numberOfHeads; h++) {
    const off = h * headDimensions;
    const scores = [];
    for (let i = 0; i < T; i++) {
      scores.push([]);
      for (let j = 0; j < T; j++) {
        let s = 0;
        for (let c = 0; c < headDimensions; c++) s += Q[i][off + c] * K[j][off + c];
        scores[i].push(s / Math.sqrt(headDimensions));
      }
    }
    const max = Math.max(...scores.flat());
    const exps = scores.map((r) => r.map((x) => Math.exp(x - max)));
    const total = exps.flat().reduce((a, b) => a + b, 0);
    const weights = exps.map((r) => r.map((x) => x / total));
    for (let i = 0; i < T; i++) for (let c = 0; c < headDimensions; c++) concat[i].push(weights[i].reduce((s, w, j) => s + w * V[j][off + c], 0));
  }
  if (!W_O) return concat;
  return concat.map((row) => W_O[0].map((_, j) => row.reduce((s, x, k) => s + x * W_O[k][j], 0)));
}
