// Style: a fused QKV projection like GPT-2's c_attn: W_Q, W_K and W_V glued side by side into one C×3C weight, a single product X·W_qkv, the T×3C result split at columns 0, C and 2C, and W_O applied last as c_proj.
export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  const shape = (M) => `${M.length}×${M[0].length}`;
  if (X.some((row) => row.length !== C)) {
    throw new RangeError(`X is ${shape(X)} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  }
  for (const [name, W] of Object.entries({ W_Q, W_K, W_V, W_O })) {
    if (W.length !== C || W.some((row) => row.length !== C)) {
      throw new RangeError(`${name} is ${shape(W)} but must be C×C = ${C}×${C}`);
    }
  }

  // c_attn: row r of the fused weight is [W_Q[r] | W_K[r] | W_V[r]]
  const W_qkv = W_Q.map((row, r) => [...row, ...W_K[r], ...W_V[r]]);
  const qkv = linear(X, W_qkv); // T×3C
  const split = (at) => qkv.map((row) => row.slice(at, at + C));
  const [q, k, v] = [split(0), split(C), split(2 * C)];

  const y = X.map(() => []);
  for (let h = 0; h < numberOfHeads; h++) {
    const lo = h * headDimensions;
    const hi = lo + headDimensions;
    const head = attention(cols(q, lo, hi), cols(k, lo, hi), cols(v, lo, hi), headDimensions);
    head.forEach((row, t) => y[t].push(...row));
  }
  return linear(y, W_O); // c_proj
}

function cols(M, lo, hi) {
  return M.map((row) => row.slice(lo, hi));
}

// A (n×m) times W (m×p)
function linear(A, W) {
  return A.map((a) => W[0].map((_, j) => a.reduce((s, x, i) => s + x * W[i][j], 0)));
}

function attention(q, k, v, d) {
  const scale = 1 / Math.sqrt(d);
  return q.map((qi) => {
    const att = k.map((kj) => qi.reduce((s, x, c) => s + x * kj[c], 0) * scale);
    const m = Math.max(...att);
    const e = att.map((a) => Math.exp(a - m));
    const z = e.reduce((s, x) => s + x, 0);
    return v[0].map((_, c) => e.reduce((s, ej, j) => s + (ej / z) * v[j][c], 0));
  });
}
