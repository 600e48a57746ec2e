// Challenge 03 with flatMap everywhere: the scores are one flat list of T·T numbers made by flatMap
// over the queries and the keys, scaled and masked by flatMap over that list (cell n is query
// ⌊n / T⌋, key n % T), cut back into rows for the softmax, and the output rows made by flatMap too.

const shapeText = (M) => `${M.length}×${M[0].length}`;

function checkShapes(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
  }
}

// a flat list cut into rows of n
const rowsOf = (flat, n) => flat.flatMap((_, i) => (i % n === 0 ? [flat.slice(i, i + n)] : []));

function softmaxRow(row) {
  const top = Math.max(...row);
  const exps = row.flatMap((x) => [Math.exp(x - top)]);
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.flatMap((e) => [e / total]);
}

// one output row: the value rows weighted by w
const blend = (w, V) => V[0].flatMap((_, c) => [w.reduce((s, x, j) => s + x * V[j][c], 0)]);

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  checkShapes(Q, K, V);
  const T = Q.length;
  const scale = 1 / Math.sqrt(Q[0].length);
  const scores = Q.flatMap((q) => K.flatMap((k) => [q.reduce((s, x, c) => s + x * k[c], 0)]));
  const scaled = scores.flatMap((s) => [s * scale]);
  const masked = scaled.flatMap((s, n) => (causal && n % T > Math.floor(n / T) ? [-Infinity] : [s]));
  const weights = rowsOf(masked, T).flatMap(softmaxRow);
  return rowsOf(weights, T).flatMap((w) => [blend(w, V)]);
}
