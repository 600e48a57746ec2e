// A right answer in reduce alone: every loop is a reduce that builds a new array (the scores, the mask, the maximum, the exponentials, their total, the output row), no map and no for.
export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  const d = Q[0].length;
  return Q.reduce((out, q, i) => {
    const scores = K.reduce((s, k) => [...s, k.reduce((a, x, c) => a + x * q[c], 0) / Math.sqrt(d)], []);
    const masked = scores.reduce((m, s, j) => [...m, causal && j > i ? -Infinity : s], []);
    const top = masked.reduce((a, b) => (b > a ? b : a), -Infinity);
    const exps = masked.reduce((e, s) => [...e, Math.exp(s - top)], []);
    const z = exps.reduce((a, b) => a + b, 0);
    const zero = V[0].reduce((r) => [...r, 0], []);
    const row = V.reduce((acc, v, j) => acc.reduce((r, x, c) => [...r, x + (exps[j] / z) * v[c]], []), zero);
    return [...out, row];
  }, []);
}
