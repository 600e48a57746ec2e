// A right answer with every product as rows against rows: each weight matrix transposed by a helper and each token row dotted with its rows; the concatenation built by a reduce over the heads' offsets that extends every output row.
const transpose = (M) => M[0].map((_, c) => M.map((row) => row[c]));

const dot = (a, b) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

const times = (X, W) => {
  const Wt = transpose(W);
  return X.map((x) => Wt.map((w) => dot(x, w)));
};

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if (X[0].length !== C) throw new RangeError(`X is ${X.length}×${X[0].length} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  for (const [name, W] of Object.entries({ W_Q, W_K, W_V, W_O })) {
    if (W.length !== C || W[0].length !== C) throw new RangeError(`${name} is ${W.length}×${W[0].length} but must be C×C = ${C}×${C}`);
  }
  const d = headDimensions;
  const Q = times(X, W_Q);
  const K = times(X, W_K);
  const V = times(X, W_V);
  const offsets = Array.from({ length: numberOfHeads }, (_, h) => h * d);
  const concat = offsets.reduce((rows, from) => {
    const k = K.map((row) => row.slice(from, from + d));
    const vt = transpose(V.map((row) => row.slice(from, from + d)));
    return rows.map((row, t) => {
      const q = Q[t].slice(from, from + d);
      const s = k.map((kj) => dot(q, kj) / Math.sqrt(d));
      const top = Math.max(...s);
      const e = s.map((x) => Math.exp(x - top));
      const z = e.reduce((a, b) => a + b, 0);
      const w = e.map((x) => x / z);
      return row.concat(vt.map((column) => dot(w, column)));
    });
  }, X.map(() => []));
  return times(concat, W_O);
}
