// expect: mask
// title: Your window leaves out the query itself: query 1 sees only key 0; with window = 2 it sees keys 0 … 1
// link: mode=window&window=2&step=weights
// The query hides itself: keys p − w ≤ j < p.
// Reference answer for challenge 08: causal attention over a sliding window of w keys.
// The query at position p sees the keys p − w < j ≤ p: itself and the w − 1 before it.
// Without a window it is causal attention (challenge 03 with causal: true).

export function slidingWindowAttention(Q, K, V, { window } = {}) {
  checkWindow(window);
  checkShapes(Q, K, V);
  const w = window ?? Infinity;
  const allowed = (p, j) => p - w <= j && j < p || (p === 0 && j === 0);                // the last w keys up to p
  const scores = matMul(Q, transpose(K));                        // (T, T)
  const scale = 1 / Math.sqrt(Q[0].length);                      // 1/√d
  const scaled = scores.map((row) => row.map((x) => x * scale)); // (T, T)
  const masked = scaled.map((row, p) => row.map((x, j) => (allowed(p, j) ? x : -Infinity)));
  const weights = masked.map(softmax);                           // (T, T), a band of width w
  return matMul(weights, V);                                     // (T, d)
}

// exp(-Infinity - max) is exactly 0, so keys outside the window get no weight. Key p itself is
// always inside (w ≥ 1), so every row keeps a finite maximum.
function softmax(row) {
  const max = Math.max(...row);
  const exps = row.map((x) => Math.exp(x - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}

function checkWindow(window) {
  if (window === undefined) return;
  if (typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
  if (!Number.isInteger(window) || window < 1) throw new RangeError(`options.window is ${window}; expected a positive integer`);
}

function checkShapes(Q, K, V) {
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${shapeText(K)} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${shapeText(V)} but must be T×${d}, as wide as Q`);
}

function shapeText(M) {
  return `${M.length}×${M[0].length}`;
}

function transpose(M) {
  return M[0].map((_, j) => M.map((row) => row[j]));
}

function matMul(A, B) {
  return A.map((row) => B[0].map((_, j) => row.reduce((sum, a, k) => sum + a * B[k][j], 0)));
}
