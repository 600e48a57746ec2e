// Challenge 06 without a single mutation: every array built by reduce, growing by spread.

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
  const range = (n) => [...Array(n).keys()];
  const columns = (row, from) => row.slice(from, from + d);

  const heads = range(numberOfHeads).reduce((acc, h) => {
    const kv = Math.floor(h / group);
    const rows = Q.reduce((done, qRow) => {
      const q = columns(qRow, h * d);
      const scores = K.reduce((list, kRow) => {
        const k = columns(kRow, kv * d);
        const dot = q.reduce((s, x, c) => s + x * k[c], 0);
        return [...list, dot / Math.sqrt(d)];
      }, []);
      const top = scores.reduce((m, x) => Math.max(m, x), -Infinity);
      const exps = scores.reduce((list, x) => [...list, Math.exp(x - top)], []);
      const sum = exps.reduce((s, e) => s + e, 0);
      const mixed = V.reduce((blend, vRow, j) => {
        const v = columns(vRow, kv * d);
        return blend.map((b, c) => b + (exps[j] / sum) * v[c]);
      }, new Array(d).fill(0));
      return [...done, mixed];
    }, []);
    return [...acc, rows];
  }, []);

  return Q.reduce((out, _, t) => [...out, heads.reduce((row, head) => [...row, ...head[t]], [])], []);
}
