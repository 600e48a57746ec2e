// The issue-30 test tools checked against each other and against the package's own, already
// oracle-checked parts, so that the float64 reference for real checkpoints (tests/oracle/pretrained.mjs)
// is not only checked against the Rust code it is meant to check (tests/pretrained.rs):
// - the writer's F16 / BF16 encoders (tests/pretrained/checkpoint.mjs) and the oracle's decoders agree
//   on all 65,536 bit patterns of each, and the encoders round to nearest, ties to even;
// - GPT-2: the oracle's logits and attention weights equal the package's float64 Transformer
//   (positions 'learned', mlp, layerNorm, bias: GPT-2's block; LN ε 1e-5, MLP width 4C) given the same
//   checkpoint through setWeights, to 1e-12 of each tensor's scale, for both key layouts, tied and
//   untied heads, F32 / F16 / BF16 files and several depths and widths;
// - Llama's attention: the oracle's rotate-half RoPE and grouped-query attention equal the package's
//   MultiHeadAttention with rope { base } and numKVHeads (causal, float64) on the same projections.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab from './support/lab.mjs';
import { gpt2Checkpoint, llamaCheckpoint, toF16, toBf16 } from '../pretrained/checkpoint.mjs';
import * as O from '../oracle/pretrained.mjs';

const TOL = 1e-12;

/** max |a − e| over max |e| (1 when e is all zeros). */
function scaledError(actual, expected) {
  let worst = 0, scale = 0;
  for (let i = 0; i < expected.length; i++) {
    worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
    scale = Math.max(scale, Math.abs(expected[i]));
  }
  assert.equal(actual.length, expected.length);
  return worst / (scale || 1);
}

test('F16 and BF16: the writer encodes what the oracle decodes, every bit pattern', () => {
  for (let bits = 0; bits < 65536; bits++) {
    const h = O.fromF16(bits), b = O.fromBf16(bits);
    if (Number.isNaN(h)) assert.ok(Number.isNaN(O.fromF16(toF16(h))));
    else assert.equal(toF16(h), bits, `F16 ${bits.toString(16)}`);
    if (Number.isNaN(b)) assert.ok(Number.isNaN(O.fromBf16(toBf16(b))));
    else assert.equal(toBf16(b), bits, `BF16 ${bits.toString(16)}`);
  }
  // round to nearest, ties to even: halfway between 1 and the next half (1 + 2^-10) goes to 1; 1 + 3·2^-11 up
  assert.equal(toF16(1 + 2 ** -11), 0x3c00);
  assert.equal(toF16(1 + 3 * 2 ** -11), 0x3c02);
  assert.equal(toF16(65520), 0x7c00);
  assert.equal(toBf16(1 + 2 ** -8), 0x3f80);
  assert.equal(toBf16(1 + 3 * 2 ** -8), 0x3f82);
});

/** The GPT-2 checkpoint as the package's Transformer weights (Conv1D [in, out] is the package's orientation). */
function gpt2Weights(m, C) {
  const cols = (A, from, to) => A.map((row) => row.slice(from, to));
  const wte = m.get('wte.weight');
  const head = m.get('lm_head.weight');
  return {
    W_E: wte,
    W_pos: m.get('wpe.weight'),
    W_U: head[0].map((_, j) => head.map((row) => row[j])),
    ln_final_w: m.get('ln_f.weight'),
    ln_final_b: m.get('ln_f.bias'),
    layers: Array.from({ length: m.L }, (_, l) => {
      const p = `h.${l}.`;
      const qkv = m.get(p + 'attn.c_attn.weight'), b = m.get(p + 'attn.c_attn.bias');
      return {
        W_Q: cols(qkv, 0, C), W_K: cols(qkv, C, 2 * C), W_V: cols(qkv, 2 * C, 3 * C), W_O: m.get(p + 'attn.c_proj.weight'),
        b_Q: b.slice(0, C), b_K: b.slice(C, 2 * C), b_V: b.slice(2 * C), b_O: m.get(p + 'attn.c_proj.bias'),
        ln1_w: m.get(p + 'ln_1.weight'), ln1_b: m.get(p + 'ln_1.bias'), ln2_w: m.get(p + 'ln_2.weight'), ln2_b: m.get(p + 'ln_2.bias'),
        W_in: m.get(p + 'mlp.c_fc.weight'), b_in: m.get(p + 'mlp.c_fc.bias'), W_out: m.get(p + 'mlp.c_proj.weight'), b_out: m.get(p + 'mlp.c_proj.bias'),
      };
    }),
  };
}

