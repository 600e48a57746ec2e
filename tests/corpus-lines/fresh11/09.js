// A right answer with batched 3-D tensors, einops-style: Q, K and V reshaped T×C → T×H×d and permuted to H×T×d, a batched product bmm over the heads for the scores (against K with its last two axes swapped) and for the blend, the scale, the causal mask and the softmax on the whole H×T×T tensor, then the heads permuted back to T×H×d and flattened to T×C before W_O.
const reshape = (M, H, d) => M.map((row) => Array.from({ length: H }, (_, h) => row.slice(h * d, h * d + d)));
const permute = (A) => A[0].map((_, h) => A.map((t) => t[h]));
const transposeLast = (A) => A.map((M) => M[0].map((_, j) => M.map((row) => row[j])));
const bmm = (A, B) => A.map((M, b) => M.map((row) => B[b][0].map((_, j) => row.reduce((s, x, k) => s + x * B[b][k][j], 0))));
const flatten = (A) => A.map((t) => t.flat());
const softmax = (row) => {
  const top = Math.max(...row);
  const ex = row.map((x) => Math.exp(x - top));
  const z = ex.reduce((a, b) => a + b, 0);
  return ex.map((e) => e / z);
};

export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal = false }) {
  const C = numberOfHeads * headDimensions;
  const fits = (M) => M.length === Q.length && M[0].length === C;
  if (!fits(Q) || !fits(K) || !fits(V)) throw new RangeError('Q/K/V matrix dimensions must match the numberOfHeads * headDimensions');
  const [q, k, v] = [Q, K, V].map((M) => permute(reshape(M, numberOfHeads, headDimensions)));
  const scores = bmm(q, transposeLast(k));
  const scaled = scores.map((M) => M.map((row) => row.map((x) => x / Math.sqrt(headDimensions))));
  const masked = scaled.map((M) => M.map((row, i) => row.map((x, j) => (causal && j > i ? -Infinity : x))));
  const weights = masked.map((M) => M.map(softmax));
  const heads = bmm(weights, v);
  const joined = flatten(permute(heads));
  if (!W_O) return joined;
  return joined.map((row) => W_O[0].map((_, j) => row.reduce((s, x, i) => s + x * W_O[i][j], 0)));
}
