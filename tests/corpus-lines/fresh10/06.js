// A right answer as a class of static methods called through the class name: GQA.check for the errors, GQA.groupSize and GQA.kvHeadOf for the sharing, GQA.cut for a head's columns, GQA.scores, GQA.softmax and GQA.blend for one head, and GQA.run gluing them with the heads joined by concat.
class GQA {
  static text(M) {
    return `${M.length}×${M[0].length}`;
  }

  static check(Q, K, V, H, G, d) {
    if (H % G !== 0) throw new RangeError(`numberOfKVHeads = ${G} does not divide numberOfHeads = ${H}`);
    if (Q[0].length !== H * d) throw new RangeError(`Q is ${GQA.text(Q)} but must be T_q×(numberOfHeads · headDimensions) = T_q×${H * d}`);
    if (K[0].length !== G * d) throw new RangeError(`K is ${GQA.text(K)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${G * d}`);
    if (V[0].length !== G * d) throw new RangeError(`V is ${GQA.text(V)} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${G * d}`);
    if (V.length !== K.length) throw new RangeError(`V is ${GQA.text(V)} but K is ${GQA.text(K)}`);
  }

  static groupSize(H, G) {
    return H / G;
  }

  static kvHeadOf(h, group) {
    return Math.floor(h / group);
  }

  static cut(M, index, d) {
    return M.map((row) => row.slice(index * d, (index + 1) * d));
  }

  static scores(q, k, d) {
    const f = 1 / Math.sqrt(d);
    return q.map((a) => k.map((b) => a.reduce((s, x, c) => s + x * b[c], 0) * f));
  }

  static softmax(row) {
    const m = Math.max(...row);
    const e = row.map((x) => Math.exp(x - m));
    const z = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / z);
  }

  static blend(weights, v) {
    return weights.map((w) => v[0].map((_, c) => w.reduce((s, p, j) => s + p * v[j][c], 0)));
  }

  static run(Q, K, V, H, G, d) {
    GQA.check(Q, K, V, H, G, d);
    const group = GQA.groupSize(H, G);
    let joined = Q.map(() => []);
    for (let h = 0; h < H; h++) {
      const g = GQA.kvHeadOf(h, group);
      const q = GQA.cut(Q, h, d);
      const k = GQA.cut(K, g, d);
      const v = GQA.cut(V, g, d);
      const weights = GQA.scores(q, k, d).map(GQA.softmax);
      const out = GQA.blend(weights, v);
      joined = joined.map((row, t) => row.concat(out[t]));
    }
    return joined;
  }
}

export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  return GQA.run(Q, K, V, numberOfHeads, numberOfKVHeads, headDimensions);
}
