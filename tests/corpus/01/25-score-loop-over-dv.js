// expect: scores
// The dot product of the scores runs over V's width (d_v) instead of d_k.
// Reference answer for challenge 01: scaled dot-product attention in plain JavaScript.
// Shapes: Q and K are T×d_k, V is T×d_v; the result is T×d_v.

export function dotProductAttention(Q, K, V) {
  checkShapes(Q, K, V);
  const scores = Q.map((q) => K.map((k) => V[0].reduce((sum, _, c) => sum + q[c] * k[c], 0)));                        // (T, T): scores[i][j] = q_i · k_j
  const scale = 1 / Math.sqrt(Q[0].length);                      // 1/√d_k
  const scaled = scores.map((row) => row.map((x) => x * scale)); // (T, T)
  const weights = scaled.map(softmax);                           // (T, T), every row sums to 1
  return matMul(weights, V);                                     // (T, d_v)
}

// Softmax of one row. Subtracting the row's maximum first keeps exp() from overflowing.
function softmax(row) {
  const max = Math.max(...row);
  const exps = row.map((x) => Math.exp(x - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}

function checkShapes(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
  }
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
