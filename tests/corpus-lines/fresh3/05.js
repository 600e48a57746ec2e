// A right answer with the cache as two flat Float64Arrays (T·C, one token's row after another) and a count; every head read from them by index arithmetic.
export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const T = Q.length;
  const d = headDimensions;
  const keys = new Float64Array(T * C);
  const values = new Float64Array(T * C);
  let n = 0;
  const out = [];
  for (let t = 0; t < T; t++) {
    keys.set(K[t], n * C);
    values.set(V[t], n * C);
    n++;
    const row = new Float64Array(C);
    for (let h = 0; h < numberOfHeads; h++) {
      const base = h * d;
      const w = new Float64Array(n);
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let c = 0; c < d; c++) s += Q[t][base + c] * keys[j * C + base + c];
        w[j] = s / Math.sqrt(d);
      }
      const m = Math.max(...w);
      let z = 0;
      for (let j = 0; j < n; j++) { w[j] = Math.exp(w[j] - m); z += w[j]; }
      for (let j = 0; j < n; j++) {
        for (let c = 0; c < d; c++) row[base + c] += (w[j] / z) * values[j * C + base + c];
      }
    }
    out.push(Array.from(row));
  }
  return out;
}
