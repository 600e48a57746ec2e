// A right answer by recursion: the output rows by a recursive function over i, a query's logits by recursion over j with the causal cut decided per key, and the dot product, the maximum, the sum and the blend as recursive folds.
const dot = (a, b, c = 0) => (c === a.length ? 0 : a[c] * b[c] + dot(a, b, c + 1));
const total = (xs, j = 0) => (j === xs.length ? 0 : xs[j] + total(xs, j + 1));
const peak = (xs, j = 0) => (j === xs.length ? -Infinity : Math.max(xs[j], peak(xs, j + 1)));

function blend(weights, V, c, j = 0) {
  if (j === weights.length) return 0;
  return weights[j] * V[j][c] + blend(weights, V, c, j + 1);
}

function logitsOf(q, K, root, last, j = 0) {
  if (j === K.length) return [];
  const here = j > last ? -Infinity : dot(q, K[j]) / root;
  return [here, ...logitsOf(q, K, root, last, j + 1)];
}

function rowsFrom(i, Q, K, V, root, causal) {
  if (i === Q.length) return [];
  const logits = logitsOf(Q[i], K, root, causal ? i : K.length);
  const top = peak(logits);
  const lifted = logits.map((x) => Math.exp(x - top));
  const z = total(lifted);
  const weights = lifted.map((x) => x / z);
  const row = V[0].map((_, c) => blend(weights, V, c));
  return [row, ...rowsFrom(i + 1, Q, K, V, root, causal)];
}

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shape(K)} but Q is ${shape(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shape(V)} but Q is ${shape(Q)}`);
  return rowsFrom(0, Q, K, V, Math.sqrt(Q[0].length), causal);
}
