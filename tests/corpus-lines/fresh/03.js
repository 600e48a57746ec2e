// A right answer as a class whose methods are the steps, chained; the mask written as −Infinity into the scaled scores.
class CausalAttention {
  constructor(Q, K, V, causal) {
    Object.assign(this, { Q, K, V, causal });
    this.d = Q[0].length;
  }
  scores() {
    return this.Q.map((q) => this.K.map((k) => q.reduce((s, x, c) => s + x * k[c], 0)));
  }
  scaled(S) {
    const f = Math.sqrt(this.d);
    return S.map((row) => row.map((x) => x / f));
  }
  masked(S) {
    if (!this.causal) return S;
    return S.map((row, i) => row.map((x, j) => (j > i ? -Infinity : x)));
  }
  softmax(S) {
    return S.map((row) => {
      const m = Math.max(...row);
      const e = row.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b, 0);
      return e.map((x) => x / z);
    });
  }
  mix(W) {
    return W.map((w) => this.V[0].map((_, c) => w.reduce((s, p, j) => s + p * this.V[j][c], 0)));
  }
  run() {
    return this.mix(this.softmax(this.masked(this.scaled(this.scores()))));
  }
}

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  return new CausalAttention(Q, K, V, causal).run();
}
