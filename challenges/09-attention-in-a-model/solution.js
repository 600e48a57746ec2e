// Reference answer for challenge 09: multi-head attention with a causal option, the function the
// trained model's two layers call. Q, K and V are T×C with C = numberOfHeads · headDimensions.

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const contexts = [];
  for (let head = 0; head < numberOfHeads; head++) {
    const start = head * headDimensions;
    const end = start + headDimensions;
    contexts.push(attention(sliceColumns(Q, start, end), sliceColumns(K, start, end), sliceColumns(V, start, end), headDimensions, causal));
  }
  const concat = contexts[0].map((_, r) => contexts.flatMap((context) => context[r])); // (T, C): the heads side by side
  return matMul(concat, W_O ?? identity(C));
}

function sliceColumns(M, start, end) {
  return M.map((row) => row.slice(start, end));
}

// One head: softmax(Q·Kᵀ / √width) · V, where query i may only see keys j ≤ i when causal.
function attention(Q, K, V, width, causal) {
  const scale = 1 / Math.sqrt(width);
  const scores = matMul(Q, transpose(K)).map((row) => row.map((x) => x * scale)); // (T, T)
  const masked = causal ? scores.map((row, i) => row.map((x, j) => (j <= i ? x : -Infinity))) : scores;
  return matMul(masked.map(softmax), V); // (T, headDimensions)
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
