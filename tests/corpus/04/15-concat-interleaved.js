// expect: concat
// Right heads, written back interleaved (column c·h + i).
function shapeText(M) { return `${M.length}×${M[0].length}`; }
function checkShapes(X, Ws, h, d) {
  const C = h * d;
  if (X[0].length !== C) throw new RangeError(`X is ${shapeText(X)} but numberOfHeads · headDimensions = ${h} · ${d} = ${C}`);
  for (const [name, W] of Object.entries(Ws)) if (W.length !== C || W[0].length !== C) throw new RangeError(`${name} is ${shapeText(W)} but must be C×C = ${C}×${C}`);
}
const transpose = (M) => M[0].map((_, j) => M.map((r) => r[j]));
const matMul = (A, B) => A.map((r) => B[0].map((_, j) => r.reduce((s, a, k) => s + a * B[k][j], 0)));
function softmax(row) {
  const m = Math.max(...row);
  const e = row.map((x) => Math.exp(x - m));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}
export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads: h, headDimensions: d }) {
  checkShapes(X, { W_Q, W_K, W_V, W_O }, h, d);
  const [Q, K, V] = [W_Q, W_K, W_V].map((W) => matMul(X, W));
  const concat = X.map(() => new Array(h * d).fill(0));
  for (let i = 0; i < h; i++) {
    const part = (M) => M.map((r) => r.slice(i * d, (i + 1) * d));
    const ctx = matMul(matMul(part(Q), transpose(part(K))).map((r) => softmax(r.map((x) => x / Math.sqrt(d)))), part(V));
    ctx.forEach((row, t) => row.forEach((x, c) => { concat[t][c * h + i] = x; }));
  }
  return matMul(concat, W_O);
}
