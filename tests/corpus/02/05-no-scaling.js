// expect: scale
// Forgets the scale: softmax of the raw dot products, with small helpers.
function transpose(M) { return M[0].map((_, j) => M.map((r) => r[j])); }
function matMul(A, B) { return A.map((r) => B[0].map((_, j) => r.reduce((s, a, k) => s + a * B[k][j], 0))); }
function softmax(row) {
  const m = Math.max(...row);
  const e = row.map((x) => Math.exp(x - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const heads = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const take = (M) => M.map((r) => r.slice(h * headDimensions, (h + 1) * headDimensions));
    const weights = matMul(take(Q), transpose(take(K))).map(softmax);
    heads.push(matMul(weights, take(V)));
  }
  const concat = Q.map((_, t) => [].concat(...heads.map((hd) => hd[t])));
  return W_O ? matMul(concat, W_O) : concat;
}
