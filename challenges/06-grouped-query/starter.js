// Challenge 06: grouped-query attention (GQA), and multi-query attention (MQA) when numberOfKVHeads = 1.
// Write groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) and keep the `export`.
// Q is T×C with C = numberOfHeads · headDimensions; K and V are T×C_kv with C_kv = numberOfKVHeads · headDimensions.
// Plain JavaScript only: no imports. The helpers below are yours to use or change.

export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  // 0. throw a RangeError (the exact messages are in the lesson, under "Your task") when
  //    numberOfKVHeads does not divide numberOfHeads, when Q is not T×C,
  //    when K or V is not T×C_kv, or when V has not as many rows as K
  // 1. group = numberOfHeads / numberOfKVHeads query heads share each key/value head
  // 2. for each query head i: take its headDimensions columns of Q, and the columns of
  //    key/value head ⌊i / group⌋ of K and V
  // 3. scaled dot-product attention on that head (scale: 1/√headDimensions)
  // 4. put the head outputs side by side (T×C); there is no W_O in this challenge
  throw new Error('not written yet');
}

function shapeText(M) {
  return `${M.length}×${M[0].length}`;
}

function sliceColumns(M, start, end) {
  return M.map((row) => row.slice(start, end));
}

function transpose(M) {
  return M[0].map((_, j) => M.map((row) => row[j]));
}

function matMul(A, B) {
  return A.map((row) => B[0].map((_, j) => row.reduce((sum, a, k) => sum + a * B[k][j], 0)));
}
