// Challenge 04: a port of a PyTorch module tree. Linear wraps one [in, out] weight with forward(X);
// SelfAttention owns the four Linear modules, registered by name, and its forward() runs them.

class Linear {
  constructor(name, W, C) {
    if (W.length !== C || W[0].length !== C) {
      throw new RangeError(`${name} is ${shapeText(W)} but must be C×C = ${C}×${C}`);
    }
    this.W = W;
  }

  forward(X) {
    return X.map((x) => this.W[0].map((_, o) => x.reduce((s, xi, i) => s + xi * this.W[i][o], 0)));
  }
}

class SelfAttention {
  constructor({ W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
    this.heads = numberOfHeads;
    this.d = headDimensions;
    this.C = numberOfHeads * headDimensions;
    this.q_proj = new Linear('W_Q', W_Q, this.C);
    this.k_proj = new Linear('W_K', W_K, this.C);
    this.v_proj = new Linear('W_V', W_V, this.C);
    this.o_proj = new Linear('W_O', W_O, this.C);
  }

  forward(X) {
    const q = this.q_proj.forward(X);
    const k = this.k_proj.forward(X);
    const v = this.v_proj.forward(X);
    const outputs = [];
    for (let h = 0; h < this.heads; h++) {
      const lo = h * this.d;
      const hi = lo + this.d;
      outputs.push(this.head(cut(q, lo, hi), cut(k, lo, hi), cut(v, lo, hi)));
    }
    const concat = X.map((_, t) => outputs.flatMap((o) => o[t]));
    return this.o_proj.forward(concat);
  }

  head(q, k, v) {
    const scale = Math.sqrt(this.d);
    return q.map((qi) => {
      const logits = k.map((kj) => qi.reduce((s, x, c) => s + x * kj[c], 0) / scale);
      const peak = Math.max(...logits);
      const e = logits.map((z) => Math.exp(z - peak));
      const Z = e.reduce((a, b) => a + b, 0);
      const p = e.map((x) => x / Z);
      return v[0].map((_, c) => p.reduce((s, w, j) => s + w * v[j][c], 0));
    });
  }
}

export function projectedSelfAttention(X, options) {
  const { numberOfHeads, headDimensions } = options;
  const C = numberOfHeads * headDimensions;
  if (X[0].length !== C) {
    throw new RangeError(`X is ${shapeText(X)} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  }
  const module = new SelfAttention(options);
  return module.forward(X);
}

function cut(M, lo, hi) {
  return M.map((row) => row.slice(lo, hi));
}

function shapeText(M) {
  return `${M.length}×${M[0].length}`;
}
