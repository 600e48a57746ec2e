// expect: w-o
// W_O multiplied on the left: W_O·concat.
// Reference answer for challenge 04: self-attention with learned projections.
// X is T×C with C = numberOfHeads · headDimensions; W_Q, W_K, W_V and W_O are C×C, oriented
// [in, out] (row i of W belongs to input feature i), so a projection is X·W. The result is T×C.

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  checkShapes(X, { W_Q, W_K, W_V, W_O }, numberOfHeads, headDimensions, C);
  // 1. Project: Q = X·W_Q, K = X·W_K, V = X·W_V, each (T, C)
  const [Q, K, V] = [W_Q, W_K, W_V].map((W) => project(X, W));
  // 2. Per head: its columns of Q, K and V, then scaled dot-product attention
  const contexts = [];
  for (let head = 0; head < numberOfHeads; head++) {
    const start = head * headDimensions;
    const end = start + headDimensions;
    const Q_h = sliceColumns(Q, start, end); // (T, headDimensions)
    const K_h = sliceColumns(K, start, end); // (T, headDimensions)
    const V_h = sliceColumns(V, start, end); // (T, headDimensions)
    contexts.push(attention(Q_h, K_h, V_h, headDimensions));
  }
  // 3. The heads side by side (T, C), then the output projection
  const concat = concatColumns(contexts);
  return matMul(W_O, concat);
}

// A projection: M·W with W stored [in, out].
function project(M, W) {
  return matMul(M, W);
}

function checkShapes(X, weights, numberOfHeads, headDimensions, C) {
  if (X[0].length !== C) {
    throw new RangeError(`X is ${shapeText(X)} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  }
  for (const [name, W] of Object.entries(weights)) {
    if (W.length !== C || W[0].length !== C) {
      throw new RangeError(`${name} is ${shapeText(W)} but must be C×C = ${C}×${C}`);
    }
  }
}

// Scaled dot-product attention of one head; the scale is 1/√width.
function attention(Q, K, V, width) {
  const scale = 1 / Math.sqrt(width);
  const scores = matMul(Q, transpose(K));                        // (T, T)
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

// Columns start..end-1 of every row.
function sliceColumns(M, start, end) {
  return M.map((row) => row.slice(start, end));
}

// Row r of the result is row r of every part, one after the other.
function concatColumns(parts) {
  return parts[0].map((_, r) => parts.flatMap((part) => part[r]));
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
