// A right answer in flat Float64Array buffers (row-major, C wide), one head at a time, the concatenation written column by column.
const flatten = (M) => Float64Array.from(M.flat());

function headWeights(q, k, T, C, start, d) {
  const w = new Float64Array(T * T);
  for (let i = 0; i < T; i++) {
    let max = -Infinity;
    for (let j = 0; j < T; j++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += q[i * C + start + c] * k[j * C + start + c];
      w[i * T + j] = s / Math.sqrt(d);
      if (w[i * T + j] > max) max = w[i * T + j];
    }
    let sum = 0;
    for (let j = 0; j < T; j++) { w[i * T + j] = Math.exp(w[i * T + j] - max); sum += w[i * T + j]; }
    for (let j = 0; j < T; j++) w[i * T + j] /= sum;
  }
  return w;
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  const T = Q.length;
  if ([Q, K, V].some((M) => M.length !== T || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const [q, k, v] = [Q, K, V].map(flatten);
  const concat = new Float64Array(T * C);
  for (let h = 0; h < numberOfHeads; h++) {
    const start = h * headDimensions;
    const w = headWeights(q, k, T, C, start, headDimensions);
    for (let c = start; c < start + headDimensions; c++) {
      for (let i = 0; i < T; i++) {
        let acc = 0;
        for (let j = 0; j < T; j++) acc += w[i * T + j] * v[j * C + c];
        concat[i * C + c] = acc;
      }
    }
  }
  const out = [];
  for (let i = 0; i < T; i++) {
    const row = concat.subarray(i * C, (i + 1) * C);
    out.push(W_O ? Array.from({ length: C }, (_, o) => row.reduce((s, x, c) => s + x * W_O[c][o], 0)) : Array.from(row));
  }
  return out;
}
