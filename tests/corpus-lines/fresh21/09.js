// Challenge 09 in one Float64Array arena: Q, K, V, the scores, the concatenation and W_O are regions
// of a single buffer at fixed offsets, each read and written through a view { at, rowStride,
// colStride }, so that Kᵀ is K's own region with its two strides swapped.

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  const T = Q.length;
  for (const M of [Q, K, V]) {
    if (M.length !== T || M.some((row) => row.length !== C)) {
      throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
    }
  }
  const d = headDimensions;
  const qAt = 0;
  const kAt = qAt + T * C;
  const vAt = kAt + T * C;
  const sAt = vAt + T * C;
  const catAt = sAt + T * T;
  const woAt = catAt + T * C;
  const arena = new Float64Array(woAt + C * C);
  const view = (at, rowStride, colStride) => ({ at, rowStride, colStride });
  const get = (m, r, c) => arena[m.at + r * m.rowStride + c * m.colStride];
  const put = (m, r, c, x) => {
    arena[m.at + r * m.rowStride + c * m.colStride] = x;
  };
  const q = view(qAt, C, 1);
  const kT = view(kAt, 1, C);
  const v = view(vAt, C, 1);
  const s = view(sAt, T, 1);
  const cat = view(catAt, C, 1);
  const wo = view(woAt, C, 1);
  for (let t = 0; t < T; t++) {
    arena.set(Q[t], qAt + t * C);
    arena.set(K[t], kAt + t * C);
    arena.set(V[t], vAt + t * C);
  }
  for (let r = 0; r < C; r++) {
    for (let c = 0; c < C; c++) put(wo, r, c, W_O ? W_O[r][c] : r === c ? 1 : 0);
  }
  for (let h = 0; h < numberOfHeads; h++) {
    const col = h * d;
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < T; j++) {
        let dot = 0;
        for (let c = 0; c < d; c++) dot += get(q, i, col + c) * get(kT, col + c, j);
        put(s, i, j, dot / Math.sqrt(d));
      }
      const seen = causal ? i + 1 : T;
      let top = -Infinity;
      for (let j = 0; j < seen; j++) top = Math.max(top, get(s, i, j));
      let total = 0;
      for (let j = 0; j < T; j++) {
        put(s, i, j, j < seen ? Math.exp(get(s, i, j) - top) : 0);
        total += get(s, i, j);
      }
      for (let c = 0; c < d; c++) {
        let sum = 0;
        for (let j = 0; j < T; j++) sum += (get(s, i, j) / total) * get(v, j, col + c);
        put(cat, i, col + c, sum);
      }
    }
  }
  const out = [];
  for (let i = 0; i < T; i++) {
    const outRow = new Array(C).fill(0);
    for (let j = 0; j < C; j++) {
      for (let c = 0; c < C; c++) outRow[j] += get(cat, i, c) * get(wo, c, j);
    }
    out.push(outRow);
  }
  return out;
}
