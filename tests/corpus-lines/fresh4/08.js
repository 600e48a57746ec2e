// A right answer with each query's band in a Map from key index to score (an early `continue` skips the keys outside it), the softmax as a pass of exponentials then a separate normalize pass over the Map, the output filled from its entries.
export function slidingWindowAttention(Q, K, V, { window } = {}) {
  if (window !== undefined && typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
  if (window !== undefined && (!Number.isInteger(window) || window < 1)) throw new RangeError(`options.window is ${window}; expected a positive integer`);
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T×${d}, as wide as Q`);
  const w = window ?? Q.length;
  return Q.map((q, p) => {
    const band = new Map();
    for (let j = 0; j < K.length; j++) {
      if (j > p || j <= p - w) continue;
      band.set(j, K[j].reduce((s, x, c) => s + x * q[c], 0) / Math.sqrt(d));
    }
    const top = Math.max(...band.values());
    let z = 0;
    for (const [j, s] of band) {
      const e = Math.exp(s - top);
      band.set(j, e);
      z += e;
    }
    for (const [j, e] of band) band.set(j, e / z);
    const out = new Array(V[0].length).fill(0);
    for (const [j, a] of band) for (let c = 0; c < out.length; c++) out[c] += a * V[j][c];
    return out;
  });
}
