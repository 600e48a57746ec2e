// A right answer with a generator and for..of: a closure scores a query against every key, the weighted sum column by column.
function* enumerate(items) {
  let i = 0;
  for (const item of items) yield [i++, item];
}

function scorer(K, scale) {
  return (q) => K.map((k) => {
    let s = 0;
    for (const [c, x] of enumerate(k)) s += x * q[c];
    return s * scale;
  });
}

export function dotProductAttention(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  const score = scorer(K, 1 / Math.sqrt(Q[0].length));
  const out = [];
  for (const [i, q] of enumerate(Q)) {
    const logits = score(q);
    const peak = Math.max(...logits);
    const exps = logits.map((x) => Math.exp(x - peak));
    let total = 0;
    for (const e of exps) total += e;
    const weights = exps.map((e) => e / total);
    const row = [];
    for (let c = 0; c < V[0].length; c++) {
      let acc = 0;
      for (const [j, w] of enumerate(weights)) acc += w * V[j][c];
      row.push(acc);
    }
    out[i] = row;
  }
  return out;
}
