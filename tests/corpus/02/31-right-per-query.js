// expect: none
// A right answer that handles one query at a time with for...of and a small attend() helper.
function attend(query, keys, values, scale) {
  const logits = keys.map((key) => key.reduce((s, x, c) => s + x * query[c], 0) * scale);
  const top = Math.max(...logits);
  const weights = logits.map((l) => Math.exp(l - top));
  const total = weights.reduce((a, b) => a + b, 0);
  const out = new Array(values[0].length).fill(0);
  weights.forEach((wt, j) => values[j].forEach((x, c) => { out[c] += (wt / total) * x; }));
  return out;
}

export function multiHeadAttention(Q, K, V, options) {
  const { numberOfHeads, headDimensions } = options;
  const C = numberOfHeads * headDimensions;
  const shapeOk = [Q, K, V].every((M) => M.length === Q.length && M.every((r) => r.length === C));
  if (!shapeOk) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const rows = [];
  for (const [t, q] of Q.entries()) {
    const row = [];
    for (let h = 0; h < numberOfHeads; h++) {
      const lo = h * headDimensions, hi = lo + headDimensions;
      row.push(...attend(q.slice(lo, hi), K.map((r) => r.slice(lo, hi)), V.map((r) => r.slice(lo, hi)), 1 / Math.sqrt(headDimensions)));
    }
    rows[t] = row;
  }
  const W = options.W_O;
  if (!W) return rows;
  return rows.map((r) => W[0].map((_, j) => r.reduce((s, x, k) => s + x * W[k][j], 0)));
}
