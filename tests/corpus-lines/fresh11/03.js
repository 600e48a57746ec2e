// A right answer over a numpy-like mini library `np`: shape, zeros, T, a matmul that checks its shapes, mul by a scalar, tril (a boolean lower triangle), where(cond, A, other), and max, sum, sub, div and exp along axis 1 with keepdims and a broadcast of the one-column results; the attention itself is five np lines.
const np = {
  shape: (A) => [A.length, A[0].length],
  zeros: ([r, c]) => Array.from({ length: r }, () => new Array(c).fill(0)),
  T: (A) => A[0].map((_, j) => A.map((row) => row[j])),
  matmul(A, B) {
    const [n, k] = np.shape(A);
    const [k2, m] = np.shape(B);
    if (k !== k2) throw new RangeError(`matmul: ${n}×${k} by ${k2}×${m}`);
    const out = np.zeros([n, m]);
    for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) for (let p = 0; p < k; p++) out[i][j] += A[i][p] * B[p][j];
    return out;
  },
  mul: (A, s) => A.map((row) => row.map((x) => x * s)),
  tril: ([n, m]) => Array.from({ length: n }, (_, i) => Array.from({ length: m }, (_, j) => j <= i)),
  where: (cond, A, other) => A.map((row, i) => row.map((x, j) => (cond[i][j] ? x : other))),
  max: (A) => A.map((row) => [Math.max(...row)]),
  sum: (A) => A.map((row) => [row.reduce((a, b) => a + b, 0)]),
  sub: (A, B) => A.map((row, i) => row.map((x, j) => x - B[i][j % B[i].length])),
  div: (A, B) => A.map((row, i) => row.map((x, j) => x / B[i][j % B[i].length])),
  exp: (A) => A.map((row) => row.map((x) => Math.exp(x))),
};

// Softmax along axis 1: exp(X − max(X)) / sum(…), the (T, 1) columns broadcast over the rows.
function softmax(X) {
  const e = np.exp(np.sub(X, np.max(X)));
  return np.div(e, np.sum(e));
}

export function dotProductAttention(Q, K, V, { causal = false } = {}) {
  const [T, d] = np.shape(Q);
  const text = (A) => np.shape(A).join('×');
  if (K.length !== T || K[0].length !== d) throw new RangeError(`K is ${text(K)} but Q is ${text(Q)}`);
  if (V.length !== T) throw new RangeError(`V is ${text(V)} but Q is ${text(Q)}`);
  const scores = np.matmul(Q, np.T(K));
  const scaled = np.mul(scores, 1 / Math.sqrt(d));
  const masked = causal ? np.where(np.tril([T, T]), scaled, -Infinity) : scaled;
  const weights = softmax(masked);
  return np.matmul(weights, V);
}
