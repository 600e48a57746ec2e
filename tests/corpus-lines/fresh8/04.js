// Softmax by log-sum-exp (exp(x − lse)), one linear() helper, heads by Array.from.
export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  checkAll(X, { W_Q, W_K, W_V, W_O }, numberOfHeads, headDimensions);
  const Q = linear(X, W_Q);
  const K = linear(X, W_K);
  const V = linear(X, W_V);
  const heads = Array.from({ length: numberOfHeads }, (_, h) => {
    const cols = (M) => M.map((row) => row.slice(h * headDimensions, (h + 1) * headDimensions));
    const [q, k, v] = [cols(Q), cols(K), cols(V)];
    return q.map((qi) => {
      const logits = k.map((kj) => dot(qi, kj) / Math.sqrt(headDimensions));
      const top = Math.max(...logits);
      const lse = top + Math.log(logits.reduce((s, x) => s + Math.exp(x - top), 0));
      const p = logits.map((x) => Math.exp(x - lse));
      return Array.from({ length: headDimensions }, (_, c) => p.reduce((s, pj, j) => s + pj * v[j][c], 0));
    });
  });
  const joined = X.map((_, t) => Array.from({ length: C }, (_, c) => heads[Math.floor(c / headDimensions)][t][c % headDimensions]));
  return linear(joined, W_O);
}

function dot(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

function linear(A, W) {
  return A.map((row) => W[0].map((_, j) => row.reduce((s, x, i) => s + x * W[i][j], 0)));
}

function checkAll(X, weights, numberOfHeads, headDimensions) {
  const C = numberOfHeads * headDimensions;
  if (X[0].length !== C) {
    throw new RangeError(`X is ${X.length}×${X[0].length} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  }
  for (const [name, W] of Object.entries(weights)) {
    if (W.length !== C || W[0].length !== C) throw new RangeError(`${name} is ${W.length}×${W[0].length} but must be C×C = ${C}×${C}`);
  }
}
