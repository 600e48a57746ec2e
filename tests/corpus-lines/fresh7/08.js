// A right answer of labelled loops: for each query the keys are walked in order, `break keys` at the first key after the query and `continue keys` past a key outside the window; the band's [j, score] pairs are destructured, their max and total taken by reduceRight.
export function slidingWindowAttention(Q, K, V, { window } = {}) {
  if (window !== undefined) {
    if (typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
    if (!Number.isInteger(window) || window < 1) throw new RangeError(`options.window is ${window}; expected a positive integer`);
  }
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T×${d}, as wide as Q`);
  const w = window === undefined ? Q.length : window;
  const out = [];
  for (let p = 0; p < Q.length; p++) {
    const band = [];
    keys: for (let j = 0; j < K.length; j++) {
      if (j > p) break keys;
      if (p - j >= w) continue keys;
      let s = 0;
      for (let c = 0; c < d; c++) s += Q[p][c] * K[j][c];
      band.push([j, s / Math.sqrt(d)]);
    }
    const top = band.reduceRight((m, [, s]) => Math.max(m, s), -Infinity);
    const e = band.map(([j, s]) => [j, Math.exp(s - top)]);
    const z = e.reduceRight((acc, [, x]) => acc + x, 0);
    out.push(V[0].map((_, c) => e.reduce((acc, [j, x]) => acc + (x / z) * V[j][c], 0)));
  }
  return out;
}
