// A right answer with for…of over entries() and destructuring: the K/V head of each query head a table made by Array.from with index arithmetic, each query head's scores, softmax and weighted sum in for…of loops over entries(), the K/V columns read at g·d + c.
export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  const d = headDimensions;
  if (Q[0].length !== numberOfHeads * d) throw new RangeError(`Q is ${Q.length}×${Q[0].length} but must be T_q×(numberOfHeads · headDimensions) = T_q×${numberOfHeads * d}`);
  if (K[0].length !== numberOfKVHeads * d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${numberOfKVHeads * d}`);
  if (V[0].length !== numberOfKVHeads * d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${numberOfKVHeads * d}`);
  if (V.length !== K.length) throw new RangeError(`V is ${V.length}×${V[0].length} but K is ${K.length}×${K[0].length}`);
  const group = numberOfHeads / numberOfKVHeads;
  const kvOf = Array.from({ length: numberOfHeads }, (_, h) => Math.floor(h / group));
  const out = [];
  for (const row of Q) {
    const line = [];
    for (const [h, g] of kvOf.entries()) {
      const q = row.slice(h * d, (h + 1) * d);
      const scores = [];
      for (const [j, key] of K.entries()) {
        let s = 0;
        for (const [c, x] of q.entries()) s += x * key[g * d + c];
        scores[j] = s / Math.sqrt(d);
      }
      const top = Math.max(...scores);
      const exps = scores.map((s) => Math.exp(s - top));
      let z = 0;
      for (const e of exps) z += e;
      const mixed = new Array(d).fill(0);
      for (const [j, e] of exps.entries()) {
        for (const c of mixed.keys()) mixed[c] += (e / z) * V[j][g * d + c];
      }
      line.push(...mixed);
    }
    out.push(line);
  }
  return out;
}
