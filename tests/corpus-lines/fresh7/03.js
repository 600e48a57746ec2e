// A right answer as a class with getters (scores, scaled, masked, weights, output), each computed from the one before when read, and a generator method that yields the rows of a matrix mapped by a function.
class Attention {
  constructor(Q, K, V, causal) {
    Object.assign(this, { Q, K, V, causal });
  }

  *rowsOf(M, f) {
    for (let i = 0; i < M.length; i++) yield f(M[i], i);
  }

  get scores() {
    return [...this.rowsOf(this.Q, (q) => this.K.map((k) => k.reduce((s, x, c) => s + x * q[c], 0)))];
  }

  get scaled() {
    const f = 1 / Math.sqrt(this.Q[0].length);
    return [...this.rowsOf(this.scores, (row) => row.map((x) => x * f))];
  }

  get masked() {
    return [...this.rowsOf(this.scaled, (row, i) => row.map((x, j) => (this.causal && j > i ? -Infinity : x)))];
  }

  get weights() {
    return [...this.rowsOf(this.masked, (row) => {
      const top = Math.max(...row);
      const e = row.map((x) => Math.exp(x - top));
      const z = e.reduce((a, b) => a + b, 0);
      return e.map((x) => x / z);
    })];
  }

  get output() {
    const { V } = this;
    return [...this.rowsOf(this.weights, (w) => V[0].map((_, c) => w.reduce((s, x, j) => s + x * V[j][c], 0)))];
  }
}

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  return new Attention(Q, K, V, causal).output;
}
