// expect: scale
// title: multiplied by 1 (no scaling)
// link: mode=decoding&step=token
// No scaling.
// Reference answer for challenge 05: decoding one token at a time with a KV cache.
// Q, K and V are T×C with C = numberOfHeads · headDimensions: row t is what token t brings.
// Token t appends its key and value to the cache, then its query attends over the cache only.
// The result (T×C) equals one causal pass of multi-head attention over the whole sequence.

export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const cache = { keys: [], values: [] }; // grows by one row per token
  const rows = [];
  for (let t = 0; t < Q.length; t++) {
    append(cache, K[t], V[t]); // token t's key and value join the cache first: it may attend to itself
    rows.push(attendToCache(Q[t], cache, numberOfHeads, headDimensions));
  }
  return rows; // (T, C)
}

function append(cache, key, value) {
  cache.keys.push(key); cache.values.push(value);
}

// One query row (C numbers) against every cached key and value: one output row (C numbers).
function attendToCache(query, cache, numberOfHeads, headDimensions) {
  const scale = 1;
  const row = [];
  for (let head = 0; head < numberOfHeads; head++) {
    const start = head * headDimensions;
    const end = start + headDimensions;
    const q = query.slice(start, end);
    const scores = cache.keys.map((key) => dot(q, key.slice(start, end)) * scale); // (t + 1)
    const weights = softmax(scores);                                              // (t + 1)
    for (let c = start; c < end; c++) {
      row.push(weights.reduce((sum, w, j) => sum + w * cache.values[j][c], 0));
    }
  }
  return row;
}

function dot(a, b) {
  return a.reduce((sum, x, i) => sum + x * b[i], 0);
}

function softmax(row) {
  const max = Math.max(...row);
  const exps = row.map((x) => Math.exp(x - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}
