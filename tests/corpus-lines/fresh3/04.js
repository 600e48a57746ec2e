// A right answer with the projections computed column by column (output column outer), the heads gathered by recursion, each head's rows by for…of over entries(), the concatenation by reduce.
function project(X, W) {
  const T = X.length;
  const out = Array.from({ length: T }, () => new Array(W[0].length));
  for (let j = 0; j < W[0].length; j++) {
    for (let t = 0; t < T; t++) {
      let s = 0;
      for (let k = 0; k < W.length; k++) s += X[t][k] * W[k][j];
      out[t][j] = s;
    }
  }
  return out;
}

function headOutput(Q, K, V, from, d) {
  const rows = [];
  for (const [i, q] of Q.entries()) {
    const logits = [];
    for (const [j, k] of K.entries()) {
      let s = 0;
      for (let c = 0; c < d; c++) s += q[from + c] * k[from + c];
      logits[j] = s / Math.sqrt(d);
    }
    const top = Math.max(...logits);
    const e = logits.map((x) => Math.exp(x - top));
    const z = e.reduce((a, b) => a + b, 0);
    const row = new Array(d).fill(0);
    for (const [j, v] of V.entries()) for (let c = 0; c < d; c++) row[c] += (e[j] / z) * v[from + c];
    rows[i] = row;
  }
  return rows;
}

function heads(Q, K, V, h, n, d) {
  if (h === n) return [];
  return [headOutput(Q, K, V, h * d, d), ...heads(Q, K, V, h + 1, n, d)];
}

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if (X[0].length !== C) throw new RangeError(`X is ${X.length}×${X[0].length} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  for (const [name, W] of Object.entries({ W_Q, W_K, W_V, W_O })) {
    if (W.length !== C || W[0].length !== C) throw new RangeError(`${name} is ${W.length}×${W[0].length} but must be C×C = ${C}×${C}`);
  }
  const [Q, K, V] = [W_Q, W_K, W_V].map((W) => project(X, W));
  const parts = heads(Q, K, V, 0, numberOfHeads, headDimensions);
  const concat = X.map((_, t) => parts.reduce((row, part) => row.concat(part[t]), []));
  return project(concat, W_O);
}
