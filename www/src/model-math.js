// What the real-model page computes beside the package (issue 31), plain functions with no DOM, run by
// model.worker.js and checked in Node against the float64 oracle (tests/js/model-math.test.mjs):
// - the logit lens: a hidden state through the final norm and the unembedding, both read from the file;
// - a head's own Q, K and V for the walkthrough: the layer's norm of its input hidden state, the head's
//   columns of the projections and, for Llama, the rotary embedding (rotate-half) and the grouped K/V head.
// The package's Transformer does not expose these parts of a loaded checkpoint, so they are read here from
// the safetensors file (its header is JSON; tensors F32, F16 or BF16, row-major, little-endian).

const F16 = (bits) => {
  const s = bits & 0x8000 ? -1 : 1; const e = (bits >> 10) & 0x1f; const m = bits & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
};

/** The header of a safetensors file and a reader of its tensors as Float32Arrays (null when absent). */
function safetensors(weights) {
  const bytes = weights instanceof Uint8Array ? weights : new Uint8Array(weights);
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const start = 8 + n;
  const read = (name) => {
    const t = header[name];
    if (!t) return null;
    const [a, b] = t.data_offsets;
    const raw = bytes.subarray(start + a, start + b);
    const count = t.shape.reduce((x, y) => x * y, 1);
    if (t.dtype === 'F32') return new Float32Array(raw.slice().buffer); // a copy, aligned (little-endian, as every browser)
    const out = new Float32Array(count);
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    if (t.dtype === 'F16') for (let i = 0; i < count; i++) out[i] = F16(view.getUint16(2 * i, true));
    else if (t.dtype === 'BF16') { const u = new Uint32Array(out.buffer); for (let i = 0; i < count; i++) u[i] = view.getUint16(2 * i, true) << 16; }
    else throw new Error(`the page cannot read ${name} stored as ${t.dtype}`);
    return out;
  };
  return (...names) => { for (const name of names) { const t = read(name); if (t) return t; } return null; };
}

/** The final norm and the unembedding [V, C] of a checkpoint: { rms, eps, norm, bias, unembed }. */
export function readLens(config, weights) {
  const get = safetensors(weights);
  if (config.model_type === 'gpt2') {
    return {
      rms: false, eps: config.layer_norm_epsilon ?? 1e-5,
      norm: get('ln_f.weight', 'transformer.ln_f.weight'), bias: get('ln_f.bias', 'transformer.ln_f.bias'),
      unembed: get('lm_head.weight', 'wte.weight', 'transformer.wte.weight'),
    };
  }
  return { rms: true, eps: config.rms_norm_eps ?? 1e-6, norm: get('model.norm.weight'), bias: null, unembed: get('lm_head.weight', 'model.embed_tokens.weight') };
}

/**
 * Per layer, the norm before attention and the Q, K, V projections (GPT-2: the fused c_attn [C, 3C],
 * [in, out]; Llama: q/k/v_proj [out, in] and their biases when the file has them).
 */
export function readAttention(config, weights) {
  const get = safetensors(weights);
  if (config.model_type === 'gpt2') {
    return Array.from({ length: config.n_layer }, (_, l) => {
      const p = (name) => [`h.${l}.${name}`, `transformer.h.${l}.${name}`];
      return { norm: get(...p('ln_1.weight')), bias: get(...p('ln_1.bias')), W: get(...p('attn.c_attn.weight')), b: get(...p('attn.c_attn.bias')) };
    });
  }
  return Array.from({ length: config.num_hidden_layers }, (_, l) => {
    const p = `model.layers.${l}.self_attn.`;
    return { norm: get(`model.layers.${l}.input_layernorm.weight`), q: get(`${p}q_proj.weight`), k: get(`${p}k_proj.weight`), v: get(`${p}v_proj.weight`),
      qb: get(`${p}q_proj.bias`), kb: get(`${p}k_proj.bias`), vb: get(`${p}v_proj.bias`) };
  });
}

/** A row normalised as the model does (LayerNorm, or RMSNorm with `rms`), in f64. */
export function normalise(row, weight, bias, rms, eps) {
  const C = row.length;
  let mean = 0;
  if (!rms) { for (let i = 0; i < C; i++) mean += row[i]; mean /= C; }
  let sq = 0;
  for (let i = 0; i < C; i++) { const d = row[i] - mean; sq += d * d; }
  const scale = 1 / Math.sqrt(sq / C + eps);
  return Float64Array.from(row, (x, i) => (x - mean) * scale * weight[i] + (bias ? bias[i] : 0));
}

/** The logits of a row already normed (the last hidden state): row · W_Uᵀ. */
export function unembed(lens, row) {
  const C = row.length;
  const V = lens.unembed.length / C;
  const logits = new Float64Array(V);
  for (let v = 0; v < V; v++) {
    let s = 0;
    const o = v * C;
    for (let i = 0; i < C; i++) s += lens.unembed[o + i] * row[i];
    logits[v] = s;
  }
  return logits;
}

/** The logit lens of one residual-stream row: the final norm, then the unembedding. */
export const lensLogits = (lens, row) => unembed(lens, normalise(row, lens.norm, lens.bias, lens.rms, lens.eps));

/**
 * Head `head`'s own Q, K and V (n × d, number[][]) on the first `n` positions, from `hidden` (the layer's input
 * hidden state, [T, C] flat) and the layer's `attention` parts (readAttention). `shape`: { kind, C, heads,
 * kvHeads, d, eps, base }.
 */
export function headQKV(shape, attention, hidden, n, head) {
  const { kind, C, heads, kvHeads, d, eps, base } = shape;
  const rows = Array.from({ length: n }, (_, t) => hidden.subarray(t * C, (t + 1) * C));
  if (kind === 'gpt2') {
    const x = rows.map((row) => normalise(row, attention.norm, attention.bias, false, eps));
    const project = (offset) => x.map((r) => Array.from({ length: d }, (_, j) => {
      const col = offset + head * d + j;
      let s = attention.b[col];
      for (let i = 0; i < C; i++) s += r[i] * attention.W[i * 3 * C + col];
      return s;
    }));
    return { Q: project(0), K: project(C), V: project(2 * C) };
  }
  const x = rows.map((row) => normalise(row, attention.norm, null, true, eps));
  const kvHead = Math.floor(head / (heads / kvHeads));
  const project = (W, bias, h) => x.map((r) => Array.from({ length: d }, (_, j) => {
    const out = h * d + j;
    let s = bias ? bias[out] : 0;
    for (let i = 0; i < C; i++) s += r[i] * W[out * C + i];
    return s;
  }));
  const half = d / 2;
  const rotate = (M) => M.map((row, t) => row.map((u, j) => {
    const angle = t * base ** (-(2 * (j % half)) / d);
    return j < half ? u * Math.cos(angle) - row[j + half] * Math.sin(angle) : u * Math.cos(angle) + row[j - half] * Math.sin(angle);
  }));
  return { Q: rotate(project(attention.q, attention.qb, head)), K: rotate(project(attention.k, attention.kb, kvHead)), V: project(attention.v, attention.vb, kvHead) };
}
