// Random checkpoints in the Hugging Face layout — a config.json object and the bytes of a
// model.safetensors — for the pretrained-model tests (issue 30), the float64 oracle
// (../oracle/pretrained.mjs) and, on request, the benchmarks' GPT-2-small-shaped file.
//
// Usage as a script (never commit what it writes):
//   node tests/pretrained/checkpoint.mjs gpt2-small <dir> [F32|F16|BF16]
//       C = 768, 12 layers, 12 heads, V = 50,257, 1024 positions, tied W_U (≈ 500 MB in F32)
//   node tests/pretrained/checkpoint.mjs <gpt2|llama> <dir> [JSON options of gpt2Checkpoint / llamaCheckpoint]
//
// What was checked, and where:
// - The file format, from huggingface/safetensors README.md ("Format") and safetensors/src/tensor.rs
//   (commit 24b0b28): 8 bytes N (u64 little-endian), N bytes of JSON header starting with '{' and
//   padded with spaces (the Rust crate pads to a multiple of 8), then the byte buffer; each tensor
//   { dtype, shape, data_offsets: [begin, end] } relative to the buffer; the tensors tile the buffer
//   in order with no holes (tensor.rs `validate`: begin == previous end, end − begin == numel·size);
//   row-major, little-endian; an optional "__metadata__" string → string map; rank-0 tensors allowed.
// - GPT-2, from transformers' models/gpt2/modeling_gpt2.py and configuration_gpt2.py: GPT2Model's
//   wte [V, C], wpe [n_positions, C], h.{i}.ln_1 / ln_2 (nn.LayerNorm, weight and bias [C], eps
//   layer_norm_epsilon), h.{i}.attn.c_attn Conv1D(3C, C): weight [C, 3C] ([in, out]; y = x·W + b)
//   split into q, k, v along the last axis; attn.c_proj Conv1D [C, C]; mlp.c_fc [C, n_inner or 4C],
//   mlp.c_proj [n_inner, C]; ln_f. The registered buffers attn.bias (tril ones, [1, 1, P, P]) and
//   attn.masked_bias (the scalar −1e4) are in older files. GPT2LMHeadModel wraps it as
//   `transformer.` (what save_pretrained writes); the hub's own `gpt2` file has no prefix. lm_head is
//   tied to wte by default (tie_word_embeddings = true), so a tied file has no lm_head.weight.
// - Llama, from transformers' models/llama/modeling_llama.py and configuration_llama.py (older files
//   also hold the buffers model.layers.{i}.self_attn.rotary_emb.inv_freq, which transformers ignores on load):
//   model.embed_tokens [V, C]; model.layers.{i}.input_layernorm / post_attention_layernorm (RMSNorm,
//   weight [C]); self_attn.q_proj [h·d, C], k_proj / v_proj [h_kv·d, C], o_proj [C, h·d] (nn.Linear:
//   weight [out, in], y = x·Wᵀ + b; biases only with attention_bias); mlp.gate_proj / up_proj
//   [intermediate, C], down_proj [C, intermediate] (biases only with mlp_bias); model.norm;
//   lm_head.weight [V, C] unless tie_word_embeddings. head_dim defaults to C / h; newer configs
//   (transformers v5) carry the base in rope_parameters: { rope_type: 'default', rope_theta }.
//
// Values are seeded (mulberry32), uniform, scaled by 1/√fan_in so that softmax is not saturated, and
// rounded to the stored dtype (round to nearest, ties to even), so the file holds exactly what a
// reader decodes.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const DTYPES = { F32: 4, F16: 2, BF16: 2 };

