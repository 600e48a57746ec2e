// Style: an OOP pipeline, a Step base class with one subclass per stage, each run(ctx) returning the next ctx.
class Step {
  run(ctx) {
    return ctx;
  }
}

class SliceHeads extends Step {
  run(ctx) {
    const { Q, K, V, H, d } = ctx;
    const cut = (M, h) => M.map((row) => row.slice(h * d, (h + 1) * d));
    const heads = [];
    for (let h = 0; h < H; h++) heads.push({ q: cut(Q, h), k: cut(K, h), v: cut(V, h) });
    return { ...ctx, heads };
  }
}

class Scores extends Step {
  run(ctx) {
    const heads = ctx.heads.map((hd) => ({
      ...hd,
      s: hd.q.map((qi) => hd.k.map((kj) => qi.reduce((a, x, c) => a + x * kj[c], 0))),
    }));
    return { ...ctx, heads };
  }
}

class Scale extends Step {
  run(ctx) {
    const f = 1 / Math.sqrt(ctx.d);
    const heads = ctx.heads.map((hd) => ({ ...hd, s: hd.s.map((row) => row.map((x) => x * f)) }));
    return { ...ctx, heads };
  }
}

class Softmax extends Step {
  run(ctx) {
    const norm = (row) => {
      const top = Math.max(...row);
      const ex = row.map((x) => Math.exp(x - top));
      const z = ex.reduce((a, b) => a + b, 0);
      return ex.map((e) => e / z);
    };
    const heads = ctx.heads.map((hd) => ({ ...hd, p: hd.s.map(norm) }));
    return { ...ctx, heads };
  }
}

class WeightedSum extends Step {
  run(ctx) {
    const heads = ctx.heads.map((hd) => ({
      ...hd,
      out: hd.p.map((w) => hd.v[0].map((_, c) => w.reduce((a, wj, j) => a + wj * hd.v[j][c], 0))),
    }));
    return { ...ctx, heads };
  }
}

class Concat extends Step {
  run(ctx) {
    const joined = ctx.Q.map((_, t) => ctx.heads.reduce((row, hd) => row.concat(hd.out[t]), []));
    return { ...ctx, joined };
  }
}

class OutputProjection extends Step {
  run(ctx) {
    const { joined, W_O, C } = ctx;
    if (!W_O) return { ...ctx, result: joined };
    const result = joined.map((row) => Array.from({ length: C }, (_, j) => row.reduce((a, x, i) => a + x * W_O[i][j], 0)));
    return { ...ctx, result };
  }
}

const PIPELINE = [new SliceHeads(), new Scores(), new Scale(), new Softmax(), new WeightedSum(), new Concat(), new OutputProjection()];

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  const T = Q.length;
  for (const M of [Q, K, V]) {
    if (M.length !== T || M.some((row) => row.length !== C)) {
      throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
    }
  }
  let ctx = { Q, K, V, W_O, H: numberOfHeads, d: headDimensions, C };
  for (const step of PIPELINE) ctx = step.run(ctx);
  return ctx.result;
}
