// expect: none
// A right answer in map/reduce style with a log-sum-exp softmax.
function shapeText(M) { return `${M.length}×${M[0].length}`; }
function check(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(`K is ${shapeText(K)} but Q is ${shapeText(Q)}`);
  if (V.length !== Q.length) throw new RangeError(`V is ${shapeText(V)} but Q is ${shapeText(Q)}`);
}
const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
const logSumExp = (xs) => { const m = Math.max(...xs); return m + Math.log(xs.reduce((s, x) => s + Math.exp(x - m), 0)); };
export function dotProductAttention(Q, K, V) {
  check(Q, K, V);
  const scale = 1 / Math.sqrt(K[0].length);
  return Q.map((q) => {
    const scores = K.map((k) => dot(q, k) * scale);
    const lse = logSumExp(scores);
    const w = scores.map((s) => Math.exp(s - lse));
    return V[0].map((_, c) => w.reduce((acc, wj, j) => acc + wj * V[j][c], 0));
  });
}
