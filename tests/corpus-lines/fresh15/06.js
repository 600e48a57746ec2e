// Style: a port of Hugging Face's repeat_kv: K and V are widened first, every key/value head's columns repeated `group` times in place so that there is one per query head, then plain multi-head attention on three T×C matrices.
export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (numberOfHeads % numberOfKVHeads !== 0) {
    throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  }
  const C = numberOfHeads * headDimensions;
  const C_kv = numberOfKVHeads * headDimensions;
  if (Q[0].length !== C) throw new RangeError(`Q is ${shape(Q)} but must be T_q×(numberOfHeads · headDimensions) = T_q×${C}`);
  if (K[0].length !== C_kv) throw new RangeError(`K is ${shape(K)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${C_kv}`);
  if (V[0].length !== C_kv) throw new RangeError(`V is ${shape(V)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${C_kv}`);
  if (V.length !== K.length) throw new RangeError(`V is ${shape(V)} but K is ${shape(K)}`);

  const group = numberOfHeads / numberOfKVHeads;
  const Kx = repeatKV(K, numberOfKVHeads, group, headDimensions);
  const Vx = repeatKV(V, numberOfKVHeads, group, headDimensions);
  return multiHead(Q, Kx, Vx, numberOfHeads, headDimensions);
}

// T×(nKV·d) → T×(nKV·group·d), the heads as [kv0, kv0, …, kv1, kv1, …] (repeat_interleave on the head axis)
function repeatKV(M, nKV, group, d) {
  return M.map((row) => {
    const out = [];
    for (let g = 0; g < nKV; g++) {
      const head = row.slice(g * d, (g + 1) * d);
      for (let r = 0; r < group; r++) out.push(...head);
    }
    return out;
  });
}

function multiHead(Q, K, V, H, d) {
  const out = Q.map(() => new Array(H * d).fill(0));
  for (let h = 0; h < H; h++) {
    const off = h * d;
    for (let i = 0; i < Q.length; i++) {
      const scores = K.map((k) => {
        let s = 0;
        for (let c = 0; c < d; c++) s += Q[i][off + c] * k[off + c];
        return s / Math.sqrt(d);
      });
      const w = softmax(scores);
      for (let j = 0; j < K.length; j++) {
        for (let c = 0; c < d; c++) out[i][off + c] += w[j] * V[j][off + c];
      }
    }
  }
  return out;
}

function softmax(xs) {
  const top = Math.max(...xs);
  const ex = xs.map((x) => Math.exp(x - top));
  const sum = ex.reduce((a, b) => a + b, 0);
  return ex.map((e) => e / sum);
}
