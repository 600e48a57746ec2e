// expect: scores
// Score q_i · k_i for the whole row i.
// Reference answer for challenge 02: multi-head self-attention ("heads up").
// Q, K and V are T×C with C = numberOfHeads · headDimensions; the result is T×C.

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const contexts = [];
  for (let head = 0; head < numberOfHeads; head++) {
    const start = head * headDimensions;
    const end = start + headDimensions;
    const Q_h = sliceColumns(Q, start, end); // (T, headDimensions)
    const K_h = sliceColumns(K, start, end); // (T, headDimensions)
    const V_h = sliceColumns(V, start, end); // (T, headDimensions)
    contexts.push(attention(Q_h, K_h, V_h, headDimensions));
  }
  const concat = concatColumns(contexts); // (T, C): the heads side by side
  return matMul(concat, W_O ?? identity(C));
}

// Columns start..end-1 of every row.
function sliceColumns(M, start, end) {
  return M.map((row) => row.slice(start, end));
}

// Row r of the result is row r of every part, one after the other.
function concatColumns(parts) {
  return parts[0].map((_, r) => parts.flatMap((part) => part[r]));
}

// Scaled dot-product attention of one head; the scale is 1/√width.
function attention(Q, K, V, width) {
  const scale = 1 / Math.sqrt(width);
  const scores = Q.map((q, i) => K.map(() => q.reduce((sum, x, c) => sum + x * K[i][c], 0)));
  const scaled = scores.map((row) => row.map((x) => x * scale)); // (T, T)
  const weights = scaled.map(softmax);                           // (T, T)
  return matMul(weights, V);                                     // (T, headDimensions)
}

function softmax(row) {
  const max = Math.max(...row);
  const exps = row.map((x) => Math.exp(x - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
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
