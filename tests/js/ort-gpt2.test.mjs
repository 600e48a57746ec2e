// The onnxruntime-web peer of the GPT-2 benchmark (tests/bench/ort-gpt2.mjs) computes what
// Transformer.fromPretrained computes: a small random GPT-2 checkpoint (tests/pretrained/checkpoint.mjs),
// its ONNX graph with past key values run by ORT (1 thread, graph optimisations 'all'), against the
// package's float32 forward of the same file: the prompt's logits, one decode step through ORT's
// present key/values, and generate's greedy tokens through the package's KV cache. If the graph drifts
// (a wrong scale, mask, position or GELU), the benchmark's ratios would compare different functions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab from './support/lab.mjs';
import { gpt2Checkpoint } from '../pretrained/checkpoint.mjs';
import { gpt2Model, gpt2Runner, causalBias } from '../bench/ort-gpt2.mjs';
import { loadOrt } from '../bench/ort.mjs';
import { scaledError } from '../oracle/transformer.mjs'; // Infinity on a length mismatch or a NaN

const CONFIG = { vocab: 61, positions: 32, embd: 24, layers: 3, heads: 4, seed: 9 };
/** max |Δ| over max |logit|: f32 sums of a few dozen terms in two orders (seen: about 3e-7). */
const TOL = 1e-5;


const argmax = (a) => a.reduce((best, x, i) => (x > a[best] ? i : best), 0);

test('causalBias: 0 where a query may look (s ≤ P + t), −1e9 above', () => {
  assert.deepEqual([...causalBias(2, 1)], [0, 0, -1e9, 0, 0, 0]);
  assert.deepEqual([...causalBias(1, 3)], [0, 0, 0, 0]);
});

for (const gelu of ['tanh', 'fast']) {
  test(`ORT's GPT-2 graph (gelu ${gelu}) agrees with fromPretrained's float32 forward, prompt and decode step`, async () => {
    const checkpoint = gpt2Checkpoint(CONFIG);
    const model = lab.Transformer.fromPretrained({ ...checkpoint, dtype: 'float32' });
    try {
      const ort = await loadOrt(1);
      const v = CONFIG.vocab;
      const runner = await gpt2Runner(ort, gpt2Model(checkpoint, { gelu }), { layers: CONFIG.layers, heads: CONFIG.heads, headDim: CONFIG.embd / CONFIG.heads });
      const tokens = Array.from({ length: 20 }, (_, i) => (i * 17 + 5) % v);
      const ours = model.forward([tokens]).logits.data;
      // the prompt: the first 19 tokens at once (P = 0)
      const prompt = await runner.run(tokens.slice(0, 19));
      const promptError = scaledError(prompt.logits, ours.subarray(0, 19 * v));
      assert.ok(promptError <= TOL, `prompt logits: ${promptError} > ${TOL}`);
      // one decode step: the 20th token with 19 cached (ORT's present key/values fed back)
      assert.deepEqual(prompt.present.key[0].dims, [1, CONFIG.heads, 19, CONFIG.embd / CONFIG.heads]);
      const step = await runner.run(tokens.slice(19), prompt.present);
      const stepError = scaledError(step.logits, ours.subarray(19 * v));
      assert.ok(stepError <= TOL, `decode-step logits: ${stepError} > ${TOL}`);
      // generate (the package's KV cache, one-token forwards) picks ORT's argmax at each step
      const generated = model.generate(tokens.slice(0, 19), { maxNewTokens: 3 });
      let past = prompt.present;
      let next = argmax(prompt.logits.subarray(18 * v));
      const expected = [...tokens.slice(0, 19), next];
      for (let i = 0; i < 2; i++) {
        const r = await runner.run([next], past);
        runner.dispose(past);
        past = r.present;
        next = argmax(r.logits);
        expected.push(next);
      }
      runner.dispose(past);
      runner.dispose(step.present);
      assert.deepEqual(generated, expected);
      await runner.session.release();
    } finally {
      model.free();
    }
  });
}
