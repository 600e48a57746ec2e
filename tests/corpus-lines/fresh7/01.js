// A right answer composed right to left: compose(...fns) by reduceRight, each step a function of one query row (scores, scale, softmax, weighted sum), the keys and values held as arrays of columns, the softmax's max and total by reduceRight.
const compose = (...fns) => (x) => fns.reduceRight((acc, f) => f(acc), x);
const columns = (M) => M[0].map((_, c) => M.map((row) => row[c]));

export function dotProductAttention(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  const Kc = columns(K);
  const Vc = columns(V);
  const d = Q[0].length;
  const scoresOf = (q) => Kc[0].map((_, j) => Kc.reduce((s, col, c) => s + q[c] * col[j], 0));
  const scaleBy = (f) => (row) => row.map((x) => x * f);
  const softmax = (row) => {
    const top = row.reduceRight((m, x) => Math.max(m, x), -Infinity);
    const e = row.map((x) => Math.exp(x - top));
    const z = e.reduceRight((a, b) => a + b, 0);
    return e.map((x) => x / z);
  };
  const mix = (w) => Vc.map((col) => col.reduce((s, v, j) => s + w[j] * v, 0));
  return Q.map(compose(mix, softmax, scaleBy(1 / Math.sqrt(d)), scoresOf));
}
