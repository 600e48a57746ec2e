// Style: a long-format "data frame" kept as an object of columns ({ query, key, score }), one row per (query, key) pair; scaling a mutate(), the causal mask a filter() of rows, the softmax grouped by query, the output a pivot of the weighted values back into a matrix.
export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shape(K)} but Q is ${shape(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shape(V)} but Q is ${shape(Q)}`);
  const T = Q.length;
  const dk = Q[0].length;

  // one row per (query, key) pair
  let df = { query: [], key: [], score: [] };
  for (let i = 0; i < T; i++) {
    for (let j = 0; j < T; j++) {
      df.query.push(i);
      df.key.push(j);
      df.score.push(dotRow(Q[i], K[j]));
    }
  }
  df = mutate(df, 'score', (r) => r.score / Math.sqrt(dk));
  if (causal) df = filter(df, (r) => r.key <= r.query);
  df = groupSoftmax(df, 'query', 'score', 'weight');
  return pivotBlend(df, V, T);
}

const nrow = (df) => df.query.length;
const rowAt = (df, n) => Object.fromEntries(Object.keys(df).map((col) => [col, df[col][n]]));

function mutate(df, col, f) {
  const out = { ...df, [col]: [] };
  for (let n = 0; n < nrow(df); n++) out[col].push(f(rowAt(df, n)));
  return out;
}

function filter(df, keep) {
  const out = Object.fromEntries(Object.keys(df).map((col) => [col, []]));
  for (let n = 0; n < nrow(df); n++) {
    if (!keep(rowAt(df, n))) continue;
    for (const col of Object.keys(df)) out[col].push(df[col][n]);
  }
  return out;
}

// softmax of column `from` within each group of rows sharing column `by`, written to column `into`
function groupSoftmax(df, by, from, into) {
  const top = new Map();
  const total = new Map();
  for (let n = 0; n < nrow(df); n++) {
    const g = df[by][n];
    top.set(g, Math.max(top.get(g) ?? -Infinity, df[from][n]));
  }
  const exps = df[from].map((s, n) => Math.exp(s - top.get(df[by][n])));
  exps.forEach((e, n) => total.set(df[by][n], (total.get(df[by][n]) ?? 0) + e));
  return { ...df, [into]: exps.map((e, n) => e / total.get(df[by][n])) };
}

function pivotBlend(df, V, T) {
  const out = Array.from({ length: T }, () => new Array(V[0].length).fill(0));
  for (let n = 0; n < nrow(df); n++) {
    const { query, key, weight } = rowAt(df, n);
    V[key].forEach((v, c) => {
      out[query][c] += weight * v;
    });
  }
  return out;
}

function dotRow(a, b) {
  let s = 0;
  for (let c = 0; c < a.length; c++) s += a[c] * b[c];
  return s;
}
