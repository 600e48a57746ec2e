// A right answer split into many tiny helpers the way a tutorial builds it: splitHeads turns T×C into a list of T×d heads, mergeHeads puts them back, and dot, transpose, matmul, scaleMatrix, softmaxRow and attention each do one thing.
function dot(a, b) {
  let sum = 0;
  for (let k = 0; k < a.length; k++) sum += a[k] * b[k];
  return sum;
}

function transpose(M) {
  const out = [];
  for (let c = 0; c < M[0].length; c++) out.push(M.map((row) => row[c]));
  return out;
}

function matmul(A, B) {
  const Bt = transpose(B);
  return A.map((row) => Bt.map((col) => dot(row, col)));
}

function scaleMatrix(M, factor) {
  return M.map((row) => row.map((x) => x * factor));
}

function softmaxRow(row) {
  const top = Math.max(...row);
  const exps = row.map((x) => Math.exp(x - top));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
}

function splitHeads(M, heads, size) {
  const parts = [];
  for (let h = 0; h < heads; h++) {
    parts.push(M.map((row) => row.slice(h * size, h * size + size)));
  }
  return parts;
}

function mergeHeads(parts) {
  return parts[0].map((_, t) => [].concat(...parts.map((part) => part[t])));
}

function eye(n) {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
}

function attention(q, k, v) {
  const scores = scaleMatrix(matmul(q, transpose(k)), 1 / Math.sqrt(q[0].length));
  const weights = scores.map(softmaxRow);
  return matmul(weights, v);
}

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {
  const C = numberOfHeads * headDimensions;
  const ok = [Q, K, V].every((M) => M.length === Q.length && M[0].length === C);
  if (!ok) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const qs = splitHeads(Q, numberOfHeads, headDimensions);
  const ks = splitHeads(K, numberOfHeads, headDimensions);
  const vs = splitHeads(V, numberOfHeads, headDimensions);
  const outs = qs.map((q, h) => attention(q, ks[h], vs[h]));
  const merged = mergeHeads(outs);
  return matmul(merged, W_O || eye(C));
}
