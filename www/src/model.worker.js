// The real-model page's worker (issue 31): it owns the loaded checkpoint (the package's
// Transformer.fromPretrained, the threads build where the page is cross-origin isolated: lab-model.js)
// and answers the page's requests, so the page stays responsive while a model loads and computes.
//
// Messages in: { id, type, ... } — 'load' { config, weights }, 'analyze' { tokens }, 'probe',
// 'ablate' { tokens, headMask }, 'lens' { position }, 'generate' { prompt, options }.
// Messages out: { id, type: 'done', result } or { id, type: 'error', message }; while generating,
// { id, type: 'token', token, index, ms } per new token; while loading, { id, type: 'stage', text }.
import { loadModel } from './lab-model.js';
import { headDetectors, topK } from './model-detectors.js';
import { nested } from './cases.js';
import { readLens, readAttention, lensLogits, unembed, headQKV } from './model-math.js';

let lab;
let threads = { threads: 1, build: 'single', reason: null };
let model;
let lens; // { norm: Float32Array, bias: Float32Array|null, eps, rms: boolean, unembed: Float32Array [V, C] }
let last; // the last analyzed text: { tokens, hidden }
let info;
let shape; // { kind, C, heads, kvHeads, d, eps, base }: what headQKV needs
let attention; // per layer, what the walkthrough link needs to rebuild a head's Q, K, V (readAttention)

// ---- requests -------------------------------------------------------------------------------------

const tokensOf = (ids) => ({ data: Int32Array.from(ids), shape: [1, ids.length] });
const lossesOf = (out) => Array.from(out.losses.data);

const handlers = {
  async load({ config, weights, threadsWanted }, id) {
    const stage = (text) => postMessage({ id, type: 'stage', text });
    if (!lab) {
      stage('starting the package');
      const loaded = await loadModel(threadsWanted, stage);
      lab = loaded.lab;
      threads = { threads: loaded.threads, build: loaded.build, reason: loaded.reason };
    }
    if (typeof lab.Transformer.fromPretrained !== 'function') throw new Error('this build of the attention-lab package has no Transformer.fromPretrained (rebuild it: make build build-threads)');
    model?.free();
    model = null;
    last = null;
    const started = performance.now();
    stage(`reading the checkpoint on ${threads.threads} thread${threads.threads > 1 ? 's' : ''}`);
    model = lab.Transformer.fromPretrained({ config, weights, dtype: 'float32' });
    lens = readLens(config, weights);
    attention = readAttention(config, weights);
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
      headDim: config.head_dim ?? (config.n_embd ?? config.hidden_size) / (config.n_head ?? config.num_attention_heads),
      ...threads,
    };
    shape = { kind: info.kind, C: info.width, heads: info.heads, kvHeads: info.kvHeads, d: info.headDim, eps: lens.eps, base: config.rope_parameters?.rope_theta ?? config.rope_theta ?? 10000 };
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
      return topK(l === last.hidden.length - 1 ? unembed(lens, row) : lensLogits(lens, row), 5);
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
    const n = Math.min(count, last.tokens.length);
    const round = (M) => M.map((row) => row.map((x) => Number(x.toPrecision(7))));
    let { Q, K, V } = headQKV(shape, attention[layer], last.hidden[layer], n, head);
    [Q, K, V] = [round(Q), round(K), round(V)];
    const traced = lab.traceMultiHeadAttention(Q, K, V, { numberOfHeads: 1, headDimensions: shape.d, causal: true }).steps.find((s) => s.op === 'StableSoftmax').values;
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
