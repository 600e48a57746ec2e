// A right answer whose cache is split by head as the tokens arrive: append() cuts the new key and value rows into per-head lists once, and each head then reads only its own lists; for…in over the heads and over the cached positions, destructuring everywhere.
function makeCache(heads, width) {
  const perHead = Array.from({ length: heads }, () => ({ keys: [], values: [] }));
  const cut = (row, h) => row.slice(h * width, (h + 1) * width);
  return {
    perHead,
    append(keyRow, valueRow) {
      for (const name in perHead) {
        const idx = Number(name);
        const { keys, values } = perHead[idx];
        keys.push(cut(keyRow, idx));
        values.push(cut(valueRow, idx));
      }
    },
  };
}

export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const width = numberOfHeads * headDimensions;
  const bad = [Q, K, V].find((M) => M.length !== Q.length || M[0].length !== width);
  if (bad) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const cache = makeCache(numberOfHeads, headDimensions);
  const root = Math.sqrt(headDimensions);
  const result = [];
  for (const [t, query] of Q.entries()) {
    cache.append(K[t], V[t]);
    const out = [];
    for (const key in cache.perHead) {
      const h = +key;
      const { keys, values } = cache.perHead[h];
      const qh = query.slice(h * headDimensions, (h + 1) * headDimensions);
      const logits = keys.map((k) => k.reduce((s, x, c) => s + x * qh[c], 0) / root);
      const top = Math.max(...logits);
      const ex = logits.map((x) => Math.exp(x - top));
      const z = ex.reduce((a, b) => a + b, 0);
      const mix = new Array(headDimensions).fill(0);
      for (const pos in values) {
        const { [pos]: w } = ex;
        values[pos].forEach((x, c) => { mix[c] += (w / z) * x; });
      }
      out.push(...mix);
    }
    result.push(out);
  }
  return result;
}
