// An independent float64 reference for issue 30: GPT-2 and Llama checkpoints in Hugging Face's
// format (config.json + model.safetensors), read and run in plain JS, written from the formulas
// below and from transformers' modeling_gpt2.py / modeling_llama.py, never from the Rust code. It
// shares no code with the Rust core (src/) nor with the writer (../pretrained/checkpoint.mjs): it
// has its own safetensors reader and its own F16 / BF16 decoders. Every sum is compensated
// (reference.mjs's `sum`, Neumaier), so its own error is far below the 1e-10 the package is held to.
//
// Shapes: one sequence of T tokens, C = hidden width, V = vocabulary, h query heads of d columns,
// h_kv key/value heads (g = h / h_kv query heads read each), L layers.
//
// GPT-2 (GPT2LMHeadModel; keys with or without `transformer.`; attn.bias / attn.masked_bias skipped):
//   x = wte[token] + wpe[t]
//   per layer: a = LN(x; ln_1, ε)                     LN(x) = (x − μ)/√(σ² + ε) ⊙ w + b, σ² biased
//              [q | k | v] = a·c_attn.weight + c_attn.bias    (Conv1D: weight [in, out] = [C, 3C])
//              head i: P_i = softmax(q_i·k_iᵀ/√d, causal), ctx = [P_0·v_0 | …]
//              x = x + ctx·attn.c_proj.weight + attn.c_proj.bias
//              x = x + gelu_new(LN(x; ln_2, ε)·c_fc.weight + c_fc.bias)·mlp.c_proj.weight + mlp.c_proj.bias
//              gelu_new(u) = 0.5·u·(1 + tanh(√(2/π)·(u + 0.044715·u³)))
//   y = LN(x; ln_f, ε);  logits = y·W_Uᵀ, W_U = lm_head.weight [V, C] if present, else wte
// Llama (LlamaForCausalLM):
//   x = embed_tokens[token]
//   per layer: a = RMS(x; input_layernorm, ε)          RMS(x) = x / √(mean(x²) + ε) ⊙ w
//              q = a·Wqᵀ (+ b), k = a·Wkᵀ (+ b), v = a·Wvᵀ (+ b)   (nn.Linear: weight [out, in])
//              RoPE (rotate-half) on each head of q and k at position p: for i < d/2, θ = p·base^(−2i/d),
//                (u_i, u_{i+d/2}) → (u_i·cos θ − u_{i+d/2}·sin θ, u_{i+d/2}·cos θ + u_i·sin θ)
//              head i reads kv head ⌊i / g⌋ (repeat_kv); P_i = softmax(q_i·k_⌊i/g⌋ᵀ/√d, causal)
//              x = x + [P_i·v_⌊i/g⌋ …]·Woᵀ (+ b)
//              b = RMS(x; post_attention_layernorm, ε); x = x + (SiLU(b·Wgᵀ) ⊙ (b·Wuᵀ))·Wdᵀ (+ biases with mlp_bias)
//              SiLU(u) = u / (1 + e^(−u))
//   y = RMS(x; model.norm, ε);  logits = y·lm_headᵀ, or y·embed_tokensᵀ when tied (no lm_head.weight)
// Outputs (as transformers' output_hidden_states / output_attentions, checked against GPT2Model.forward
// in modeling_gpt2.py — it appends hidden_states before each block, then ln_f's output after the loop —
// and, for the newer models, utils/generic.py's check_model_inputs, which drops the last layer's output
// and appends the normed last_hidden_state): hidden = [x after the embeddings, x after block 0, …, x after block L−2,
// y = the final norm of x after block L−1] (L + 1 entries, [B, T, C]); weights = per layer P, [B, h, T, T].
// Greedy generation: each step runs the whole sequence again (no cache) and appends the argmax of
// the last row's logits (the lowest index on ties, as torch.argmax).
import { sum } from './reference.mjs';

// ---- safetensors (README "Format" of huggingface/safetensors) ----------------------------------

const SIZES = { BOOL: 1, U8: 1, I8: 1, F8_E5M2: 1, F8_E4M3: 1, I16: 2, U16: 2, F16: 2, BF16: 2, I32: 4, U32: 4, F32: 4, F64: 8, I64: 8, U64: 8 };

