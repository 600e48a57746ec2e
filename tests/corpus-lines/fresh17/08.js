// Challenge 08 as an iterable class: [Symbol.iterator] is a generator that yields one output row per
// query, band(p) gives the first and last key the query may see, and the scale is a getter.

class WindowedAttention {
  constructor(Q, K, V, w) {
    this.Q = Q;
    this.K = K;
    this.V = V;
    this.w = w;
  }

  get scale() {
    return 1 / Math.sqrt(this.Q[0].length);
  }

  band(p) {
    const first = Math.max(0, p - this.w + 1);
    return [first, p];
  }

  logits(p, first, last) {
    const q = this.Q[p];
    const out = [];
    for (let j = first; j <= last; j++) {
      const k = this.K[j];
      let s = 0;
      for (let c = 0; c < q.length; c++) s += q[c] * k[c];
      out.push(s * this.scale);
    }
    return out;
  }

  *[Symbol.iterator]() {
    for (let p = 0; p < this.Q.length; p++) {
      const [first, last] = this.band(p);
      const logits = this.logits(p, first, last);
      const top = Math.max(...logits);
      const exps = logits.map((x) => Math.exp(x - top));
      const sum = exps.reduce((a, b) => a + b, 0);
      const row = new Array(this.V[0].length).fill(0);
      for (let n = 0; n < exps.length; n++) {
        const weight = exps[n] / sum;
        const value = this.V[first + n];
        for (let c = 0; c < row.length; c++) row[c] += weight * value[c];
      }
      yield row;
    }
  }
}

export function slidingWindowAttention(Q, K, V, { window } = {}) {
  checkWindow(window);
  checkShapes(Q, K, V);
  return [...new WindowedAttention(Q, K, V, window ?? Infinity)];
}

function checkWindow(window) {
  if (window === undefined) return;
  if (typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
  if (!Number.isInteger(window) || window < 1) throw new RangeError(`options.window is ${window}; expected a positive integer`);
}

function checkShapes(Q, K, V) {
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T×${d}, as wide as Q`);
}
