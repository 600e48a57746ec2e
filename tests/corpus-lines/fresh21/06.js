// Challenge 06 with everything in objects keyed by name: the key/value heads kv0, kv1, … and the
// query heads q0, q1, … made by Object.fromEntries, each query head naming the key/value head it
// reads, the outputs an object out.q0, out.q1, … put side by side through Object.values.

const shapeText = (M) => `${M.length}×${M[0].length}`;

const cut = (M, head, d) => M.map((row) => row.slice(head * d, (head + 1) * d));

function attend(q, k, v, d) {
  return q.map((qi) => {
    const dots = k.map((kj) => qi.reduce((s, x, c) => s + x * kj[c], 0));
    const scores = dots.map((x) => x / Math.sqrt(d));
    const top = Math.max(...scores);
    const exps = scores.map((x) => Math.exp(x - top));
    const total = exps.reduce((a, b) => a + b, 0);
    const weights = exps.map((e) => e / total);
    return v[0].map((_, c) => weights.reduce((s, w, j) => s + w * v[j][c], 0));
  });
}

export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) {
    throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  }
  const C = numberOfHeads * headDimensions;
  const C_kv = numberOfKVHeads * headDimensions;
  if (Q.some((row) => row.length !== C)) {
    throw new RangeError(`Q is ${shapeText(Q)} but must be T_q×(numberOfHeads · headDimensions) = T_q×${C}`);
  }
  for (const [name, M] of Object.entries({ K, V })) {
    if (M.some((row) => row.length !== C_kv)) {
      throw new RangeError(`${name} is ${shapeText(M)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${C_kv}`);
    }
  }
  if (V.length !== K.length) throw new RangeError(`V is ${shapeText(V)} but K is ${shapeText(K)}`);

  const d = headDimensions;
  const group = numberOfHeads / numberOfKVHeads;
  const kvHeads = Object.fromEntries(
    Array.from({ length: numberOfKVHeads }, (_, g) => [`kv${g}`, { k: cut(K, g, d), v: cut(V, g, d) }]),
  );
  const queryHeads = Object.fromEntries(
    Array.from({ length: numberOfHeads }, (_, h) => [`q${h}`, { q: cut(Q, h, d), reads: `kv${Math.floor(h / group)}` }]),
  );
  const out = {};
  for (const [name, { q, reads }] of Object.entries(queryHeads)) {
    const { k, v } = kvHeads[reads];
    out[name] = attend(q, k, v, d);
  }
  const outs = Object.values(out);
  return Q.map((_, t) => outs.flatMap((rows) => rows[t]));
}
