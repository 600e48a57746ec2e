// Challenge 09 on flat arrays: every matrix one Array.from({ length }) read by index arithmetic, the
// rows nested again only when the answer is handed back.

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const T = Q.length;
  const d = headDimensions;
  const flat = (M) => Array.from({ length: T * C }, (_, n) => M[Math.floor(n / C)][n % C]);
  const q = flat(Q);
  const k = flat(K);
  const v = flat(V);

  // the scores of every head, entry (h * T + i) * T + j
  const scores = Array.from({ length: numberOfHeads * T * T }, (_, n) => {
    const h = Math.floor(n / (T * T));
    const i = Math.floor(n / T) % T;
    const j = n % T;
    let s = 0;
    for (let c = 0; c < d; c++) s += q[i * C + h * d + c] * k[j * C + h * d + c];
    return s / Math.sqrt(d);
  });
  const visible = (n) => !causal || n % T <= Math.floor(n / T) % T;
  const exps = scores.map((s, n) => {
    if (!visible(n)) return 0;
    const rowStart = n - (n % T);
    let top = -Infinity;
    for (let j = 0; j < T; j++) if (visible(rowStart + j)) top = Math.max(top, scores[rowStart + j]);
    return Math.exp(s - top);
  });
  const weights = exps.map((e, n) => {
    const rowStart = n - (n % T);
    let sum = 0;
    for (let j = 0; j < T; j++) sum += exps[rowStart + j];
    return e / sum;
  });
  // the heads side by side: column h * d + c of row i
  const joined = Array.from({ length: T * C }, (_, n) => {
    const i = Math.floor(n / C);
    const h = Math.floor((n % C) / d);
    const c = n % d;
    let acc = 0;
    for (let j = 0; j < T; j++) acc += weights[(h * T + i) * T + j] * v[j * C + h * d + c];
    return acc;
  });
  const Wo = W_O ?? Array.from({ length: C }, (_, r) => Array.from({ length: C }, (_, c) => (r === c ? 1 : 0)));
  const projected = Array.from({ length: T * C }, (_, n) => {
    const i = Math.floor(n / C);
    const col = n % C;
    let total = 0;
    for (let r = 0; r < C; r++) total += joined[i * C + r] * Wo[r][col];
    return total;
  });
  return Array.from({ length: T }, (_, i) => projected.slice(i * C, (i + 1) * C));
}
