// Challenge 04 with every matrix a Map from the string "i,j" to its number, carried with its rows
// and cols; the projections and W_O by one product() over such maps, each head's scores a Map of its
// own, and the heads written into one joined Map at their columns.

const shapeText = (M) => `${M.length}×${M[0].length}`;

function toMap(rows) {
  const m = new Map();
  rows.forEach((row, i) => row.forEach((x, j) => m.set(`${i},${j}`, x)));
  return { m, rows: rows.length, cols: rows[0].length };
}

function toRows({ m, rows, cols }) {
  return Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => m.get(`${i},${j}`)));
}

// A·B, both as maps
function product(A, B) {
  const m = new Map();
  for (let i = 0; i < A.rows; i++) {
    for (let j = 0; j < B.cols; j++) {
      let s = 0;
      for (let k = 0; k < A.cols; k++) s += A.m.get(`${i},${k}`) * B.m.get(`${k},${j}`);
      m.set(`${i},${j}`, s);
    }
  }
  return { m, rows: A.rows, cols: B.cols };
}

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if (X[0].length !== C) {
    throw new RangeError(`X is ${shapeText(X)} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  }
  for (const [name, W] of [['W_Q', W_Q], ['W_K', W_K], ['W_V', W_V], ['W_O', W_O]]) {
    if (W.length !== C || W[0].length !== C) throw new RangeError(`${name} is ${shapeText(W)} but must be C×C = ${C}×${C}`);
  }
  const x = toMap(X);
  const q = product(x, toMap(W_Q));
  const k = product(x, toMap(W_K));
  const v = product(x, toMap(W_V));
  const T = X.length;
  const scale = 1 / Math.sqrt(headDimensions);
  const joined = new Map();
  for (let h = 0; h < numberOfHeads; h++) {
    const at = h * headDimensions;
    const S = new Map();
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < T; j++) {
        let s = 0;
        for (let c = at; c < at + headDimensions; c++) s += q.m.get(`${i},${c}`) * k.m.get(`${j},${c}`);
        S.set(`${i},${j}`, s * scale);
      }
    }
    for (let i = 0; i < T; i++) {
      const row = Array.from({ length: T }, (_, j) => S.get(`${i},${j}`));
      const top = Math.max(...row);
      const exps = row.map((s) => Math.exp(s - top));
      const total = exps.reduce((a, b) => a + b, 0);
      for (let c = 0; c < headDimensions; c++) {
        let sum = 0;
        for (let j = 0; j < T; j++) sum += (exps[j] / total) * v.m.get(`${j},${at + c}`);
        joined.set(`${i},${at + c}`, sum);
      }
    }
  }
  return toRows(product({ m: joined, rows: T, cols: C }, toMap(W_O)));
}
