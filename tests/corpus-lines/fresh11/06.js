// A right answer in a functional style with no loops: curried helpers (cols(from)(width)(M), dotWith(q)(k), scoresAgainst(keys)(q), scaleBy(f)(row), mixWith(values)(weights), kvHeadOf(group)(h)) and, per query head, one attend function made by pipe() of the four steps and mapped over that head's query rows.
const pipe = (...fns) => (x) => fns.reduce((acc, f) => f(acc), x);
const cols = (from) => (width) => (M) => M.map((row) => row.slice(from, from + width));
const dotWith = (q) => (k) => q.reduce((s, x, c) => s + x * k[c], 0);
const scoresAgainst = (keys) => (q) => keys.map(dotWith(q));
const scaleBy = (f) => (row) => row.map((x) => x * f);
const softmax = (row) => {
  const top = Math.max(...row);
  const ex = row.map((x) => Math.exp(x - top));
  const z = ex.reduce((a, b) => a + b, 0);
  return ex.map((e) => e / z);
};
const mixWith = (values) => (weights) => values[0].map((_, c) => weights.reduce((s, w, j) => s + w * values[j][c], 0));
const kvHeadOf = (group) => (h) => Math.floor(h / group);
const shape = (M) => `${M.length}×${M[0].length}`;

export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  const C = numberOfHeads * headDimensions;
  const C_kv = numberOfKVHeads * headDimensions;
  if (Q[0].length !== C) throw new RangeError(`Q is ${shape(Q)} but must be T_q×(numberOfHeads · headDimensions) = T_q×${C}`);
  if (K[0].length !== C_kv) throw new RangeError(`K is ${shape(K)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${C_kv}`);
  if (V[0].length !== C_kv) throw new RangeError(`V is ${shape(V)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${C_kv}`);
  if (V.length !== K.length) throw new RangeError(`V is ${shape(V)} but K is ${shape(K)}`);
  const headOf = kvHeadOf(numberOfHeads / numberOfKVHeads);
  const heads = Array.from({ length: numberOfHeads }, (_, h) => {
    const g = headOf(h);
    const keys = cols(g * headDimensions)(headDimensions)(K);
    const values = cols(g * headDimensions)(headDimensions)(V);
    const attend = pipe(scoresAgainst(keys), scaleBy(1 / Math.sqrt(headDimensions)), softmax, mixWith(values));
    return cols(h * headDimensions)(headDimensions)(Q).map(attend);
  });
  return Q.map((_, t) => heads.flatMap((head) => head[t]));
}
