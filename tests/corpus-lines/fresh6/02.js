// A right answer with the heads in objects keyed by name (head0, head1, …) and every matrix built by Array.from with an index callback; the concatenation looks each column's head up by name.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  for (const M of [Q, K, V]) {
    if (M.length !== Q.length || M[0].length !== C) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const T = Q.length;
  const d = headDimensions;
  const heads = {};
  for (let h = 0; h < numberOfHeads; h++) {
    const cols = (M) => Array.from({ length: T }, (_, t) => Array.from({ length: d }, (_, c) => M[t][h * d + c]));
    heads[`head${h}`] = { q: cols(Q), k: cols(K), v: cols(V) };
  }
  const outputs = {};
  for (const [name, { q, k, v }] of Object.entries(heads)) {
    const dot = (i, j) => Array.from({ length: d }, (_, c) => q[i][c] * k[j][c]).reduce((a, b) => a + b, 0);
    const s = Array.from({ length: T }, (_, i) => Array.from({ length: T }, (_, j) => dot(i, j) / Math.sqrt(d)));
    const w = Array.from({ length: T }, (_, i) => {
      const top = Math.max(...s[i]);
      const e = Array.from({ length: T }, (_, j) => Math.exp(s[i][j] - top));
      const z = e.reduce((a, b) => a + b, 0);
      return Array.from({ length: T }, (_, j) => e[j] / z);
    });
    outputs[name] = Array.from({ length: T }, (_, i) => Array.from({ length: d }, (_, c) => Array.from({ length: T }, (_, j) => w[i][j] * v[j][c]).reduce((a, b) => a + b, 0)));
  }
  const concat = Array.from({ length: T }, (_, t) => Array.from({ length: C }, (_, col) => outputs[`head${Math.floor(col / d)}`][t][col % d]));
  if (!W_O) return concat;
  return Array.from({ length: T }, (_, t) => Array.from({ length: C }, (_, j) => Array.from({ length: C }, (_, c) => concat[t][c] * W_O[c][j]).reduce((a, b) => a + b, 0)));
}
