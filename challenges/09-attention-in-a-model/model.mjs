// The trained model of challenge 09, as data: `node challenges/generate.mjs` calls train() and
// writes model.json (and --check retrains and compares, so the file is what this script makes).
// The package trains it in float64 from fixed seeds, so the bits are the same on every run.
export const CONFIG = { vocabSize: 16, contextLength: 25, embedDim: 32, numHeads: 2, numLayers: 2, seed: 1, dtype: 'float64' };
export const TRAINING = { steps: 200, batch: 32, length: 12, learningRate: 1e-2, firstDataSeed: 7 };
/** The sequences the page and the tests score the model on (never trained on: the seeds differ). */
export const EVALUATION = { vocabSize: 16, length: 12, batch: 16, seed: 1000 };
/** Significant digits kept per weight: the model as shipped (and as every test scores it). */
const DIGITS = 4;

const round = (x) => Number(x.toPrecision(DIGITS));
const roundAll = (value) => (Array.isArray(value) ? value.map(roundAll) : round(value));

/** Trains the model with the package `lab` (the Node build) and returns what model.json holds. */
export function train(lab) {
  const model = new lab.Transformer(CONFIG);
  try {
    const { steps, batch, length, learningRate, firstDataSeed } = TRAINING;
    for (let step = 0; step < steps; step++) {
      const { tokens } = lab.repeatedTokens({ vocabSize: CONFIG.vocabSize, length, batch, seed: firstDataSeed + step });
      model.trainStep(tokens, { learningRate });
    }
    const { W_E, W_pos, W_U, layers } = model.getWeights();
    return {
      config: CONFIG,
      training: TRAINING,
      W_E: roundAll(W_E),
      W_pos: roundAll(W_pos),
      W_U: roundAll(W_U),
      layers: layers.map(({ W_Q, W_K, W_V, W_O }) => ({ W_Q: roundAll(W_Q), W_K: roundAll(W_K), W_V: roundAll(W_V), W_O: roundAll(W_O) })),
    };
  } finally {
    model.free();
  }
}
