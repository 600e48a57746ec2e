// Challenge 02: the heads are folded into the rows. Each of Q, K and V becomes one tall (H·T)×d
// stack, head h in rows h·T … h·T + T − 1; attention runs once over the stack, every row scoring
// only the keys of its own block, and the stack is unfolded back into T×C before W_O.

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  const T = Q.length;
  for (const M of [Q, K, V]) {
    if (M.length !== T || M.some((row) => row.length !== C)) {
      throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
    }
  }
  const qs = fold(Q, numberOfHeads, headDimensions);
  const ks = fold(K, numberOfHeads, headDimensions);
  const vs = fold(V, numberOfHeads, headDimensions);
  const scale = 1 / Math.sqrt(headDimensions);

  const stacked = qs.map((q, r) => {
    const block = Math.floor(r / T) * T;                       // first row of this head's block
    const logits = [];
    for (let j = block; j < block + T; j++) {
      let s = 0;
      for (let c = 0; c < headDimensions; c++) s += q[c] * ks[j][c];
      logits.push(s * scale);
    }
    const top = Math.max(...logits);
    const exps = logits.map((x) => Math.exp(x - top));
    const total = exps.reduce((a, b) => a + b, 0);
    const out = new Array(headDimensions).fill(0);
    exps.forEach((e, n) => {
      for (let c = 0; c < headDimensions; c++) out[c] += (e / total) * vs[block + n][c];
    });
    return out;
  });

  const joined = unfold(stacked, numberOfHeads, T);
  const W = W_O ?? Array.from({ length: C }, (_, i) => Array.from({ length: C }, (_, j) => (i === j ? 1 : 0)));
  return joined.map((row) => W[0].map((_, o) => row.reduce((s, x, i) => s + x * W[i][o], 0)));
}

// T×(H·d) → (H·T)×d, head after head
function fold(M, heads, d) {
  const stack = [];
  for (let h = 0; h < heads; h++) {
    for (const row of M) stack.push(row.slice(h * d, h * d + d));
  }
  return stack;
}

// (H·T)×d → T×(H·d), the heads side by side again
function unfold(stack, heads, T) {
  const rows = [];
  for (let t = 0; t < T; t++) {
    const row = [];
    for (let h = 0; h < heads; h++) row.push(...stack[h * T + t]);
    rows.push(row);
  }
  return rows;
}