/** F16 bits → number. */
export function fromF16(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const e = (bits >> 10) & 0x1f, m = bits & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/** BF16 bits → number (the upper half of an f32). */
export function fromBf16(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const e = (bits >> 7) & 0xff, m = bits & 0x7f;
  if (e === 0) return sign * m * 2 ** -133;
  if (e === 255) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 128) * 2 ** (e - 127);
}

/** The tensors of a .safetensors file: Map name → { dtype, shape, values (Float64Array, floats only) }. */
export function readSafetensors(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const view = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  if (u8.length < 8) throw new RangeError('safetensors: shorter than its 8-byte header length');
  const n = Number(view.getBigUint64(0, true));
  if (8 + n > u8.length) throw new RangeError('safetensors: header runs past the end');
  const header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(u8.subarray(8, 8 + n)));
  const base = 8 + n;
  const tensors = new Map();
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [begin, end] = info.data_offsets;
    const count = info.shape.reduce((a, b) => a * b, 1);
    if (end - begin !== count * SIZES[info.dtype] || base + end > u8.length) throw new RangeError(`safetensors: ${name} has bad offsets`);
    const at = base + begin;
    let values = null;
    if (info.dtype === 'F32') values = Float64Array.from({ length: count }, (_, i) => view.getFloat32(at + 4 * i, true));
    else if (info.dtype === 'F64') values = Float64Array.from({ length: count }, (_, i) => view.getFloat64(at + 8 * i, true));
    else if (info.dtype === 'F16') values = Float64Array.from({ length: count }, (_, i) => fromF16(view.getUint16(at + 2 * i, true)));
    else if (info.dtype === 'BF16') values = Float64Array.from({ length: count }, (_, i) => fromBf16(view.getUint16(at + 2 * i, true)));
    tensors.set(name, { dtype: info.dtype, shape: info.shape, values });
  }
  return tensors;
}

// ---- dense helpers (number[][] row-major) -----------------------------------------------------

const rows = (values, r, c) => Array.from({ length: r }, (_, i) => Array.from(values.subarray(i * c, (i + 1) * c)));
const dot = (a, b) => sum(a.map((x, i) => x * b[i]));
/** X (n × k) · Wᵀ for W (m × k) (+ bias): PyTorch's Linear. */
const linearT = (X, W, bias) => X.map((x) => W.map((w, j) => (bias ? sum([...x.map((v, i) => v * w[i]), bias[j]]) : dot(x, w))));
const transpose = (A) => A[0].map((_, j) => A.map((row) => row[j]));
/** X · W for W (k × m) [in, out] (+ bias): GPT-2's Conv1D. */
const conv1d = (X, W, bias) => linearT(X, transpose(W), bias);
const addInto = (X, Y) => X.map((row, t) => row.map((v, j) => v + Y[t][j]));

function layerNorm(X, w, b, eps) {
  return X.map((row) => {
    const mu = sum(row) / row.length;
    const c = row.map((x) => x - mu);
    const inv = 1 / Math.sqrt(sum(c.map((v) => v * v)) / row.length + eps);
    return c.map((v, j) => v * inv * w[j] + b[j]);
  });
}

function rmsNorm(X, w, eps) {
  return X.map((row) => {
    const inv = 1 / Math.sqrt(sum(row.map((v) => v * v)) / row.length + eps);
    return row.map((v, j) => v * inv * w[j]);
  });
}

const geluNew = (u) => 0.5 * u * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (u + 0.044715 * u * u * u)));
const silu = (u) => u / (1 + Math.exp(-u));

/** Causal attention of one sequence: q (T × h·d), k, v (T × h_kv·d) → ctx (T × h·d) and P per head. */
export function attention(q, k, v, h, hKv, d) {
  const g = h / hKv, T = q.length;
  const ctx = q.map(() => new Array(h * d).fill(0));
  const P = [];
  for (let i = 0; i < h; i++) {
    const j0 = Math.floor(i / g) * d;
    const Pi = [];
    for (let t = 0; t < T; t++) {
      const s = [];
      for (let u = 0; u <= t; u++) s.push(dot(q[t].slice(i * d, (i + 1) * d), k[u].slice(j0, j0 + d)) / Math.sqrt(d));
      const m = Math.max(...s);
      const e = s.map((x) => Math.exp(x - m));
      const z = sum(e);
      const p = [...e.map((x) => x / z), ...new Array(T - t - 1).fill(0)];
      Pi.push(p);
      for (let c = 0; c < d; c++) ctx[t][i * d + c] = sum(p.slice(0, t + 1).map((w, u) => w * v[u][j0 + c]));
    }
    P.push(Pi);
  }
  return { ctx, P };
}

