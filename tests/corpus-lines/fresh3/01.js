// A right answer in reduce alone: the max, the exponentials with their total (one reduce into { exps, total }), the weighted sum column by column, then the columns turned into rows by Array.from.
const dot = (a, b) => a.reduce((s, x, c) => s + x * b[c], 0);
const softmax = (xs) => {
  const top = xs.reduce((m, x) => (x > m ? x : m), -Infinity);
  const { exps, total } = xs.reduce(({ exps, total }, x) => {
    const e = Math.exp(x - top);
    return { exps: [...exps, e], total: total + e };
  }, { exps: [], total: 0 });
  return exps.map((e) => e / total);
};

export function dotProductAttention(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  const scale = Math.sqrt(Q[0].length);
  const W = Q.map((q) => softmax(K.map((k) => dot(q, k) / scale)));
  const columns = V[0].map((_, c) => W.map((w) => w.reduce((s, p, j) => s + p * V[j][c], 0)));
  return Array.from(Q, (_, i) => columns.map((col) => col[i]));
}
