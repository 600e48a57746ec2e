// Streaming (online) softmax per head: a running max, a running sum and a running output,
// rescaled whenever a cached key raises the max; the cache is a list of { k, v } entries.
export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const cache = [];
  const out = [];
  for (let t = 0; t < Q.length; t++) {
    cache.push({ k: K[t], v: V[t] });
    const row = [];
    for (let h = 0; h < numberOfHeads; h++) {
      const lo = h * headDimensions;
      const q = Q[t].slice(lo, lo + headDimensions);
      let m = -Infinity;
      let l = 0;
      let acc = new Array(headDimensions).fill(0);
      for (const { k, v } of cache) {
        const key = k.slice(lo, lo + headDimensions);
        let s = 0;
        for (let c = 0; c < headDimensions; c++) s += q[c] * key[c];
        s /= Math.sqrt(headDimensions);
        const m2 = Math.max(m, s);
        const shrink = Math.exp(m - m2);
        const p = Math.exp(s - m2);
        l = l * shrink + p;
        acc = acc.map((a, c) => a * shrink + p * v[lo + c]);
        m = m2;
      }
      row.push(...acc.map((a) => a / l));
    }
    out.push(row);
  }
  return out;
}