/** Rotate-half RoPE of each of `heads` heads of d columns, row t at position t. */
export function rope(X, heads, d, base) {
  const half = d / 2;
  return X.map((row, p) => {
    const out = row.slice();
    for (let hd = 0; hd < heads; hd++) {
      for (let i = 0; i < half; i++) {
        const theta = p * base ** (-(2 * i) / d);
        const a = row[hd * d + i], b = row[hd * d + i + half];
        out[hd * d + i] = a * Math.cos(theta) - b * Math.sin(theta);
        out[hd * d + i + half] = b * Math.cos(theta) + a * Math.sin(theta);
      }
    }
    return out;
  });
}

// ---- loading ------------------------------------------------------------------------------

/** The checkpoint as the oracle runs it: `{ arch, dims, get(name) → number[][] | number[] }`. */
export function load(config, weights) {
  const tensors = readSafetensors(weights);
  const take = (name) => {
    const t = tensors.get(name);
    if (!t) throw new Error(`oracle: no tensor ${name}`);
    return t.shape.length === 2 ? rows(t.values, t.shape[0], t.shape[1]) : Array.from(t.values);
  };
  if (config.model_type === 'gpt2') {
    const prefix = tensors.has('transformer.wte.weight') ? 'transformer.' : '';
    const C = config.n_embd, h = config.n_head;
    return {
      arch: 'gpt2', L: config.n_layer, C, h, hKv: h, d: C / h, V: config.vocab_size, positions: config.n_positions,
      eps: config.layer_norm_epsilon ?? 1e-5,
      get: (name) => (name === 'lm_head.weight' ? (tensors.has(name) ? take(name) : take(prefix + 'wte.weight')) : take(prefix + name)),
      has: (name) => tensors.has(prefix + name),
    };
  }
  if (config.model_type === 'llama') {
    const C = config.hidden_size, h = config.num_attention_heads;
    const base = config.rope_parameters?.rope_theta ?? config.rope_theta ?? 10000;
    return {
      arch: 'llama', L: config.num_hidden_layers, C, h, hKv: config.num_key_value_heads ?? h, d: config.head_dim ?? C / h,
      V: config.vocab_size, positions: config.max_position_embeddings, eps: config.rms_norm_eps ?? 1e-6, base,
      get: (name) => (name === 'lm_head.weight' && !tensors.has(name) ? take('model.embed_tokens.weight') : take(name)),
      has: (name) => tensors.has(name),
    };
  }
  throw new Error(`oracle: model_type ${config.model_type}`);
}

// ---- the forward ----------------------------------------------------------------------------

/** `headMask[l][i] = false` zeroes head i's context (its output before W_O), as forward's headMask. */
function maskHeads(ctx, on, d) {
  if (!on || on.every(Boolean)) return ctx;
  return ctx.map((row) => row.map((x, j) => (on[Math.floor(j / d)] === false ? 0 : x)));
}

