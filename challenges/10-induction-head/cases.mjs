// Challenge 10's grading. Not matrices against a reference function: the learner returns the weights
// of a 2-layer attention-only Transformer, which grade.js loads with setWeights and measures with
// headScores and the loss on repeated tokens. `node challenges/generate.mjs` grades solution.js
// (the reference) and one-layer.js (the counter-example) with the package and writes their numbers
// and weights into tests.json.
export default {
  challenge: '10-induction-head',
  title: 'Build an induction head by hand',
  summary: 'Choose every weight of a two-layer attention-only model so that it finds the previous copy of the current token and predicts what came next.',
  function: 'inductionWeights',
  kind: 'weights',
  tolerance: 1e-9,
  variants: [],
  fixed: [],
  errors: [],
  random: { count: 0, entries: [0, 1], sizes: {}, args: [] },
  model: {
    kind: 'weights',
    // the configs the learner's function is called with (through grade.js's basisOf)
    configs: [{ vocabSize: 8, contextLength: 16 }, { vocabSize: 12, contextLength: 24 }],
    // repeatedTokens({ vocabSize, length, batch, seed }) with length = vocabSize − 1; the bounds
    grading: { batch: 16, seed: 23, previousToken: 0.9, induction: 0.9, loss: 0.5 },
    displaySequence: 0,
  },
};
