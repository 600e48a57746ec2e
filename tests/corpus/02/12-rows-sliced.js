// expect: slice
// Slices each head's rows (tokens) instead of its columns: Q.slice(start, end).
function transpose(M) { return M[0].map((_, j) => M.map((row) => row[j])); }
function matMul(A, B) { return A.map((row) => B[0].map((_, j) => row.reduce((sum, a, k) => sum + a * B[k][j], 0))); }
function softmax(row) { const m = Math.max(...row); const e = row.map((x) => Math.exp(x - m)); const s = e.reduce((a, b) => a + b, 0); return e.map((x) => x / s); }
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const heads = [];
  for (let i = 0; i < numberOfHeads; i++) {
    const start = i * headDimensions, end = start + headDimensions;
    const q = Q.slice(start, end), k = K.slice(start, end), v = V.slice(start, end);
    const w = matMul(q, transpose(k)).map((r) => softmax(r.map((x) => x / Math.sqrt(headDimensions))));
    heads.push(matMul(w, v));
  }
  const concat = heads[0].map((_, r) => heads.flatMap((hd) => hd[r]));
  return W_O ? matMul(concat, W_O) : concat;
}
