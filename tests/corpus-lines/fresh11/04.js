// A right answer as lazy generator pipelines: every stage is a function* over rows (project, columns, scores, scale, softmax, mix, joined), a head is a chain of generators nested inside one another, and rows are only collected by spread where a whole matrix is needed (the keys and values of a head, the answer).
function* project(rows, W) {
  for (const x of rows) yield W[0].map((_, j) => x.reduce((s, xi, i) => s + xi * W[i][j], 0));
}

function* columns(rows, from, width) {
  for (const row of rows) yield row.slice(from, from + width);
}

function* scores(queries, keys) {
  for (const q of queries) yield keys.map((k) => k.reduce((s, x, c) => s + x * q[c], 0));
}

function* scale(rows, factor) {
  for (const row of rows) yield row.map((x) => x * factor);
}

function* softmax(rows) {
  for (const row of rows) {
    const top = Math.max(...row);
    const ex = row.map((x) => Math.exp(x - top));
    const z = ex.reduce((a, b) => a + b, 0);
    yield ex.map((e) => e / z);
  }
}

function* mix(weights, values) {
  for (const w of weights) yield values[0].map((_, c) => w.reduce((s, p, j) => s + p * values[j][c], 0));
}

// Row t of every head, side by side: the heads' generators advanced together.
function* joined(heads) {
  const its = heads.map((head) => head[Symbol.iterator]());
  for (;;) {
    const parts = its.map((it) => it.next());
    if (parts[0].done) return;
    yield parts.flatMap((part) => part.value);
  }
}

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (X[0].length !== C) throw new RangeError(`X is ${shape(X)} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  for (const [name, W] of Object.entries({ W_Q, W_K, W_V, W_O })) {
    if (W.length !== C || W[0].length !== C) throw new RangeError(`${name} is ${shape(W)} but must be C×C = ${C}×${C}`);
  }
  const Q = [...project(X, W_Q)];
  const K = [...project(X, W_K)];
  const V = [...project(X, W_V)];
  const factor = 1 / Math.sqrt(headDimensions);
  const heads = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const from = h * headDimensions;
    const k = [...columns(K, from, headDimensions)];
    const v = [...columns(V, from, headDimensions)];
    const q = columns(Q, from, headDimensions);
    heads.push(mix(softmax(scale(scores(q, k), factor)), v));
  }
  return [...project(joined(heads), W_O)];
}
