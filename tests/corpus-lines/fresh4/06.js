// A right answer with a Map from each K/V head to its sliced K and V, each query head looking its group up by integer division; each head's output spread onto the output rows.
export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  const d = headDimensions;
  if (Q[0].length !== numberOfHeads * d) throw new RangeError(`Q is ${Q.length}×${Q[0].length} but must be T_q×(numberOfHeads · headDimensions) = T_q×${numberOfHeads * d}`);
  if (K[0].length !== numberOfKVHeads * d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${numberOfKVHeads * d}`);
  if (V[0].length !== numberOfKVHeads * d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${numberOfKVHeads * d}`);
  if (V.length !== K.length) throw new RangeError(`V is ${V.length}×${V[0].length} but K is ${K.length}×${K[0].length}`);
  const group = numberOfHeads / numberOfKVHeads;
  const kv = new Map();
  for (let g = 0; g < numberOfKVHeads; g++) {
    kv.set(g, { k: K.map((r) => r.slice(g * d, g * d + d)), v: V.map((r) => r.slice(g * d, g * d + d)) });
  }
  const out = Q.map(() => []);
  for (let h = 0; h < numberOfHeads; h++) {
    const { k, v } = kv.get(Math.floor(h / group));
    Q.forEach((row, i) => {
      const q = row.slice(h * d, h * d + d);
      const s = k.map((kj) => kj.reduce((a, x, c) => a + x * q[c], 0) / Math.sqrt(d));
      const top = Math.max(...s);
      const e = s.map((x) => Math.exp(x - top));
      const z = e.reduce((a, b) => a + b, 0);
      out[i].push(...v[0].map((_, c) => e.reduce((a, x, j) => a + (x / z) * v[j][c], 0)));
    });
  }
  return out;
}
