// Style: a small Vec class for single rows (dot, scale, plus, slice, max, sum, map, times, Vec.zeros, Vec.concat), every matrix an array of Vecs and the whole layer written one query row at a time, the causal mask a cut of the visible keys.
class Vec {
  constructor(xs) {
    this.xs = Array.from(xs);
  }
  static zeros(n) {
    return new Vec(new Array(n).fill(0));
  }
  static concat(parts) {
    return new Vec(parts.flatMap((p) => p.xs));
  }
  dot(other) {
    return this.xs.reduce((s, x, i) => s + x * other.xs[i], 0);
  }
  scale(k) {
    return new Vec(this.xs.map((x) => x * k));
  }
  plus(other) {
    return new Vec(this.xs.map((x, i) => x + other.xs[i]));
  }
  map(f) {
    return new Vec(this.xs.map(f));
  }
  slice(from, to) {
    return new Vec(this.xs.slice(from, to));
  }
  max() {
    return Math.max(...this.xs);
  }
  sum() {
    return this.xs.reduce((a, b) => a + b, 0);
  }
  // row vector times a matrix given as its row Vecs: Σ_i x_i · M[i]
  times(M) {
    return this.xs.reduce((acc, x, i) => acc.plus(M[i].scale(x)), Vec.zeros(M[0].xs.length));
  }
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  const T = Q.length;
  if ([Q, K, V].some((M) => M.length !== T || M.some((row) => row.length !== C))) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const [q, k, v] = [Q, K, V].map((M) => M.map((row) => new Vec(row)));
  const wo = W_O ? W_O.map((row) => new Vec(row)) : null;
  return q.map((qi, i) => {
    const heads = [];
    for (let h = 0; h < numberOfHeads; h++) {
      const from = h * headDimensions;
      const to = from + headDimensions;
      const keys = k.map((kj) => kj.slice(from, to));
      const values = v.map((vj) => vj.slice(from, to));
      heads.push(attendRow(qi.slice(from, to), keys, values, causal ? i : T - 1, headDimensions));
    }
    const joined = Vec.concat(heads);
    return (wo ? joined.times(wo) : joined).xs;
  });
}

// One query row of one head against keys 0 … last.
function attendRow(q, keys, values, last, d) {
  const visible = keys.slice(0, last + 1);
  const logits = new Vec(visible.map((kj) => q.dot(kj))).scale(1 / Math.sqrt(d));
  const top = logits.max();
  const exps = logits.map((x) => Math.exp(x - top));
  const weights = exps.scale(1 / exps.sum());
  return weights.xs.reduce((acc, w, j) => acc.plus(values[j].scale(w)), Vec.zeros(d));
}
