// A right answer over a tiny tensor class with chained methods (matmul, T, times, softmax): the whole attention is one chain, one method per line.
class Tensor {
  constructor(rows) {
    this.rows = rows;
  }

  get shape() {
    return [this.rows.length, this.rows[0].length];
  }

  T() {
    return new Tensor(this.rows[0].map((_, c) => this.rows.map((r) => r[c])));
  }

  matmul(other) {
    const B = other.rows;
    return new Tensor(this.rows.map((r) => B[0].map((_, j) => {
      let s = 0;
      for (let k = 0; k < r.length; k++) s += r[k] * B[k][j];
      return s;
    })));
  }

  times(f) {
    return new Tensor(this.rows.map((r) => r.map((x) => x * f)));
  }

  softmax() {
    return new Tensor(this.rows.map((r) => {
      const m = Math.max(...r);
      const e = r.map((x) => Math.exp(x - m));
      let z = 0;
      for (const x of e) z += x;
      return e.map((x) => x / z);
    }));
  }
}

export function dotProductAttention(Q, K, V) {
  const [T, d] = new Tensor(Q).shape;
  const [Tk, dk] = new Tensor(K).shape;
  if (Tk !== T || dk !== d) throw new RangeError(`K is ${Tk}×${dk} but Q is ${T}×${d}`);
  if (V.length !== T) throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${T}×${d}`);
  return new Tensor(Q)
    .matmul(new Tensor(K).T())
    .times(1 / Math.sqrt(d))
    .softmax()
    .matmul(new Tensor(V))
    .rows;
}
