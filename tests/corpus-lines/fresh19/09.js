// Challenge 09: each head streams its keys once, FlashAttention style. A query keeps a running
// maximum m, a running denominator l and a running output acc; when a larger score arrives, l and acc
// are rescaled by exp(m_old − m_new). With causal, the stream stops after key i.

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  const T = Q.length;
  const good = (M) => M.length === T && M.every((row) => row.length === C);
  if (!good(Q) || !good(K) || !good(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const scale = 1 / Math.sqrt(headDimensions);
  const joined = Array.from({ length: T }, () => new Array(C).fill(0));

  for (let h = 0; h < numberOfHeads; h++) {
    const lo = h * headDimensions;
    for (let i = 0; i < T; i++) {
      const last = causal ? i : T - 1;
      let m = -Infinity;
      let l = 0;
      const acc = new Array(headDimensions).fill(0);
      for (let j = 0; j <= last; j++) {
        let s = 0;
        for (let c = 0; c < headDimensions; c++) s += Q[i][lo + c] * K[j][lo + c];
        s *= scale;
        const mNew = Math.max(m, s);
        const shrink = Math.exp(m - mNew);
        const p = Math.exp(s - mNew);
        l = l * shrink + p;
        for (let c = 0; c < headDimensions; c++) acc[c] = acc[c] * shrink + p * V[j][lo + c];
        m = mNew;
      }
      for (let c = 0; c < headDimensions; c++) joined[i][lo + c] = acc[c] / l;
    }
  }

  if (!W_O) return joined;
  return joined.map((row) => {
    const projected = new Array(C).fill(0);
    for (let r = 0; r < C; r++) {
      for (let o = 0; o < C; o++) projected[o] += row[r] * W_O[r][o];
    }
    return projected;
  });
}
