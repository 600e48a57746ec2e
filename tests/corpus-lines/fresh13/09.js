// Style: row-major Float64Array buffers read through an idx(r, c, n) helper, the mask a nested ternary.
const idx = (r, c, n) => r * n + c;

const pack = (M) => {
  const n = M[0].length;
  const buf = new Float64Array(M.length * n);
  M.forEach((row, r) => row.forEach((x, c) => { buf[idx(r, c, n)] = x; }));
  return buf;
};

const unpack = (buf, rows, n) => Array.from({ length: rows }, (_, r) => Array.from(buf.subarray(r * n, r * n + n)));

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const T = Q.length;
  const d = headDimensions;
  const q = pack(Q);
  const k = pack(K);
  const v = pack(V);
  const joined = new Float64Array(T * C);
  const p = new Float64Array(T);
  for (let h = 0; h < numberOfHeads; h++) {
    const base = h * d;
    for (let i = 0; i < T; i++) {
      let top = -Infinity;
      for (let j = 0; j < T; j++) {
        let s = 0;
        for (let c = 0; c < d; c++) s += q[idx(i, base + c, C)] * k[idx(j, base + c, C)];
        p[j] = causal ? (j > i ? -Infinity : s / Math.sqrt(d)) : s / Math.sqrt(d);
        if (p[j] > top) top = p[j];
      }
      let z = 0;
      for (let j = 0; j < T; j++) {
        p[j] = Math.exp(p[j] - top);
        z += p[j];
      }
      for (let j = 0; j < T; j++) {
        for (let c = 0; c < d; c++) joined[idx(i, base + c, C)] += (p[j] / z) * v[idx(j, base + c, C)];
      }
    }
  }
  if (!W_O) return unpack(joined, T, C);
  const w = pack(W_O);
  const y = new Float64Array(T * C);
  for (let t = 0; t < T; t++) {
    for (let j = 0; j < C; j++) {
      let acc = 0;
      for (let i = 0; i < C; i++) acc += joined[idx(t, i, C)] * w[idx(i, j, C)];
      y[idx(t, j, C)] = acc;
    }
  }
  return unpack(y, T, C);
}
