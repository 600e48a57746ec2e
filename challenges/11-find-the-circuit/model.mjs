// The trained model of challenge 11, as data: the lab's default run (lab.html's defaults, seed 1)
// trained by the package for 300 steps, past its phase change. `node challenges/generate.mjs` calls
// train() and writes model.json (and --check retrains and compares, so the file is what this script
// makes). The package trains in float32 from fixed seeds, and its f32 kernels give the same bits on
// every machine (docs/circuits.md), so the file is reproducible.
export const CONFIG = { vocabSize: 32, contextLength: 49, embedDim: 64, numHeads: 4, numLayers: 2, positions: 'shortformer', seed: 1, dtype: 'float32' };
/** The lab's training: repeatedTokens batches of 16, segment length 24, AdamW at 0.01, its batch seeds. */
export const TRAINING = { steps: 300, batch: 16, length: 24, learningRate: 0.01 };
/** The lab's seeded batches (lab.worker.js): step s of a run with seed `seed`. */
export const batchSeed = (seed, s) => (seed * 65537 + s + 1) % 2147483647;
/** The lab's fixed evaluation batch of 8 sequences: the heads' behaviour is measured on it. */
export const EVALUATION = { vocabSize: 32, length: 24, batch: 8, seed: (CONFIG.seed * 65537 + 1_000_000_007) % 2147483647 };
/** Significant digits kept per weight: the model as shipped (and as every test scores it). */
const DIGITS = 4;

const round = (x) => Number(x.toPrecision(DIGITS));
const roundAll = (value) => (Array.isArray(value) ? value.map(roundAll) : round(value));

/**
 * Trains the model with the package `lab` (the Node build) and returns what model.json holds: the
 * config and training, the two layers' weights (the learner's function reads them; W_E, W_pos and
 * W_U are not needed for the composition scores and are left out), and what the heads do on the
 * evaluation batch (headScores of the trained model, 3 decimals): the behaviour the scores are
 * compared with.
 */
export function train(lab) {
  const model = new lab.Transformer(CONFIG);
  try {
    const { steps, batch, length, learningRate } = TRAINING;
    for (let s = 0; s < steps; s++) {
      const { tokens } = lab.repeatedTokens({ vocabSize: CONFIG.vocabSize, length, batch, seed: batchSeed(CONFIG.seed, s) });
      model.trainStep(tokens, { learningRate });
    }
    const { layers } = model.getWeights();
    const behaviour = model.headScores(lab.repeatedTokens(EVALUATION).tokens)
      .map((layer) => layer.map(({ previousToken, induction }) => ({ previousToken: Number(previousToken.toFixed(3)), induction: Number(induction.toFixed(3)) })));
    return {
      config: CONFIG,
      training: TRAINING,
      evaluation: EVALUATION,
      headScores: behaviour,
      layers: layers.map(({ W_Q, W_K, W_V, W_O }) => ({ W_Q: roundAll(W_Q), W_K: roundAll(W_K), W_V: roundAll(W_V), W_O: roundAll(W_O) })),
    };
  } finally {
    model.free();
  }
}
