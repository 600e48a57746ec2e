// A right answer with a Matrix class: each step a method, map/reduce inside.
class Matrix {
  constructor(rows) { this.rows = rows; }
  columns(start, end) { return new Matrix(this.rows.map((r) => r.slice(start, end))); }
  transpose() { return new Matrix(this.rows[0].map((_, j) => this.rows.map((r) => r[j]))); }
  times(other) { return new Matrix(this.rows.map((r) => other.rows[0].map((_, j) => r.reduce((s, x, k) => s + x * other.rows[k][j], 0)))); }
  scale(f) { return new Matrix(this.rows.map((r) => r.map((x) => x * f))); }
  softmaxRows() {
    return new Matrix(this.rows.map((r) => {
      const m = Math.max(...r);
      const e = r.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b, 0);
      return e.map((x) => x / z);
    }));
  }
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  for (const M of [Q, K, V]) {
    if (M.length !== Q.length || M[0].length !== C) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const [q, k, v] = [Q, K, V].map((M) => new Matrix(M));
  const heads = Array.from({ length: numberOfHeads }, (_, h) => {
    const [start, end] = [h * headDimensions, (h + 1) * headDimensions];
    const scores = q.columns(start, end).times(k.columns(start, end).transpose());
    const weights = scores.scale(1 / Math.sqrt(headDimensions)).softmaxRows();
    return weights.times(v.columns(start, end));
  });
  const concat = new Matrix(Q.map((_, t) => heads.flatMap((head) => head.rows[t])));
  return W_O ? concat.times(new Matrix(W_O)).rows : concat.rows;
}
