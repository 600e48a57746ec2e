// Challenge 10: build an induction head by hand.
// Return the weights { W_U, layers: [layer1, layer2] } of a 2-layer attention-only Transformer with one
// head per layer; each layer is { W_Q, W_K, W_V, W_O }, every W is [in, out] (the model computes x·W),
// W_Q, W_K, W_V, W_O are embedDim × embedDim and W_U is embedDim × vocabSize.
// The basis is fixed (W_E and W_pos are given, not yours):
//   dim token + i      holds token i            (i < vocabSize)
//   dim position + t   holds position t         (t < contextLength; in queries and keys only)
//   dims free … free + 2·vocabSize − 1 are free for you to write into.
// Plain JavaScript only: no imports. Keep the `export`.

export function inductionWeights({ vocabSize, contextLength, embedDim, token, position, free }) {
  const C = embedDim;
  const zeros = (rows, cols) => Array.from({ length: rows }, () => new Array(cols).fill(0));
  const layer1 = { W_Q: zeros(C, C), W_K: zeros(C, C), W_V: zeros(C, C), W_O: zeros(C, C) };
  const layer2 = { W_Q: zeros(C, C), W_K: zeros(C, C), W_V: zeros(C, C), W_O: zeros(C, C) };
  const W_U = zeros(C, vocabSize);
  // Layer 1, a previous-token head:
  //   QK: the query at position t must score the key at position t − 1 far above the others
  //       (the layer divides every score by √embedDim: one head is embedDim wide);
  //   OV: what it reads at t − 1 (the token) must land in free dims, say free + i for token i.
  // Layer 2, an induction head (K-composition):
  //   QK: the query's token i against the key's "previous token" dims that layer 1 wrote;
  //   OV: copy the attended token into other free dims, say free + vocabSize + i.
  // W_U: logit i reads where layer 2 wrote token i.
  return { W_U, layers: [layer1, layer2] };
}
