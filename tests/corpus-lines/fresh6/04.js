// A right answer in one big function with no helpers, every matrix stored column-major as an array of columns (Qc[c][t] is Q's column c at token t; W[j][i] is key j's weight for query i).
export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  const T = X.length;
  if (X[0].length !== C) throw new RangeError(`X is ${T}×${X[0].length} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  for (const [name, W] of [['W_Q', W_Q], ['W_K', W_K], ['W_V', W_V], ['W_O', W_O]]) {
    if (W.length !== C || W[0].length !== C) throw new RangeError(`${name} is ${W.length}×${W[0].length} but must be C×C = ${C}×${C}`);
  }
  const d = headDimensions;
  const Qc = [];
  const Kc = [];
  const Vc = [];
  for (let o = 0; o < C; o++) {
    const [q, k, v] = [new Array(T).fill(0), new Array(T).fill(0), new Array(T).fill(0)];
    for (let t = 0; t < T; t++) {
      for (let c = 0; c < C; c++) {
        q[t] += X[t][c] * W_Q[c][o];
        k[t] += X[t][c] * W_K[c][o];
        v[t] += X[t][c] * W_V[c][o];
      }
    }
    Qc.push(q);
    Kc.push(k);
    Vc.push(v);
  }
  const Oc = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const first = h * d;
    const W = [];
    for (let j = 0; j < T; j++) {
      const col = new Array(T).fill(0);
      for (let c = first; c < first + d; c++) for (let i = 0; i < T; i++) col[i] += Qc[c][i] * Kc[c][j];
      W.push(col.map((s) => s / Math.sqrt(d)));
    }
    for (let i = 0; i < T; i++) {
      let top = -Infinity;
      for (let j = 0; j < T; j++) top = Math.max(top, W[j][i]);
      let z = 0;
      for (let j = 0; j < T; j++) {
        W[j][i] = Math.exp(W[j][i] - top);
        z += W[j][i];
      }
      for (let j = 0; j < T; j++) W[j][i] /= z;
    }
    for (let c = first; c < first + d; c++) {
      const out = new Array(T).fill(0);
      for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) out[i] += W[j][i] * Vc[c][j];
      Oc.push(out);
    }
  }
  return Array.from({ length: T }, (_, t) => {
    const row = new Array(C).fill(0);
    for (let o = 0; o < C; o++) for (let c = 0; c < C; c++) row[o] += Oc[c][t] * W_O[c][o];
    return row;
  });
}
