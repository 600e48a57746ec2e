// Challenge 05: decode one token at a time with a KV cache.
// Write decode(Q, K, V, { numberOfHeads, headDimensions }) and keep the `export`.
// Q, K and V are T×C with C = numberOfHeads · headDimensions; row t is what token t brings.
// Plain JavaScript only: no imports. The helpers below are yours to use or change.

export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  // 0. if Q, K or V is not T×C (same T for all), throw
  //    new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions')
  const cache = { keys: [], values: [] };
  const rows = [];
  for (let t = 0; t < Q.length; t++) {
    // 1. append row t of K and row t of V to the cache
    // 2. for each head: scores of Q[t]'s head slice against every cached key's head slice,
    //    scaled by 1/√headDimensions; softmax; the weighted sum of the cached values' head slices
    // 3. push output row t (all heads side by side, C numbers)
    // Read K and V only through the cache: token t must not see rows after t.
    throw new Error('not written yet');
  }
  return rows;
}

function dot(a, b) {
  return a.reduce((sum, x, i) => sum + x * b[i], 0);
}
