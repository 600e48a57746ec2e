// A right answer over records keyed by strings: the weights looked up as opts['W_' + name], the projections an object { Q, K, V } of T×C arrays filled by one loop over the names, each head a record { q, k, v, scores, weights, out } whose fields are filled in turn, the heads joined by pushing each record's out row by row.
function shape(M) {
  return M.length + '×' + M[0].length;
}

function times(A, B) {
  const res = [];
  for (let i = 0; i < A.length; i++) {
    res.push([]);
    for (let j = 0; j < B[0].length; j++) {
      let s = 0;
      for (let k = 0; k < B.length; k++) s += A[i][k] * B[k][j];
      res[i].push(s);
    }
  }
  return res;
}

export function projectedSelfAttention(X, opts) {
  const { numberOfHeads, headDimensions } = opts;
  const C = numberOfHeads * headDimensions;
  if (X[0].length !== C) {
    throw new RangeError(`X is ${shape(X)} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  }
  for (const name of ['Q', 'K', 'V', 'O']) {
    const W = opts['W_' + name];
    if (W.length !== C || W[0].length !== C) throw new RangeError(`W_${name} is ${shape(W)} but must be C×C = ${C}×${C}`);
  }

  const proj = {};
  for (const name of ['Q', 'K', 'V']) {
    proj[name] = times(X, opts['W_' + name]);
  }

  const heads = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const lo = h * headDimensions;
    const head = {};
    head.q = proj.Q.map((row) => row.slice(lo, lo + headDimensions));
    head.k = proj.K.map((row) => row.slice(lo, lo + headDimensions));
    head.v = proj.V.map((row) => row.slice(lo, lo + headDimensions));
    head.scores = head.q.map((qi) => head.k.map((kj) => qi.reduce((s, x, c) => s + x * kj[c], 0) / Math.sqrt(headDimensions)));
    head.weights = head.scores.map((row) => {
      const mx = Math.max(...row);
      const ex = row.map((x) => Math.exp(x - mx));
      const sum = ex.reduce((a, b) => a + b, 0);
      return ex.map((e) => e / sum);
    });
    head.out = times(head.weights, head.v);
    heads.push(head);
  }

  const joined = X.map(() => []);
  for (const head of heads) {
    head.out.forEach((row, t) => joined[t].push(...row));
  }
  return times(joined, opts.W_O);
}
