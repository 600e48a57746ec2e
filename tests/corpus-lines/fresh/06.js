// A right answer with the K/V heads sliced once into a Map, the query heads by for..of, each head's rows pushed onto the output rows.
const cols = (M, from, width) => M.map((row) => row.slice(from, from + width));

function attend(q, k, v) {
  const scale = Math.sqrt(q[0].length);
  return q.map((qi) => {
    const s = k.map((kj) => kj.reduce((acc, x, c) => acc + x * qi[c], 0) / scale);
    const m = Math.max(...s);
    const p = s.map((x) => Math.exp(x - m));
    const z = p.reduce((a, b) => a + b, 0);
    return v[0].map((_, c) => p.reduce((acc, pj, j) => acc + (pj / z) * v[j][c], 0));
  });
}

export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  const C = numberOfHeads * headDimensions;
  const C_kv = numberOfKVHeads * headDimensions;
  if (Q[0].length !== C) throw new RangeError(`Q is ${Q.length}×${Q[0].length} but must be T_q×(numberOfHeads · headDimensions) = T_q×${C}`);
  for (const [name, M] of [['K', K], ['V', V]]) {
    if (M[0].length !== C_kv) throw new RangeError(`${name} is ${M.length}×${M[0].length} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${C_kv}`);
  }
  if (V.length !== K.length) throw new RangeError(`V is ${V.length}×${V[0].length} but K is ${K.length}×${K[0].length}`);
  const group = numberOfHeads / numberOfKVHeads;
  const kv = new Map();
  for (let g = 0; g < numberOfKVHeads; g++) kv.set(g, { k: cols(K, g * headDimensions, headDimensions), v: cols(V, g * headDimensions, headDimensions) });
  const out = Q.map(() => []);
  for (const h of Array.from({ length: numberOfHeads }, (_, i) => i)) {
    const { k, v } = kv.get(Math.floor(h / group));
    const ctx = attend(cols(Q, h * headDimensions, headDimensions), k, v);
    ctx.forEach((row, i) => out[i].push(...row));
  }
  return out;
}
