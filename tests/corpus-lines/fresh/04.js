// A right answer with curried helpers and closures: products through a transpose (column by column), heads by Array.from, concatenation by flatMap.
const transpose = (M) => M[0].map((_, j) => M.map((row) => row[j]));
const dot = (a) => (b) => a.reduce((s, x, i) => s + x * b[i], 0);
const times = (A, B) => {
  const cols = transpose(B);
  return A.map((row) => cols.map(dot(row)));
};
const columns = (M, from, to) => M.map((row) => row.slice(from, to));
const softmaxRow = (row) => {
  const top = Math.max(...row);
  const ex = row.map((x) => Math.exp(x - top));
  const total = ex.reduce((a, b) => a + b, 0);
  return ex.map((x) => x / total);
};

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if (X[0].length !== C) throw new RangeError(`X is ${X.length}×${X[0].length} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  for (const [name, W] of Object.entries({ W_Q, W_K, W_V, W_O })) {
    if (W.length !== C || W[0].length !== C) throw new RangeError(`${name} is ${W.length}×${W[0].length} but must be C×C = ${C}×${C}`);
  }
  const project = (W) => times(X, W);
  const [Q, K, V] = [project(W_Q), project(W_K), project(W_V)];
  const heads = Array.from({ length: numberOfHeads }, (_, h) => {
    const [from, to] = [h * headDimensions, (h + 1) * headDimensions];
    const scores = times(columns(Q, from, to), transpose(columns(K, from, to)));
    const weights = scores.map((row) => softmaxRow(row.map((x) => x / Math.sqrt(headDimensions))));
    return times(weights, columns(V, from, to));
  });
  const concat = X.map((_, t) => heads.flatMap((head) => head[t]));
  return times(concat, W_O);
}
