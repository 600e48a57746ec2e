// A right answer with the cache as a class that is its own iterator ([Symbol.iterator] yields { key, value } per cached token), the heads of each output row joined by flatMap.
class KVCache {
  constructor() {
    this.keys = [];
    this.values = [];
  }

  append(key, value) {
    this.keys.push(key);
    this.values.push(value);
  }

  *[Symbol.iterator]() {
    for (let j = 0; j < this.keys.length; j++) yield { key: this.keys[j], value: this.values[j] };
  }
}

export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const d = headDimensions;
  const cache = new KVCache();
  const heads = [...Array(numberOfHeads).keys()];
  return Q.map((query, t) => {
    cache.append(K[t], V[t]);
    return heads.flatMap((h) => {
      const cols = [...Array(d).keys()].map((c) => h * d + c);
      const scores = [];
      for (const { key } of cache) scores.push(cols.reduce((s, c) => s + query[c] * key[c], 0) / Math.sqrt(d));
      const top = Math.max(...scores);
      const exps = scores.map((s) => Math.exp(s - top));
      const z = exps.reduce((a, b) => a + b, 0);
      const out = cols.map(() => 0);
      let j = 0;
      for (const { value } of cache) {
        cols.forEach((c, n) => { out[n] += (exps[j] / z) * value[c]; });
        j++;
      }
      return out;
    });
  });
}
