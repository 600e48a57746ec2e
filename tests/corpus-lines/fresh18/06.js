// Grouped-query attention over a tiny Tensor class: a flat array with a shape and strides,
// reshape() to split the heads out of the columns and permute() to bring the head axis first.

class Tensor {
  constructor(data, shape, strides = Tensor.contiguous(shape)) {
    this.data = data;
    this.shape = shape;
    this.strides = strides;
  }
  static contiguous(shape) {
    const strides = new Array(shape.length);
    let step = 1;
    for (let a = shape.length - 1; a >= 0; a--) {
      strides[a] = step;
      step *= shape[a];
    }
    return strides;
  }
  static fromRows(M) {
    return new Tensor(M.flat(), [M.length, M[0].length]);
  }
  reshape(shape) {
    return new Tensor(this.data, shape);
  }
  permute(...axes) {
    return new Tensor(this.data, axes.map((a) => this.shape[a]), axes.map((a) => this.strides[a]));
  }
  index(...at) {
    return at.reduce((o, x, a) => o + x * this.strides[a], 0);
  }
  at(...at) {
    return this.data[this.index(...at)];
  }
}

export function groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) {
  if (numberOfHeads % numberOfKVHeads !== 0) {
    throw new RangeError(`numberOfKVHeads = ${numberOfKVHeads} does not divide numberOfHeads = ${numberOfHeads}`);
  }
  const d = headDimensions;
  const C = numberOfHeads * d;
  const C_kv = numberOfKVHeads * d;
  if (Q[0].length !== C) throw new RangeError(`Q is ${Q.length}×${Q[0].length} but must be T_q×(numberOfHeads · headDimensions) = T_q×${C}`);
  for (const [name, M] of [['K', K], ['V', V]]) {
    if (M[0].length !== C_kv) throw new RangeError(`${name} is ${M.length}×${M[0].length} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×${C_kv}`);
  }
  if (V.length !== K.length) throw new RangeError(`V is ${V.length}×${V[0].length} but K is ${K.length}×${K[0].length}`);

  const [Tq, Tk] = [Q.length, K.length];
  const q = Tensor.fromRows(Q).reshape([Tq, numberOfHeads, d]).permute(1, 0, 2);    // (H, Tq, d)
  const k = Tensor.fromRows(K).reshape([Tk, numberOfKVHeads, d]).permute(1, 0, 2);  // (G, Tk, d)
  const v = Tensor.fromRows(V).reshape([Tk, numberOfKVHeads, d]).permute(1, 0, 2);  // (G, Tk, d)
  const out = new Tensor(new Array(Tq * C).fill(0), [Tq, numberOfHeads, d]);
  const group = numberOfHeads / numberOfKVHeads;
  for (let h = 0; h < numberOfHeads; h++) {
    const g = Math.floor(h / group);
    for (let i = 0; i < Tq; i++) {
      const scores = [];
      for (let j = 0; j < Tk; j++) {
        let s = 0;
        for (let c = 0; c < d; c++) s += q.at(h, i, c) * k.at(g, j, c);
        scores.push(s / Math.sqrt(d));
      }
      const top = Math.max(...scores);
      const exps = scores.map((s) => Math.exp(s - top));
      const total = exps.reduce((a, b) => a + b, 0);
      for (let c = 0; c < d; c++) {
        let acc = 0;
        for (let j = 0; j < Tk; j++) acc += (exps[j] / total) * v.at(g, j, c);
        out.data[out.index(i, h, c)] = acc;
      }
    }
  }
  return Array.from({ length: Tq }, (_, i) => out.data.slice(i * C, (i + 1) * C));
}
