// Challenge 05: a growing KV cache, and for each token the heads done by splitting the range of heads
// in two until a single head is left, the halves' outputs joined on the way back up.

export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const cachedKeys = [];
  const cachedValues = [];
  const output = [];
  for (let t = 0; t < Q.length; t++) {
    cachedKeys.push(K[t]);
    cachedValues.push(V[t]);
    output.push(headsBetween(0, numberOfHeads, Q[t], cachedKeys, cachedValues, headDimensions));
  }
  return output;
}

// The output columns of heads lo..hi-1 for one query row.
function headsBetween(lo, hi, query, keys, values, d) {
  if (hi - lo === 1) return oneHead(lo * d, query, keys, values, d);
  const mid = Math.floor((lo + hi) / 2);
  const left = headsBetween(lo, mid, query, keys, values, d);
  const right = headsBetween(mid, hi, query, keys, values, d);
  return left.concat(right);
}

function oneHead(start, query, keys, values, d) {
  const q = query.slice(start, start + d);
  const logits = keys.map((key) => {
    let s = 0;
    for (let c = 0; c < d; c++) s += q[c] * key[start + c];
    return s / Math.sqrt(d);
  });
  const best = Math.max(...logits);
  const exps = logits.map((x) => Math.exp(x - best));
  const total = exps.reduce((a, b) => a + b, 0);
  const mixed = new Array(d).fill(0);
  exps.forEach((e, j) => {
    for (let c = 0; c < d; c++) mixed[c] += (e / total) * values[j][start + c];
  });
  return mixed;
}
