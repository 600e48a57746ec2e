// A right answer in one flat Float64Array of T×T scores, filled key by key (column-major), scaled, masked and softmaxed in place; the output by Array.from callbacks.
export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  const T = Q.length;
  const d = Q[0].length;
  const S = new Float64Array(T * T);
  for (let j = 0; j < T; j++) {
    const key = K[j];
    for (let i = 0; i < T; i++) {
      let acc = 0;
      for (let c = 0; c < d; c++) acc += Q[i][c] * key[c];
      S[i * T + j] = acc;
    }
  }
  const inv = 1 / Math.sqrt(d);
  S.forEach((x, n) => { S[n] = x * inv; });
  if (causal) {
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) S[i * T + j] = -Infinity;
  }
  for (let i = 0; i < T; i++) {
    const row = S.subarray(i * T, i * T + T);
    const top = row.reduce((m, x) => Math.max(m, x), -Infinity);
    row.forEach((x, j) => { row[j] = Math.exp(x - top); });
    const sum = row.reduce((a, b) => a + b, 0);
    row.forEach((x, j) => { row[j] = x / sum; });
  }
  return Array.from({ length: T }, (_, i) => Array.from(V[0], (_, c) => {
    let acc = 0;
    for (let j = 0; j < T; j++) acc += S[i * T + j] * V[j][c];
    return acc;
  }));
}
