// Challenge 03 with Array.from({ length }, …) for every array: the scores, the scaled and masked
// scores, each row's maximum, the exponentials, their totals, the weights and the output are each
// one Array.from over the rows, with an Array.from over the columns inside; no loop and no map.

const shapeText = (M) => `${M.length}×${M[0].length}`;

const sum = (xs) => xs.reduce((a, b) => a + b, 0);

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
  }
  const T = Q.length;
  const d = Q[0].length;
  const dv = V[0].length;
  const scores = Array.from({ length: T }, (_, i) => Array.from({ length: T }, (_, j) => sum(Array.from({ length: d }, (_, c) => Q[i][c] * K[j][c]))));
  const scaled = Array.from({ length: T }, (_, i) => Array.from({ length: T }, (_, j) => scores[i][j] / Math.sqrt(d)));
  const masked = Array.from({ length: T }, (_, i) => Array.from({ length: T }, (_, j) => (causal && j > i ? -Infinity : scaled[i][j])));
  const maxima = Array.from({ length: T }, (_, i) => Math.max(...masked[i]));
  const exps = Array.from({ length: T }, (_, i) => Array.from({ length: T }, (_, j) => Math.exp(masked[i][j] - maxima[i])));
  const totals = Array.from({ length: T }, (_, i) => sum(exps[i]));
  const weights = Array.from({ length: T }, (_, i) => Array.from({ length: T }, (_, j) => exps[i][j] / totals[i]));
  return Array.from({ length: T }, (_, i) => Array.from({ length: dv }, (_, c) => sum(Array.from({ length: T }, (_, j) => weights[i][j] * V[j][c]))));
}
