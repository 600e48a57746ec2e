// expect: none
// A right answer written as one function with plain for-loops and no helpers.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const T = Q.length;
  const C = numberOfHeads * headDimensions;
  for (const M of [Q, K, V]) {
    if (M.length !== T || M[0].length !== C) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const concat = [];
  for (let t = 0; t < T; t++) concat.push(new Array(C).fill(0));
  for (let h = 0; h < numberOfHeads; h++) {
    const off = h * headDimensions;
    for (let i = 0; i < T; i++) {
      const scores = [];
      for (let j = 0; j < T; j++) {
        let s = 0;
        for (let c = 0; c < headDimensions; c++) s += Q[i][off + c] * K[j][off + c];
        scores.push(s / Math.sqrt(headDimensions));
      }
      let max = -Infinity;
      for (const s of scores) if (s > max) max = s;
      let sum = 0;
      const w = scores.map((s) => { const e = Math.exp(s - max); sum += e; return e; });
      for (let j = 0; j < T; j++) {
        for (let c = 0; c < headDimensions; c++) concat[i][off + c] += (w[j] / sum) * V[j][off + c];
      }
    }
  }
  if (!W_O) return concat;
  const out = [];
  for (let t = 0; t < T; t++) {
    const row = [];
    for (let j = 0; j < C; j++) {
      let s = 0;
      for (let k = 0; k < C; k++) s += concat[t][k] * W_O[k][j];
      row.push(s);
    }
    out.push(row);
  }
  return out;
}
