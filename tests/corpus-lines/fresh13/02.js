// Style: a fluent builder that records the steps as closures and runs them only when .run() is called.
class AttentionBuilder {
  constructor(Q, K, V) {
    this.inputs = { Q, K, V };
    this.ops = [];
  }

  heads(count, width) {
    this.ops.push((s) => {
      s.heads = [];
      for (let h = 0; h < count; h++) {
        const cut = (M) => M.map((row) => row.slice(h * width, h * width + width));
        s.heads.push({ q: cut(s.Q), k: cut(s.K), v: cut(s.V), width });
      }
    });
    return this;
  }

  scores() {
    this.ops.push((s) => {
      for (const hd of s.heads) {
        hd.m = hd.q.map((qi) => hd.k.map((kj) => qi.reduce((a, x, c) => a + x * kj[c], 0)));
      }
    });
    return this;
  }

  scale() {
    this.ops.push((s) => {
      for (const hd of s.heads) hd.m = hd.m.map((row) => row.map((x) => x / Math.sqrt(hd.width)));
    });
    return this;
  }

  softmax() {
    this.ops.push((s) => {
      for (const hd of s.heads) {
        hd.m = hd.m.map((row) => {
          const top = Math.max(...row);
          const ex = row.map((x) => Math.exp(x - top));
          const z = ex.reduce((a, b) => a + b, 0);
          return ex.map((e) => e / z);
        });
      }
    });
    return this;
  }

  mix() {
    this.ops.push((s) => {
      for (const hd of s.heads) {
        const dv = hd.v[0].length;
        hd.out = hd.m.map((w) => {
          const o = new Array(dv).fill(0);
          w.forEach((wj, j) => { for (let c = 0; c < dv; c++) o[c] += wj * hd.v[j][c]; });
          return o;
        });
      }
    });
    return this;
  }

  concat() {
    this.ops.push((s) => {
      s.Y = s.Q.map((_, t) => [].concat(...s.heads.map((hd) => hd.out[t])));
    });
    return this;
  }

  project(W) {
    this.ops.push((s) => {
      if (!W) return;
      s.Y = s.Y.map((row) => W[0].map((_, j) => row.reduce((a, x, i) => a + x * W[i][j], 0)));
    });
    return this;
  }

  run() {
    const s = { ...this.inputs };
    for (const op of this.ops) op(s);
    return s.Y;
  }
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  return new AttentionBuilder(Q, K, V)
    .heads(numberOfHeads, headDimensions)
    .scores()
    .scale()
    .softmax()
    .mix()
    .concat()
    .project(W_O)
    .run();
}
