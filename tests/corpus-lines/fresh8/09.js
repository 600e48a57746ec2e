// Every head's blend accumulated straight into one T×C buffer by nested forEach, then W_O.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  if (![Q, K, V].every((M) => M.length === Q.length && M[0].length === C)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const joined = Q.map(() => new Array(C).fill(0));
  [...Array(numberOfHeads).keys()].forEach((h) => {
    const off = h * headDimensions;
    Q.forEach((qRow, i) => {
      const logits = K.map((kRow, j) => {
        if (causal && j > i) return -Infinity;
        let s = 0;
        for (let c = 0; c < headDimensions; c++) s += qRow[off + c] * kRow[off + c];
        return s / Math.sqrt(headDimensions);
      });
      const top = Math.max(...logits);
      const ex = logits.map((x) => Math.exp(x - top));
      const total = ex.reduce((a, b) => a + b, 0);
      ex.forEach((e, j) => {
        for (let c = 0; c < headDimensions; c++) joined[i][off + c] += (e / total) * V[j][off + c];
      });
    });
  });
  if (!W_O) return joined;
  return joined.map((row) => W_O[0].map((_, col) => row.reduce((s, x, c) => s + x * W_O[c][col], 0)));
}
