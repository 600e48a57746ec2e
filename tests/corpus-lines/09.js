// A right answer row by row: each row of the concatenation built head after head by a helper, W_O last.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const T = Q.length;
  const concat = [];
  for (let i = 0; i < T; i++) {
    const row = [];
    for (let h = 0; h < numberOfHeads; h++) row.push(...headRow(Q, K, V, i, h * headDimensions, headDimensions, causal));
    concat.push(row);
  }
  if (!W_O) return concat;
  return concat.map((row) => W_O[0].map((_, j) => row.reduce((s, x, k) => s + x * W_O[k][j], 0)));
}

function headRow(Q, K, V, i, off, d, causal) {
  const last = causal ? i : K.length - 1;
  const scores = [];
  for (let j = 0; j <= last; j++) {
    let s = 0;
    for (let c = 0; c < d; c++) s += Q[i][off + c] * K[j][off + c];
    scores.push(s / Math.sqrt(d));
  }
  const m = Math.max(...scores);
  const e = scores.map((x) => Math.exp(x - m));
  const z = e.reduce((a, b) => a + b, 0);
  const out = new Array(d).fill(0);
  for (let j = 0; j <= last; j++) for (let c = 0; c < d; c++) out[c] += (e[j] / z) * V[j][off + c];
  return out;
}
