// Challenge 04 as a pipeline: a list of [name, step] pairs, run in order over one state object.

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  checkShapes(X, { W_Q, W_K, W_V, W_O }, numberOfHeads, headDimensions, C);
  const d = headDimensions;

  const pipeline = [
    ['project', (s) => {
      s.Q = times(X, W_Q);
      s.K = times(X, W_K);
      s.V = times(X, W_V);
    }],
    ['split', (s) => {
      s.heads = [];
      for (let h = 0; h < numberOfHeads; h++) {
        const cut = (M) => M.map((row) => row.slice(h * d, h * d + d));
        s.heads.push({ q: cut(s.Q), k: cut(s.K), v: cut(s.V) });
      }
    }],
    ['scores', (s) => {
      for (const head of s.heads) head.scores = times(head.q, transpose(head.k));
    }],
    ['scale', (s) => {
      for (const head of s.heads) head.scores = head.scores.map((row) => row.map((x) => x / Math.sqrt(d)));
    }],
    ['softmax', (s) => {
      for (const head of s.heads) {
        head.weights = head.scores.map((row) => {
          const top = Math.max(...row);
          const e = row.map((x) => Math.exp(x - top));
          const z = e.reduce((a, b) => a + b, 0);
          return e.map((x) => x / z);
        });
      }
    }],
    ['mix', (s) => {
      for (const head of s.heads) head.out = times(head.weights, head.v);
    }],
    ['concat', (s) => {
      s.Y = X.map((_, t) => s.heads.flatMap((head) => head.out[t]));
    }],
    ['output', (s) => {
      s.result = times(s.Y, W_O);
    }],
  ];

  const state = { done: [] };
  for (const [name, step] of pipeline) {
    step(state);
    state.done.push(name);
  }
  return state.result;
}

function times(A, B) {
  return A.map((row) => B[0].map((_, j) => row.reduce((sum, a, k) => sum + a * B[k][j], 0)));
}

function transpose(M) {
  return M[0].map((_, j) => M.map((row) => row[j]));
}

function checkShapes(X, weights, numberOfHeads, headDimensions, C) {
  if (X[0].length !== C) {
    throw new RangeError(`X is ${X.length}×${X[0].length} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  }
  for (const [name, W] of Object.entries(weights)) {
    if (W.length !== C || W[0].length !== C) {
      throw new RangeError(`${name} is ${W.length}×${W[0].length} but must be C×C = ${C}×${C}`);
    }
  }
}
