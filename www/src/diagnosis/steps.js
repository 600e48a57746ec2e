// The steps of attention in the course's vocabulary, in the order a correct answer performs them:
// the probe diagnosis (locate.js) and the first wrong line (first-line.js) name them alike.

/** Steps in the order a correct answer performs them; `walk` is the walkthrough's step key. */
export const STEPS = {
  check: { label: 'checking the arguments', walk: null },
  'project-Q': { label: 'the projection X·W_Q', walk: 'project-Q' },
  'project-K': { label: 'the projection X·W_K', walk: 'project-K' },
  'project-V': { label: 'the projection X·W_V', walk: 'project-V' },
  cache: { label: 'the cache: append token t\'s key and value, then attend', walk: 'weights' },
  slice: { label: 'slicing into heads', walk: 'slice' },
  'kv-head': { label: 'choosing the key/value head ⌊i / group⌋', walk: 'slice' },
  scores: { label: 'the scores Q_h·K_hᵀ', walk: 'scores' },
  scale: { label: 'the scale 1/√headDimensions', walk: 'scale' },
  mask: { label: 'the causal mask', walk: 'weights' },
  softmax: { label: 'the softmax', walk: 'weights' },
  'weighted-sum': { label: 'the weighted sum with V_h', walk: 'context' },
  concat: { label: 'concatenating the heads', walk: 'concat' },
  'w-o': { label: 'the output projection W_O', walk: 'output' },
  residual: { label: 'the output: nothing is added after the last step', walk: 'output' },
  // challenge 07 (rotary embedding): no attention, four steps of its own
  pairs: { label: 'the pairs (x[i], x[i + d/2]) of each head', walk: 'rotate' },
  frequency: { label: 'the angle of pair i: base^(−2i/d) per position', walk: 'rotate' },
  position: { label: 'the position p = offset + r', walk: 'rotate' },
  rotation: { label: 'the rotation (a·cos θ − b·sin θ, a·sin θ + b·cos θ)', walk: 'rotate' },
  // composition scores (challenge 11): a head's circuits, read from the weights (no attention is run)
  'circuit-ov': { label: 'the OV circuit W_OV = W_V^h·W_O^h', walk: null },
  'circuit-qk': { label: 'the QK circuit W_QK = W_Q^h·(W_K^h)ᵀ', walk: null },
  reader: { label: 'the reader the kind picks: W_QK (q), W_QKᵀ (k) or W_OV (v)', walk: null },
  product: { label: 'the product A·B (A = W_OV of the first layer\'s head, B = the reader)', walk: null },
  norms: { label: 'the Frobenius norms ‖A·B‖, ‖A‖ and ‖B‖', walk: null },
  ratio: { label: 'the score ‖A·B‖ / (‖A‖·‖B‖)', walk: null },
};
