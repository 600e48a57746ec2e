// A right answer as a reduce over the tokens whose accumulator is { cache, rows }: each token appends its key and value to a new cache (spread), then the heads are walked by recursion (head h, then h + 1), each head's part of the output row spread before the rest.
export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  const bad = (M) => M.length !== Q.length || M[0].length !== C;
  if (bad(Q) || bad(K) || bad(V)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const d = headDimensions;
  const attendHeads = (q, cache, h) => {
    if (h === numberOfHeads) return [];
    const lo = h * d;
    const hi = lo + d;
    const scores = cache.map(({ k }) => {
      let s = 0;
      for (let c = lo; c < hi; c++) s += q[c] * k[c];
      return s / Math.sqrt(d);
    });
    const top = Math.max(...scores);
    const e = scores.map((s) => Math.exp(s - top));
    const z = e.reduce((a, b) => a + b, 0);
    const part = [];
    for (let c = lo; c < hi; c++) part.push(cache.reduce((acc, { v }, j) => acc + (e[j] / z) * v[c], 0));
    return [...part, ...attendHeads(q, cache, h + 1)];
  };
  const { rows } = Q.reduce(({ cache, rows }, q, t) => {
    const next = [...cache, { k: K[t], v: V[t] }];
    return { cache: next, rows: [...rows, attendHeads(q, next, 0)] };
  }, { cache: [], rows: [] });
  return rows;
}
