// Challenge 03: the scores live in one packed Float64Array. With the causal mask, row i keeps only
// its i + 1 visible keys and starts at offset i(i + 1)/2 (lower-triangular packed storage); without
// it, every row has T entries and starts at i·T. A masked key is simply never stored.

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) {
    throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  }
  if (V.length !== Q.length) {
    throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
  }
  const T = Q.length;
  const dk = Q[0].length;
  const dv = V[0].length;
  const rowLength = (i) => (causal ? i + 1 : T);
  const rowStart = (i) => (causal ? (i * (i + 1)) / 2 : i * T);
  const packed = new Float64Array(rowStart(T));               // one past the last row

  for (let i = 0; i < T; i++) {
    const start = rowStart(i);
    for (let j = 0; j < rowLength(i); j++) {
      let dot = 0;
      for (let c = 0; c < dk; c++) dot += Q[i][c] * K[j][c];
      packed[start + j] = dot / Math.sqrt(dk);
    }
  }

  for (let i = 0; i < T; i++) {
    const row = packed.subarray(rowStart(i), rowStart(i) + rowLength(i));
    let max = -Infinity;
    for (const x of row) if (x > max) max = x;
    let sum = 0;
    for (let j = 0; j < row.length; j++) {
      row[j] = Math.exp(row[j] - max);
      sum += row[j];
    }
    for (let j = 0; j < row.length; j++) row[j] /= sum;
  }

  const out = [];
  for (let i = 0; i < T; i++) {
    const start = rowStart(i);
    const mixed = new Array(dv).fill(0);
    for (let j = 0; j < rowLength(i); j++) {
      const w = packed[start + j];
      for (let c = 0; c < dv; c++) mixed[c] += w * V[j][c];
    }
    out.push(mixed);
  }
  return out;
}

function shapeText(M) {
  return `${M.length}×${M[0].length}`;
}
