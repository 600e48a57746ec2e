// A right answer one query at a time: helpers across functions, typed arrays, only the visible keys scored.
export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  check(Q, K, V);
  const d = Q[0].length;
  return Q.map((query, i) => attendOne(query, i, K, V, d, causal));
}

function check(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
}

function dot(a, b) {
  let s = 0;
  for (let c = 0; c < a.length; c++) s += a[c] * b[c];
  return s;
}

function visibleKeys(i, T, causal) {
  return causal ? i + 1 : T;
}

function attendOne(query, i, K, V, d, causal) {
  const n = visibleKeys(i, K.length, causal);
  const logits = new Float64Array(n);
  for (let j = 0; j < n; j++) logits[j] = dot(query, K[j]) / Math.sqrt(d);
  const top = Math.max(...logits);
  const w = logits.map((x) => Math.exp(x - top));
  const total = w.reduce((a, b) => a + b, 0);
  const out = new Float64Array(V[0].length);
  for (let j = 0; j < n; j++) {
    for (let c = 0; c < out.length; c++) out[c] += (w[j] / total) * V[j][c];
  }
  return Array.from(out);
}
