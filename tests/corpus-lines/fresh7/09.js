// A right answer in prototype-method style: a Head constructor function whose prototype carries the steps (scores with the mask as an early return, softmaxRows, mix), one `new Head` per head, each row's concatenation by Array.prototype.concat.apply, W_O by reduce over its rows.
function Head(Q, K, V, from, d) {
  this.q = Q.map((row) => row.slice(from, from + d));
  this.k = K.map((row) => row.slice(from, from + d));
  this.v = V.map((row) => row.slice(from, from + d));
  this.d = d;
}

Head.prototype.scores = function (causal) {
  return this.q.map((qi, i) => this.k.map((kj, j) => {
    if (causal && j > i) return -Infinity;
    return qi.reduce((s, x, c) => s + x * kj[c], 0) / Math.sqrt(this.d);
  }));
};

Head.prototype.softmaxRows = function (S) {
  return S.map((row) => {
    const top = Math.max(...row);
    const e = row.map((x) => Math.exp(x - top));
    const z = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / z);
  });
};

Head.prototype.mix = function (W) {
  return W.map((wi) => this.v[0].map((_, c) => wi.reduce((s, x, j) => s + x * this.v[j][c], 0)));
};

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const heads = [];
  for (let h = 0; h < numberOfHeads; h++) heads.push(new Head(Q, K, V, h * headDimensions, headDimensions));
  const outs = heads.map((head) => head.mix(head.softmaxRows(head.scores(causal))));
  const concat = Q.map((_, t) => Array.prototype.concat.apply([], outs.map((o) => o[t])));
  if (!W_O) return concat;
  return concat.map((row) => W_O[0].map((_, j) => W_O.reduce((s, Wc, c) => s + row[c] * Wc[j], 0)));
}
