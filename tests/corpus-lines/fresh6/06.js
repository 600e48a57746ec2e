// A right answer that walks the K/V heads first: each K/V head's key and value columns are cut once, then every query head of its group (h = g·group + m) attends to them; the output rows are Float64Arrays filled in place, returned as arrays.
export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  const d = headDimensions;
  const [C, Ckv] = [numberOfHeads * d, numberOfKVHeads * d];
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (Q[0].length !== C) throw new RangeError(`Q is ${shape(Q)} but must be T_q×(numberOfHeads · headDimensions) = T_q×${C}`);
  if (K[0].length !== Ckv) throw new RangeError(`K is ${shape(K)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${Ckv}`);
  if (V[0].length !== Ckv) throw new RangeError(`V is ${shape(V)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${Ckv}`);
  if (V.length !== K.length) throw new RangeError(`V is ${shape(V)} but K is ${shape(K)}`);
  const group = numberOfHeads / numberOfKVHeads;
  const out = Q.map(() => new Float64Array(C));
  for (let g = 0; g < numberOfKVHeads; g++) {
    const Kg = K.map((row) => row.slice(g * d, g * d + d));
    const Vg = V.map((row) => row.slice(g * d, g * d + d));
    for (let m = 0; m < group; m++) {
      const h = g * group + m;
      Q.forEach((row, i) => {
        const q = row.slice(h * d, h * d + d);
        const s = Kg.map((k) => k.reduce((a, x, c) => a + x * q[c], 0) / Math.sqrt(d));
        const top = Math.max(...s);
        const e = s.map((x) => Math.exp(x - top));
        const z = e.reduce((a, b) => a + b, 0);
        for (let c = 0; c < d; c++) out[i][h * d + c] = e.reduce((a, x, j) => a + (x / z) * Vg[j][c], 0);
      });
    }
  }
  return out.map((row) => Array.from(row));
}
