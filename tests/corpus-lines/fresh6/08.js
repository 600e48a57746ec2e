// A right answer of while loops with manual indices: each query's band runs from lo = max(0, p − w + 1) to p, its scores in a Float64Array of the band's length, exponentiated in place after Math.max(...band).
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
  let p = 0;
  while (p < Q.length) {
    const lo = Math.max(0, p - w + 1);
    const band = new Float64Array(p - lo + 1);
    let j = lo;
    while (j <= p) {
      let s = 0;
      let c = 0;
      while (c < d) {
        s += Q[p][c] * K[j][c];
        c++;
      }
      band[j - lo] = s / Math.sqrt(d);
      j++;
    }
    const top = Math.max(...band);
    let z = 0;
    let n = 0;
    while (n < band.length) {
      band[n] = Math.exp(band[n] - top);
      z += band[n];
      n++;
    }
    const row = new Array(V[0].length).fill(0);
    j = lo;
    while (j <= p) {
      let c = 0;
      while (c < row.length) {
        row[c] += (band[j - lo] / z) * V[j][c];
        c++;
      }
      j++;
    }
    out.push(row);
    p++;
  }
  return out;
}
