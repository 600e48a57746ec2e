// Style: lazy matrices behind a Proxy, every entry computed on first read by a rule (i, j) => value and memoised.
function lazy(rows, cols, rule) {
  const memo = new Map();
  const get = (i, j) => {
    const key = i * cols + j;
    if (!memo.has(key)) memo.set(key, rule(i, j));
    return memo.get(key);
  };
  return new Proxy({}, {
    get(_, prop) {
      if (prop === 'rows') return rows;
      if (prop === 'cols') return cols;
      const i = Number(prop);
      return new Proxy({}, { get: (__, c) => (c === 'length' ? cols : get(i, Number(c))) });
    },
  });
}

function materialise(M) {
  const out = [];
  for (let i = 0; i < M.rows; i++) {
    const row = [];
    for (let j = 0; j < M.cols; j++) row.push(M[i][j]);
    out.push(row);
  }
  return out;
}

export function dotProductAttention(Q, K, V) {
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shape(K)} but Q is ${shape(Q)}: Q and K must both be T×d_k`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shape(V)} but Q is ${shape(Q)}: V must have T rows`);
  const T = Q.length;
  const dk = Q[0].length;
  const dv = V[0].length;
  const raw = lazy(T, T, (i, j) => {
    let s = 0;
    for (let c = 0; c < dk; c++) s += Q[i][c] * K[j][c];
    return s;
  });
  const scaled = lazy(T, T, (i, j) => raw[i][j] / Math.sqrt(dk));
  const rowMax = lazy(T, 1, (i) => {
    let m = -Infinity;
    for (let j = 0; j < T; j++) m = Math.max(m, scaled[i][j]);
    return m;
  });
  const exps = lazy(T, T, (i, j) => Math.exp(scaled[i][j] - rowMax[i][0]));
  const rowSum = lazy(T, 1, (i) => {
    let z = 0;
    for (let j = 0; j < T; j++) z += exps[i][j];
    return z;
  });
  const weights = lazy(T, T, (i, j) => exps[i][j] / rowSum[i][0]);
  const out = lazy(T, dv, (i, c) => {
    let acc = 0;
    for (let j = 0; j < T; j++) acc += weights[i][j] * V[j][c];
    return acc;
  });
  return materialise(out);
}
