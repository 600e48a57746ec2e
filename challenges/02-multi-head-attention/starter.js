// Challenge 02: multi-head self-attention ("heads up").
// Write multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) and keep the `export`.
// Q, K and V are T×C with C = numberOfHeads · headDimensions. W_O is C×C, the identity when absent.
// Plain JavaScript only: no imports. The helpers below are yours to use or change.

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  // 0. if Q, K or V is not T×C (same T for all), throw
  //    new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions')
  // 1. for each head, take its headDimensions columns of Q, K and V
  // 2. run scaled dot-product attention on that head (scale: 1/√headDimensions)
  // 3. put the head outputs side by side (T×C)
  // 4. multiply by W_O (or the C×C identity)
  throw new Error('not written yet');
}

function identity(n) {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
}

function transpose(M) {
  return M[0].map((_, j) => M.map((row) => row[j]));
}

function matMul(A, B) {
  return A.map((row) => B[0].map((_, j) => row.reduce((sum, a, k) => sum + a * B[k][j], 0)));
}
