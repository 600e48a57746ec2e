// A right answer that keeps only the band: per query a Float64Array of its scores, key j at index j − lo, the queries by for…of over Q.entries(), the weighted sum by reduce over the band.
export function slidingWindowAttention(Q, K, V, { window } = {}) {
  if (window !== undefined && typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
  if (window !== undefined && (!Number.isInteger(window) || window < 1)) throw new RangeError(`options.window is ${window}; expected a positive integer`);
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T×${d}, as wide as Q`);
  const w = window ?? Q.length;
  const out = [];
  for (const [p, q] of Q.entries()) {
    const lo = Math.max(0, p - w + 1);
    const band = new Float64Array(p - lo + 1);
    for (let j = lo; j <= p; j++) band[j - lo] = K[j].reduce((s, x, c) => s + x * q[c], 0) / Math.sqrt(d);
    const top = Math.max(...band);
    const e = band.map((x) => Math.exp(x - top));
    const z = e.reduce((a, b) => a + b, 0);
    out.push(q.map((_, c) => e.reduce((acc, x, n) => acc + (x / z) * V[lo + n][c], 0)));
  }
  return out;
}
