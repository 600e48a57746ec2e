// A right answer with a cache made by a closure and a generator that yields one output row per token; each head a subarray view.
function makeCache() {
  const keys = [];
  const values = [];
  return {
    add(k, v) { keys.push(k); values.push(v); },
    get size() { return keys.length; },
    key: (j) => keys[j],
    value: (j) => values[j],
  };
}

function* decodeRows(Q, K, V, H, d) {
  const cache = makeCache();
  for (const [t, q] of Q.entries()) {
    cache.add(Float64Array.from(K[t]), Float64Array.from(V[t]));
    const row = new Float64Array(H * d);
    for (let h = 0; h < H; h++) {
      const qh = q.slice(h * d, (h + 1) * d);
      const logits = [];
      for (let j = 0; j < cache.size; j++) {
        const kh = cache.key(j).subarray(h * d, (h + 1) * d);
        logits.push(kh.reduce((s, x, c) => s + x * qh[c], 0) / Math.sqrt(d));
      }
      const top = Math.max(...logits);
      const e = logits.map((x) => Math.exp(x - top));
      const z = e.reduce((a, b) => a + b, 0);
      const out = row.subarray(h * d, (h + 1) * d);
      for (const [j, p] of e.entries()) {
        const vh = cache.value(j).subarray(h * d, (h + 1) * d);
        for (let c = 0; c < d; c++) out[c] += (p / z) * vh[c];
      }
    }
    yield Array.from(row);
  }
}

export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  return [...decodeRows(Q, K, V, numberOfHeads, headDimensions)];
}
