// A right answer over a tiny matrix "library" object (mul, t, cols, hcat, scaleBy, rowSoftmax): the projections, each head's scores and weighted sum and W_O are calls into it, the heads joined by its hcat.
const M = {
  mul: (A, B) => A.map((a) => B[0].map((_, j) => a.reduce((s, x, k) => s + x * B[k][j], 0))),
  t: (A) => A[0].map((_, c) => A.map((row) => row[c])),
  cols: (A, from, to) => A.map((row) => row.slice(from, to)),
  hcat: (parts) => parts[0].map((_, i) => parts.reduce((row, P) => row.concat(P[i]), [])),
  scaleBy: (A, f) => A.map((row) => row.map((x) => x * f)),
  rowSoftmax: (A) => A.map((row) => {
    const top = Math.max(...row);
    const e = row.map((x) => Math.exp(x - top));
    const z = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / z);
  }),
};

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if (X[0].length !== C) throw new RangeError(`X is ${X.length}×${X[0].length} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  for (const [name, W] of Object.entries({ W_Q, W_K, W_V, W_O })) {
    if (W.length !== C || W[0].length !== C) throw new RangeError(`${name} is ${W.length}×${W[0].length} but must be C×C = ${C}×${C}`);
  }
  const d = headDimensions;
  const Q = M.mul(X, W_Q);
  const K = M.mul(X, W_K);
  const V = M.mul(X, W_V);
  const heads = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const [from, to] = [h * d, (h + 1) * d];
    const S = M.scaleBy(M.mul(M.cols(Q, from, to), M.t(M.cols(K, from, to))), 1 / Math.sqrt(d));
    heads.push(M.mul(M.rowSoftmax(S), M.cols(V, from, to)));
  }
  return M.mul(M.hcat(heads), W_O);
}
