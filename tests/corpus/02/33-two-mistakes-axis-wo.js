// expect: softmax
// Two mistakes: softmax over the columns AND W_O ignored. The located step is the first, the softmax.
const transpose = (M) => M[0].map((_, j) => M.map((r) => r[j]));
const matMul = (A, B) => A.map((r) => B[0].map((_, j) => r.reduce((s, a, k) => s + a * B[k][j], 0)));
const softmax = (row) => { const m = Math.max(...row); const e = row.map((x) => Math.exp(x - m)); const z = e.reduce((a, b) => a + b, 0); return e.map((x) => x / z); };
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const heads = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const part = (M) => M.map((r) => r.slice(h * headDimensions, (h + 1) * headDimensions));
    const scores = matMul(part(Q), transpose(part(K))).map((r) => r.map((x) => x / Math.sqrt(headDimensions)));
    heads.push(matMul(transpose(transpose(scores).map(softmax)), part(V)));
  }
  return Q.map((_, t) => heads.flatMap((hd) => hd[t]));
}
