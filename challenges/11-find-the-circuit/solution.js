// Reference answer for challenge 11: the composition scores of every head of layer 1 with every head
// of layer 2, from the weights alone. Every W is [in, out] (the model computes x·W) and C × C; head h
// owns columns h·d … (h+1)·d − 1 of W_Q, W_K and W_V and the same rows of W_O (d = C / numberOfHeads).
//   W_QK(h) = W_Q(h) · W_K(h)ᵀ      (C × C: query dims × key dims)
//   W_OV(h) = W_V(h) · W_O(h)       (C × C: what a read dim writes)
//   score(i → j) = ‖W_OV(i) · B(j)‖ / (‖W_OV(i)‖ · ‖B(j)‖), Frobenius norms, where B(j) is
//   W_QK(j) for Q-composition, W_QK(j)ᵀ for K-composition, W_OV(j) for V-composition.

export function compositionScores(weights, { numberOfHeads, kind }) {
  const [first, second] = weights.layers;
  const C = first.W_Q.length;
  weights.layers.forEach((layer, l) => {
    for (const name of ['W_Q', 'W_K', 'W_V', 'W_O']) {
      const M = layer[name];
      if (M.length !== C || M.some((row) => row.length !== C)) {
        throw new RangeError(`weights.layers[${l}].${name} is ${M.length}×${M[0]?.length ?? 0} but must be ${C}×${C}`);
      }
    }
  });
  const d = C / numberOfHeads;
  const columns = (M, h) => M.map((row) => row.slice(h * d, (h + 1) * d)); // C × d
  const rows = (M, h) => M.slice(h * d, (h + 1) * d); // d × C
  const ov = (layer, h) => matMul(columns(layer.W_V, h), rows(layer.W_O, h));
  const qk = (layer, h) => matMul(columns(layer.W_Q, h), transpose(columns(layer.W_K, h)));
  const reader = { q: (h) => qk(second, h), k: (h) => transpose(qk(second, h)), v: (h) => ov(second, h) }[kind];
  const heads = Array.from({ length: numberOfHeads }, (_, h) => h);
  const A = heads.map((i) => ov(first, i));
  const B = heads.map((j) => reader(j));
  return A.map((a) => B.map((b) => norm(matMul(a, b)) / (norm(a) * norm(b))));
}

// The heads the K-composition names: the previous-token head is the layer-1 head whose row (what every
// layer-2 head's keys read of its output) is the strongest, by its sum, not by its largest cell; the
// induction heads are the layer-2 heads whose K-composition with it is above the random baseline.
// [layer, head] pairs, 0-based as headMask counts them.

export function nameHeads(kComposition, baseline) {
  const rowSums = kComposition.map((row) => row.reduce((sum, x) => sum + x, 0));
  const previous = rowSums.indexOf(Math.max(...rowSums));
  const induction = kComposition[previous].flatMap((score, j) => (score > baseline ? [[1, j]] : []));
  return { previousToken: [0, previous], induction };
}

/** The Frobenius norm: the square root of the sum of every entry squared. */
function norm(M) {
  return Math.sqrt(M.reduce((sum, row) => sum + row.reduce((s, x) => s + x * x, 0), 0));
}

function transpose(M) {
  return M[0].map((_, j) => M.map((row) => row[j]));
}

function matMul(A, B) {
  return A.map((row) => B[0].map((_, j) => row.reduce((sum, a, k) => sum + a * B[k][j], 0)));
}
