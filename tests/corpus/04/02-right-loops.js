// expect: none
// A right answer in one function with explicit loops for every product.
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
export function projectedSelfAttention(X, opts) {
  const { W_Q, W_K, W_V, W_O, numberOfHeads: h, headDimensions: d } = opts;
  checkShapes(X, { W_Q, W_K, W_V, W_O }, h, d);
  const T = X.length, C = h * d;
  const proj = (W) => { const R = []; for (let t = 0; t < T; t++) { R.push([]); for (let j = 0; j < C; j++) { let s = 0; for (let f = 0; f < C; f++) s += X[t][f] * W[f][j]; R[t].push(s); } } return R; };
  const Q = proj(W_Q), K = proj(W_K), V = proj(W_V);
  const concat = Array.from({ length: T }, () => new Array(C).fill(0));
  for (let hh = 0; hh < h; hh++) for (let i = 0; i < T; i++) {
    const s = [];
    for (let j = 0; j < T; j++) { let dot = 0; for (let c = hh * d; c < (hh + 1) * d; c++) dot += Q[i][c] * K[j][c]; s.push(dot / Math.sqrt(d)); }
    const w = softmax(s);
    for (let j = 0; j < T; j++) for (let c = hh * d; c < (hh + 1) * d; c++) concat[i][c] += w[j] * V[j][c];
  }
  const out = [];
  for (let t = 0; t < T; t++) { out.push([]); for (let j = 0; j < C; j++) { let s = 0; for (let k = 0; k < C; k++) s += concat[t][k] * W_O[k][j]; out[t].push(s); } }
  return out;
}
