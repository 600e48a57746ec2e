// Writes the oracle's answers on random checkpoints, for the Rust test tests/pretrained.rs:
// `node tests/pretrained/fixtures.mjs <dir>` → for each case <name>.safetensors and <name>.json
// ({ config, tokens [B][T], logits, hidden, weights (flat, as the oracle returns them), prompt,
// maxNewTokens, greedy }). The cases cover both GPT-2 key layouts, tied and untied heads, the old
// attention buffers (F32 and BOOL), F32 / F16 / BF16 files, depths 1–3, widths 8–16, multi-head,
// grouped-query and multi-query Llama, rope_theta and rope_parameters, head_dim given, biases, the
// rotary_emb.inv_freq buffers.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gpt2Checkpoint, llamaCheckpoint } from './checkpoint.mjs';
import { load, forward, generateGreedy } from '../oracle/pretrained.mjs';

export const CASES = {
  'gpt2-hub-tied-f32': () => gpt2Checkpoint({ embd: 8, heads: 2, layers: 2, seed: 11 }),
  'gpt2-prefixed-untied-bf16-buffers': () => gpt2Checkpoint({ embd: 12, heads: 3, layers: 3, inner: 20, prefix: true, tied: false, buffers: 'F32', dtype: 'BF16', seed: 12 }),
  'gpt2-f16-bool-buffers': () => gpt2Checkpoint({ embd: 16, heads: 4, layers: 1, eps: 1e-6, buffers: 'BOOL', dtype: 'F16', vocab: 31, seed: 13 }),
  'llama-gqa-untied-f32': () => llamaCheckpoint({ hidden: 8, heads: 4, kvHeads: 2, layers: 2, seed: 21 }),
  'llama-mqa-tied-bf16-rope-parameters': () => llamaCheckpoint({ hidden: 16, heads: 4, kvHeads: 1, headDim: 4, layers: 3, intermediate: 24, ropeTheta: 500000, ropeStyle: 'rope_parameters', tied: true, dtype: 'BF16', seed: 22 }),
  'llama-biases-f16': () => llamaCheckpoint({ hidden: 12, heads: 6, kvHeads: 3, layers: 2, attentionBias: true, mlpBias: true, eps: 1e-5, dtype: 'F16', seed: 23 }),
  'llama-mha-one-layer-inv-freq': () => llamaCheckpoint({ hidden: 8, heads: 2, kvHeads: 2, layers: 1, intermediate: 20, ropeTheta: 100, vocab: 17, invFreq: true, seed: 24 }),
};

const TOKENS = (V) => [[1, 4, 2, 8, 5, 7].map((x) => x % V), [3, 3, 0, V - 1, 6, 2].map((x) => x % V)];

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node tests/pretrained/fixtures.mjs <dir>');
  process.exit(2);
}
mkdirSync(dir, { recursive: true });
for (const [name, make] of Object.entries(CASES)) {
  const { config, weights } = make();
  const model = load(config, weights);
  const tokens = TOKENS(model.V);
  const out = forward(model, tokens);
  const prompt = [2, 1, 3], maxNewTokens = 5;
  const plain = (t) => Array.from(t.data);
  writeFileSync(join(dir, `${name}.safetensors`), weights);
  writeFileSync(join(dir, `${name}.json`), JSON.stringify({
    config, tokens, logits: plain(out.logits), hidden: out.hidden.map(plain), weights: out.weights.map(plain),
    prompt, maxNewTokens, greedy: generateGreedy(model, prompt, maxNewTokens),
  }));
}
console.log(`${Object.keys(CASES).length} cases in ${dir}`);
