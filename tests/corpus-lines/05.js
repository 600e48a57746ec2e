// A right answer with a KVCache class, one token at a time, the heads of a token into one Float64Array.
class KVCache {
  constructor() { this.keys = []; this.values = []; }
  append(k, v) { this.keys.push(k); this.values.push(v); }
}

function headSlice(row, h, d) {
  return row.slice(h * d, (h + 1) * d);
}

function attendToken(q, cache, numberOfHeads, d) {
  const out = new Float64Array(numberOfHeads * d);
  for (let h = 0; h < numberOfHeads; h++) {
    const qh = headSlice(q, h, d);
    const scores = cache.keys.map((k) => headSlice(k, h, d).reduce((s, x, c) => s + x * qh[c], 0) / Math.sqrt(d));
    const m = Math.max(...scores);
    const e = scores.map((x) => Math.exp(x - m));
    const z = e.reduce((a, b) => a + b, 0);
    cache.values.forEach((v, j) => {
      const vh = headSlice(v, h, d);
      for (let c = 0; c < d; c++) out[h * d + c] += (e[j] / z) * vh[c];
    });
  }
  return Array.from(out);
}

export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  for (const M of [Q, K, V]) {
    if (M.length !== Q.length || M[0].length !== C) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const cache = new KVCache();
  const out = [];
  for (let t = 0; t < Q.length; t++) {
    cache.append(K[t], V[t]);
    out.push(attendToken(Q[t], cache, numberOfHeads, headDimensions));
  }
  return out;
}
