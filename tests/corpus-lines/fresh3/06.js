// A right answer with K and V flattened into Float64Arrays (T_k · C_kv) read by index arithmetic, and a closure per query head that returns the attention of a query row.
export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  const d = headDimensions;
  if (Q[0].length !== numberOfHeads * d) throw new RangeError(`Q is ${Q.length}×${Q[0].length} but must be T_q×(numberOfHeads · headDimensions) = T_q×${numberOfHeads * d}`);
  if (K[0].length !== numberOfKVHeads * d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${numberOfKVHeads * d}`);
  if (V[0].length !== numberOfKVHeads * d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${numberOfKVHeads * d}`);
  if (V.length !== K.length) throw new RangeError(`V is ${V.length}×${V[0].length} but K is ${K.length}×${K[0].length}`);
  const Ckv = numberOfKVHeads * d;
  const S = K.length;
  const k = Float64Array.from(K.flat());
  const v = Float64Array.from(V.flat());
  const forHead = (h) => {
    const kvBase = Math.floor((h * numberOfKVHeads) / numberOfHeads) * d;
    return (q) => {
      const s = Array.from({ length: S }, (_, j) => {
        let acc = 0;
        for (let c = 0; c < d; c++) acc += q[h * d + c] * k[j * Ckv + kvBase + c];
        return acc / Math.sqrt(d);
      });
      const top = Math.max(...s);
      const e = s.map((x) => Math.exp(x - top));
      const z = e.reduce((a, b) => a + b, 0);
      return Array.from({ length: d }, (_, c) => e.reduce((acc, x, j) => acc + (x / z) * v[j * Ckv + kvBase + c], 0));
    };
  };
  const heads = Array.from({ length: numberOfHeads }, (_, h) => forHead(h));
  return Q.map((q) => heads.flatMap((attend) => attend(q)));
}
