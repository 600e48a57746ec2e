// Style: Array.prototype.reduce building objects, the heads reduced into an object keyed `head${h}` and joined by for…in.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  const T = Q.length;
  const bad = [Q, K, V].reduce((acc, M) => acc || M.length !== T || M.some((row) => row.length !== C), false);
  if (bad) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const d = headDimensions;

  const heads = Array.from({ length: numberOfHeads }, (_, h) => h).reduce((acc, h) => {
    const lo = h * d;
    const rows = Q.map((q, i) => {
      const logits = K.reduce((o, k, j) => {
        if (causal && j > i) return o;
        let s = 0;
        for (let c = lo; c < lo + d; c++) s += q[c] * k[c];
        o[j] = s / Math.sqrt(d);
        return o;
      }, {});
      const top = Object.values(logits).reduce((m, x) => Math.max(m, x), -Infinity);
      const exps = Object.keys(logits).reduce((o, j) => ({ ...o, [j]: Math.exp(logits[j] - top) }), {});
      const z = Object.values(exps).reduce((a, b) => a + b, 0);
      const out = new Array(d).fill(0);
      for (const j in exps) {
        for (let c = 0; c < d; c++) out[c] += (exps[j] / z) * V[j][lo + c];
      }
      return out;
    });
    return { ...acc, [`head${h}`]: rows };
  }, {});

  const joined = Q.map((_, t) => {
    const row = [];
    for (const name in heads) row.push(...heads[name][t]);
    return row;
  });
  if (!W_O) return joined;
  return joined.map((row) => W_O[0].map((_, j) => row.reduce((s, x, i) => s + x * W_O[i][j], 0)));
}
