// Challenge 01 as a class hierarchy: an Op base class whose forward(x) every step overrides
// (KeyScores, Scale, RowSoftmax, ValueBlend), and a Sequence op that runs a list of ops in order,
// each one's output the next one's input.

const shapeText = (M) => `${M.length}×${M[0].length}`;

class Op {
  forward(x) {
    throw new Error(`${this.constructor.name} must override forward()`);
  }
}

// Q·Kᵀ: every query row against every key row
class KeyScores extends Op {
  constructor(K) {
    super();
    this.K = K;
  }
  forward(Q) {
    return Q.map((q) => this.K.map((k) => q.reduce((sum, x, c) => sum + x * k[c], 0)));
  }
}

class Scale extends Op {
  constructor(width) {
    super();
    this.factor = 1 / Math.sqrt(width);
  }
  forward(S) {
    return S.map((row) => row.map((s) => s * this.factor));
  }
}

class RowSoftmax extends Op {
  forward(S) {
    return S.map((row) => {
      const top = Math.max(...row);
      const exps = row.map((s) => Math.exp(s - top));
      const total = exps.reduce((a, b) => a + b, 0);
      return exps.map((e) => e / total);
    });
  }
}

// W·V: each output row the weighted average of the value rows
class ValueBlend extends Op {
  constructor(V) {
    super();
    this.V = V;
  }
  forward(W) {
    return W.map((weights) => this.V[0].map((_, c) => weights.reduce((sum, w, j) => sum + w * this.V[j][c], 0)));
  }
}

class Sequence extends Op {
  constructor(...ops) {
    super();
    this.ops = ops;
  }
  forward(x) {
    return this.ops.reduce((value, op) => op.forward(value), x);
  }
}

export function dotProductAttention(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
  }
  const attention = new Sequence(new KeyScores(K), new Scale(Q[0].length), new RowSoftmax(), new ValueBlend(V));
  return attention.forward(Q);
}
