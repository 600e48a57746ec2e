// A right answer with a filter over the keys: each query keeps the entries { j, s } of its band, then weighted reduces over them.
export function slidingWindowAttention(Q, K, V, { window } = {}) {
  if (window !== undefined && typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
  if (window !== undefined && (!Number.isInteger(window) || window < 1)) throw new RangeError(`options.window is ${window}; expected a positive integer`);
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T×${d}, as wide as Q`);
  const w = window ?? Infinity;
  return Q.map((q, p) => {
    const band = K.map((k, j) => ({ j, s: k.reduce((acc, x, c) => acc + x * q[c], 0) / Math.sqrt(d) })).filter(({ j }) => j <= p && p - j < w);
    const top = Math.max(...band.map(({ s }) => s));
    const exps = band.map(({ j, s }) => ({ j, e: Math.exp(s - top) }));
    const total = exps.reduce((acc, { e }) => acc + e, 0);
    return q.map((_, c) => exps.reduce((acc, { j, e }) => acc + (e / total) * V[j][c], 0));
  });
}
