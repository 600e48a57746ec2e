// Challenge 09 with memoised helpers: memo(fn) keeps a function's answers by its arguments, and the
// scores, each row's maximum and total, and the heads' outputs are memoised functions of (head, i, j)
// or (head, i, c), worked out only when an entry of the answer first asks for them.

function memo(fn) {
  const cache = new Map();
  return (...args) => {
    const key = args.join(',');
    if (!cache.has(key)) cache.set(key, fn(...args));
    return cache.get(key);
  };
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const T = Q.length;
  const d = headDimensions;
  const seen = (i, j) => !causal || j <= i;

  const score = memo((h, i, j) => {
    let s = 0;
    for (let c = 0; c < d; c++) s += Q[i][h * d + c] * K[j][h * d + c];
    return s / Math.sqrt(d);
  });
  const rowMax = memo((h, i) => {
    let top = -Infinity;
    for (let j = 0; j < T; j++) if (seen(i, j)) top = Math.max(top, score(h, i, j));
    return top;
  });
  const rowSum = memo((h, i) => {
    let total = 0;
    for (let j = 0; j < T; j++) if (seen(i, j)) total += Math.exp(score(h, i, j) - rowMax(h, i));
    return total;
  });
  const weight = (h, i, j) => (seen(i, j) ? Math.exp(score(h, i, j) - rowMax(h, i)) / rowSum(h, i) : 0);
  const headOut = memo((h, i, c) => {
    let acc = 0;
    for (let j = 0; j < T; j++) acc += weight(h, i, j) * V[j][h * d + c];
    return acc;
  });
  const joined = (i, col) => headOut(Math.floor(col / d), i, col % d);

  return Array.from({ length: T }, (_, i) =>
    Array.from({ length: C }, (_, col) => {
      if (!W_O) return joined(i, col);
      let y = 0;
      for (let r = 0; r < C; r++) y += joined(i, r) * W_O[r][col];
      return y;
    }),
  );
}
