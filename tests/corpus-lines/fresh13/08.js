// Style: a string-keyed registry of kernels looked up by name, the mask a nested ternary per score.
const KERNELS = {};
const register = (name, fn) => { KERNELS[name] = fn; };

register('dot', (a, b) => {
  let s = 0;
  for (let c = 0; c < a.length; c++) s += a[c] * b[c];
  return s;
});
register('logits', (Q, K) => Q.map((q) => K.map((k) => KERNELS.dot(q, k))));
register('scale', (S, d) => S.map((row) => row.map((x) => x / Math.sqrt(d))));
register('band', (S, w) => S.map((row, p) => row.map((x, j) => (j > p ? -Infinity : j <= p - w ? -Infinity : x))));
register('softmax', (S) => S.map((row) => {
  const top = Math.max(...row);
  const ex = row.map((x) => Math.exp(x - top));
  const z = ex.reduce((a, b) => a + b, 0);
  return ex.map((e) => e / z);
}));
register('blend', (P, V) => P.map((wrow) => V[0].map((_, c) => wrow.reduce((acc, wj, j) => acc + wj * V[j][c], 0))));

export function slidingWindowAttention(Q, K, V, { window } = {}) {
  if (window !== undefined) {
    if (typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
    if (!Number.isInteger(window) || window < 1) throw new RangeError(`options.window is ${window}; expected a positive integer`);
  }
  const shape = (M) => `${M.length}×${M[0].length}`;
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${shape(K)} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${shape(V)} but must be T×${d}, as wide as Q`);
  const w = window === undefined ? Infinity : window;
  const S = KERNELS['logits'](Q, K);
  const scaledS = KERNELS['scale'](S, d);
  const banded = KERNELS['band'](scaledS, w);
  const P = KERNELS['softmax'](banded);
  return KERNELS['blend'](P, V);
}
