// Challenge 05 with curried helpers: every step a function of one argument that returns the next
// function, one attendHead(d)(h) per head, and a cache that each token appends to before its query
// reads it.

const columns = (start) => (width) => (row) => row.slice(start, start + width);
const dotWith = (q) => (k) => q.reduce((s, x, c) => s + x * k[c], 0);
const scaleBy = (factor) => (xs) => xs.map((x) => x * factor);
const blend = (values) => (weights) =>
  values[0].map((_, c) => weights.reduce((s, w, j) => s + w * values[j][c], 0));

const softmax = (xs) => {
  const top = Math.max(...xs);
  const exps = xs.map((x) => Math.exp(x - top));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
};

const attendHead = (d) => (h) => (cache) => (query) => {
  const cut = columns(h * d)(d);
  const q = cut(query);
  const logits = cache.keys.map(cut).map(dotWith(q));
  const weights = softmax(scaleBy(1 / Math.sqrt(d))(logits));
  return blend(cache.values.map(cut))(weights);
};

export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (![Q, K, V].every(fits)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const cache = { keys: [], values: [] };
  const heads = Array.from({ length: numberOfHeads }, (_, h) => attendHead(headDimensions)(h));
  return Q.map((query, t) => {
    cache.keys.push(K[t]);
    cache.values.push(V[t]);
    return heads.flatMap((head) => head(cache)(query));
  });
}
