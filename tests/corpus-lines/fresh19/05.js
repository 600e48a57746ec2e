// Challenge 05: the decoder is a coroutine. A generator keeps the cache in its own locals; each
// gen.next({ q, k, v }) hands it one token, which it appends before answering with that token's row.

function* decoder(numberOfHeads, headDimensions) {
  const keys = [];
  const values = [];
  const scale = 1 / Math.sqrt(headDimensions);
  let row = null;
  while (true) {
    const token = yield row;
    keys.push(token.k);
    values.push(token.v);
    row = [];
    for (let h = 0; h < numberOfHeads; h++) {
      const off = h * headDimensions;
      const q = token.q.slice(off, off + headDimensions);
      const logits = keys.map((key) => {
        let s = 0;
        for (let c = 0; c < headDimensions; c++) s += q[c] * key[off + c];
        return s * scale;
      });
      const m = Math.max(...logits);
      const ex = logits.map((x) => Math.exp(x - m));
      const z = ex.reduce((a, b) => a + b, 0);
      for (let c = 0; c < headDimensions; c++) {
        let acc = 0;
        for (let n = 0; n < values.length; n++) acc += (ex[n] / z) * values[n][off + c];
        row.push(acc);
      }
    }
  }
}

export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  const ok = (M) => M.length === Q.length && M.every((r) => r.length === C);
  if (!ok(Q) || !ok(K) || !ok(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const gen = decoder(numberOfHeads, headDimensions);
  gen.next();                                                 // run to the first yield
  const rows = [];
  for (let t = 0; t < Q.length; t++) {
    const { value } = gen.next({ q: Q[t], k: K[t], v: V[t] });
    rows.push(value);
  }
  gen.return();
  return rows;
}
