// A right answer with an early `continue` for the masked keys (their score stays −Infinity, their weight 0), the softmax's normalization a separate helper that divides in place, the output accumulated key by key.
function normalize(w) {
  let z = 0;
  for (const x of w) z += x;
  for (let j = 0; j < w.length; j++) w[j] = w[j] / z;
  return w;
}

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  const T = Q.length;
  const d = Q[0].length;
  const out = [];
  for (let i = 0; i < T; i++) {
    const s = new Array(T).fill(-Infinity);
    for (let j = 0; j < T; j++) {
      if (causal && j > i) continue;
      let dot = 0;
      for (let c = 0; c < d; c++) dot += Q[i][c] * K[j][c];
      s[j] = dot / Math.sqrt(d);
    }
    const top = Math.max(...s);
    const w = normalize(s.map((x) => Math.exp(x - top)));
    const row = new Array(V[0].length).fill(0);
    for (let j = 0; j < T; j++) {
      if (w[j] === 0) continue;
      for (let c = 0; c < row.length; c++) row[c] += w[j] * V[j][c];
    }
    out.push(row);
  }
  return out;
}
