// Challenge 04: learned projections.
// Write projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) and keep the `export`.
// X is T×C with C = numberOfHeads · headDimensions. Every W is C×C and stored [in, out]: a
// projection is X·W (row i of W belongs to input feature i). Return the T×C result.
// Plain JavaScript only: no imports. The helpers below are yours to use or change.

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  // 0. shape errors (RangeError):
  //    X without C columns:  `X is ${shapeText(X)} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`
  //    a W that is not C×C:  `W_K is ${shapeText(W_K)} but must be C×C = ${C}×${C}` (with that W's name)
  // 1. Q = X·W_Q, K = X·W_K, V = X·W_V          (each T×C)
  // 2. your challenge 02 answer on Q, K and V: slice each head's columns, attention per head
  //    (scale 1/√headDimensions), heads side by side
  // 3. multiply the concatenated heads by W_O
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
