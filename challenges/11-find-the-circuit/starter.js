// Challenge 11: find the circuit.
// Write compositionScores(weights, { numberOfHeads, kind }), then nameHeads below; keep both `export`s.
// weights = { layers: [first, second] } as the package's getWeights() returns them: each layer is
// { W_Q, W_K, W_V, W_O }, every W is C×C and [in, out] (the model computes x·W).
// Head h owns columns h·d … (h+1)·d − 1 of W_Q, W_K, W_V and the same rows of W_O (d = C / numberOfHeads).
// Return the numberOfHeads × numberOfHeads matrix whose entry [i][j] is how much head j of the second
// layer reads what head i of the first layer writes: kind 'q' (through its queries), 'k' (its keys)
// or 'v' (its values).
// Plain JavaScript only: no imports. The helpers below are yours to use or change.

export function compositionScores(weights, { numberOfHeads, kind }) {
  // 0. C = the rows of the first layer's W_Q; if any W of either layer is not C×C, throw
  //    new RangeError(`weights.layers[${l}].${name} is ${rows}×${cols} but must be ${C}×${C}`)
  // 1. per head: W_OV = W_V(h)·W_O(h) and W_QK = W_Q(h)·W_K(h)ᵀ, both C×C
  // 2. A = W_OV of head i of the first layer; B = W_QK (q), W_QKᵀ (k) or W_OV (v) of head j of the second
  // 3. score = ‖A·B‖ / (‖A‖·‖B‖) with the Frobenius norm
  throw new Error('not written yet');
}

// Then write nameHeads(kComposition, baseline): from the K-composition matrix (rows: the heads of the
// first layer, columns: the heads of the second) and the random baseline, return
// { previousToken: [0, i], induction: [[1, j], …] } ([layer, head] pairs, 0-based, as headMask counts):
// i is the row with the largest sum; the j are the heads of the second layer whose score in row i is
// above the baseline, in increasing order (an empty list when there is none).

export function nameHeads(kComposition, baseline) {
  throw new Error('nameHeads is not written yet');
}

function transpose(M) {
  return M[0].map((_, j) => M.map((row) => row[j]));
}

function matMul(A, B) {
  return A.map((row) => B[0].map((_, j) => row.reduce((sum, a, k) => sum + a * B[k][j], 0)));
}
