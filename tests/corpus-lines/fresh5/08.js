// A right answer with early returns: a score helper that returns −Infinity early for a key after the query or before the window, a softmax helper that returns early for a single key, the weighted sum skipping zero weights.
function score(q, k, p, j, w) {
  if (j > p) return -Infinity;
  if (j <= p - w) return -Infinity;
  let s = 0;
  for (let c = 0; c < q.length; c++) s += q[c] * k[c];
  return s / Math.sqrt(q.length);
}

function softmax(xs) {
  if (xs.length === 1) return [1];
  const top = Math.max(...xs);
  const e = xs.map((x) => Math.exp(x - top));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}

export function slidingWindowAttention(Q, K, V, { window } = {}) {
  if (window !== undefined && typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
  if (window !== undefined && (!Number.isInteger(window) || window < 1)) throw new RangeError(`options.window is ${window}; expected a positive integer`);
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T×${d}, as wide as Q`);
  const w = window ?? Infinity;
  return Q.map((q, p) => {
    const weights = softmax(K.map((k, j) => score(q, k, p, j, w)));
    return V[0].map((_, c) => weights.reduce((a, x, j) => (x === 0 ? a : a + x * V[j][c]), 0));
  });
}
