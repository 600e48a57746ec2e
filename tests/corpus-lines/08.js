// A right answer row by row with map/reduce: each query scores only the keys in its band, sliced out.
export function slidingWindowAttention(Q, K, V, { window } = {}) {
  if (window !== undefined && typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
  if (window !== undefined && (!Number.isInteger(window) || window < 1)) throw new RangeError(`options.window is ${window}; expected a positive integer`);
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T×${d}, as wide as Q`);
  const w = window ?? Infinity;
  return Q.map((q, p) => {
    const first = Math.max(0, p - w + 1);
    const keys = K.slice(first, p + 1);
    const values = V.slice(first, p + 1);
    const scores = keys.map((k) => k.reduce((s, x, c) => s + x * q[c], 0) / Math.sqrt(d));
    const top = Math.max(...scores);
    const exps = scores.map((s) => Math.exp(s - top));
    const sum = exps.reduce((a, b) => a + b, 0);
    return q.map((_, c) => values.reduce((acc, v, j) => acc + (exps[j] / sum) * v[c], 0));
  });
}