/** mulberry32: a small seeded generator of floats in [0, 1). */
export function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** f32 bits → bf16 bits, round to nearest even (NaN kept quiet). */
export function toBf16(x) {
  f32[0] = x;
  const bits = u32[0];
  if ((bits & 0x7fffffff) > 0x7f800000) return (bits >>> 16) | 0x40;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

/** f64 → IEEE half bits, round to nearest even (overflow → ±∞, subnormals kept). */
export function toF16(x) {
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (Number.isNaN(x)) return 0x7e00;
  if (a >= 65520) return sign | 0x7c00; // 65504 + half an ulp rounds up to ∞
  if (a < 2 ** -14) {
    // subnormal: a multiple of 2^-24
    return sign | roundEven(a / 2 ** -24);
  }
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e -= 1;
  if (2 ** (e + 1) <= a) e += 1;
  let m = roundEven((a / 2 ** e - 1) * 1024);
  if (m === 1024) { m = 0; e += 1; }
  if (e > 15) return sign | 0x7c00;
  return sign | ((e + 15) << 10) | m;
}

function roundEven(v) {
  const f = Math.floor(v);
  const r = v - f;
  if (r > 0.5) return f + 1;
  if (r < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** `values` (numbers) as little-endian bytes of `dtype`, into `out` at `at`. */
function encodeInto(out, at, dtype, values) {
  const view = new DataView(out.buffer, out.byteOffset + at, values.length * DTYPES[dtype]);
  if (dtype === 'F32') values.forEach((x, i) => view.setFloat32(4 * i, x, true));
  else if (dtype === 'F16') values.forEach((x, i) => view.setUint16(2 * i, toF16(x), true));
  else if (dtype === 'BF16') values.forEach((x, i) => view.setUint16(2 * i, toBf16(x), true));
  else throw new Error(`checkpoint.mjs: no encoder for ${dtype}`);
}

/**
 * The bytes of a .safetensors file. `tensors`: [{ name, dtype, shape, values }] with `values` an
 * array-like of numbers (or, for a raw tensor of another dtype, `bytes`: a Uint8Array). The buffer
 * holds them in the given order; the header is padded with spaces to a multiple of 8.
 */
export function safetensors(tensors, metadata) {
  const header = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  for (const t of tensors) {
    const size = t.bytes ? t.bytes.length : t.values.length * DTYPES[t.dtype];
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + size] };
    offset += size;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const head = Buffer.from(json, 'utf8');
  const out = new Uint8Array(8 + head.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(head.length), true);
  out.set(head, 8);
  let at = 8 + head.length;
  for (const t of tensors) {
    if (t.bytes) { out.set(t.bytes, at); at += t.bytes.length; continue; }
    encodeInto(out, at, t.dtype, t.values);
    at += t.values.length * DTYPES[t.dtype];
  }
  return out;
}

/** A seeded tensor source: uniform values in ±scale (weights) or around `center` (norm gains). */
function source(seed) {
  const next = generator(seed);
  return {
    uniform(n, scale, center = 0) {
      const v = new Float32Array(n);
      for (let i = 0; i < n; i++) v[i] = center + scale * (2 * next() - 1);
      return v;
    },
  };
}

/**
 * A random GPT-2 (GPT2LMHeadModel) checkpoint: `{ config, weights }` (weights: Uint8Array).
 * Options: vocab (V), positions (n_positions), embd (C), layers, heads, inner (n_inner, null → 4C),
 * eps (layer_norm_epsilon), prefix (keys under `transformer.`), tied (no lm_head.weight),
 * buffers (false, 'F32' or 'BOOL': write attn.bias / attn.masked_bias), dtype, seed.
 */
export function gpt2Checkpoint(o = {}) {
  const { vocab = 23, positions = 16, embd = 8, layers = 2, heads = 2, inner = null, eps = 1e-5, prefix = false, tied = true, buffers = false, dtype = 'F32', seed = 1 } = o;
  const c = embd, ff = inner ?? 4 * c, p = prefix ? 'transformer.' : '';
  const rnd = source(seed);
  const w = (fanIn, n) => rnd.uniform(n, 1.5 / Math.sqrt(fanIn));
  const tensors = [];
  const add = (name, shape, values, dt = dtype) => tensors.push({ name: p + name, dtype: dt, shape, values });
  add('wte.weight', [vocab, c], rnd.uniform(vocab * c, 1));
  add('wpe.weight', [positions, c], rnd.uniform(positions * c, 0.5));
  for (let l = 0; l < layers; l++) {
    const h = `h.${l}.`;
    add(h + 'ln_1.weight', [c], rnd.uniform(c, 0.25, 1));
    add(h + 'ln_1.bias', [c], rnd.uniform(c, 0.25));
    if (buffers) {
      const tril = new Uint8Array(positions * positions);
      for (let i = 0; i < positions; i++) for (let j = 0; j <= i; j++) tril[i * positions + j] = 1;
      if (buffers === 'BOOL') tensors.push({ name: p + h + 'attn.bias', dtype: 'BOOL', shape: [1, 1, positions, positions], bytes: tril });
      else add(h + 'attn.bias', [1, 1, positions, positions], tril, 'F32');
      add(h + 'attn.masked_bias', [], [-1e4], 'F32');
    }
    add(h + 'attn.c_attn.weight', [c, 3 * c], w(c, 3 * c * c));
    add(h + 'attn.c_attn.bias', [3 * c], rnd.uniform(3 * c, 0.25));
    add(h + 'attn.c_proj.weight', [c, c], w(c, c * c));
    add(h + 'attn.c_proj.bias', [c], rnd.uniform(c, 0.25));
    add(h + 'ln_2.weight', [c], rnd.uniform(c, 0.25, 1));
    add(h + 'ln_2.bias', [c], rnd.uniform(c, 0.25));
    add(h + 'mlp.c_fc.weight', [c, ff], w(c, c * ff));
    add(h + 'mlp.c_fc.bias', [ff], rnd.uniform(ff, 0.25));
    add(h + 'mlp.c_proj.weight', [ff, c], w(ff, ff * c));
    add(h + 'mlp.c_proj.bias', [c], rnd.uniform(c, 0.25));
  }
  add('ln_f.weight', [c], rnd.uniform(c, 0.25, 1));
  add('ln_f.bias', [c], rnd.uniform(c, 0.25));
  if (!tied) tensors.push({ name: 'lm_head.weight', dtype, shape: [vocab, c], values: rnd.uniform(vocab * c, 1 / Math.sqrt(c)) });
  const config = {
    activation_function: 'gelu_new',
    architectures: ['GPT2LMHeadModel'],
    layer_norm_epsilon: eps,
    model_type: 'gpt2',
    n_embd: c,
    n_head: heads,
    n_inner: inner,
    n_layer: layers,
    n_positions: positions,
    tie_word_embeddings: tied,
    torch_dtype: { F32: 'float32', F16: 'float16', BF16: 'bfloat16' }[dtype],
    vocab_size: vocab,
  };
  return { config, weights: safetensors(tensors, { format: 'pt' }) };
}

/**
 * A random Llama (LlamaForCausalLM) checkpoint: `{ config, weights }`. Options: vocab, hidden (C),
 * intermediate, layers, heads (h), kvHeads (h_kv, dividing h), headDim (written to the config when
 * given; C / h otherwise), ropeTheta, ropeStyle ('rope_theta' or 'rope_parameters'), attentionBias,
 * mlpBias, tied, eps (rms_norm_eps), positions (max_position_embeddings), invFreq (write the
 * rotary_emb.inv_freq buffers older files hold, F32 [d/2]), dtype, seed.
 */
export function llamaCheckpoint(o = {}) {
  const { vocab = 29, hidden = 8, intermediate = 12, layers = 2, heads = 4, kvHeads = 2, headDim, ropeTheta = 10000, ropeStyle = 'rope_theta', attentionBias = false, mlpBias = false, tied = false, eps = 1e-6, positions = 32, invFreq = false, dtype = 'F32', seed = 2 } = o;
  const c = hidden, d = headDim ?? c / heads;
  const rnd = source(seed);
  const w = (fanIn, n) => rnd.uniform(n, 1.5 / Math.sqrt(fanIn));
  const tensors = [];
  const add = (name, shape, values) => tensors.push({ name, dtype, shape, values });
  add('model.embed_tokens.weight', [vocab, c], rnd.uniform(vocab * c, 1));
  for (let l = 0; l < layers; l++) {
    const m = `model.layers.${l}.`;
    add(m + 'input_layernorm.weight', [c], rnd.uniform(c, 0.25, 1));
    add(m + 'self_attn.q_proj.weight', [heads * d, c], w(c, heads * d * c));
    add(m + 'self_attn.k_proj.weight', [kvHeads * d, c], w(c, kvHeads * d * c));
    add(m + 'self_attn.v_proj.weight', [kvHeads * d, c], w(c, kvHeads * d * c));
    add(m + 'self_attn.o_proj.weight', [c, heads * d], w(heads * d, c * heads * d));
    if (attentionBias) {
      add(m + 'self_attn.q_proj.bias', [heads * d], rnd.uniform(heads * d, 0.25));
      add(m + 'self_attn.k_proj.bias', [kvHeads * d], rnd.uniform(kvHeads * d, 0.25));
      add(m + 'self_attn.v_proj.bias', [kvHeads * d], rnd.uniform(kvHeads * d, 0.25));
      add(m + 'self_attn.o_proj.bias', [c], rnd.uniform(c, 0.25));
    }
    if (invFreq) tensors.push({ name: m + 'self_attn.rotary_emb.inv_freq', dtype: 'F32', shape: [d / 2], values: Array.from({ length: d / 2 }, (_, i) => ropeTheta ** (-(2 * i) / d)) });
    add(m + 'post_attention_layernorm.weight', [c], rnd.uniform(c, 0.25, 1));
    add(m + 'mlp.gate_proj.weight', [intermediate, c], w(c, intermediate * c));
    add(m + 'mlp.up_proj.weight', [intermediate, c], w(c, intermediate * c));
    add(m + 'mlp.down_proj.weight', [c, intermediate], w(intermediate, c * intermediate));
    if (mlpBias) {
      add(m + 'mlp.gate_proj.bias', [intermediate], rnd.uniform(intermediate, 0.25));
      add(m + 'mlp.up_proj.bias', [intermediate], rnd.uniform(intermediate, 0.25));
      add(m + 'mlp.down_proj.bias', [c], rnd.uniform(c, 0.25));
    }
  }
  add('model.norm.weight', [c], rnd.uniform(c, 0.25, 1));
  if (!tied) add('lm_head.weight', [vocab, c], w(c, vocab * c));
  const config = {
    architectures: ['LlamaForCausalLM'],
    attention_bias: attentionBias,
    attention_dropout: 0.0,
    hidden_act: 'silu',
    hidden_size: c,
    intermediate_size: intermediate,
    max_position_embeddings: positions,
    mlp_bias: mlpBias,
    model_type: 'llama',
    num_attention_heads: heads,
    num_hidden_layers: layers,
    num_key_value_heads: kvHeads,
    rms_norm_eps: eps,
    tie_word_embeddings: tied,
    torch_dtype: { F32: 'float32', F16: 'float16', BF16: 'bfloat16' }[dtype],
    vocab_size: vocab,
  };
  if (headDim !== undefined) config.head_dim = headDim;
  if (ropeStyle === 'rope_parameters') config.rope_parameters = { rope_type: 'default', rope_theta: ropeTheta };
  else { config.rope_theta = ropeTheta; config.rope_scaling = null; }
  return { config, weights: safetensors(tensors, { format: 'pt' }) };
}

/** The GPT-2-small shape (the hub's `gpt2`): for the benchmarks, never committed. */
export const GPT2_SMALL = { vocab: 50257, positions: 1024, embd: 768, layers: 12, heads: 12, prefix: false, tied: true };

/** Writes config.json and model.safetensors of `{ config, weights }` into `dir`. */
export function writeCheckpoint(dir, { config, weights }) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2) + '\n');
  writeFileSync(join(dir, 'model.safetensors'), weights);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [kind, dir, extra] = process.argv.slice(2);
  if (!kind || !dir) {
    console.error('usage: node tests/pretrained/checkpoint.mjs <gpt2-small|gpt2|llama> <dir> [F32|F16|BF16 | JSON options]');
    process.exit(2);
  }
  const started = Date.now();
  let checkpoint;
  if (kind === 'gpt2-small') checkpoint = gpt2Checkpoint({ ...GPT2_SMALL, dtype: extra ?? 'F32', seed: 124 });
  else if (kind === 'gpt2') checkpoint = gpt2Checkpoint(extra ? JSON.parse(extra) : {});
  else if (kind === 'llama') checkpoint = llamaCheckpoint(extra ? JSON.parse(extra) : {});
  else { console.error(`unknown kind ${kind}`); process.exit(2); }
  writeCheckpoint(dir, checkpoint);
  console.log(`${kind}: ${checkpoint.weights.length} bytes in ${dir} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
