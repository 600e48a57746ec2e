// A right answer with one Float64Array of weights per query, the K/V columns found by arithmetic, the output filled column by column.
export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  const d = headDimensions;
  if (Q[0].length !== numberOfHeads * d) throw new RangeError(`Q is ${Q.length}×${Q[0].length} but must be T_q×(numberOfHeads · headDimensions) = T_q×${numberOfHeads * d}`);
  if (K[0].length !== numberOfKVHeads * d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${numberOfKVHeads * d}`);
  if (V[0].length !== numberOfKVHeads * d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${numberOfKVHeads * d}`);
  if (V.length !== K.length) throw new RangeError(`V is ${V.length}×${V[0].length} but K is ${K.length}×${K[0].length}`);
  const T = Q.length;
  const S = K.length;
  const ratio = numberOfHeads / numberOfKVHeads;
  const out = Array.from({ length: T }, () => new Array(numberOfHeads * d).fill(0));
  for (let h = 0; h < numberOfHeads; h++) {
    const kvCol = Math.floor(h / ratio) * d;
    for (let i = 0; i < T; i++) {
      const w = new Float64Array(S);
      for (let j = 0; j < S; j++) {
        let s = 0;
        for (let c = 0; c < d; c++) s += Q[i][h * d + c] * K[j][kvCol + c];
        w[j] = s / Math.sqrt(d);
      }
      const m = Math.max(...w);
      let z = 0;
      for (let j = 0; j < S; j++) z += (w[j] = Math.exp(w[j] - m));
      for (let c = 0; c < d; c++) {
        for (let j = 0; j < S; j++) out[i][h * d + c] += (w[j] / z) * V[j][kvCol + c];
      }
    }
  }
  return out;
}
