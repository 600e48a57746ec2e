// A right answer over flat Float64Array buffers: each head's T×T scores become its weights in one buffer, row by row through subarray views; the heads are joined by flatMap and W_O applied column by column.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  const T = Q.length;
  if (![Q, K, V].every((M) => M.length === T && M[0].length === C)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const d = headDimensions;
  const contexts = Array.from({ length: numberOfHeads }, (_, h) => {
    const buf = new Float64Array(T * T);
    for (let i = 0; i < T; i++) {
      const row = buf.subarray(i * T, (i + 1) * T);
      for (let j = 0; j < T; j++) {
        let s = 0;
        for (let c = h * d; c < (h + 1) * d; c++) s += Q[i][c] * K[j][c];
        row[j] = causal && j > i ? -Infinity : s / Math.sqrt(d);
      }
      const top = Math.max(...row);
      row.forEach((x, j) => { row[j] = Math.exp(x - top); });
      const z = row.reduce((a, b) => a + b, 0);
      row.forEach((x, j) => { row[j] = x / z; });
    }
    return Array.from({ length: T }, (_, i) => Array.from({ length: d }, (_, c) => {
      let acc = 0;
      for (let j = 0; j < T; j++) acc += buf[i * T + j] * V[j][h * d + c];
      return acc;
    }));
  });
  const concat = Q.map((_, t) => contexts.flatMap((ctx) => ctx[t]));
  if (!W_O) return concat;
  const column = (j) => W_O.map((r) => r[j]);
  return concat.map((r) => r.map((_, j) => column(j).reduce((a, w, c) => a + r[c] * w, 0)));
}
