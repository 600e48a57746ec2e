// expect: scale
// Scales every head by 1/√C: the helper reads the width from the full matrix, not the head.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if (Q[0].length !== C || K[0].length !== C || V[0].length !== C || K.length !== Q.length || V.length !== Q.length) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const scale = 1 / Math.sqrt(Q[0].length);
  const heads = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const cols = (M) => M.map((r) => r.slice(h * headDimensions, (h + 1) * headDimensions));
    const q = cols(Q), k = cols(K), v = cols(V);
    const scores = q.map((qi) => k.map((kj) => qi.reduce((s, x, c) => s + x * kj[c], 0) * scale));
    const weights = scores.map((row) => {
      const m = Math.max(...row);
      const e = row.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b, 0);
      return e.map((x) => x / z);
    });
    heads.push(weights.map((w) => v[0].map((_, c) => w.reduce((s, wj, j) => s + wj * v[j][c], 0))));
  }
  const concat = Q.map((_, t) => heads.flatMap((hd) => hd[t]));
  const W = W_O ?? Q[0].map((_, i) => Q[0].map((_, j) => (i === j ? 1 : 0)));
  return concat.map((row) => W[0].map((_, j) => row.reduce((s, x, k) => s + x * W[k][j], 0)));
}
