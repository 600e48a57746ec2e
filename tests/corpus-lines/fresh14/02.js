// Style: a small Tensor with shape, strides and an offset over a Float64Array; view() cuts a head's columns without copying, .T swaps the strides.
class Tensor {
  constructor(data, shape, strides = [shape[1], 1], offset = 0) {
    this.data = data;
    this.shape = shape;
    this.strides = strides;
    this.offset = offset;
  }

  static fromRows(rows) {
    const [n, m] = [rows.length, rows[0].length];
    const data = new Float64Array(n * m);
    rows.forEach((row, i) => row.forEach((x, j) => { data[i * m + j] = x; }));
    return new Tensor(data, [n, m]);
  }

  static zeros(n, m) {
    return new Tensor(new Float64Array(n * m), [n, m]);
  }

  at(i, j) {
    return this.offset + i * this.strides[0] + j * this.strides[1];
  }

  get(i, j) {
    return this.data[this.at(i, j)];
  }

  set(i, j, x) {
    this.data[this.at(i, j)] = x;
  }

  view(colStart, colEnd) {
    return new Tensor(this.data, [this.shape[0], colEnd - colStart], this.strides, this.offset + colStart * this.strides[1]);
  }

  get T() {
    return new Tensor(this.data, [this.shape[1], this.shape[0]], [this.strides[1], this.strides[0]], this.offset);
  }

  toRows() {
    return Array.from({ length: this.shape[0] }, (_, i) => Array.from({ length: this.shape[1] }, (_, j) => this.get(i, j)));
  }
}

// A·B written into `out` (a fresh tensor unless a view is given).
function matmul(A, B, out = Tensor.zeros(A.shape[0], B.shape[1])) {
  for (let i = 0; i < A.shape[0]; i++) {
    for (let j = 0; j < B.shape[1]; j++) {
      let acc = 0;
      for (let k = 0; k < A.shape[1]; k++) acc += A.get(i, k) * B.get(k, j);
      out.set(i, j, acc);
    }
  }
  return out;
}

function softmaxRowsInPlace(S) {
  const [n, m] = S.shape;
  for (let i = 0; i < n; i++) {
    let peak = -Infinity;
    for (let j = 0; j < m; j++) peak = Math.max(peak, S.get(i, j));
    let total = 0;
    for (let j = 0; j < m; j++) {
      const e = Math.exp(S.get(i, j) - peak);
      S.set(i, j, e);
      total += e;
    }
    for (let j = 0; j < m; j++) S.set(i, j, S.get(i, j) / total);
  }
  return S;
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) {
    throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  }
  const T = Q.length;
  const q = Tensor.fromRows(Q);
  const k = Tensor.fromRows(K);
  const v = Tensor.fromRows(V);
  const concat = Tensor.zeros(T, C);
  for (let h = 0; h < numberOfHeads; h++) {
    const lo = h * headDimensions;
    const hi = lo + headDimensions;
    const qh = q.view(lo, hi);
    const kh = k.view(lo, hi);
    const vh = v.view(lo, hi);
    const scores = matmul(qh, kh.T);
    const scale = 1 / Math.sqrt(headDimensions);
    for (let n = 0; n < scores.data.length; n++) scores.data[n] *= scale;
    const weights = softmaxRowsInPlace(scores);
    matmul(weights, vh, concat.view(lo, hi));
  }
  const out = W_O ? matmul(concat, Tensor.fromRows(W_O)) : concat;
  return out.toRows();
}
