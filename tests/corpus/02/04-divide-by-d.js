// expect: scale
// Divides the scores by headDimensions instead of its square root.
export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  const ok = (M) => M.length === Q.length && M[0].length === C;
  if (!ok(Q) || !ok(K) || !ok(V)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const out = Q.map(() => []);
  for (let h = 0; h < numberOfHeads; h++) {
    const s = h * headDimensions;
    const sub = (M) => M.map((r) => r.slice(s, s + headDimensions));
    const [q, k, v] = [sub(Q), sub(K), sub(V)];
    for (let i = 0; i < q.length; i++) {
      const scores = k.map((kj) => kj.reduce((acc, x, c) => acc + x * q[i][c], 0) / headDimensions);
      const m = Math.max(...scores);
      const e = scores.map((x) => Math.exp(x - m));
      const z = e.reduce((a, b) => a + b, 0);
      for (let c = 0; c < headDimensions; c++) out[i].push(e.reduce((acc, ej, j) => acc + (ej / z) * v[j][c], 0));
    }
  }
  if (!W_O) return out;
  return out.map((row) => W_O[0].map((_, j) => row.reduce((acc, x, kk) => acc + x * W_O[kk][j], 0)));
}
