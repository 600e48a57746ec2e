// Challenge 01: scaled dot-product attention.
// Write dotProductAttention(Q, K, V) and keep the `export`.
// Q and K are T×d_k, V is T×d_v (arrays of rows); return the T×d_v result.
// Plain JavaScript only: no imports. The helpers below are yours to use or change.

export function dotProductAttention(Q, K, V) {
  // 1. scores = Q · Kᵀ                (T×T)
  // 2. scale every score by 1/√d_k    (d_k = the number of columns of Q)
  // 3. softmax each row of the scores
  // 4. return weights · V             (T×d_v)
  // Shape errors: throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`), and the same for V.
  throw new Error('not written yet');
}

// "2×3" for a matrix with 2 rows and 3 columns, the way the tests write shapes.
function shapeText(M) {
  return `${M.length}×${M[0].length}`;
}

function transpose(M) {
  return M[0].map((_, j) => M.map((row) => row[j]));
}

function matMul(A, B) {
  return A.map((row) => B[0].map((_, j) => row.reduce((sum, a, k) => sum + a * B[k][j], 0)));
}
