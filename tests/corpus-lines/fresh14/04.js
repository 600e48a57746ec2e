// Style: a port from NumPy, every helper named after the numpy call it stands for (np_zeros, np_matmul, np_transpose, np_split, np_concatenate, np_max, np_sum, np_softmax), axes included.
function np_zeros(rows, cols) {
  return Array.from({ length: rows }, () => new Array(cols).fill(0));
}

function np_matmul(a, b) {
  const out = np_zeros(a.length, b[0].length);
  for (let i = 0; i < a.length; i++) {
    for (let j = 0; j < b[0].length; j++) {
      let s = 0;
      for (let k = 0; k < b.length; k++) s += a[i][k] * b[k][j];
      out[i][j] = s;
    }
  }
  return out;
}

function np_transpose(a) {
  return a[0].map((_, j) => a.map((row) => row[j]));
}

function np_multiply(a, scalar) {
  return a.map((row) => row.map((x) => x * scalar));
}

// np.split(a, sections, axis=1): equal blocks of columns
function np_split(a, sections) {
  const width = a[0].length / sections;
  return Array.from({ length: sections }, (_, s) => a.map((row) => row.slice(s * width, (s + 1) * width)));
}

// np.concatenate(arrays, axis): axis 0 stacks the rows, axis 1 joins each row
function np_concatenate(arrays, axis) {
  if (axis === 0) return [].concat(...arrays);
  return arrays[0].map((_, r) => arrays.reduce((row, a) => row.concat(a[r]), []));
}

// np.max / np.sum with keepdims=False: axis -1 gives one number per row, axis 0 one per column
function np_max(a, axis) {
  if (axis === 0) return a[0].map((_, j) => Math.max(...a.map((row) => row[j])));
  return a.map((row) => Math.max(...row));
}

function np_sum(a, axis) {
  if (axis === 0) return a[0].map((_, j) => a.reduce((s, row) => s + row[j], 0));
  return a.map((row) => row.reduce((s, x) => s + x, 0));
}

function np_softmax(x) {
  const m = np_max(x, -1);
  const e = x.map((row, i) => row.map((v) => Math.exp(v - m[i])));
  const s = np_sum(e, -1);
  return e.map((row, i) => row.map((v) => v / s[i]));
}

const shape = (a) => `${a.length}×${a[0].length}`;

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const n_embd = numberOfHeads * headDimensions;
  if (X[0].length !== n_embd) {
    throw new RangeError(`X is ${shape(X)} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${n_embd}`);
  }
  for (const [name, W] of [['W_Q', W_Q], ['W_K', W_K], ['W_V', W_V], ['W_O', W_O]]) {
    if (W.length !== n_embd || W[0].length !== n_embd) {
      throw new RangeError(`${name} is ${shape(W)} but must be C×C = ${n_embd}×${n_embd}`);
    }
  }
  // q, k, v = x @ w_q, x @ w_k, x @ w_v
  const q = np_matmul(X, W_Q);
  const k = np_matmul(X, W_K);
  const v = np_matmul(X, W_V);
  // split into heads: n_head arrays of T × head_size
  const q_heads = np_split(q, numberOfHeads);
  const k_heads = np_split(k, numberOfHeads);
  const v_heads = np_split(v, numberOfHeads);
  const out_heads = [];
  for (let h = 0; h < numberOfHeads; h++) {
    const att = np_matmul(q_heads[h], np_transpose(k_heads[h]));
    const att_scaled = np_multiply(att, 1 / Math.sqrt(headDimensions));
    const att_weights = np_softmax(att_scaled);
    out_heads.push(np_matmul(att_weights, v_heads[h]));
  }
  // merge heads: T × n_embd, then the output projection
  const y = np_concatenate(out_heads, 1);
  return np_matmul(y, W_O);
}
