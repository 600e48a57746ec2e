// Multi-head attention (causal option, optional W_O) as one fold: Q.reduce carries an accumulator
// object { joined, out } and adds one query's row to both; each head's softmax is log-sum-exp.

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const d = headDimensions;
  const T = Q.length;
  const state = Q.reduce(
    (acc, q, i) => {
      const row = [];
      for (let h = 0; h < numberOfHeads; h++) {
        const from = h * d;
        const qh = q.slice(from, from + d);
        const visible = causal ? K.slice(0, i + 1) : K;
        const logits = visible.map((k) => qh.reduce((s, x, c) => s + x * k[from + c], 0) / Math.sqrt(d));
        const top = Math.max(...logits);
        const lse = top + Math.log(logits.reduce((s, x) => s + Math.exp(x - top), 0));
        const weights = logits.map((x) => Math.exp(x - lse));
        for (let c = 0; c < d; c++) {
          row.push(weights.reduce((s, w, j) => s + w * V[j][from + c], 0));
        }
      }
      acc.joined.push(row);
      acc.out.push(W_O ? W_O[0].map((_, o) => row.reduce((s, x, r) => s + x * W_O[r][o], 0)) : row);
      return acc;
    },
    { joined: [], out: [] },
  );
  return state.out;
}
