// The real-model page's worker (issue 31): it owns the loaded checkpoint (the package's
// Transformer.fromPretrained, the threads build where the page is cross-origin isolated: lab-model.js)
// and answers the page's requests, so the page stays responsive while a model loads and computes.
//
// Messages in: { id, type, ... } — 'load' { config, weights }, 'analyze' { tokens }, 'probe',
// 'ablate' { tokens, headMask }, 'lens' { position }, 'generate' { prompt, options }.
// Messages out: { id, type: 'done', result } or { id, type: 'error', message }; while generating,
// { id, type: 'token', token, index, ms } per new token.
import { loadModel } from './lab-model.js';
import { headDetectors, topK } from './model-detectors.js';
import { nested } from './cases.js';

let lab;
let threads = { threads: 1, build: 'single', reason: null };
let model;
let lens; // { norm: Float32Array, bias: Float32Array|null, eps, rms: boolean, unembed: Float32Array [V, C] }
let last; // the last analyzed text: { tokens, hidden }
let info;
let ropeBase = 10000;
let headDim;
let attention; // per layer, what the walkthrough link needs to rebuild a head's Q, K, V (readAttention)

// ---- the final norm and the unembedding, read from the file for the logit lens --------------------

const F16 = (bits) => {
  const s = bits & 0x8000 ? -1 : 1; const e = (bits >> 10) & 0x1f; const m = bits & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
};

/** One tensor of a safetensors file as a Float32Array (F32, F16, BF16), or null when absent. */
function tensor(bytes, header, start, name) {
  const t = header[name];
  if (!t) return null;
  const [a, b] = t.data_offsets;
  const raw = bytes.subarray(start + a, start + b);
  const n = t.shape.reduce((x, y) => x * y, 1);
  const out = new Float32Array(n);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  if (t.dtype === 'F32') for (let i = 0; i < n; i++) out[i] = view.getFloat32(4 * i, true);
  else if (t.dtype === 'F16') for (let i = 0; i < n; i++) out[i] = F16(view.getUint16(2 * i, true));
  else if (t.dtype === 'BF16') { const u = new Uint32Array(out.buffer); for (let i = 0; i < n; i++) u[i] = view.getUint16(2 * i, true) << 16; }
  else throw new Error(`the logit lens cannot read ${name} stored as ${t.dtype}`);
  return out;
}

