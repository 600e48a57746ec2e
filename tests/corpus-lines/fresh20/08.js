// Challenge 08 by recursion instead of loops: the rows, a row's logits, its mask, the dot product,
// the maximum, the exponentials, the total, the normalising and the blend are each a function that
// handles one index and calls itself on the next.

function checkWindow(window) {
  if (window === undefined) return;
  if (typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
  if (!Number.isInteger(window) || window < 1) throw new RangeError(`options.window is ${window}; expected a positive integer`);
}

function checkShapes(Q, K, V) {
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T×${d}, as wide as Q`);
}

export function slidingWindowAttention(Q, K, V, { window } = {}) {
  checkWindow(window);
  checkShapes(Q, K, V);
  const w = window ?? Infinity;
  const scale = 1 / Math.sqrt(Q[0].length);
  const visible = (p, j) => j <= p && j > p - w;
  const dot = (a, b, c = 0) => (c === a.length ? 0 : a[c] * b[c] + dot(a, b, c + 1));
  const score = (p, j) => dot(Q[p], K[j]);
  const logits = (p, j = 0) => (j === K.length ? [] : [score(p, j) * scale, ...logits(p, j + 1)]);
  const masked = (row, p, j = 0) => (j === row.length ? [] : [visible(p, j) ? row[j] : -Infinity, ...masked(row, p, j + 1)]);
  const maxOf = (row, j = 0) => (j === row.length ? -Infinity : Math.max(row[j], maxOf(row, j + 1)));
  const expOf = (row, top, j = 0) => (j === row.length ? [] : [Math.exp(row[j] - top), ...expOf(row, top, j + 1)]);
  const sumOf = (row, j = 0) => (j === row.length ? 0 : row[j] + sumOf(row, j + 1));
  const divide = (row, by, j = 0) => (j === row.length ? [] : [row[j] / by, ...divide(row, by, j + 1)]);
  const blend = (weights, c, j = 0) => (j === weights.length ? 0 : weights[j] * V[j][c] + blend(weights, c, j + 1));
  const columns = (weights, c = 0) => (c === V[0].length ? [] : [blend(weights, c), ...columns(weights, c + 1)]);
  const rowOf = (p) => {
    const row = masked(logits(p), p);
    const top = maxOf(row);
    const exps = expOf(row, top);
    const total = sumOf(exps);
    const weights = divide(exps, total);
    return columns(weights);
  };
  const rows = (p = 0) => (p === Q.length ? [] : [rowOf(p), ...rows(p + 1)]);
  return rows();
}
