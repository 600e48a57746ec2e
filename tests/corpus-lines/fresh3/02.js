// A right answer with a closure that cuts one head's columns, the heads by for…of over the entries of their offsets, destructuring, a softmax with its total kept by a comma expression.
const columnsOf = (from, to) => (row) => row.slice(from, to);

function softmax(xs) {
  const m = Math.max(...xs);
  let z = 0;
  const e = xs.map((x) => (z += Math.exp(x - m), Math.exp(x - m)));
  return e.map((x) => x / z);
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const offsets = Array.from({ length: numberOfHeads }, (_, h) => h * headDimensions);
  const concat = Q.map(() => new Array(C));
  for (const [h, from] of offsets.entries()) {
    const cut = columnsOf(from, from + headDimensions);
    const [q, k, v] = [Q, K, V].map((M) => M.map(cut));
    for (const [i, qi] of q.entries()) {
      const weights = softmax(k.map((kj) => kj.reduce((s, x, c) => s + x * qi[c], 0) / Math.sqrt(headDimensions)));
      for (let c = 0; c < headDimensions; c++) concat[i][from + c] = weights.reduce((s, p, j) => s + p * v[j][c], 0);
    }
  }
  if (!W_O) return concat;
  return concat.map((row) => W_O[0].map((_, o) => row.reduce((s, x, c) => s + x * W_O[c][o], 0)));
}