function readLens(config, weights) {
  const bytes = new Uint8Array(weights);
  const n = Number(new DataView(weights).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const start = 8 + n;
  const first = (...names) => { for (const name of names) { const t = tensor(bytes, header, start, name); if (t) return t; } return null; };
  if (config.model_type === 'gpt2') {
    return {
      rms: false, eps: config.layer_norm_epsilon ?? 1e-5,
      norm: first('ln_f.weight', 'transformer.ln_f.weight'), bias: first('ln_f.bias', 'transformer.ln_f.bias'),
      unembed: first('lm_head.weight', 'wte.weight', 'transformer.wte.weight'),
    };
  }
  return { rms: true, eps: config.rms_norm_eps ?? 1e-6, norm: first('model.norm.weight'), bias: null, unembed: first('lm_head.weight', 'model.embed_tokens.weight') };
}

/**
 * Per layer, the norm before attention and the Q, K, V projections, copied out of the file as Float32Arrays
 * (for GPT-2 the fused c_attn [C, 3C], [in, out]; for Llama q/k/v_proj [out, in]), so that a head's own Q, K
 * and V on the text can be rebuilt from the hidden states for the walkthrough.
 */
function readAttention(config, weights) {
  const bytes = new Uint8Array(weights);
  const n = Number(new DataView(weights).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const get = (...names) => { for (const name of names) { const t = tensor(bytes, header, 8 + n, name); if (t) return t; } return null; };
  if (config.model_type === 'gpt2') {
    return Array.from({ length: config.n_layer }, (_, l) => {
      const p = (name) => [`h.${l}.${name}`, `transformer.h.${l}.${name}`];
      return { norm: get(...p('ln_1.weight')), bias: get(...p('ln_1.bias')), W: get(...p('attn.c_attn.weight')), b: get(...p('attn.c_attn.bias')) };
    });
  }
  return Array.from({ length: config.num_hidden_layers }, (_, l) => {
    const p = `model.layers.${l}.`;
    return { norm: get(`${p}input_layernorm.weight`), q: get(`${p}self_attn.q_proj.weight`), k: get(`${p}self_attn.k_proj.weight`), v: get(`${p}self_attn.v_proj.weight`),
      qb: get(`${p}self_attn.q_proj.bias`), kb: get(`${p}self_attn.k_proj.bias`), vb: get(`${p}self_attn.v_proj.bias`) };
  });
}

/** A row normalised as the model does before attention or unembedding (LayerNorm or RMSNorm), in f64. */
function normalise(row, weight, bias, rms, eps) {
  const C = row.length;
  let mean = 0;
  if (!rms) { for (let i = 0; i < C; i++) mean += row[i]; mean /= C; }
  let sq = 0;
  for (let i = 0; i < C; i++) { const d = row[i] - mean; sq += d * d; }
  const scale = 1 / Math.sqrt(sq / C + eps);
  return Float64Array.from(row, (x, i) => (x - mean) * scale * weight[i] + (bias ? bias[i] : 0));
}

/** The final norm of one residual-stream row, then its logits over the vocabulary. */
function lensLogits(row) {
  const C = row.length;
  const x = normalise(row, lens.norm, lens.bias, lens.rms, lens.eps);
  const V = lens.unembed.length / C;
  const logits = new Float32Array(V);
  for (let v = 0; v < V; v++) {
    let s = 0;
    const o = v * C;
    for (let i = 0; i < C; i++) s += lens.unembed[o + i] * x[i];
    logits[v] = s;
  }
  return logits;
}

// ---- requests -------------------------------------------------------------------------------------

const tokensOf = (ids) => ({ data: Int32Array.from(ids), shape: [1, ids.length] });
const lossesOf = (out) => Array.from(out.losses.data);

const handlers = {
  async load({ config, weights, threadsWanted }) {
    if (!lab) {
      const loaded = await loadModel(threadsWanted);
      lab = loaded.lab;
      threads = { threads: loaded.threads, build: loaded.build, reason: loaded.reason };
    }
    if (typeof lab.Transformer.fromPretrained !== 'function') throw new Error('this build of the attention-lab package has no Transformer.fromPretrained (rebuild it: make build build-threads)');
    model?.free();
    model = null;
    last = null;
    const started = performance.now();
    model = lab.Transformer.fromPretrained({ config, weights, dtype: 'float32' });
    lens = readLens(config, weights);
    attention = readAttention(config, weights);
    ropeBase = config.rope_parameters?.rope_theta ?? config.rope_theta ?? 10000;
    headDim = config.head_dim ?? (config.n_embd ?? config.hidden_size) / (config.n_head ?? config.num_attention_heads);
    const c = model.config ?? {};
    info = {
      kind: config.model_type,
      layers: config.n_layer ?? config.num_hidden_layers,
      heads: config.n_head ?? config.num_attention_heads,
      kvHeads: config.num_key_value_heads ?? config.n_head ?? config.num_attention_heads,
      width: config.n_embd ?? config.hidden_size,
      vocab: config.vocab_size,
      context: config.n_positions ?? config.max_position_embeddings ?? c.contextLength,
      ms: performance.now() - started,
      ...threads,
    };
    return info;
  },

  analyze({ tokens }) {
    const out = model.forward(tokensOf(tokens), { needWeights: true, needHidden: true });
    const T = tokens.length;
    const V = out.logits.shape[2];
    const predictions = [];
    for (let t = 0; t < T; t++) predictions.push(topK(out.logits.data.subarray(t * V, (t + 1) * V), 10));
    const weights = out.weights.map((w) => w.data);
    last = { tokens, hidden: out.hidden.map((h) => h.data), weights };
    const detectors = out.weights.map((w) => headDetectors(w, [tokens]));
    return { weights, predictions, losses: lossesOf(out), loss: out.loss, detectors };
  },

  probe({ length = 20, batch = 4, seed = 31 }) {
    const probe = lab.repeatedTokens({ vocabSize: info.vocab, length: Math.min(length, Math.floor((info.context - 1) / 2)), batch, seed });
    const tokens = nested(probe.tokens);
    const out = model.forward(tokens, { needWeights: true });
    return { detectors: out.weights.map((w) => headDetectors(w, tokens)), length: tokens[0].length, batch };
  },

  ablate({ tokens, headMask }) {
    const out = model.forward(tokensOf(tokens), { headMask });
    return { losses: lossesOf(out), loss: out.loss };
  },

  lens({ position }) {
    const C = info.width;
    return last.hidden.map((h, l) => {
      const row = h.subarray(position * C, (position + 1) * C);
      // the last entry is after the final norm already (Hugging Face's output_hidden_states)
      if (l === last.hidden.length - 1) {
        const V = lens.unembed.length / C;
        const logits = new Float32Array(V);
        for (let v = 0; v < V; v++) { let s = 0; for (let i = 0; i < C; i++) s += lens.unembed[v * C + i] * row[i]; logits[v] = s; }
        return topK(logits, 5);
      }
      return topK(lensLogits(row), 5);
    });
  },

  /**
   * Head `head` of layer `layer` on the first `count` tokens of the last analyzed text: its own Q, K and V
   * (the layer's norm of the hidden state at its input, then the head's columns of the projections, and for
   * Llama the rotary embedding of Q and K by position, rotate-half, as Hugging Face's), and how far the
   * walkthrough's weights (the package's traceMultiHeadAttention on them, f64) are from the model's own.
   */
  walkthrough({ layer, head, count }) {
    const weights = last.weights[layer];
    const C = info.width;
    const d = headDim;
    const n = Math.min(count, last.tokens.length);
    const a = attention[layer];
    const rows = Array.from({ length: n }, (_, t) => last.hidden[layer].subarray(t * C, (t + 1) * C));
    const round = (M) => M.map((row) => row.map((x) => Number(x.toPrecision(7))));
    let Q; let K; let V;
    if (info.kind === 'gpt2') {
      const x = rows.map((row) => normalise(row, a.norm, a.bias, false, lens.eps));
      const project = (offset) => x.map((r) => Array.from({ length: d }, (_, j) => {
        const col = offset + head * d + j;
        let s = a.b[col];
        for (let i = 0; i < C; i++) s += r[i] * a.W[i * 3 * C + col];
        return s;
      }));
      [Q, K, V] = [project(0), project(C), project(2 * C)];
    } else {
      const x = rows.map((row) => normalise(row, a.norm, null, true, lens.eps));
      const kvHead = Math.floor(head / (info.heads / info.kvHeads));
      const project = (W, bias, h) => x.map((r) => Array.from({ length: d }, (_, j) => {
        const out = h * d + j;
        let s = bias ? bias[out] : 0;
        for (let i = 0; i < C; i++) s += r[i] * W[out * C + i];
        return s;
      }));
      const rotate = (M) => M.map((row, t) => row.map((x, j) => {
        const i = j % (d / 2);
        const angle = t * ropeBase ** (-(2 * i) / d);
        return j < d / 2 ? x * Math.cos(angle) - row[j + d / 2] * Math.sin(angle) : x * Math.cos(angle) + row[j - d / 2] * Math.sin(angle);
      }));
      Q = rotate(project(a.q, a.qb, head));
      K = rotate(project(a.k, a.kb, kvHead));
      V = project(a.v, a.vb, kvHead);
    }
    [Q, K, V] = [round(Q), round(K), round(V)];
    const traced = lab.traceMultiHeadAttention(Q, K, V, { numberOfHeads: 1, headDimensions: d, causal: true }).steps.find((s) => s.op === 'StableSoftmax').values;
    const T = last.tokens.length;
    let maxDifference = 0;
    for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) maxDifference = Math.max(maxDifference, Math.abs(traced[i][j] - weights[head * T * T + i * T + j]));
    return { Q, K, V, tokens: last.tokens.slice(0, n), maxDifference };
  },

  generate({ prompt, options }, id) {
    const started = performance.now();
    let first = null;
    const ids = model.generate(prompt, {
      ...options,
      onToken: (token, index) => {
        const ms = performance.now() - started;
        first ??= ms;
        postMessage({ id, type: 'token', token, index, ms });
      },
    });
    return { ids: Array.from(ids), ms: performance.now() - started, firstMs: first };
  },
};

self.onmessage = async ({ data }) => {
  const { id, type } = data;
  try {
    if (type !== 'load' && !model) throw new Error('no model is loaded yet: choose one first');
    const result = await handlers[type](data, id);
    postMessage({ id, type: 'done', result });
  } catch (error) {
    postMessage({ id, type: 'error', message: error?.message ?? String(error) });
  }
};