const GPT2_CASES = [
  { embd: 8, heads: 2, layers: 2, seed: 31 },
  { embd: 12, heads: 3, layers: 3, prefix: true, tied: false, buffers: 'F32', dtype: 'BF16', seed: 32 },
  { embd: 16, heads: 4, layers: 1, buffers: 'BOOL', dtype: 'F16', vocab: 31, seed: 33 },
  { embd: 8, heads: 1, layers: 0, seed: 34 },
];

test('GPT-2: the oracle is the package Transformer with GPT-2 weights (float64)', (t) => {
  let worst = 0;
  for (const options of GPT2_CASES) {
    const { config, weights } = gpt2Checkpoint(options);
    const m = O.load(config, weights);
    const model = new lab.Transformer({
      vocabSize: m.V, contextLength: m.positions, embedDim: m.C, numHeads: m.h, numLayers: m.L,
      positions: 'learned', mlp: true, layerNorm: true, bias: true, dtype: 'float64',
    });
    try {
      model.setWeights(gpt2Weights(m, m.C));
      const tokens = [[1, 4, 2, 8, 5, 7], [3, 3, 0, m.V - 1, 6, 2]];
      const got = model.forward(tokens, { needWeights: true });
      const want = O.forward(m, tokens);
      worst = Math.max(worst, scaledError(got.logits.data, want.logits.data));
      assert.equal(got.weights.length, m.L);
      got.weights.forEach((w, l) => { worst = Math.max(worst, scaledError(w.data, want.weights[l].data)); });
    } finally {
      model.free();
    }
  }
  t.diagnostic(`worst scaled error ${worst}`);
  assert.ok(worst <= TOL, `scaled error ${worst} > ${TOL}`);
});

test("Llama's attention: the oracle's RoPE and grouped heads are the package layer's (float64)", (t) => {
  let worst = 0;
  for (const options of [{ hidden: 8, heads: 4, kvHeads: 2, seed: 41 }, { hidden: 16, heads: 4, kvHeads: 1, ropeTheta: 500000, seed: 42 }, { hidden: 12, heads: 6, kvHeads: 6, ropeTheta: 100, attentionBias: true, seed: 43 }]) {
    const { config, weights } = llamaCheckpoint({ layers: 1, ...options });
    const m = O.load(config, weights);
    const p = 'model.layers.0.self_attn.';
    const T = 7;
    const x = Array.from({ length: T }, (_, t) => Array.from({ length: m.C }, (_, j) => Math.sin(1 + 3 * t + 0.7 * j)));
    const tr = (W) => W[0].map((_, j) => W.map((row) => row[j]));
    const bias = (n) => (m.has(p + `${n}_proj.bias`) ? m.get(p + `${n}_proj.bias`) : undefined);
    const linear = (n) => x.map((row) => m.get(p + `${n}_proj.weight`).map((w, i) => row.reduce((s, v, k) => s + v * w[k], 0) + (bias(n)?.[i] ?? 0)));
    const q = O.rope(linear('q'), m.h, m.d, m.base), k = O.rope(linear('k'), m.hKv, m.d, m.base);
    const { ctx, P } = O.attention(q, k, linear('v'), m.h, m.hKv, m.d);
    const layer = new lab.MultiHeadAttention({ embedDim: m.C, numHeads: m.h, numKVHeads: m.hKv, rope: { base: m.base }, bias: config.attention_bias });
    try {
      const W = { W_Q: tr(m.get(p + 'q_proj.weight')), W_K: tr(m.get(p + 'k_proj.weight')), W_V: tr(m.get(p + 'v_proj.weight')), W_O: Array.from({ length: m.C }, (_, i) => Array.from({ length: m.C }, (_, j) => (i === j ? 1 : 0))) };
      if (config.attention_bias) Object.assign(W, { b_Q: bias('q'), b_K: bias('k'), b_V: bias('v'), b_O: new Array(m.C).fill(0) });
      layer.setWeights(W);
      const out = layer.forward(x, x, x, { causal: true, needWeights: true });
      worst = Math.max(worst, scaledError(out.output.flat(), ctx.flat()));
      worst = Math.max(worst, scaledError(out.weights.flat(2), P.flat(2)));
    } finally {
      layer.free();
    }
  }
  t.diagnostic(`worst scaled error ${worst}`);
  assert.ok(worst <= TOL, `scaled error ${worst} > ${TOL}`);
});
