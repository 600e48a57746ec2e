// A right answer with one generic matmul helper for every product and a transpose helper, the heads in a Map from head index to { q, k, v, out }, the mask as its own pass, the concatenation by a reduce over the Map's values.
const transpose = (M) => M[0].map((_, c) => M.map((row) => row[c]));
const matmul = (A, B) => A.map((a) => B[0].map((_, j) => a.reduce((s, x, k) => s + x * B[k][j], 0)));

function softmax(row) {
  const top = Math.max.apply(null, row);
  const e = row.map((x) => Math.exp(x - top));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const d = headDimensions;
  const heads = new Map();
  for (let h = 0; h < numberOfHeads; h++) {
    const cut = (M) => M.map((row) => row.slice(h * d, (h + 1) * d));
    heads.set(h, { q: cut(Q), k: cut(K), v: cut(V) });
  }
  for (const head of heads.values()) {
    let S = matmul(head.q, transpose(head.k));
    S = S.map((row) => row.map((x) => x / Math.sqrt(d)));
    if (causal) S = S.map((row, i) => row.map((x, j) => (j <= i ? x : -Infinity)));
    head.out = matmul(S.map(softmax), head.v);
  }
  const concat = [...heads.values()].reduce((rows, head) => rows.map((row, i) => [...row, ...head.out[i]]), Q.map(() => []));
  return W_O ? matmul(concat, W_O) : concat;
}
