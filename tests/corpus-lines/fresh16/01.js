// Challenge 01 with every matrix kept in a Map from "row,column" to its number.

export function dotProductAttention(Q, K, V) {
  checkShapes(Q, K, V);
  const T = Q.length;
  const dk = Q[0].length;
  const dv = V[0].length;
  const q = toMap(Q);
  const k = toMap(K);
  const v = toMap(V);

  const scores = new Map();
  for (let i = 0; i < T; i++) {
    for (let j = 0; j < T; j++) {
      let total = 0;
      for (let c = 0; c < dk; c++) total += q.get(key(i, c)) * k.get(key(j, c));
      scores.set(key(i, j), total);
    }
  }

  const root = Math.sqrt(dk);
  for (const [where, s] of scores) scores.set(where, s / root);

  const weights = new Map();
  for (let i = 0; i < T; i++) {
    let biggest = -Infinity;
    for (let j = 0; j < T; j++) biggest = Math.max(biggest, scores.get(key(i, j)));
    let norm = 0;
    for (let j = 0; j < T; j++) {
      const e = Math.exp(scores.get(key(i, j)) - biggest);
      weights.set(key(i, j), e);
      norm += e;
    }
    for (let j = 0; j < T; j++) weights.set(key(i, j), weights.get(key(i, j)) / norm);
  }

  const out = new Map();
  for (let i = 0; i < T; i++) {
    for (let c = 0; c < dv; c++) {
      let acc = 0;
      for (let j = 0; j < T; j++) acc += weights.get(key(i, j)) * v.get(key(j, c));
      out.set(key(i, c), acc);
    }
  }
  return fromMap(out, T, dv);
}

const key = (i, j) => `${i},${j}`;

function toMap(M) {
  const m = new Map();
  M.forEach((row, i) => row.forEach((x, j) => m.set(key(i, j), x)));
  return m;
}

function fromMap(m, rows, cols) {
  return Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => m.get(key(i, j))));
}

function checkShapes(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${K.length}×${K[0].length} but Q is ${Q.length}×${Q[0].length}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${V.length}×${V[0].length} but Q is ${Q.length}×${Q[0].length}`);
  }
}
