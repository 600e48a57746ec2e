// A right answer on a Matrix class whose methods return new matrices so that they chain (the product with K transposed, the scale by 1/√d, the band, the softmax, the product with V), one call per line; band(w) writes −Infinity outside p − w < j ≤ p.
class Matrix {
  constructor(rows) {
    this.rows = rows;
  }
  static of(rows) {
    return new Matrix(rows.map((r) => r.slice()));
  }
  T() {
    return new Matrix(this.rows[0].map((_, j) => this.rows.map((r) => r[j])));
  }
  mul(other) {
    const B = other.rows;
    return new Matrix(this.rows.map((a) => B[0].map((_, j) => a.reduce((s, x, k) => s + x * B[k][j], 0))));
  }
  scale(f) {
    return new Matrix(this.rows.map((r) => r.map((x) => x * f)));
  }
  band(w) {
    return new Matrix(this.rows.map((r, p) => r.map((x, j) => (j <= p && j > p - w ? x : -Infinity))));
  }
  softmax() {
    return new Matrix(this.rows.map((r) => {
      const top = Math.max(...r);
      const ex = r.map((x) => Math.exp(x - top));
      const z = ex.reduce((a, b) => a + b, 0);
      return ex.map((e) => e / z);
    }));
  }
}

export function slidingWindowAttention(Q, K, V, { window } = {}) {
  if (window !== undefined) {
    if (typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
    if (!Number.isInteger(window) || window < 1) throw new RangeError(`options.window is ${window}; expected a positive integer`);
  }
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T×${d}, as wide as Q`);
  const w = window ?? Infinity;
  const [q, k, v] = [Q, K, V].map((M) => Matrix.of(M));
  return q
    .mul(k.T())
    .scale(1 / Math.sqrt(d))
    .band(w)
    .softmax()
    .mul(v)
    .rows;
}
