// expect: weighted-sum
// The weighted-sum loop runs its column index up to T (the number of tokens) instead of headDimensions.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const T = Q.length;
  const heads = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const o = h * headDimensions;
    const head = [];
    for (let i = 0; i < T; i++) {
      const s = K.map((k) => { let d = 0; for (let c = 0; c < headDimensions; c++) d += Q[i][o + c] * k[o + c]; return d / Math.sqrt(headDimensions); });
      const m = Math.max(...s);
      const e = s.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b, 0);
      const row = [];
      for (let c = 0; c < T; c++) {
        let acc = 0;
        for (let j = 0; j < T; j++) acc += (e[j] / z) * V[j][o + c];
        row.push(acc);
      }
      head.push(row);
    }
    heads.push(head);
  }
  const concat = Q.map((_, t) => heads.flatMap((hd) => hd[t]));
  return W_O ? concat.map((r) => W_O[0].map((_, j) => r.reduce((s, x, kk) => s + x * W_O[kk][j], 0))) : concat;
}
