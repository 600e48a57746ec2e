// A right answer as a class of static methods and no instance: the head's columns, the product, the transpose, the scale and the softmax of a row each a static method called through the class name; the heads pushed to a list and joined row by row with flatMap.
class Attention {
  static columns(M, h, d) {
    return M.map((row) => row.slice(h * d, (h + 1) * d));
  }
  static transpose(M) {
    return M[0].map((_, c) => M.map((row) => row[c]));
  }
  static times(A, B) {
    return A.map((a) => B[0].map((_, j) => a.reduce((s, x, k) => s + x * B[k][j], 0)));
  }
  static scaled(S, d) {
    return S.map((row) => row.map((x) => x / Math.sqrt(d)));
  }
  static softmax(row) {
    const top = Math.max(...row);
    const e = row.map((x) => Math.exp(x - top));
    const z = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / z);
  }
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const heads = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const q = Attention.columns(Q, h, headDimensions);
    const k = Attention.columns(K, h, headDimensions);
    const s = Attention.scaled(Attention.times(q, Attention.transpose(k)), headDimensions);
    const w = s.map(Attention.softmax);
    heads.push(Attention.times(w, Attention.columns(V, h, headDimensions)));
  }
  const concat = Q.map((_, i) => heads.flatMap((out) => out[i]));
  return W_O ? Attention.times(concat, W_O) : concat;
}
