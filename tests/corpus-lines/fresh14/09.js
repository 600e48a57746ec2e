// Style: a tiny Mat class with static constructors (Mat.of, Mat.zeros, Mat.identity, Mat.causal, Mat.hcat) and chained methods, a head's attention one method per line.
class Mat {
  constructor(rows) {
    this.rows = rows;
  }

  static of(rows) {
    return new Mat(rows.map((r) => Array.from(r)));
  }

  static zeros(n, m) {
    return new Mat(Array.from({ length: n }, () => new Array(m).fill(0)));
  }

  static identity(n) {
    return new Mat(Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0))));
  }

  // an additive mask: 0 on and below the diagonal, −∞ above it
  static causal(n) {
    return new Mat(Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (j > i ? -Infinity : 0))));
  }

  static hcat(parts) {
    return new Mat(parts[0].rows.map((_, r) => parts.flatMap((p) => p.rows[r])));
  }

  cols(from, to) {
    return new Mat(this.rows.map((r) => r.slice(from, to)));
  }

  t() {
    return new Mat(this.rows[0].map((_, j) => this.rows.map((r) => r[j])));
  }

  dot(B) {
    return new Mat(this.rows.map((r) => B.rows[0].map((_, j) => r.reduce((s, x, k) => s + x * B.rows[k][j], 0))));
  }

  mul(k) {
    return new Mat(this.rows.map((r) => r.map((x) => x * k)));
  }

  add(B) {
    return new Mat(this.rows.map((r, i) => r.map((x, j) => x + B.rows[i][j])));
  }

  softmax() {
    return new Mat(this.rows.map((row) => {
      const peak = Math.max(...row);
      const exps = row.map((x) => Math.exp(x - peak));
      const total = exps.reduce((a, b) => a + b, 0);
      return exps.map((e) => e / total);
    }));
  }
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const T = Q.length;
  const d = headDimensions;
  const q = Mat.of(Q);
  const k = Mat.of(K);
  const v = Mat.of(V);
  const mask = causal ? Mat.causal(T) : Mat.zeros(T, T);
  const heads = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const from = h * d;
    const to = from + d;
    const head = q.cols(from, to)
      .dot(k.cols(from, to).t())
      .mul(1 / Math.sqrt(d))
      .add(mask)
      .softmax()
      .dot(v.cols(from, to));
    heads.push(head);
  }
  const joined = Mat.hcat(heads);
  const projected = joined.dot(W_O ? Mat.of(W_O) : Mat.identity(C));
  return projected.rows;
}
