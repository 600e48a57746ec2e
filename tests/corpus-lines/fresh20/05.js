// Challenge 05 with the cache transposed, a struct of arrays: one growing array per feature column,
// keyCols[c][t] and valueCols[c][t], each token pushing its entries onto every column; a head reads
// its columns first … first + width − 1 of the cache over the tokens cached so far.

function makeCache(C) {
  return {
    keyCols: Array.from({ length: C }, () => []),
    valueCols: Array.from({ length: C }, () => []),
  };
}

function append(cache, key, value) {
  for (let c = 0; c < key.length; c++) {
    cache.keyCols[c].push(key[c]);
    cache.valueCols[c].push(value[c]);
  }
}

// one head of one query: its width numbers
function attendHead(query, cache, first, width) {
  const n = cache.keyCols[0].length; // tokens cached so far
  const logits = new Array(n).fill(0);
  for (let c = first; c < first + width; c++) {
    for (let j = 0; j < n; j++) logits[j] += query[c] * cache.keyCols[c][j];
  }
  const scaled = logits.map((s) => s / Math.sqrt(width));
  const top = Math.max(...scaled);
  const exps = scaled.map((s) => Math.exp(s - top));
  const total = exps.reduce((a, b) => a + b, 0);
  const weights = exps.map((e) => e / total);
  const out = [];
  for (let c = first; c < first + width; c++) {
    out.push(cache.valueCols[c].reduce((s, x, j) => s + weights[j] * x, 0));
  }
  return out;
}

function attendAll(query, cache, numberOfHeads, headDimensions) {
  const row = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const part = attendHead(query, cache, h * headDimensions, headDimensions);
    row.push(...part);
  }
  return row;
}

export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M.every((row) => row.length === C);
  if (!fits(Q) || !fits(K) || !fits(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const cache = makeCache(C);
  const out = [];
  for (let t = 0; t < Q.length; t++) {
    append(cache, K[t], V[t]);
    out.push(attendAll(Q[t], cache, numberOfHeads, headDimensions));
  }
  return out;
}
