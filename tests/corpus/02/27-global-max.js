// expect: softmax
// Subtracts the maximum of the whole score matrix: rows far below it underflow to 0 / 0.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const heads = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const part = (M) => M.map((r) => r.slice(h * headDimensions, (h + 1) * headDimensions));
    const [q, k, v] = [part(Q), part(K), part(V)];
    const scores = q.map((qi) => k.map((kj) => qi.reduce((s, x, c) => s + x * kj[c], 0) / Math.sqrt(headDimensions)));
    const top = Math.max(...scores.flat());
    const weights = scores.map((r) => { const e = r.map((x) => Math.exp(x - top)); const z = e.reduce((a, b) => a + b, 0); return e.map((x) => x / z); });
    heads.push(weights.map((w) => v[0].map((_, c) => w.reduce((s, wj, j) => s + wj * v[j][c], 0))));
  }
  const concat = Q.map((_, t) => heads.flatMap((hd) => hd[t]));
  return W_O ? concat.map((r) => W_O[0].map((_, j) => r.reduce((s, x, kk) => s + x * W_O[kk][j], 0))) : concat;
}
