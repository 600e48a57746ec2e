// Challenge 06 by recursion instead of loops: the tokens, the query heads, the keys, the columns, the
// maximum and the total each walked by a function that does the first one and calls itself on the rest.

export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) {
    throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  }
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (Q[0].length !== numberOfHeads * headDimensions) {
    throw new RangeError(`Q is ${shape(Q)} but must be T_q×(numberOfHeads · headDimensions)`);
  }
  if (K[0].length !== numberOfKVHeads * headDimensions) {
    throw new RangeError(`K is ${shape(K)} but must be T_k×(numberOfKVHeads · headDimensions)`);
  }
  if (V[0].length !== numberOfKVHeads * headDimensions) {
    throw new RangeError(`V is ${shape(V)} but must be T_k×(numberOfKVHeads · headDimensions)`);
  }
  if (V.length !== K.length) throw new RangeError(`V is ${shape(V)} but K is ${shape(K)}`);

  const d = headDimensions;
  const group = numberOfHeads / numberOfKVHeads;

  const dot = (a, aFrom, b, bFrom, c = 0) =>
    c === d ? 0 : a[aFrom + c] * b[bFrom + c] + dot(a, aFrom, b, bFrom, c + 1);
  const scoresOf = (q, qFrom, kFrom, j = 0) =>
    j === K.length ? [] : [dot(q, qFrom, K[j], kFrom) / Math.sqrt(d), ...scoresOf(q, qFrom, kFrom, j + 1)];
  const maxOf = (xs, n = 0) => (n === xs.length ? -Infinity : Math.max(xs[n], maxOf(xs, n + 1)));
  const sumOf = (xs, n = 0) => (n === xs.length ? 0 : xs[n] + sumOf(xs, n + 1));
  const mix = (weights, vFrom, c, j = 0) =>
    j === V.length ? 0 : weights[j] * V[j][vFrom + c] + mix(weights, vFrom, c, j + 1);
  const columnsOf = (weights, vFrom, c = 0) =>
    c === d ? [] : [mix(weights, vFrom, c), ...columnsOf(weights, vFrom, c + 1)];

  function headRow(h, q) {
    const kv = Math.floor(h / group);
    const scores = scoresOf(q, h * d, kv * d);
    const top = maxOf(scores);
    const exps = scores.map((s) => Math.exp(s - top));
    const total = sumOf(exps);
    return columnsOf(exps.map((e) => e / total), kv * d);
  }

  const rowOf = (q, h = 0) => (h === numberOfHeads ? [] : [...headRow(h, q), ...rowOf(q, h + 1)]);
  const rows = (t = 0) => (t === Q.length ? [] : [rowOf(Q[t]), ...rows(t + 1)]);
  return rows();
}
