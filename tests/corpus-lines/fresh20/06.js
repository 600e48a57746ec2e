// Challenge 06 with an object per head: kv[g] = { k, v } holds key/value head g's columns, and
// heads[h] = { q, k, v } a query head's own columns of Q with its group's k and v shared by reference;
// each head object then gets its out, and the outs are joined in key order.

const shapeText = (M) => `${M.length}×${M[0].length}`;

const columns = (M, from, width) => M.map((row) => row.slice(from, from + width));

function attend({ q, k, v }, d) {
  return q.map((qi) => {
    const scores = k.map((kj) => kj.reduce((s, x, c) => s + x * qi[c], 0));
    const scaled = scores.map((s) => s / Math.sqrt(d));
    const top = Math.max(...scaled);
    const exps = scaled.map((s) => Math.exp(s - top));
    const total = exps.reduce((a, b) => a + b, 0);
    return v[0].map((_, c) => exps.reduce((s, e, j) => s + (e / total) * v[j][c], 0));
  });
}

export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) {
    throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  }
  const C = numberOfHeads * headDimensions;
  const Ckv = numberOfKVHeads * headDimensions;
  if (Q[0].length !== C) {
    throw new RangeError(`Q is ${shapeText(Q)} but must be T_q×(numberOfHeads · headDimensions) = T_q×${C}`);
  }
  if (K[0].length !== Ckv) {
    throw new RangeError(`K is ${shapeText(K)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${Ckv}`);
  }
  if (V[0].length !== Ckv) {
    throw new RangeError(`V is ${shapeText(V)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${Ckv}`);
  }
  if (V.length !== K.length) throw new RangeError(`V is ${shapeText(V)} but K is ${shapeText(K)}`);

  const group = numberOfHeads / numberOfKVHeads;
  const kv = {};
  for (let g = 0; g < numberOfKVHeads; g++) {
    kv[g] = {
      k: columns(K, g * headDimensions, headDimensions),
      v: columns(V, g * headDimensions, headDimensions),
    };
  }
  const heads = {};
  for (let h = 0; h < numberOfHeads; h++) {
    const { k, v } = kv[Math.floor(h / group)];
    heads[h] = { q: columns(Q, h * headDimensions, headDimensions), k, v };
  }
  for (const h in heads) heads[h].out = attend(heads[h], headDimensions);
  return Q.map((_, t) => Object.keys(heads).flatMap((h) => heads[h].out[t]));
}
