// Multi-head attention in plain JavaScript on nested arrays, written the way the challenge's own
// solution is: small helpers (transpose, matMul, softmax), slice the heads out with row.slice,
// dot-product attention per head, concatenate the rows, multiply by an identity W_0.
// It is the "plain JS" column of the benchmark; it is deliberately not optimised.

/** (m, n) → (n, m) */
export const transpose = (matrix) => matrix[0].map((_, j) => matrix.map((row) => row[j]));

/** (m, k) · (k, n) → (m, n), each entry a sum over k in increasing order */
export const matMul = (a, b) => {
  const result = [];
  for (let i = 0; i < a.length; i++) {
    const row = [];
    for (let j = 0; j < b[0].length; j++) {
      let sum = 0;
      for (let k = 0; k < b.length; k++) sum += a[i][k] * b[k][j];
      row.push(sum);
    }
    result.push(row);
  }
  return result;
};

export const identityMatrix = (n) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));

/** Each row of `matrix` plus `bias`. */
export const addBias = (matrix, bias) => matrix.map((row) => row.map((x, j) => x + bias[j]));

/** Row-wise softmax, the row maximum subtracted first. */
export const softmax = (matrix) => matrix.map((row) => {
  const max = Math.max(...row);
  const exps = row.map((x) => Math.exp(x - max));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
});

/** softmax(Q·Kᵀ / √d_k) · V */
export const dotProductAttention = (Q, K, V) => {
  const scale = Math.sqrt(Q[0].length);
  const scores = matMul(Q, transpose(K)).map((row) => row.map((x) => x / scale));
  return matMul(softmax(scores), V);
};

const sliceColumns = (matrix, start, end) => matrix.map((row) => row.slice(start, end));

const concatenateHeads = (heads) => heads[0].map((_, i) => heads.reduce((row, head) => row.concat(head[i]), []));

export const multiHeadAttention = (Q, K, V, { numberOfHeads, headDimensions }) => {
  const modelDimensions = numberOfHeads * headDimensions;
  if (Q[0].length !== modelDimensions || K[0].length !== modelDimensions || V[0].length !== modelDimensions) {
    throw new Error('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const heads = [];
  for (let head = 0; head < numberOfHeads; head++) {
    const start = head * headDimensions;
    const end = start + headDimensions;
    heads.push(dotProductAttention(sliceColumns(Q, start, end), sliceColumns(K, start, end), sliceColumns(V, start, end)));
  }
  return matMul(concatenateHeads(heads), identityMatrix(modelDimensions));
};
