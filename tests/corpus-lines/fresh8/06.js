// The key/value head by integer division with `| 0`, everything by forEach into preset rows.
export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  validate(Q, K, V, numberOfHeads, numberOfKVHeads, headDimensions);
  const d = headDimensions;
  const group = numberOfHeads / numberOfKVHeads;
  const result = Q.map(() => new Array(numberOfHeads * d).fill(0));
  for (let h = 0; h < numberOfHeads; h++) {
    const g = (h / group) | 0;
    Q.forEach((qRow, i) => {
      const q = qRow.slice(h * d, h * d + d);
      const scores = [];
      K.forEach((kRow, j) => {
        const k = kRow.slice(g * d, g * d + d);
        scores[j] = q.reduce((s, x, c) => s + x * k[c], 0) / Math.sqrt(d);
      });
      const top = Math.max(...scores);
      const ex = scores.map((s) => Math.exp(s - top));
      const sum = ex.reduce((a, b) => a + b, 0);
      ex.forEach((e, j) => {
        const v = V[j].slice(g * d, g * d + d);
        v.forEach((x, c) => { result[i][h * d + c] += (e / sum) * x; });
      });
    });
  }
  return result;
}

function validate(Q, K, V, numberOfHeads, numberOfKVHeads, headDimensions) {
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (numberOfHeads % numberOfKVHeads) {
    throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  }
  const C = numberOfHeads * headDimensions;
  const Ckv = numberOfKVHeads * headDimensions;
  if (Q[0].length !== C) throw new RangeError(`Q is ${shape(Q)} but must be T_q×(numberOfHeads · headDimensions) = T_q×${C}`);
  if (K[0].length !== Ckv) throw new RangeError(`K is ${shape(K)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${Ckv}`);
  if (V[0].length !== Ckv) throw new RangeError(`V is ${shape(V)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${Ckv}`);
  if (V.length !== K.length) throw new RangeError(`V is ${shape(V)} but K is ${shape(K)}`);
}
