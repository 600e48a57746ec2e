// expect: check
// Right math, no shape check: only the error cases fail.
// Reference answer for challenge 03: dot-product attention with an optional causal mask.
// With { causal: true }, query i may only look at keys 0..i.

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  const scores = matMul(Q, transpose(K));                        // (T, T)
  const scale = 1 / Math.sqrt(Q[0].length);                      // 1/√d_k
  const scaled = scores.map((row) => row.map((x) => x * scale)); // (T, T)
  const masked = scaled.map((row, i) => row.map((x, j) => (causal && j > i ? -Infinity : x)));
  const weights = masked.map(softmax);                           // (T, T), zero above the diagonal
  return matMul(weights, V);                                     // (T, d_v)
}

// exp(-Infinity - max) is exactly 0, so masked keys get no weight. The diagonal is never
// masked, so every row keeps a finite maximum.
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
