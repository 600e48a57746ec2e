// A right answer by recursion: the dot product and the total of a row as recursive helpers, the weighted sum a recursive fold over the value rows with an early return at the end, the output rows built by a recursive function of the query index.
const dot = (a, b, c = 0) => (c === a.length ? 0 : a[c] * b[c] + dot(a, b, c + 1));
const total = (xs, j = 0) => (j === xs.length ? 0 : xs[j] + total(xs, j + 1));

function mix(weights, V, j = 0, acc = new Array(V[0].length).fill(0)) {
  if (j === V.length) return acc;
  return mix(weights, V, j + 1, acc.map((x, c) => x + weights[j] * V[j][c]));
}

export function dotProductAttention(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  const d = Q[0].length;
  const rows = (i) => {
    if (i === Q.length) return [];
    const scores = K.map((k) => dot(Q[i], k) / Math.sqrt(d));
    const top = Math.max(...scores);
    const exps = scores.map((s) => Math.exp(s - top));
    const z = total(exps);
    const weights = exps.map((e) => e / z);
    return [mix(weights, V), ...rows(i + 1)];
  };
  return rows(0);
}
