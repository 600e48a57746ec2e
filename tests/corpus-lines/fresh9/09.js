// A right answer with the heads walked by a recursive function that carries the rows built so far, a query's keys counted by a visible(i) function, Array.from with index callbacks for every row, and W_O applied through its columns.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  const T = Q.length;
  if ([Q, K, V].some(({ length, 0: first }) => length !== T || first.length !== C)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const visible = (i) => (causal ? i + 1 : T);
  const sqrtD = Math.sqrt(headDimensions);

  const attendHead = (offset) => Array.from({ length: T }, (_, i) => {
    const n = visible(i);
    const s = Array.from({ length: n }, (_, j) => {
      let acc = 0;
      for (let c = 0; c < headDimensions; c++) acc += Q[i][offset + c] * K[j][offset + c];
      return acc / sqrtD;
    });
    const mx = Math.max(...s);
    const e = s.map((x) => Math.exp(x - mx));
    const tot = e.reduce((a, b) => a + b, 0);
    return Array.from({ length: headDimensions }, (_, c) => e.reduce((acc, x, j) => acc + (x / tot) * V[j][offset + c], 0));
  });

  const walk = (h, rows) => {
    if (h === numberOfHeads) return rows;
    const part = attendHead(h * headDimensions);
    return walk(h + 1, rows.map((row, i) => [...row, ...part[i]]));
  };
  const joined = walk(0, Array.from({ length: T }, () => []));
  if (!W_O) return joined;
  const columns = Array.from({ length: C }, (_, c) => W_O.map((r) => r[c]));
  return joined.map((row) => columns.map((col) => row.reduce((acc, x, k) => acc + x * col[k], 0)));
}
