// Style: lodash-like helpers written inline (_.times, _.chunk, _.unzip, _.zip, _.sumBy, _.max, _.flatten): every row chunked into its heads, the heads unzipped to the front, zipped with K and V, and the outputs unzipped and flattened back.
const _ = {
  times: (n, f) => Array.from({ length: n }, (_unused, i) => f(i)),
  chunk: (xs, size) => _.times(Math.ceil(xs.length / size), (i) => xs.slice(i * size, (i + 1) * size)),
  unzip: (rows) => _.times(rows[0].length, (i) => rows.map((row) => row[i])),
  zip: (...arrays) => _.times(arrays[0].length, (i) => arrays.map((a) => a[i])),
  sumBy: (xs, f) => xs.reduce((s, x, i) => s + f(x, i), 0),
  max: (xs) => xs.reduce((m, x) => (x > m ? x : m), -Infinity),
  flatten: (xss) => [].concat(...xss),
};

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  const T = Q.length;
  if ([Q, K, V].some((M) => M.length !== T || M.some((row) => row.length !== C))) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  // T×C → heads×T×d: chunk every row into its heads, then unzip so that the head comes first
  const byHead = (M) => _.unzip(M.map((row) => _.chunk(row, headDimensions)));
  const [qs, ks, vs] = [byHead(Q), byHead(K), byHead(V)];
  const heads = _.zip(qs, ks, vs).map(([q, k, v]) => attend(q, k, v, headDimensions));
  // heads×T×d → T×C
  const joined = _.unzip(heads).map((parts) => _.flatten(parts));
  const W = W_O ?? _.times(C, (i) => _.times(C, (j) => (i === j ? 1 : 0)));
  const columnsOfW = _.unzip(W);
  return joined.map((row) => columnsOfW.map((col) => _.sumBy(row, (x, i) => x * col[i])));
}

// One head: q, k and v are T×d.
function attend(q, k, v, d) {
  const scale = 1 / Math.sqrt(d);
  return q.map((qi) => {
    const logits = k.map((kj) => _.sumBy(qi, (x, c) => x * kj[c]) * scale);
    const top = _.max(logits);
    const exps = logits.map((s) => Math.exp(s - top));
    const total = _.sumBy(exps, (e) => e);
    const weights = exps.map((e) => e / total);
    return _.times(v[0].length, (c) => _.sumBy(v, (vj, j) => weights[j] * vj[c]));
  });
}
