// Challenge 03: no peeking. Extend your dotProductAttention with a causal option.
// dotProductAttention(Q, K, V, { causal }): with causal true, query i may only attend to keys 0..i.
// Without the option (or with causal false) it is the plain attention of challenge 01.
// Plain JavaScript only: no imports. Keep the `export`.

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  // Start from your challenge 01 answer. Between scaling and softmax, make every
  // score with key j > query i impossible to pick, so its weight comes out as exactly 0.
  // Shape errors are the same as in challenge 01.
  throw new Error('not written yet');
}

function shapeText(M) {
  return `${M.length}×${M[0].length}`;
}

function transpose(M) {
  return M[0].map((_, j) => M.map((row) => row[j]));
}

function matMul(A, B) {
  return A.map((row) => B[0].map((_, j) => row.reduce((sum, a, k) => sum + a * B[k][j], 0)));
}
