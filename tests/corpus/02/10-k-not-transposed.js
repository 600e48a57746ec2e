// expect: scores
// Computes Q_h·K_h without the transpose (works only while the head is square).
function matMul(A, B) { return A.map((row) => B[0].map((_, j) => row.reduce((sum, a, k) => sum + a * B[k][j], 0))); }
function softmax(row) {
  const max = Math.max(...row);
  const exps = row.map((x) => Math.exp(x - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const contexts = [];
  for (let head = 0; head < numberOfHeads; head++) {
    const s = head * headDimensions;
    const sl = (M) => M.map((r) => r.slice(s, s + headDimensions));
    const scores = matMul(sl(Q), sl(K)).map((r) => r.map((x) => x / Math.sqrt(headDimensions)));
    contexts.push(matMul(scores.map(softmax), sl(V)));
  }
  const concat = contexts[0].map((_, r) => contexts.flatMap((c) => c[r]));
  return W_O ? matMul(concat, W_O) : concat;
}
