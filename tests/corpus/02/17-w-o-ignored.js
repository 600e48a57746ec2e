// expect: w-o
// Returns the concatenated heads and never uses W_O.
function transpose(M) { return M[0].map((_, j) => M.map((row) => row[j])); }
function matMul(A, B) { return A.map((row) => B[0].map((_, j) => row.reduce((sum, a, k) => sum + a * B[k][j], 0))); }
function softmax(row) { const m = Math.max(...row); const e = row.map((x) => Math.exp(x - m)); const s = e.reduce((a, b) => a + b, 0); return e.map((x) => x / s); }
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const heads = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const part = (M) => M.map((r) => r.slice(h * headDimensions, (h + 1) * headDimensions));
    const w = matMul(part(Q), transpose(part(K))).map((r) => softmax(r.map((x) => x / Math.sqrt(headDimensions))));
    heads.push(matMul(w, part(V)));
  }
  return Q.map((_, t) => heads.flatMap((hd) => hd[t]));
}
