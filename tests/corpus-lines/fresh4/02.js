// A right answer with one generic matmul helper used for every product (the scores as q·kᵀ through a transpose helper, the weighted sum as weights·v, W_O), the heads cut by a column-range helper and written into the concatenation by index.
const transpose = (M) => M[0].map((_, c) => M.map((row) => row[c]));

function matmul(A, B) {
  const out = [];
  for (let i = 0; i < A.length; i++) {
    out.push([]);
    for (let j = 0; j < B[0].length; j++) {
      let s = 0;
      for (let k = 0; k < B.length; k++) s += A[i][k] * B[k][j];
      out[i].push(s);
    }
  }
  return out;
}

const columns = (M, from, count) => M.map((row) => row.slice(from, from + count));

function softmaxRows(S) {
  return S.map((row) => {
    const top = Math.max.apply(null, row);
    const e = row.map((x) => Math.exp(x - top));
    let z = 0;
    for (const x of e) z += x;
    return e.map((x) => x / z);
  });
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const concat = Q.map(() => []);
  for (let h = 0; h < numberOfHeads; h++) {
    const from = h * headDimensions;
    const q = columns(Q, from, headDimensions);
    const k = columns(K, from, headDimensions);
    const v = columns(V, from, headDimensions);
    const scores = matmul(q, transpose(k)).map((row) => row.map((x) => x / Math.sqrt(headDimensions)));
    const out = matmul(softmaxRows(scores), v);
    out.forEach((row, i) => row.forEach((x, c) => { concat[i][from + c] = x; }));
  }
  return W_O ? matmul(concat, W_O) : concat;
}
