// A right answer with a class per head whose methods are the steps, each keeping its result on the instance and returning this; the heads by Array.from, the concatenation by for…of over entries(), W_O by reduce.
class Head {
  constructor(Q, K, V, from, d) {
    this.q = Q.map((row) => row.slice(from, from + d));
    this.k = K.map((row) => row.slice(from, from + d));
    this.v = V.map((row) => row.slice(from, from + d));
    this.d = d;
  }
  score() {
    this.s = this.q.map((qi) => this.k.map((kj) => kj.reduce((acc, x, c) => acc + x * qi[c], 0)));
    return this;
  }
  scale() {
    const f = 1 / Math.sqrt(this.d);
    this.s = this.s.map((row) => row.map((x) => x * f));
    return this;
  }
  mask(causal) {
    if (causal) this.s = this.s.map((row, i) => row.map((x, j) => (j > i ? -Infinity : x)));
    return this;
  }
  softmax() {
    this.w = this.s.map((row) => {
      const top = Math.max(...row);
      const e = row.map((x) => Math.exp(x - top));
      const z = e.reduce((a, b) => a + b, 0);
      return e.map((x) => x / z);
    });
    return this;
  }
  mix() {
    return this.w.map((wi) => this.v[0].map((_, c) => wi.reduce((acc, p, j) => acc + p * this.v[j][c], 0)));
  }
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const outs = Array.from({ length: numberOfHeads }, (_, h) => new Head(Q, K, V, h * headDimensions, headDimensions).score().scale().mask(causal).softmax().mix());
  const concat = Q.map(() => []);
  for (const [, out] of outs.entries()) for (const [i, row] of out.entries()) concat[i].push(...row);
  if (!W_O) return concat;
  return concat.map((row) => W_O[0].map((_, j) => row.reduce((s, x, k) => s + x * W_O[k][j], 0)));
}
