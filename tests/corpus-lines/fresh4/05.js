// A right answer with object-heavy state: the cache an array of { key, value } entries in a state object, the heads as { from, to } ranges, each head's intermediates kept as fields of a step object.
export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if ([Q, K, V].some((M) => M.length !== Q.length || M[0].length !== C)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const heads = Array.from({ length: numberOfHeads }, (_, h) => ({ from: h * headDimensions, to: (h + 1) * headDimensions }));
  const state = { cache: [], outputs: [] };
  for (let t = 0; t < Q.length; t++) {
    state.cache.push({ key: K[t], value: V[t] });
    const row = [];
    for (const head of heads) {
      const q = Q[t].slice(head.from, head.to);
      const step = { scores: state.cache.map((entry) => q.reduce((s, x, c) => s + x * entry.key[head.from + c], 0) / Math.sqrt(headDimensions)) };
      step.top = Math.max(...step.scores);
      step.exps = step.scores.map((x) => Math.exp(x - step.top));
      step.total = step.exps.reduce((a, b) => a + b, 0);
      step.weights = step.exps.map((x) => x / step.total);
      for (let c = head.from; c < head.to; c++) {
        row.push(state.cache.reduce((s, entry, j) => s + step.weights[j] * entry.value[c], 0));
      }
    }
    state.outputs.push(row);
  }
  return state.outputs;
}
