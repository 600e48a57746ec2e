// Reference answer for challenge 10: an induction head built by hand in a 2-layer attention-only
// Transformer (one head per layer, shortformer positions, no biases). Every W is [in, out]: the
// layer computes x·W. The residual stream's basis is given:
//   dims token + i     (i < vocabSize)      hold token i (W_E[i] is that one-hot row),
//   dims position + t  (t < contextLength)  hold position t (W_pos[t]; added to queries and keys only),
//   dims free … free + 2·vocabSize − 1     are free: nothing writes to them until you do.

export function inductionWeights({ vocabSize, contextLength, embedDim, token, position, free }) {
  const C = embedDim;
  const zeros = () => Array.from({ length: C }, () => new Array(C).fill(0));
  const previous = (i) => free + i; // where layer 1 writes the previous token's identity
  const output = (i) => free + vocabSize + i; // where layer 2 writes the token it copies
  // The layer divides every score by √headDimensions = √C (one head): these gains survive that.
  const sharp = 12 * Math.sqrt(C);

  // Layer 1, a previous-token head. QK: query t asks for position t − 1, key s answers with s.
  const one = { W_Q: zeros(), W_K: zeros(), W_V: zeros(), W_O: zeros() };
  for (let t = 0; t < contextLength; t++) {
    one.W_K[position + t][position + t] = 1;
    if (t >= 1) one.W_Q[position + t][position + t - 1] = sharp;
  }
  // OV: read the token at the attended position, write it into the "previous token" dims.
  for (let i = 0; i < vocabSize; i++) {
    one.W_V[token + i][token + i] = 1;
    one.W_O[token + i][previous(i)] = 1;
  }

  // Layer 2, an induction head. QK (K-composition): query t's token against key s's previous
  // token, so query t attends to every s whose predecessor is token t: the token after each
  // earlier copy of the current one.
  const two = { W_Q: zeros(), W_K: zeros(), W_V: zeros(), W_O: zeros() };
  for (let i = 0; i < vocabSize; i++) {
    two.W_Q[token + i][token + i] = sharp;
    two.W_K[previous(i)][token + i] = 1;
    // OV: copy the attended token into the "output" dims.
    two.W_V[token + i][token + i] = 1;
    two.W_O[token + i][output(i)] = 1;
  }

  // Unembedding: logit i reads the copied token's dim i.
  const W_U = Array.from({ length: C }, () => new Array(vocabSize).fill(0));
  for (let i = 0; i < vocabSize; i++) W_U[output(i)][i] = 10;

  return { W_U, layers: [one, two] };
}
