// Challenge 04 with every matrix an object { rows, cols, data } over a Float64Array, read through its
// get(i, j) method and written through set(i, j, x); one product helper for the projections and W_O.

function matrix(rows, cols, fill = () => 0) {
  const data = new Float64Array(rows * cols);
  const m = {
    rows,
    cols,
    data,
    get(i, j) {
      return data[i * cols + j];
    },
    set(i, j, x) {
      data[i * cols + j] = x;
    },
  };
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) m.set(i, j, fill(i, j));
  return m;
}

const fromRows = (A) => matrix(A.length, A[0].length, (i, j) => A[i][j]);
const toRows = (m) => Array.from({ length: m.rows }, (_, i) => Array.from({ length: m.cols }, (_, j) => m.get(i, j)));

function product(A, B) {
  return matrix(A.rows, B.cols, (i, j) => {
    let s = 0;
    for (let k = 0; k < A.cols; k++) s += A.get(i, k) * B.get(k, j);
    return s;
  });
}

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  checkShapes(X, { W_Q, W_K, W_V, W_O }, numberOfHeads, headDimensions, C);
  const d = headDimensions;
  const x = fromRows(X);
  const Q = product(x, fromRows(W_Q));
  const K = product(x, fromRows(W_K));
  const V = product(x, fromRows(W_V));
  const T = x.rows;
  const joined = matrix(T, C);
  for (let h = 0; h < numberOfHeads; h++) {
    const off = h * d;
    const scores = matrix(T, T, (i, j) => {
      let s = 0;
      for (let c = 0; c < d; c++) s += Q.get(i, off + c) * K.get(j, off + c);
      return s / Math.sqrt(d);
    });
    for (let i = 0; i < T; i++) {
      let top = -Infinity;
      for (let j = 0; j < T; j++) top = Math.max(top, scores.get(i, j));
      let z = 0;
      for (let j = 0; j < T; j++) {
        scores.set(i, j, Math.exp(scores.get(i, j) - top));
        z += scores.get(i, j);
      }
      for (let j = 0; j < T; j++) scores.set(i, j, scores.get(i, j) / z);
    }
    for (let i = 0; i < T; i++) {
      for (let c = 0; c < d; c++) {
        let acc = 0;
        for (let j = 0; j < T; j++) acc += scores.get(i, j) * V.get(j, off + c);
        joined.set(i, off + c, acc);
      }
    }
  }
  return toRows(product(joined, fromRows(W_O)));
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
