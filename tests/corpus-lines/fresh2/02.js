// A right answer with a generator of heads, each head attended by map/reduce, and the rows joined by Array.prototype.concat.
function* headsOf(M, numberOfHeads, d) {
  for (let h = 0; h < numberOfHeads; h++) yield M.map((row) => row.slice(h * d, h * d + d));
}

function attention(q, k, v, d) {
  return q.map((qi) => {
    const s = k.map((kj) => qi.reduce((acc, x, c) => acc + x * kj[c], 0) / Math.sqrt(d));
    const m = Math.max(...s);
    const e = s.map((x) => Math.exp(x - m));
    const z = e.reduce((a, b) => a + b, 0);
    return v[0].map((_, c) => e.reduce((acc, x, j) => acc + (x / z) * v[j][c], 0));
  });
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const [qs, ks, vs] = [Q, K, V].map((M) => [...headsOf(M, numberOfHeads, headDimensions)]);
  const outs = qs.map((q, h) => attention(q, ks[h], vs[h], headDimensions));
  const concat = Q.map((_, t) => [].concat(...outs.map((o) => o[t])));
  if (!W_O) return concat;
  return concat.map((row) => W_O[0].map((_, j) => row.reduce((s, x, i) => s + x * W_O[i][j], 0)));
}
