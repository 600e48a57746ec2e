// A float32 model of at least 2²¹ parameters keeps its layers' weights in the packed (panel) layout between
// inference calls (src/model/packed.rs): forward and generate switch it to packed, getWeights / setWeights /
// getState / setState / gradients / trainStep / headMask switch it back to row-major. Every switch must leave
// the model's results unchanged: the same forward bits as a fresh model after any interleaving, the same
// weights bit for bit, the same training step. (src/model/tests.rs checks packed against row-major bits.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab from './support/lab.mjs';
import { gpt2Checkpoint, llamaCheckpoint } from '../pretrained/checkpoint.mjs';

const { Transformer } = lab;

/** Above the 2²¹-parameter threshold; GPT-2's tied W_E has 4003 rows (3 past the last whole panel of 8 tokens),
 * the Llama one an MLP width (684) not a multiple of 8. The tokens and prompts reach past 4000 where they can. */
const CASES = [
  ['gpt2, tied', () => gpt2Checkpoint({ vocab: 4003, positions: 32, embd: 256, heads: 4, layers: 2, seed: 301 })],
  ['llama, grouped 4/2, biases, untied', () => llamaCheckpoint({ vocab: 3000, hidden: 200, intermediate: 684, heads: 4, kvHeads: 2, layers: 2, attentionBias: true, mlpBias: true, seed: 302 })],
];

const bytes = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/** Every tensor of two getWeights() trees, bit for bit (number[] / number[][] of f32 values). */
function sameWeights(a, b, where) {
  assert.deepEqual(Object.keys(a), Object.keys(b), where);
  for (const key of Object.keys(a)) {
    if (key === 'layers') a.layers.forEach((layer, l) => sameWeights(layer, b.layers[l], `${where} layers[${l}]`));
    else assert.deepEqual(a[key], b[key], `${where} ${key}`);
  }
}

for (const [name, make] of CASES) {
  test(`${name}: forward after generate, getWeights/setWeights, getState/setState, headMask and trainStep is a fresh model's`, () => {
    const checkpoint = make();
    const fresh = Transformer.fromPretrained({ ...checkpoint, dtype: 'float32' });
    const model = Transformer.fromPretrained({ ...checkpoint, dtype: 'float32' });
    const vocab = model.config.vocabSize;
    const tokens = [[5, 17, 2, 999, 42, 7, 1, 300], [11, 0, 64, 2500, 8, vocab - 1, 19, vocab - 3]];
    const logitsOf = (m) => bytes(m.forward(tokens).logits.data);
    try {
      assert.ok(model.numParameters >= 2 ** 21, `${model.numParameters} parameters: below the threshold`);
      const want = logitsOf(fresh); // fresh: its first forward (packs)
      const weights = fresh.getWeights(); // back to row-major
      assert.ok(logitsOf(fresh).equals(want), 'forward after getWeights');

      const prompt = [3, 1, 4, vocab - 2, 5];
      const ids = model.generate(prompt, { maxNewTokens: 4, temperature: 0 });
      assert.deepEqual(ids, fresh.generate(prompt, { maxNewTokens: 4, temperature: 0 }));
      assert.ok(logitsOf(model).equals(want), 'forward after generate');
      sameWeights(model.getWeights(), weights, 'getWeights after generate and forward');
      assert.ok(logitsOf(model).equals(want), 'forward after getWeights');
      model.setWeights(weights);
      assert.ok(logitsOf(model).equals(want), 'forward after setWeights');
      const state = model.getState();
      model.generate(prompt, { maxNewTokens: 2, temperature: 0 });
      model.setState(state);
      assert.ok(logitsOf(model).equals(want), 'forward after getState, generate, setState');
      const layers = model.config.numLayers, heads = model.config.numHeads;
      const mask = Array.from({ length: layers }, () => Array.from({ length: heads }, (_, h) => h !== 1));
      assert.ok(bytes(model.forward(tokens, { headMask: mask }).logits.data).equals(bytes(fresh.forward(tokens, { headMask: mask }).logits.data)), 'headMask');
      assert.ok(logitsOf(model).equals(want), 'forward after a headMask forward');

      // a training step after inference (packed) is a fresh model's step, and so is the forward after it
      const step = { learningRate: 1e-3 };
      const again = Transformer.fromPretrained({ ...checkpoint, dtype: 'float32' });
      try {
        const a = again.trainStep(tokens, step); // never packed before its step
        model.generate(prompt, { maxNewTokens: 1, temperature: 0 });
        const b = model.trainStep(tokens, step);
        assert.equal(b.loss, a.loss);
        assert.ok(logitsOf(model).equals(logitsOf(again)), 'forward after trainStep');
        sameWeights(model.getWeights(), again.getWeights(), 'getWeights after trainStep');
        assert.ok(!logitsOf(model).equals(want), 'the step changed the weights');
      } finally {
        again.free();
      }
    } finally {
      fresh.free();
      model.free();
    }
  });
}
