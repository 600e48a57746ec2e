// expect: none
// A right answer that gives query i only the keys and values 0..i (K.slice(0, i + 1)) when causal.
function shapeText(M) { return `${M.length}×${M[0].length}`; }
export function dotProductAttention(Q, K, V, options = {}) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
  const scale = 1 / Math.sqrt(Q[0].length);
  return Q.map((q, i) => {
    const keys = options.causal ? K.slice(0, i + 1) : K;
    const values = options.causal ? V.slice(0, i + 1) : V;
    const s = keys.map((k) => k.reduce((acc, x, c) => acc + x * q[c], 0) * scale);
    const m = Math.max(...s);
    const e = s.map((x) => Math.exp(x - m));
    const z = e.reduce((a, b) => a + b, 0);
    return values[0].map((_, c) => e.reduce((acc, ej, j) => acc + (ej / z) * values[j][c], 0));
  });
}
