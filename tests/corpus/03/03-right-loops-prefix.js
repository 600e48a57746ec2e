// expect: none
// A right answer that only loops over the keys j ≤ i when causal.
function shapeText(M) { return `${M.length}×${M[0].length}`; }
function check(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
}
const transpose = (M) => M[0].map((_, j) => M.map((r) => r[j]));
const matMul = (A, B) => A.map((r) => B[0].map((_, j) => r.reduce((s, a, k) => s + a * B[k][j], 0)));
function softmax(row) {
  const m = Math.max(...row);
  const e = row.map((x) => Math.exp(x - m));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}
export function dotProductAttention(Q, K, V, opts) {
  check(Q, K, V);
  const causal = Boolean(opts && opts.causal);
  const T = Q.length, d = Q[0].length;
  const out = [];
  for (let i = 0; i < T; i++) {
    const last = causal ? i : T - 1;
    const s = [];
    for (let j = 0; j <= last; j++) { let dot = 0; for (let c = 0; c < d; c++) dot += Q[i][c] * K[j][c]; s.push(dot / Math.sqrt(d)); }
    const w = softmax(s);
    out.push(V[0].map((_, c) => w.reduce((acc, wj, j) => acc + wj * V[j][c], 0)));
  }
  return out;
}
