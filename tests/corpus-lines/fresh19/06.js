// Challenge 06: the group is folded into the sequence, as fast GQA kernels do. For each key/value
// head g, the `group` query heads that share it are stacked as extra rows (group·T rows of width d),
// scored in one go against that head's T keys, and the rows are scattered back to their heads.

export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) {
    throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  }
  const d = headDimensions;
  const C = numberOfHeads * d;
  const Ckv = numberOfKVHeads * d;
  if (Q[0].length !== C) throw new RangeError(`Q is ${shapeText(Q)} but must be T_q×(numberOfHeads · headDimensions) = T_q×${C}`);
  if (K[0].length !== Ckv) throw new RangeError(`K is ${shapeText(K)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${Ckv}`);
  if (V[0].length !== Ckv) throw new RangeError(`V is ${shapeText(V)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${Ckv}`);
  if (V.length !== K.length) throw new RangeError(`V is ${shapeText(V)} but K is ${shapeText(K)}`);

  const T = Q.length;
  const group = numberOfHeads / numberOfKVHeads;
  const out = Q.map(() => new Array(C).fill(0));

  for (let g = 0; g < numberOfKVHeads; g++) {
    const kvCol = g * d;
    const keys = K.map((row) => row.slice(kvCol, kvCol + d));
    const vals = V.map((row) => row.slice(kvCol, kvCol + d));
    // stack: row m·T + t is query head g·group + m at token t
    const stacked = [];
    for (let m = 0; m < group; m++) {
      const qCol = (g * group + m) * d;
      for (const row of Q) stacked.push(row.slice(qCol, qCol + d));
    }
    const mixed = attend(stacked, keys, vals, d);
    mixed.forEach((row, r) => {
      const m = Math.floor(r / T);
      const t = r % T;
      const col = (g * group + m) * d;
      for (let c = 0; c < d; c++) out[t][col + c] = row[c];
    });
  }
  return out;
}

function attend(queries, keys, vals, d) {
  const scale = Math.sqrt(d);
  return queries.map((q) => {
    const s = keys.map((k) => k.reduce((acc, x, c) => acc + x * q[c], 0) / scale);
    const hi = Math.max(...s);
    const w = s.map((x) => Math.exp(x - hi));
    const sum = w.reduce((a, b) => a + b, 0);
    const o = new Array(d).fill(0);
    for (let j = 0; j < vals.length; j++) {
      for (let c = 0; c < d; c++) o[c] += (w[j] / sum) * vals[j][c];
    }
    return o;
  });
}

function shapeText(M) {
  return `${M.length}×${M[0].length}`;
}
