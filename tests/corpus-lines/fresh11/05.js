// A right answer that keeps everything in Maps, two passes per token: the cache a Map from position to { key, value }; a first pass fills a Map of logits keyed `${head}:${position}` for every head, a second pass takes each head's logits back out of it, keeps the exponentials in a Map by position with their total, and writes the blend into a Map from output column to number, read out in column order at the end.
export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const cache = new Map();
  const rows = [];
  for (let t = 0; t < Q.length; t++) {
    cache.set(t, { key: K[t], value: V[t] });
    rows.push(step(Q[t], cache, numberOfHeads, headDimensions));
  }
  return rows;
}

function step(query, cache, numberOfHeads, headDimensions) {
  const root = Math.sqrt(headDimensions);
  const logits = new Map();
  // pass 1: every logit of every head against every cached key
  for (let h = 0; h < numberOfHeads; h++) {
    const lo = h * headDimensions;
    for (const [pos, { key }] of cache) {
      let s = 0;
      for (let c = lo; c < lo + headDimensions; c++) s += query[c] * key[c];
      logits.set(`${h}:${pos}`, s / root);
    }
  }
  // pass 2: per head, the softmax of its logits and the blend of the cached values
  const out = new Map();
  for (let head = 0; head < numberOfHeads; head++) {
    const base = head * headDimensions;
    const mine = [...cache.keys()].map((pos) => logits.get(`${head}:${pos}`));
    const top = Math.max(...mine);
    const weights = new Map();
    let total = 0;
    for (const pos of cache.keys()) {
      const e = Math.exp(logits.get(`${head}:${pos}`) - top);
      weights.set(pos, e);
      total += e;
    }
    for (let c = base; c < base + headDimensions; c++) {
      let acc = 0;
      for (const [pos, { value }] of cache) acc += (weights.get(pos) / total) * value[c];
      out.set(c, acc);
    }
  }
  return Array.from({ length: out.size }, (_, c) => out.get(c));
}
