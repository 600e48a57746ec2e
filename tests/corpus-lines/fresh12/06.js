// Style: a small functional library (transpose, zipWith, sum, range, columns) and every step composed from it.
const range = (n) => Array.from({ length: n }, (_, i) => i);
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const zipWith = (f, xs, ys) => xs.map((x, i) => f(x, ys[i]));
const transpose = (M) => M[0].map((_, j) => M.map((row) => row[j]));
const dot = (a, b) => sum(zipWith((x, y) => x * y, a, b));
const columns = (M, from, width) => M.map((row) => row.slice(from, from + width));
const softmax = (row) => {
  const top = Math.max(...row);
  const ex = row.map((x) => Math.exp(x - top));
  const z = sum(ex);
  return ex.map((e) => e / z);
};

function attendHead(q, k, v, d) {
  const vt = transpose(v);
  return q.map((qi) => {
    const scores = k.map((kj) => dot(qi, kj));
    const weights = softmax(scores.map((s) => s / Math.sqrt(d)));
    return vt.map((col) => dot(weights, col));
  });
}

export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) {
    throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  }
  const shape = (M) => `${M.length}×${M[0].length}`;
  const C = numberOfHeads * headDimensions;
  const Ckv = numberOfKVHeads * headDimensions;
  if (Q[0].length !== C) throw new RangeError(`Q is ${shape(Q)} but must be T_q×(numberOfHeads · headDimensions) = T_q×${C}`);
  if (K[0].length !== Ckv) throw new RangeError(`K is ${shape(K)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${Ckv}`);
  if (V[0].length !== Ckv) throw new RangeError(`V is ${shape(V)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${Ckv}`);
  if (V.length !== K.length) throw new RangeError(`V is ${shape(V)} but K is ${shape(K)}`);
  const group = numberOfHeads / numberOfKVHeads;
  const d = headDimensions;
  const heads = range(numberOfHeads).map((h) => {
    const g = Math.floor(h / group);
    return attendHead(columns(Q, h * d, d), columns(K, g * d, d), columns(V, g * d, d), d);
  });
  return range(Q.length).map((t) => heads.flatMap((out) => out[t]));
}
