// A right answer around a tiny einsum-like helper: sum(n, f) adds f(k) for k < n, and every product is an index formula written with it; the matrices are rows of Float64Arrays made by Array.from({ length }, () => new Float64Array(n)), each head's columns read through an index closure.
const sum = (n, f) => { let s = 0; for (let k = 0; k < n; k++) s += f(k); return s; };
const zeros = (rows, cols) => Array.from({ length: rows }, () => new Float64Array(cols));

export function projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }) {
  const C = numberOfHeads * headDimensions;
  if (X[0].length !== C) throw new RangeError(`X is ${X.length}×${X[0].length} but numberOfHeads · headDimensions = ${numberOfHeads} · ${headDimensions} = ${C}`);
  for (const [name, W] of Object.entries({ W_Q, W_K, W_V, W_O })) {
    if (W.length !== C || W[0].length !== C) throw new RangeError(`${name} is ${W.length}×${W[0].length} but must be C×C = ${C}×${C}`);
  }
  const T = X.length;
  const d = headDimensions;
  const project = (A, W) => {
    const P = zeros(T, C);
    for (let t = 0; t < T; t++) for (let o = 0; o < C; o++) P[t][o] = sum(C, (i) => A[t][i] * W[i][o]);
    return P;
  };
  const Q = project(X, W_Q);
  const K = project(X, W_K);
  const V = project(X, W_V);
  const concat = zeros(T, C);
  for (let h = 0; h < numberOfHeads; h++) {
    const at = (M, t, c) => M[t][h * d + c];
    const S = zeros(T, T);
    for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) S[i][j] = sum(d, (c) => at(Q, i, c) * at(K, j, c)) / Math.sqrt(d);
    for (const row of S) {
      const top = Math.max(...row);
      for (let j = 0; j < T; j++) row[j] = Math.exp(row[j] - top);
      const z = sum(T, (j) => row[j]);
      for (let j = 0; j < T; j++) row[j] /= z;
    }
    for (let i = 0; i < T; i++) for (let c = 0; c < d; c++) concat[i][h * d + c] = sum(T, (j) => S[i][j] * at(V, j, c));
  }
  return Array.from(project(concat, W_O), (row) => Array.from(row));
}
