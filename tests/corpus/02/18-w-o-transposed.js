// expect: w-o
// Applies W_O the PyTorch way, as concat·W_Oᵀ (indexing W_O[j][k]).
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const T = Q.length;
  const concat = Q.map(() => []);
  for (let h = 0; h < numberOfHeads; h++) {
    const o = h * headDimensions;
    for (let i = 0; i < T; i++) {
      const sc = K.map((k) => k.slice(o, o + headDimensions).reduce((s, x, c) => s + x * Q[i][o + c], 0) / Math.sqrt(headDimensions));
      const m = Math.max(...sc);
      const e = sc.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b, 0);
      for (let c = 0; c < headDimensions; c++) concat[i].push(e.reduce((s, ej, j) => s + (ej / z) * V[j][o + c], 0));
    }
  }
  const W = W_O ?? Array.from({ length: C }, (_, i) => Array.from({ length: C }, (_, j) => (i === j ? 1 : 0)));
  return concat.map((row) => W.map((wRow) => wRow.reduce((s, w, k) => s + w * row[k], 0)));
}
