// Style: one Float64Array arena allocated up front, every intermediate a region of it at a named offset, all reads and writes by offset arithmetic.
export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${shape(K)} but Q is ${shape(Q)}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${shape(V)} but Q is ${shape(Q)}`);
  }
  const T = Q.length;
  const dk = Q[0].length;
  const dv = V[0].length;

  const layout = {};
  let top = 0;
  const region = (name, size) => {
    layout[name] = top;
    top += size;
  };
  region('q', T * dk);
  region('k', T * dk);
  region('v', T * dv);
  region('scores', T * T);
  region('weights', T * T);
  region('out', T * dv);
  const arena = new Float64Array(top);
  const load = (name, M, width) => M.forEach((row, r) => row.forEach((x, c) => { arena[layout[name] + r * width + c] = x; }));
  load('q', Q, dk);
  load('k', K, dk);
  load('v', V, dv);

  const S = layout.scores;
  for (let i = 0; i < T; i++) {
    for (let j = 0; j < T; j++) {
      let dot = 0;
      for (let c = 0; c < dk; c++) dot += arena[layout.q + i * dk + c] * arena[layout.k + j * dk + c];
      arena[S + i * T + j] = dot;
    }
  }
  const inv = 1 / Math.sqrt(dk);
  for (let n = 0; n < T * T; n++) arena[S + n] *= inv;
  if (causal) {
    for (let i = 0; i < T; i++) {
      for (let j = i + 1; j < T; j++) arena[S + i * T + j] = -Infinity;
    }
  }

  const W = layout.weights;
  for (let i = 0; i < T; i++) {
    let peak = -Infinity;
    for (let j = 0; j < T; j++) peak = Math.max(peak, arena[S + i * T + j]);
    let total = 0;
    for (let j = 0; j < T; j++) {
      arena[W + i * T + j] = Math.exp(arena[S + i * T + j] - peak);
      total += arena[W + i * T + j];
    }
    for (let j = 0; j < T; j++) arena[W + i * T + j] /= total;
  }

  const O = layout.out;
  for (let i = 0; i < T; i++) {
    for (let j = 0; j < T; j++) {
      const w = arena[W + i * T + j];
      for (let c = 0; c < dv; c++) arena[O + i * dv + c] += w * arena[layout.v + j * dv + c];
    }
  }
  return Array.from({ length: T }, (_, i) => Array.from(arena.subarray(O + i * dv, O + (i + 1) * dv)));
}
