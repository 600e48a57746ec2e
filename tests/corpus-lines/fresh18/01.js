// Scaled dot-product attention with every matrix held as an array of columns (column-major),
// and a log-sum-exp softmax taken along each row of the column-stored scores.

export function dotProductAttention(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  }
  const q = toColumns(Q);
  const k = toColumns(K);
  const v = toColumns(V);
  const T = Q.length;
  const dk = q.length;
  const scale = 1 / Math.sqrt(dk);
  // column j of the scores holds q_i · k_j for every query i
  const scoreCols = Array.from({ length: T }, (_, j) =>
    Array.from({ length: T }, (_, i) => {
      let s = 0;
      for (let c = 0; c < dk; c++) s += q[c][i] * k[c][j];
      return s * scale;
    }));
  const weightCols = softmaxAlongRows(scoreCols);
  const outCols = v.map((col) =>
    Array.from({ length: T }, (_, i) => {
      let acc = 0;
      for (let j = 0; j < T; j++) acc += weightCols[j][i] * col[j];
      return acc;
    }));
  return toRows(outCols);
}

// Row i of a column-stored matrix is cols[*][i]: its log-sum-exp, then exp(x − lse).
function softmaxAlongRows(cols) {
  const T = cols[0].length;
  const lse = Array.from({ length: T }, (_, i) => {
    let top = -Infinity;
    for (const col of cols) top = Math.max(top, col[i]);
    let total = 0;
    for (const col of cols) total += Math.exp(col[i] - top);
    return top + Math.log(total);
  });
  return cols.map((col) => col.map((x, i) => Math.exp(x - lse[i])));
}

function toColumns(M) {
  return M[0].map((_, c) => M.map((row) => row[c]));
}

function toRows(cols) {
  return cols[0].map((_, r) => cols.map((col) => col[r]));
}
