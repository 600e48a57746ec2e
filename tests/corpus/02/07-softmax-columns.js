// expect: softmax
// Normalises each column of the scores (softmax over the queries, the wrong axis).
const T_ = (M) => M[0].map((_, j) => M.map((r) => r[j]));
const mm = (A, B) => A.map((r) => B[0].map((_, j) => r.reduce((s, a, k) => s + a * B[k][j], 0)));
function softmax(row) {
  const m = Math.max(...row);
  const e = row.map((x) => Math.exp(x - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const outs = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const cut = (M) => M.map((r) => r.slice(h * headDimensions, (h + 1) * headDimensions));
    const scores = mm(cut(Q), T_(cut(K))).map((r) => r.map((x) => x / Math.sqrt(headDimensions)));
    const weights = T_(T_(scores).map(softmax)); // softmax(dim=0)
    outs.push(mm(weights, cut(V)));
  }
  const concat = Q.map((_, t) => outs.flatMap((o) => o[t]));
  return mm(concat, W_O ?? Q[0].map((_, i) => Q[0].map((_, j) => +(i === j))));
}
