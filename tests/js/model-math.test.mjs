// The real-model page's own arithmetic (www/src/model-math.js) against the float64 oracle of issue 30
// (tests/oracle/pretrained.mjs, written apart from both): the logit lens of the embeddings of a model with
// no layers is the oracle's logits; each head's Q, K, V rebuilt from the oracle's hidden states give the
// oracle's attention weights (GPT-2 with and without the `transformer.` prefix, Llama with RoPE and grouped
// K/V heads, F16 and BF16 files).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gpt2Checkpoint, llamaCheckpoint } from '../pretrained/checkpoint.mjs';
import { load, forward } from '../oracle/pretrained.mjs';
import { readLens, readAttention, lensLogits, unembed, headQKV } from '../../www/src/model-math.js';

const close = (a, b, tol, what) => {
  const scale = Math.max(1, ...Array.from(b, Math.abs));
  const worst = Math.max(...Array.from(a, (x, i) => Math.abs(x - b[i])));
  assert.ok(worst <= tol * scale, `${what}: off by ${worst}`);
};

const shapeOf = (config) => config.model_type === 'gpt2'
  ? { kind: 'gpt2', C: config.n_embd, heads: config.n_head, kvHeads: config.n_head, d: config.n_embd / config.n_head, eps: config.layer_norm_epsilon }
  : { kind: 'llama', C: config.hidden_size, heads: config.num_attention_heads, kvHeads: config.num_key_value_heads, d: config.head_dim ?? config.hidden_size / config.num_attention_heads, eps: config.rms_norm_eps, base: config.rope_parameters?.rope_theta ?? config.rope_theta };

const CASES = [
  ['gpt2', gpt2Checkpoint({ layers: 0, seed: 3 })],
  ['gpt2, transformer. prefix, untied, F16', gpt2Checkpoint({ layers: 0, prefix: true, tied: false, dtype: 'F16', seed: 4 })],
  ['llama, tied', llamaCheckpoint({ layers: 0, tied: true, seed: 5 })],
  ['llama, untied, BF16', llamaCheckpoint({ layers: 0, dtype: 'BF16', seed: 6 })],
];

test('the logit lens of the embeddings is the logits of a model with no layers', () => {
  for (const [name, { config, weights }] of CASES) {
    const m = load(config, weights);
    const tokens = [[1, 4, 2, 7, 3]];
    const out = forward(m, tokens);
    const lens = readLens(config, weights);
    const C = m.C;
    const x0 = config.model_type === 'gpt2'
      ? (() => { const wte = m.get('wte.weight'); const wpe = m.get('wpe.weight'); return tokens[0].map((t, p) => wte[t].map((v, j) => v + wpe[p][j])); })()
      : tokens[0].map((t) => m.get('model.embed_tokens.weight')[t]);
    tokens[0].forEach((_, t) => {
      close(lensLogits(lens, Float64Array.from(x0[t])), out.logits.data.subarray(t * m.V, (t + 1) * m.V), 1e-6, `${name} position ${t}`);
      // the last hidden state is after the final norm: unembedding alone gives the logits
      close(unembed(lens, out.hidden[out.hidden.length - 1].data.subarray(t * C, (t + 1) * C)), out.logits.data.subarray(t * m.V, (t + 1) * m.V), 1e-6, `${name} unembed ${t}`);
    });
  }
});

test('each head\'s rebuilt Q, K, V give the oracle\'s attention weights (GPT-2; Llama with RoPE and grouped heads)', () => {
  const cases = [
    ['gpt2', gpt2Checkpoint({ layers: 3, heads: 2, seed: 7 })],
    ['gpt2, transformer. prefix, F16', gpt2Checkpoint({ layers: 2, heads: 4, embd: 16, prefix: true, dtype: 'F16', seed: 8 })],
    ['llama, 4 heads on 2 K/V heads', llamaCheckpoint({ layers: 2, heads: 4, kvHeads: 2, ropeTheta: 500, seed: 9 })],
    ['llama, head_dim 6, biases, rope_parameters, BF16', llamaCheckpoint({ layers: 2, hidden: 8, heads: 2, kvHeads: 1, headDim: 6, attentionBias: true, ropeStyle: 'rope_parameters', dtype: 'BF16', seed: 10 })],
  ];
  for (const [name, { config, weights }] of cases) {
    const m = load(config, weights);
    const tokens = [[3, 1, 4, 1, 5, 9, 2, 6, 5, 3]];
    const T = tokens[0].length;
    const out = forward(m, tokens);
    const attention = readAttention(config, weights);
    const shape = shapeOf(config);
    for (let l = 0; l < m.L; l++) {
      for (let h = 0; h < m.h; h++) {
        const { Q, K, V } = headQKV(shape, attention[l], out.hidden[l].data, T, h);
        assert.equal(V.length, T);
        assert.equal(V[0].length, shape.d);
        for (let i = 0; i < T; i++) {
          const scores = Array.from({ length: i + 1 }, (_, j) => Q[i].reduce((a, q, c) => a + q * K[j][c], 0) / Math.sqrt(shape.d));
          const max = Math.max(...scores);
          const z = scores.reduce((a, s) => a + Math.exp(s - max), 0);
          const expected = out.weights[l].data.subarray((h * T + i) * T, (h * T + i) * T + i + 1);
          close(scores.map((s) => Math.exp(s - max) / z), expected, 1e-6, `${name} layer ${l} head ${h} row ${i}`);
        }
      }
    }
  }
});
