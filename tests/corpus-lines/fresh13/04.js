// Style: a sequence of small pure functions, each with a JSDoc comment, composed by the exported function.

/**
 * X·W with W oriented [in, out].
 * @param {number[][]} X
 * @param {number[][]} W
 * @returns {number[][]}
 */
function linear(X, W) {
  return X.map((x) => W[0].map((_, j) => x.reduce((acc, xi, i) => acc + xi * W[i][j], 0)));
}

/**
 * The columns [from, from + width) of every row.
 * @param {number[][]} M
 * @param {number} from
 * @param {number} width
 */
function headOf(M, from, width) {
  return M.map((row) => row.slice(from, from + width));
}

/**
 * Scores q_i · k_j for one head.
 * @param {number[][]} q
 * @param {number[][]} k
 */
function logits(q, k) {
  return q.map((qi) => k.map((kj) => qi.reduce((acc, x, c) => acc + x * kj[c], 0)));
}

/**
 * Every score divided by √width.
 * @param {number[][]} S
 * @param {number} width
 */
function scaled(S, width) {
  const r = Math.sqrt(width);
  return S.map((row) => row.map((x) => x / r));
}

/**
 * Row-wise softmax, stabilised by the row maximum.
 * @param {number[][]} S
 */
function softmaxRows(S) {
  return S.map((row) => {
    const top = Math.max(...row);
    const ex = row.map((x) => Math.exp(x - top));
    const z = ex.reduce((a, b) => a + b, 0);
    return ex.map((e) => e / z);
  });
}

/**
 * The weighted sum of the value rows.
 * @param {number[][]} P
 * @param {number[][]} v
 */
function blend(P, v) {
  return P.map((w) => v[0].map((_, c) => w.reduce((acc, wj, j) => acc + wj * v[j][c], 0)));
}

/**
 * Rows of the parts side by side.
 * @param {number[][][]} parts
 */
function sideBySide(parts) {
  return parts[0].map((_, t) => parts.reduce((row, part) => row.concat(part[t]), []));
}

/**
 * Checks X and every weight.
 */
function validate(X, weights, numberOfHeads, headDimensions) {
  const C = numberOfHeads * headDimensions;
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (X[0].length !== C) {
    throw new RangeError(`X is ${shape(X)} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  }
  for (const [name, W] of Object.entries(weights)) {
    if (W.length !== C || W[0].length !== C) throw new RangeError(`${name} is ${shape(W)} but must be C×C = ${C}×${C}`);
  }
}

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  validate(X, { W_Q, W_K, W_V, W_O }, numberOfHeads, headDimensions);
  const Q = linear(X, W_Q);
  const K = linear(X, W_K);
  const V = linear(X, W_V);
  const outs = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const from = h * headDimensions;
    const S = logits(headOf(Q, from, headDimensions), headOf(K, from, headDimensions));
    const P = softmaxRows(scaled(S, headDimensions));
    outs.push(blend(P, headOf(V, from, headDimensions)));
  }
  return linear(sideBySide(outs), W_O);
}
