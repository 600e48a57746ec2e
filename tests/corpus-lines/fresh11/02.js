// A right answer object-oriented: a Head class keeping its column range in private #fields, with a method per step (cut, scores, scale, softmax, mix) and attend() chaining them; a MultiHeadLayer class owning its heads and W_O in private fields, with private #check, #concat and #project methods and a public forward().
class Head {
  #start;
  #width;
  constructor(index, width) {
    this.#start = index * width;
    this.#width = width;
  }
  cut(M) {
    return M.map((row) => row.slice(this.#start, this.#start + this.#width));
  }
  scores(q, k) {
    return q.map((qi) => k.map((kj) => qi.reduce((s, x, c) => s + x * kj[c], 0)));
  }
  scale(S) {
    const factor = 1 / Math.sqrt(this.#width);
    return S.map((row) => row.map((x) => x * factor));
  }
  softmax(S) {
    return S.map((row) => {
      const top = Math.max(...row);
      const ex = row.map((x) => Math.exp(x - top));
      const total = ex.reduce((a, b) => a + b, 0);
      return ex.map((e) => e / total);
    });
  }
  mix(P, v) {
    return P.map((p) => v[0].map((_, c) => p.reduce((s, w, j) => s + w * v[j][c], 0)));
  }
  attend(Q, K, V) {
    const [q, k, v] = [Q, K, V].map((M) => this.cut(M));
    return this.mix(this.softmax(this.scale(this.scores(q, k))), v);
  }
}

class MultiHeadLayer {
  #heads;
  #size;
  #W_O;
  constructor({ numberOfHeads, headDimensions, W_O }) {
    this.#size = numberOfHeads * headDimensions;
    this.#heads = Array.from({ length: numberOfHeads }, (_, h) => new Head(h, headDimensions));
    this.#W_O = W_O;
  }
  #check(...Ms) {
    if (Ms.some((M) => M.length !== Ms[0].length || M[0].length !== this.#size)) {
      throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
    }
  }
  #concat(outs) {
    return outs[0].map((_, t) => outs.reduce((row, out) => row.concat(out[t]), []));
  }
  #project(X) {
    if (!this.#W_O) return X;
    return X.map((x) => this.#W_O[0].map((_, j) => x.reduce((s, xi, i) => s + xi * this.#W_O[i][j], 0)));
  }
  forward(Q, K, V) {
    this.#check(Q, K, V);
    const outs = this.#heads.map((head) => head.attend(Q, K, V));
    return this.#project(this.#concat(outs));
  }
}

export function multiHeadAttention(Q, K, V, options) {
  return new MultiHeadLayer(options).forward(Q, K, V);
}
