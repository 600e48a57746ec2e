// Style: tagged tensor objects { data, shape, strides } over a Float64Array, with a generic einsum-like contract helper.
function tensor(rows) {
  const shape = [rows.length, rows[0].length];
  return { data: Float64Array.from(rows.flat()), shape, strides: [shape[1], 1] };
}

function empty(shape) {
  return { data: new Float64Array(shape[0] * shape[1]), shape, strides: [shape[1], 1] };
}

function at(t, i, j) {
  return t.data[i * t.strides[0] + j * t.strides[1]];
}

function T_(t) {
  return { data: t.data, shape: [t.shape[1], t.shape[0]], strides: [t.strides[1], t.strides[0]] };
}

// out[i][j] = Σ_k a[i][k] · b[k][j]
function contract(a, b) {
  const out = empty([a.shape[0], b.shape[1]]);
  for (let i = 0; i < a.shape[0]; i++) {
    for (let j = 0; j < b.shape[1]; j++) {
      let s = 0;
      for (let k = 0; k < a.shape[1]; k++) s += at(a, i, k) * at(b, k, j);
      out.data[i * out.strides[0] + j] = s;
    }
  }
  return out;
}

function map(t, f) {
  const out = empty(t.shape);
  for (let i = 0; i < t.shape[0]; i++) {
    for (let j = 0; j < t.shape[1]; j++) out.data[i * out.strides[0] + j] = f(at(t, i, j), i, j);
  }
  return out;
}

function softmaxRows(t) {
  const out = empty(t.shape);
  const [n, m] = t.shape;
  for (let i = 0; i < n; i++) {
    const row = out.data.subarray(i * m, i * m + m);
    let top = -Infinity;
    for (let j = 0; j < m; j++) top = Math.max(top, at(t, i, j));
    let z = 0;
    for (let j = 0; j < m; j++) {
      row[j] = Math.exp(at(t, i, j) - top);
      z += row[j];
    }
    for (let j = 0; j < m; j++) row[j] /= z;
  }
  return out;
}

function toRows(t) {
  return Array.from({ length: t.shape[0] }, (_, i) => Array.from(t.data.subarray(i * t.shape[1], (i + 1) * t.shape[1])));
}

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shape(K)} but Q is ${shape(Q)}: Q and K must both be T×d_k`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shape(V)} but Q is ${shape(Q)}: V must have T rows`);
  const q = tensor(Q), k = tensor(K), v = tensor(V);
  const scores = contract(q, T_(k));
  const scaled = map(scores, (x) => x / Math.sqrt(q.shape[1]));
  const masked = causal ? map(scaled, (x, i, j) => (j > i ? -Infinity : x)) : scaled;
  const weights = softmaxRows(masked);
  return toRows(contract(weights, v));
}
