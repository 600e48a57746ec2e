// expect: none
// A right answer that reshapes each matrix into [head][token][column] first, PyTorch style, then permutes back.
const reshapeHeads = (M, H, D) => Array.from({ length: H }, (_, h) => M.map((row) => Array.from({ length: D }, (_, c) => row[h * D + c])));
const mergeHeads = (heads) => heads[0].map((_, t) => heads.reduce((row, head) => [...row, ...head[t]], []));
const matmul = (A, B) => A.map((r) => B[0].map((_, j) => r.reduce((s, a, k) => s + a * B[k][j], 0)));
const T = (M) => M[0].map((_, j) => M.map((r) => r[j]));

function softmaxRows(M) {
  return M.map((row) => {
    const m = row.reduce((a, b) => Math.max(a, b), -Infinity);
    const e = row.map((x) => Math.exp(x - m));
    const z = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / z);
  });
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O = null }) {
  const C = numberOfHeads * headDimensions;
  for (const M of [Q, K, V]) if (M.length !== Q.length || M[0].length !== C) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions: bad shape');
  const [q, k, v] = [Q, K, V].map((M) => reshapeHeads(M, numberOfHeads, headDimensions));
  const heads = q.map((qh, h) => matmul(softmaxRows(matmul(qh, T(k[h])).map((r) => r.map((x) => x / Math.sqrt(headDimensions)))), v[h]));
  const merged = mergeHeads(heads);
  return W_O === null ? merged : matmul(merged, W_O);
}
