// A right answer by index arithmetic: no slices, a dot product at column offsets, the weighted sum by reduce.
export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  const C = numberOfHeads * headDimensions;
  const C_kv = numberOfKVHeads * headDimensions;
  if (Q[0].length !== C) throw new RangeError(`Q is ${Q.length}×${Q[0].length} but must be T_q×(numberOfHeads · headDimensions) = T_q×${C}`);
  if (K[0].length !== C_kv) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${C_kv}`);
  if (V[0].length !== C_kv) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${C_kv}`);
  if (V.length !== K.length) throw new RangeError(`V is ${V.length}×${V[0].length} but K is ${K.length}×${K[0].length}`);
  const T = Q.length;
  const S = K.length;
  const d = headDimensions;
  const perGroup = numberOfHeads / numberOfKVHeads;
  const out = Q.map(() => new Array(C).fill(0));
  for (let h = 0; h < numberOfHeads; h++) {
    const g = Math.floor(h / perGroup);
    for (let i = 0; i < T; i++) {
      const logits = [];
      for (let j = 0; j < S; j++) logits.push(dotAt(Q[i], h * d, K[j], g * d, d) / Math.sqrt(d));
      const probs = softmax(logits);
      for (let c = 0; c < d; c++) {
        out[i][h * d + c] = probs.reduce((acc, p, j) => acc + p * V[j][g * d + c], 0);
      }
    }
  }
  return out;
}

function dotAt(a, aStart, b, bStart, n) {
  let s = 0;
  for (let c = 0; c < n; c++) s += a[aStart + c] * b[bStart + c];
  return s;
}

function softmax(xs) {
  const top = Math.max(...xs);
  const ex = xs.map((x) => Math.exp(x - top));
  const total = ex.reduce((a, b) => a + b, 0);
  return ex.map((x) => x / total);
}
