// The same inputs give bit-identical output bytes in Node (nodejs build), Chromium and
// Firefox (web build): T=16, C=12, numberOfHeads 3, seeded inputs, with and without `causal`;
// grouped-query attention with a window, rotary embedding, and the layer with numKVHeads, rope
// and a window, in one pass and decoded through a KV cache; and a Float32Array training step (forward
// with dropout and the f32 backward: output, weights, input gradients, grads()); issue 21's
// repeatedTokens and three seeded Transformer runs of 3 trainSteps (f32 default, f32 with every
// option, f64): every step's losses and the final weights and AdamW moments; and issue 32's
// compositionScores, circuits and path-cut losses of those three models; issue 30's fromPretrained
// (a GPT-2 and a Llama checkpoint, f32 and f64: logits, attention weights, hidden states, greedy and
// sampled tokens; and a GPT-2 of 2.6M parameters, whose f32 weights are kept packed between inference calls). The light entry, attention-lab/attention/web (the attention-only build), computes the
// attention part in the same three runtimes: the same bits as the whole build's.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshProject, launchChromium, launchFirefox, pageResult, run, serve } from './support.mjs';

const project = freshProject('cross-runtime', { type: 'module' });
let server;
before(async () => { server = await serve(project); });
after(async () => { await server?.close(); });

/** The fingerprint a browser computes on the fixture page. */
async function inBrowser(launch) {
  const browser = await launch();
  try {
    const { result, errors } = await pageResult(browser, server.url);
    assert.deepEqual(errors, []);
    assert.equal(result.error, undefined);
    return result;
  } finally {
    await browser.close();
  }
}

/** Index of the first differing Float64 entry of two little-endian hex dumps. */
function firstDifference(a, b) {
  for (let i = 0; i < a.length; i += 16) if (a.slice(i, i + 16) !== b.slice(i, i + 16)) return i / 16;
  return -1;
}

const PRETRAINED = ['pretrainedGPT232', 'pretrainedGPT264', 'pretrainedLlama32', 'pretrainedLlama64'];
// new Transformer runs: the lab's defaults, every toy option, f64, and (issue 30) a Llama's and a GPT-2's architecture options
const TRANSFORMERS = ['transformer32', 'transformer32Full', 'transformer64', 'transformer32Llama', 'transformer64Gpt2'];
/** The runs whose circuits are read (a tied or grouped model has head scores instead). */
const outputsOf = (k) => (k === 'transformer32Llama' ? [`${k}Losses`, `${k}State`, `${k}Scores`] : [`${k}Losses`, `${k}State`, `${k}Circuits`]);
const results = {};
test('Node computes the fingerprint', () => {
  results.Node = JSON.parse(run(process.execPath, ['node.mjs'], { cwd: project, maxBuffer: 64 << 20 }));
  const { output, causal } = results.Node;
  assert.equal(output.count, 16 * 12);
  assert.notEqual(output.sha256, causal.sha256, 'the causal mask changes the output');
  // decoding through the cache gives the rows of the one causal pass, bit for bit
  assert.equal(results.Node.decoded.sha256, results.Node.layer.sha256);
  // the model runs differ from each other and really trained (3 steps × 4 sequences × 14 losses)
  assert.equal(results.Node.transformer32Losses.count, 3 * 4 * 14);
  assert.equal(new Set(TRANSFORMERS.map((k) => results.Node[`${k}State`].sha256)).size, TRANSFORMERS.length);
  // the four loaded models differ from each other (f32 is not f64), and so do their fine-tuned runs
  assert.equal(new Set(PRETRAINED.map((k) => results.Node[k].sha256)).size, 4);
  assert.equal(new Set(PRETRAINED.map((k) => results.Node[`${k}Tuned`].sha256)).size, 4);
});
test('Chromium computes the fingerprint', { timeout: 120_000 }, async () => { results.Chromium = await inBrowser(launchChromium); });
test('Firefox computes the fingerprint', { timeout: 120_000 }, async () => { results.Firefox = await inBrowser(launchFirefox); });

/** The outputs the light entry (attention-lab/attention, the attention-only build) computes: all but the model's and the layer's backward. */
const ATTENTION = ['inputs', 'output', 'causal', 'grouped', 'groupedTrace', 'rotary', 'layer', 'decoded', 'training'];

test('the light entry (attention-lab/attention) gives the whole build\'s bits in every runtime, and has no Transformer and no backward', () => {
  for (const runtime of ['Node', 'Chromium', 'Firefox']) {
    const { light } = results[runtime];
    assert.deepEqual(Object.keys(light).sort(), [...ATTENTION].sort(), `${runtime}: the light entry computes the attention part only`);
    for (const key of ATTENTION) {
      assert.equal(light[key].sha256, results[runtime][key].sha256, `${key}: the light entry differs from the whole build in ${runtime} first at Float64 entry ${firstDifference(light[key].bytes, results[runtime][key].bytes)}`);
    }
  }
});

test('inputs and outputs are bit-identical in Node, Chromium and Firefox', (t) => {
  assert.deepEqual(Object.keys(results), ['Node', 'Chromium', 'Firefox']);
  // pretrainedPacked32: a float32 model above 2²¹ parameters, its weights kept packed (src/model/packed.rs)
  // the whole build's only: the layer's f32 backward, then the model's
  const model = ['trainingGradients', 'trainingGrads', 'repeatedTokens', ...TRANSFORMERS.flatMap(outputsOf), ...PRETRAINED, ...PRETRAINED.map((k) => `${k}Tuned`), 'pretrainedPacked32'];
  for (const key of [...ATTENTION, ...model]) {
    const reference = results.Node[key];
    t.diagnostic(`${key}: ${reference.count} Float64 values, SHA-256 ${reference.sha256}`);
    for (const runtime of ['Chromium', 'Firefox']) {
      const other = results[runtime][key];
      assert.equal(other.sha256, reference.sha256,
        `${key}: ${runtime} differs from Node first at Float64 entry ${firstDifference(other.bytes, reference.bytes)}`);
      assert.equal(other.bytes, reference.bytes);
    }
  }
});
