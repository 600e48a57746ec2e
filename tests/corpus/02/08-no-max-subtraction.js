// expect: softmax
// The textbook softmax without subtracting the maximum: overflows on large scores.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const heads = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const lo = h * headDimensions, hi = lo + headDimensions;
    const head = Q.map((qRow) => {
      const exps = K.map((kRow) => Math.exp(qRow.slice(lo, hi).reduce((s, x, c) => s + x * kRow[lo + c], 0) / Math.sqrt(headDimensions)));
      const total = exps.reduce((a, b) => a + b, 0);
      return V[0].slice(lo, hi).map((_, c) => exps.reduce((s, e, j) => s + (e / total) * V[j][lo + c], 0));
    });
    heads.push(head);
  }
  const concat = Q.map((_, t) => heads.flatMap((hd) => hd[t]));
  if (!W_O) return concat;
  return concat.map((row) => W_O[0].map((_, j) => row.reduce((s, x, k) => s + x * W_O[k][j], 0)));
}
