// A right answer as closures returning functions: a head is a function of its index that cuts its columns and returns a function of the query's row index; the dot product curried; the rows joined by flatMap over the heads, W_O by an inline product.
const dot = (a) => (b) => a.reduce((s, x, c) => s + x * b[c], 0);
const cut = (M, from, to) => M.map((row) => row.slice(from, to));

function softmax(row) {
  const top = Math.max(...row);
  const e = row.map((x) => Math.exp(x - top));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const d = headDimensions;
  const head = (h) => {
    const [q, k, v] = [Q, K, V].map((M) => cut(M, h * d, (h + 1) * d));
    return (i) => {
      const s = k.map((kj, j) => (causal && j > i ? -Infinity : dot(q[i])(kj) / Math.sqrt(d)));
      const w = softmax(s);
      return v[0].map((_, c) => w.reduce((a, x, j) => a + x * v[j][c], 0));
    };
  };
  const heads = Array.from({ length: numberOfHeads }, (_, h) => head(h));
  const concat = Q.map((_, i) => heads.flatMap((f) => f(i)));
  if (!W_O) return concat;
  return concat.map((row) => W_O[0].map((_, j) => row.reduce((s, x, k) => s + x * W_O[k][j], 0)));
}
