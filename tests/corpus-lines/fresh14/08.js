// Style: column-major storage: every matrix kept as the list of its columns (Kc[c][j] is key j's entry c), the scores and weights flat Float64Arrays in column-major order, S[j * T + p] for query p and key j.
const toColumns = (M) => M[0].map((_, c) => M.map((row) => row[c]));
const toRows = (cols) => cols[0].map((_, r) => cols.map((col) => col[r]));

export function slidingWindowAttention(Q, K, V, { window } = {}) {
  if (window !== undefined) {
    if (typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
    if (!Number.isInteger(window) || window < 1) throw new RangeError(`options.window is ${window}; expected a positive integer`);
  }
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T×${d}, as wide as Q`);
  const T = Q.length;
  const w = window === undefined ? T : window;
  const Qc = toColumns(Q);
  const Kc = toColumns(K);
  const Vc = toColumns(V);

  const S = new Float64Array(T * T);
  for (let j = 0; j < T; j++) {
    for (let p = 0; p < T; p++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += Qc[c][p] * Kc[c][j];
      S[j * T + p] = s;
    }
  }
  const root = Math.sqrt(d);
  for (let n = 0; n < S.length; n++) S[n] /= root;
  for (let j = 0; j < T; j++) {
    for (let p = 0; p < T; p++) {
      const inside = j <= p && j > p - w;
      if (!inside) S[j * T + p] = -Infinity;
    }
  }

  // a query's entries are T apart in column-major order
  const P = new Float64Array(T * T);
  for (let p = 0; p < T; p++) {
    let peak = -Infinity;
    for (let j = 0; j < T; j++) peak = Math.max(peak, S[j * T + p]);
    let total = 0;
    for (let j = 0; j < T; j++) {
      P[j * T + p] = Math.exp(S[j * T + p] - peak);
      total += P[j * T + p];
    }
    for (let j = 0; j < T; j++) P[j * T + p] /= total;
  }

  const Oc = Vc.map((col) => {
    const out = new Array(T).fill(0);
    for (let p = 0; p < T; p++) {
      for (let j = 0; j < T; j++) out[p] += P[j * T + p] * col[j];
    }
    return out;
  });
  return toRows(Oc);
}
