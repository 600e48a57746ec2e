// A switch-driven pipeline: the stages by name, each turning the state into the next.
const STAGES = ['scores', 'scale', 'mask', 'softmax', 'blend'];

function stage(name, state) {
  switch (name) {
    case 'scores':
      return { ...state, m: state.Q.map((q) => state.K.map((k) => q.reduce((s, x, c) => s + x * k[c], 0))) };
    case 'scale': {
      const root = Math.sqrt(state.Q[0].length);
      return { ...state, m: state.m.map((row) => row.map((x) => x / root)) };
    }
    case 'mask':
      if (!state.causal) return state;
      return { ...state, m: state.m.map((row, i) => row.map((x, j) => (j <= i ? x : -Infinity))) };
    case 'softmax':
      return {
        ...state,
        m: state.m.map((row) => {
          const top = Math.max(...row);
          const e = row.map((x) => Math.exp(x - top));
          const z = e.reduce((a, b) => a + b, 0);
          return e.map((x) => x / z);
        }),
      };
    case 'blend':
      return { ...state, m: state.m.map((w) => state.V[0].map((_, c) => w.reduce((s, x, j) => s + x * state.V[j][c], 0))) };
    default:
      throw new Error(`no stage ${name}`);
  }
}

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  check(Q, K, V);
  let state = { Q, K, V, causal, m: null };
  for (const name of STAGES) state = stage(name, state);
  return state.m;
}

function check(Q, K, V) {
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (shape(K) !== shape(Q)) throw new RangeError(`K is ${shape(K)} but Q is ${shape(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shape(V)} but Q is ${shape(Q)}`);
}