function sequence(m, tokens, headMask) {
  const hidden = [], weights = [];
  let x;
  if (m.arch === 'gpt2') {
    const wte = m.get('wte.weight'), wpe = m.get('wpe.weight');
    x = tokens.map((tok, t) => wte[tok].map((v, j) => v + wpe[t][j]));
  } else {
    const emb = m.get('model.embed_tokens.weight');
    x = tokens.map((tok) => emb[tok].slice());
  }
  for (let l = 0; l < m.L; l++) {
    hidden.push(x);
    if (m.arch === 'gpt2') {
      const p = `h.${l}.`;
      const a = layerNorm(x, m.get(p + 'ln_1.weight'), m.get(p + 'ln_1.bias'), m.eps);
      const qkv = conv1d(a, m.get(p + 'attn.c_attn.weight'), m.get(p + 'attn.c_attn.bias'));
      const part = (i) => qkv.map((row) => row.slice(i * m.C, (i + 1) * m.C));
      const { ctx: full, P } = attention(part(0), part(1), part(2), m.h, m.h, m.d);
      const ctx = maskHeads(full, headMask?.[l], m.d);
      weights.push(P);
      x = addInto(x, conv1d(ctx, m.get(p + 'attn.c_proj.weight'), m.get(p + 'attn.c_proj.bias')));
      const b = layerNorm(x, m.get(p + 'ln_2.weight'), m.get(p + 'ln_2.bias'), m.eps);
      const act = conv1d(b, m.get(p + 'mlp.c_fc.weight'), m.get(p + 'mlp.c_fc.bias')).map((row) => row.map(geluNew));
      x = addInto(x, conv1d(act, m.get(p + 'mlp.c_proj.weight'), m.get(p + 'mlp.c_proj.bias')));
    } else {
      const p = `model.layers.${l}.`;
      const bias = (name) => (m.has(name) ? m.get(name) : undefined);
      const a = rmsNorm(x, m.get(p + 'input_layernorm.weight'), m.eps);
      const proj = (n) => linearT(a, m.get(p + `self_attn.${n}_proj.weight`), bias(p + `self_attn.${n}_proj.bias`));
      const q = rope(proj('q'), m.h, m.d, m.base), k = rope(proj('k'), m.hKv, m.d, m.base);
      const { ctx: full, P } = attention(q, k, proj('v'), m.h, m.hKv, m.d);
      const ctx = maskHeads(full, headMask?.[l], m.d);
      weights.push(P);
      x = addInto(x, linearT(ctx, m.get(p + 'self_attn.o_proj.weight'), bias(p + 'self_attn.o_proj.bias')));
      const b = rmsNorm(x, m.get(p + 'post_attention_layernorm.weight'), m.eps);
      const gate = linearT(b, m.get(p + 'mlp.gate_proj.weight'), bias(p + 'mlp.gate_proj.bias'));
      const up = linearT(b, m.get(p + 'mlp.up_proj.weight'), bias(p + 'mlp.up_proj.bias'));
      const act = gate.map((row, t) => row.map((g, j) => silu(g) * up[t][j]));
      x = addInto(x, linearT(act, m.get(p + 'mlp.down_proj.weight'), bias(p + 'mlp.down_proj.bias')));
    }
  }
  const y = m.arch === 'gpt2' ? layerNorm(x, m.get('ln_f.weight'), m.get('ln_f.bias'), m.eps) : rmsNorm(x, m.get('model.norm.weight'), m.eps);
  hidden.push(y);
  const logits = linearT(y, m.get('lm_head.weight'));
  return { logits, hidden, weights };
}

const flat = (nested) => Float64Array.from(nested.flat(Infinity));

/**
 * The forward of `tokens` (number[][], B sequences of T): { logits: { data, shape [B, T, V] },
 * hidden: L + 1 × { data, shape [B, T, C] }, weights: L × { data, shape [B, h, T, T] } }.
 */
export function forward(m, tokens, { headMask } = {}) {
  const B = tokens.length, T = tokens[0].length;
  const runs = tokens.map((seq) => sequence(m, seq, headMask));
  return {
    logits: { data: flat(runs.map((r) => r.logits)), shape: [B, T, m.V] },
    hidden: runs[0].hidden.map((_, i) => ({ data: flat(runs.map((r) => r.hidden[i])), shape: [B, T, m.C] })),
    weights: runs[0].weights.map((_, l) => ({ data: flat(runs.map((r) => r.weights[l])), shape: [B, m.h, T, T] })),
  };
}

/** The mean next-token cross-entropy of `tokens` (number[][]), as forward's `loss`. */
export function loss(m, tokens, options) {
  const { logits } = forward(m, tokens, options);
  const T = tokens[0].length;
  let total = 0;
  tokens.forEach((seq, b) => {
    for (let t = 0; t + 1 < T; t++) {
      const row = logits.data.subarray((b * T + t) * m.V, (b * T + t + 1) * m.V);
      const max = Math.max(...row);
      total += Math.log(row.reduce((a, x) => a + Math.exp(x - max), 0)) + max - row[seq[t + 1]];
    }
  });
  return total / (tokens.length * (T - 1));
}

