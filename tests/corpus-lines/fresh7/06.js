// A right answer with K and V held as arrays of columns (Kc[c][j] is key j's column c), the query heads by for…in over an index array, the queries by for…of over Q.entries(), each output column written straight into preallocated rows.
export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  const d = headDimensions;
  const C = numberOfHeads * d;
  const Ckv = numberOfKVHeads * d;
  if (Q[0].length !== C) throw new RangeError(`Q is ${Q.length}×${Q[0].length} but must be T_q×(numberOfHeads · headDimensions) = T_q×${C}`);
  for (const [name, M] of Object.entries({ K, V })) {
    if (M[0].length !== Ckv) throw new RangeError(`${name} is ${M.length}×${M[0].length} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${Ckv}`);
  }
  if (V.length !== K.length) throw new RangeError(`V is ${V.length}×${V[0].length} but K is ${K.length}×${K[0].length}`);
  const columns = (M) => M[0].map((_, c) => M.map((row) => row[c]));
  const Kc = columns(K);
  const Vc = columns(V);
  const perKV = numberOfHeads / numberOfKVHeads;
  const out = Q.map(() => new Array(C));
  for (const hs in [...Array(numberOfHeads)]) {
    const h = Number(hs);
    const g = Math.trunc(h / perKV);
    for (const [i, q] of Q.entries()) {
      const s = K.map((_, j) => {
        let dot = 0;
        for (let c = 0; c < d; c++) dot += q[h * d + c] * Kc[g * d + c][j];
        return dot / Math.sqrt(d);
      });
      const top = Math.max(...s);
      const e = s.map((x) => Math.exp(x - top));
      const z = e.reduce((a, b) => a + b, 0);
      for (let c = 0; c < d; c++) out[i][h * d + c] = Vc[g * d + c].reduce((acc, v, j) => acc + (e[j] / z) * v, 0);
    }
  }
  return out;
}
