// Challenge 10's counter-example: the best a single layer can try. Its one head matches the current
// token against every key's token and copies what it finds. That finds the earlier copy of the
// current token itself (and the query's own position), so it predicts the current token again,
// never the one that followed it: there is no previous-token information in a one-layer model's keys.
export function oneLayerWeights({ vocabSize, embedDim, token, free }) {
  const C = embedDim;
  const zeros = () => Array.from({ length: C }, () => new Array(C).fill(0));
  const sharp = 12 * Math.sqrt(C);
  const head = { W_Q: zeros(), W_K: zeros(), W_V: zeros(), W_O: zeros() };
  for (let i = 0; i < vocabSize; i++) {
    head.W_Q[token + i][token + i] = sharp; // query: my token
    head.W_K[token + i][token + i] = 1; // key: your token
    head.W_V[token + i][token + i] = 1; // value: your token
    head.W_O[token + i][free + vocabSize + i] = 1; // written to the output dims
  }
  const W_U = Array.from({ length: C }, () => new Array(vocabSize).fill(0));
  for (let i = 0; i < vocabSize; i++) W_U[free + vocabSize + i][i] = 10;
  return { W_U, layers: [head] };
}
