// Challenge 05 with the KV cache as a singly linked list: each token's key and value go into a new
// node that points to the node before it, and the token's query walks the list from the newest node
// back to the oldest, head by head.

function attendAll(q, newest, numberOfHeads, d) {
  const row = new Array(numberOfHeads * d).fill(0);
  for (let h = 0; h < numberOfHeads; h++) {
    const from = h * d;
    const scores = [];
    const values = [];
    for (let node = newest; node !== null; node = node.previous) {
      let dot = 0;
      for (let c = from; c < from + d; c++) dot += q[c] * node.key[c];
      scores.push(dot / Math.sqrt(d));
      values.push(node.value.slice(from, from + d));
    }
    const top = Math.max(...scores);
    const exps = scores.map((s) => Math.exp(s - top));
    const total = exps.reduce((a, b) => a + b, 0);
    for (let n = 0; n < values.length; n++) {
      for (let c = 0; c < d; c++) row[from + c] += (exps[n] / total) * values[n][c];
    }
  }
  return row;
}

export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  for (const M of [Q, K, V]) {
    if (M.length !== Q.length || M.some((row) => row.length !== C)) {
      throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
    }
  }
  let newest = null;
  const rows = [];
  for (let t = 0; t < Q.length; t++) {
    newest = { key: K[t], value: V[t], previous: newest };
    rows.push(attendAll(Q[t], newest, numberOfHeads, headDimensions));
  }
  return rows;
}
