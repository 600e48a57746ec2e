// Challenge 09: your attention inside a trained model.
// Write multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal }) and keep the `export`.
// Q, K and V are T×C with C = numberOfHeads · headDimensions; W_O is C×C (the identity when absent);
// with causal: true, query i may only attend to keys 0 … i. Your challenge 02 and 03 answers are a start.
// Plain JavaScript only: no imports. The helpers below are yours to use or change.

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  // 0. if Q, K or V is not T×C (same T for all), throw
  //    new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions')
  // 1. for each head, take its headDimensions columns of Q, K and V
  // 2. scores = Q_h·K_hᵀ / √headDimensions; with causal, every score of a key j > query i becomes −Infinity
  // 3. softmax along each row (subtract the row's maximum first), times V_h
  // 4. put the head outputs side by side (T×C) and multiply by W_O (or the C×C identity)
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
