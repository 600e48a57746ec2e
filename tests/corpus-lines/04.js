// A right answer with a Linear class (token by token, typed rows) and every head written straight into its columns.
class Linear {
  constructor(W) { this.W = W; }
  apply(X) {
    return X.map((x) => {
      const y = new Float64Array(this.W[0].length);
      for (let i = 0; i < x.length; i++) {
        for (let j = 0; j < y.length; j++) y[j] += x[i] * this.W[i][j];
      }
      return Array.from(y);
    });
  }
}

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if (X[0].length !== C) throw new RangeError(`X is ${X.length}×${X[0].length} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  for (const [name, W] of Object.entries({ W_Q, W_K, W_V, W_O })) {
    if (W.length !== C || W[0].length !== C) throw new RangeError(`${name} is ${W.length}×${W[0].length} but must be C×C = ${C}×${C}`);
  }
  const Q = new Linear(W_Q).apply(X);
  const K = new Linear(W_K).apply(X);
  const V = new Linear(W_V).apply(X);
  const T = X.length;
  const concat = Array.from({ length: T }, () => new Array(C).fill(0));
  for (let h = 0; h < numberOfHeads; h++) {
    const off = h * headDimensions;
    for (let i = 0; i < T; i++) {
      const s = [];
      for (let j = 0; j < T; j++) {
        let acc = 0;
        for (let c = 0; c < headDimensions; c++) acc += Q[i][off + c] * K[j][off + c];
        s.push(acc / Math.sqrt(headDimensions));
      }
      const m = Math.max(...s);
      const e = s.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b);
      for (let j = 0; j < T; j++) {
        for (let c = 0; c < headDimensions; c++) concat[i][off + c] += (e[j] / z) * V[j][off + c];
      }
    }
  }
  return new Linear(W_O).apply(concat);
}
