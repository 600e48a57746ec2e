// A right answer with the scores in one flat Float64Array, −Infinity outside the band (a closure says which keys), the output filled column by column.
export function slidingWindowAttention(Q, K, V, { window } = {}) {
  if (window !== undefined && typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
  if (window !== undefined && (!Number.isInteger(window) || window < 1)) throw new RangeError(`options.window is ${window}; expected a positive integer`);
  const T = Q.length;
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T×${d}, as wide as Q`);
  const w = window ?? T;
  const inBand = (p, j) => j <= p && j > p - w;
  const S = new Float64Array(T * T).fill(-Infinity);
  for (let p = 0; p < T; p++) {
    for (let j = 0; j < T; j++) {
      if (!inBand(p, j)) continue;
      let s = 0;
      for (let c = 0; c < d; c++) s += Q[p][c] * K[j][c];
      S[p * T + j] = s / Math.sqrt(d);
    }
  }
  for (let i = 0; i < T; i++) {
    const row = S.subarray(i * T, (i + 1) * T);
    const top = Math.max(...row);
    let sum = 0;
    for (let j = 0; j < T; j++) { row[j] = Math.exp(row[j] - top); sum += row[j]; }
    for (let j = 0; j < T; j++) row[j] /= sum;
  }
  const out = Q.map(() => new Array(d).fill(0));
  for (let c = 0; c < d; c++) {
    for (let q = 0; q < T; q++) {
      for (let j = 0; j < T; j++) out[q][c] += S[q * T + j] * V[j][c];
    }
  }
  return out;
}
