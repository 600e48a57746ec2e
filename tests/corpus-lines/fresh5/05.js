// A right answer as a generator yielding one output row per token: the cache two flat Float64Array buffers of T·C with a row stride of C and a count n, each head's scores and weights in a Float64Array of n, the output accumulated into the row by index arithmetic.
function* tokens(Q, K, V, H, d) {
  const C = H * d;
  const keys = new Float64Array(Q.length * C);
  const values = new Float64Array(Q.length * C);
  let n = 0;
  for (let t = 0; t < Q.length; t++) {
    keys.set(K[t], n * C);
    values.set(V[t], n * C);
    n += 1;
    const out = new Array(C).fill(0);
    for (let h = 0; h < H; h++) {
      const w = new Float64Array(n);
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let c = 0; c < d; c++) s += Q[t][h * d + c] * keys[j * C + h * d + c];
        w[j] = s / Math.sqrt(d);
      }
      const top = Math.max(...w);
      let z = 0;
      for (let j = 0; j < n; j++) {
        w[j] = Math.exp(w[j] - top);
        z += w[j];
      }
      for (let j = 0; j < n; j++) {
        for (let c = 0; c < d; c++) out[h * d + c] += (w[j] / z) * values[j * C + h * d + c];
      }
    }
    yield out;
  }
}

export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  return [...tokens(Q, K, V, numberOfHeads, headDimensions)];
}
