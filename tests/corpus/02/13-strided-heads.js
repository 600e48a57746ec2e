// expect: slice
// Reshapes each row as [headDimensions][numberOfHeads] (like view(T, d, h) in PyTorch): head h gets columns h, h+numberOfHeads, …
// and writes each head back the same strided way, so Q = 0 alone does not show it.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const T = Q.length;
  const col = (h, c) => c * numberOfHeads + h;
  const out = Q.map(() => new Array(C).fill(0));
  for (let h = 0; h < numberOfHeads; h++) {
    for (let i = 0; i < T; i++) {
      const s = K.map((kr) => { let d = 0; for (let c = 0; c < headDimensions; c++) d += Q[i][col(h, c)] * kr[col(h, c)]; return d / Math.sqrt(headDimensions); });
      const m = Math.max(...s);
      const e = s.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b, 0);
      for (let c = 0; c < headDimensions; c++) out[i][col(h, c)] = e.reduce((acc, ej, j) => acc + (ej / z) * V[j][col(h, c)], 0);
    }
  }
  return W_O ? out.map((r) => W_O[0].map((_, j) => r.reduce((s, x, k) => s + x * W_O[k][j], 0))) : out;
}
