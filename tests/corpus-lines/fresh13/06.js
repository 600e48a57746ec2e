// Style: query heads grouped by their key/value head with a groupBy helper, each group's shared K/V cut once.
const groupBy = (items, keyOf) => {
  const groups = {};
  for (const item of items) (groups[keyOf(item)] ??= []).push(item);
  return groups;
};

export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) {
    throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  }
  const shape = (M) => `${M.length}×${M[0].length}`;
  const C = numberOfHeads * headDimensions;
  const Ckv = numberOfKVHeads * headDimensions;
  if (Q[0].length !== C) throw new RangeError(`Q is ${shape(Q)} but must be T_q×(numberOfHeads · headDimensions) = T_q×${C}`);
  if (K[0].length !== Ckv) throw new RangeError(`K is ${shape(K)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${Ckv}`);
  if (V[0].length !== Ckv) throw new RangeError(`V is ${shape(V)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${Ckv}`);
  if (V.length !== K.length) throw new RangeError(`V is ${shape(V)} but K is ${shape(K)}`);

  const d = headDimensions;
  const perGroup = numberOfHeads / numberOfKVHeads;
  const heads = Array.from({ length: numberOfHeads }, (_, h) => h);
  const groups = groupBy(heads, (h) => Math.floor(h / perGroup));
  const out = Q.map(() => new Array(C).fill(0));
  for (const [g, members] of Object.entries(groups)) {
    const kvLo = Number(g) * d;
    const kg = K.map((row) => row.slice(kvLo, kvLo + d));
    const vg = V.map((row) => row.slice(kvLo, kvLo + d));
    for (const h of members) {
      const qLo = h * d;
      Q.forEach((qrow, i) => {
        const logits = kg.map((krow) => {
          let s = 0;
          for (let c = 0; c < d; c++) s += qrow[qLo + c] * krow[c];
          return s / Math.sqrt(d);
        });
        const top = Math.max(...logits);
        const ex = logits.map((x) => Math.exp(x - top));
        const z = ex.reduce((a, b) => a + b, 0);
        ex.forEach((e, j) => {
          for (let c = 0; c < d; c++) out[i][qLo + c] += (e / z) * vg[j][c];
        });
      });
    }
  }
  return out;
}
