// expect: kv-head
// detail: Yours is ⌊i / numberOfKVHeads⌋
// link: mode=grouped&numberOfKVHeads=3
// K/V head ⌊i / numberOfKVHeads⌋ instead of ⌊i / group⌋.
// Reference answer for challenge 06: grouped-query attention (and multi-query attention).
// Q is T×C with C = numberOfHeads · headDimensions; K and V are T×C_kv with
// C_kv = numberOfKVHeads · headDimensions. Query head i reads key/value head ⌊i / group⌋,
// where group = numberOfHeads / numberOfKVHeads. The result is T×C.

export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) {
    throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  }
  const C = numberOfHeads * headDimensions;
  const C_kv = numberOfKVHeads * headDimensions;
  if (Q[0].length !== C) {
    throw new RangeError(`Q is ${shapeText(Q)} but must be T_q×(numberOfHeads · headDimensions) = T_q×${C}`);
  }
  for (const [name, M] of [['K', K], ['V', V]]) {
    if (M[0].length !== C_kv) {
      throw new RangeError(`${name} is ${shapeText(M)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${C_kv}`);
    }
  }
  if (V.length !== K.length) throw new RangeError(`V is ${shapeText(V)} but K is ${shapeText(K)}`);

  const group = numberOfHeads / numberOfKVHeads; // query heads per key/value head
  const contexts = [];
  for (let head = 0; head < numberOfHeads; head++) {
    const kvHead = Math.floor(head / numberOfKVHeads);
    const Q_h = sliceColumns(Q, head * headDimensions, (head + 1) * headDimensions);     // (T, headDimensions)
    const K_h = sliceColumns(K, kvHead * headDimensions, (kvHead + 1) * headDimensions); // (T, headDimensions)
    const V_h = sliceColumns(V, kvHead * headDimensions, (kvHead + 1) * headDimensions); // (T, headDimensions)
    contexts.push(attention(Q_h, K_h, V_h, headDimensions));
  }
  return concatColumns(contexts); // (T, C): the heads side by side
}

function shapeText(M) {
  return `${M.length}×${M[0].length}`;
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

function transpose(M) {
  return M[0].map((_, j) => M.map((row) => row[j]));
}

function matMul(A, B) {
  return A.map((row) => B[0].map((_, j) => row.reduce((sum, a, k) => sum + a * B[k][j], 0)));
}