/**
 * The oracle's model `m` with its tensors taken from `W`, a `getWeights()` tree of the loaded model,
 * by the names docs/api.md gives (the package's orientation is [in, out]; Llama's Linear and lm_head
 * are [out, in] in the file):
 *
 * GPT-2: W_E = wte, W_pos = wpe; per layer ln1_w/ln1_b = ln_1, [W_Q | W_K | W_V] = attn.c_attn.weight,
 * [b_Q | b_K | b_V] = c_attn.bias, W_O/b_O = attn.c_proj, ln2_w/ln2_b = ln_2, W_in/b_in = mlp.c_fc,
 * W_out/b_out = mlp.c_proj; ln_final_w/ln_final_b = ln_f; W_U = lm_headᵀ (absent when tied: W_Eᵀ).
 * Llama: W_E = embed_tokens; per layer ln1_w = input_layernorm, W_Q/W_K/W_V/W_O = q/k/v/o_projᵀ (b_* their
 * biases), ln2_w = post_attention_layernorm, W_gate/W_up/W_down = gate/up/down_projᵀ (b_gate, b_up,
 * b_down); ln_final_w = model.norm; W_U = lm_headᵀ (absent when tied).
 */
export function fromWeights(m, W) {
  const T = (M) => M[0].map((_, j) => M.map((row) => row[j]));
  const table = new Map();
  const put = (name, value) => { if (value !== undefined) table.set(name, value); };
  if (m.arch === 'gpt2') {
    put('wte.weight', W.W_E);
    put('wpe.weight', W.W_pos);
    W.layers.forEach((L, l) => {
      const p = `h.${l}.`;
      put(p + 'ln_1.weight', L.ln1_w); put(p + 'ln_1.bias', L.ln1_b);
      put(p + 'attn.c_attn.weight', L.W_Q.map((row, i) => [...row, ...L.W_K[i], ...L.W_V[i]]));
      put(p + 'attn.c_attn.bias', [...L.b_Q, ...L.b_K, ...L.b_V]);
      put(p + 'attn.c_proj.weight', L.W_O); put(p + 'attn.c_proj.bias', L.b_O);
      put(p + 'ln_2.weight', L.ln2_w); put(p + 'ln_2.bias', L.ln2_b);
      put(p + 'mlp.c_fc.weight', L.W_in); put(p + 'mlp.c_fc.bias', L.b_in);
      put(p + 'mlp.c_proj.weight', L.W_out); put(p + 'mlp.c_proj.bias', L.b_out);
    });
    put('ln_f.weight', W.ln_final_w); put('ln_f.bias', W.ln_final_b);
    put('lm_head.weight', W.W_U ? T(W.W_U) : W.W_E);
  } else {
    put('model.embed_tokens.weight', W.W_E);
    W.layers.forEach((L, l) => {
      const p = `model.layers.${l}.`;
      put(p + 'input_layernorm.weight', L.ln1_w);
      put(p + 'post_attention_layernorm.weight', L.ln2_w);
      for (const n of ['q', 'k', 'v', 'o']) {
        put(p + `self_attn.${n}_proj.weight`, T(L[`W_${n.toUpperCase()}`]));
        put(p + `self_attn.${n}_proj.bias`, L[`b_${n.toUpperCase()}`]);
      }
      for (const n of ['gate', 'up', 'down']) {
        put(p + `mlp.${n}_proj.weight`, T(L[`W_${n}`]));
        put(p + `mlp.${n}_proj.bias`, L[`b_${n}`]);
      }
    });
    put('model.norm.weight', W.ln_final_w);
    put('lm_head.weight', W.W_U ? T(W.W_U) : W.W_E);
  }
  const take = (name) => {
    if (!table.has(name)) throw new Error(`oracle: no weight for ${name}`);
    return table.get(name);
  };
  return { ...m, get: take, has: (name) => table.has(name) };
}

/** Greedy generation: the prompt and `maxNewTokens` new tokens. */
export function generateGreedy(m, prompt, maxNewTokens) {
  const ids = prompt.slice();
  for (let s = 0; s < maxNewTokens; s++) {
    const { logits } = sequence(m, ids);
    const last = logits[logits.length - 1];
    let best = 0;
    for (let j = 1; j < last.length; j++) if (last[j] > last[best]) best = j;
    ids.push(best);
  }
  return ids;
}
