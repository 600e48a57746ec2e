// Out-of-window scores are null, and the softmax and the blend skip the nulls.
export function slidingWindowAttention(Q, K, V, options = {}) {
  const { window } = options;
  checkArgs(Q, K, V, window);
  const d = Q[0].length;
  const w = window === undefined ? Q.length : window;
  return Q.map((q, p) => {
    const scores = K.map((k, j) => {
      if (j > p || j <= p - w) return null;
      const s = q.reduce((acc, x, c) => acc + x * k[c], 0);
      return s / Math.sqrt(d);
    });
    const live = scores.filter((s) => s !== null);
    const top = Math.max(...live);
    const ex = scores.map((s) => (s === null ? null : Math.exp(s - top)));
    const z = ex.reduce((acc, e) => (e === null ? acc : acc + e), 0);
    const weights = ex.map((e) => (e === null ? null : e / z));
    return V[0].map((_, c) => weights.reduce((acc, wt, j) => (wt === null ? acc : acc + wt * V[j][c]), 0));
  });
}

function checkArgs(Q, K, V, window) {
  if (window !== undefined) {
    if (typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}`);
    if (!Number.isInteger(window) || window < 1) throw new RangeError(`options.window is ${window}`);
  }
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T×${d}`);
  if (V[0].length !== d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T×${d}`);
}
