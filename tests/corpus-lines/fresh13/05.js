// Style: event sourcing, the decode a list of 'append' and 'query' events folded by a reducer over a state.
function reducer(state, event) {
  switch (event.type) {
    case 'append':
      return { ...state, keys: [...state.keys, event.key], values: [...state.values, event.value] };
    case 'query': {
      const { heads, width } = state;
      const row = [];
      for (let h = 0; h < heads; h++) {
        const lo = h * width;
        const logits = state.keys.map((key) => {
          let s = 0;
          for (let c = lo; c < lo + width; c++) s += event.query[c] * key[c];
          return s / Math.sqrt(width);
        });
        const top = Math.max(...logits);
        const ex = logits.map((x) => Math.exp(x - top));
        const z = ex.reduce((a, b) => a + b, 0);
        for (let c = lo; c < lo + width; c++) {
          let acc = 0;
          for (let j = 0; j < ex.length; j++) acc += (ex[j] / z) * state.values[j][c];
          row.push(acc);
        }
      }
      return { ...state, rows: [...state.rows, row] };
    }
    default:
      return state;
  }
}

export function decode(Q, K, V, { numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const events = [];
  for (let t = 0; t < Q.length; t++) {
    events.push({ type: 'append', key: K[t], value: V[t] });
    events.push({ type: 'query', query: Q[t] });
  }
  const initial = { heads: numberOfHeads, width: headDimensions, keys: [], values: [], rows: [] };
  return events.reduce(reducer, initial).rows;
}
