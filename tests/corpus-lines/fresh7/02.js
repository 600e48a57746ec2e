// A right answer with a memoised helper (each head's key columns cut once, kept in a Map by head index), the heads in an object built by Object.fromEntries and walked by Object.entries, each dot product by for…in over the query row's indices, W_O by reduceRight over the row.
const memo = (f) => { const seen = new Map(); return (key) => { if (!seen.has(key)) seen.set(key, f(key)); return seen.get(key); }; };

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  for (const M of [Q, K, V]) {
    if (M.length !== Q.length || M[0].length !== C) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const d = headDimensions;
  const cut = (M, h) => M.map((row) => row.slice(h * d, h * d + d));
  const keysOf = memo((h) => cut(K, h));
  const heads = Object.fromEntries(Array.from({ length: numberOfHeads }, (_, h) => [`h${h}`, h]));
  const outputs = {};
  for (const [name, h] of Object.entries(heads)) {
    const q = cut(Q, h);
    const v = cut(V, h);
    outputs[name] = q.map((qi) => {
      const s = keysOf(h).map((kj) => {
        let dot = 0;
        for (const c in qi) dot += qi[c] * kj[c];
        return dot / Math.sqrt(d);
      });
      const top = Math.max(...s);
      const e = s.map((x) => Math.exp(x - top));
      const z = e.reduce((a, b) => a + b, 0);
      return v[0].map((_, c) => e.reduce((acc, x, j) => acc + (x / z) * v[j][c], 0));
    });
  }
  const concat = Q.map((_, t) => Object.values(outputs).flatMap((o) => o[t]));
  if (!W_O) return concat;
  return concat.map((row) => W_O[0].map((_, j) => row.reduceRight((acc, x, c) => acc + x * W_O[c][j], 0)));
}
