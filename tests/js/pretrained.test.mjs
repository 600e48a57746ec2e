// Transformer.fromPretrained (issue 30) through the Node build: random GPT-2 and Llama checkpoints in
// the Hugging Face layout (tests/pretrained/checkpoint.mjs), loaded in float64 and float32, against the
// independent float64 reference (tests/oracle/pretrained.mjs): logits, every attention weight and
// every hidden state; greedy generation through the KV cache gives the reference's tokens; onToken
// streams them; sampling is seeded; bad input is a TypeError / RangeError naming the thing, and the
// module keeps working after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab from './support/lab.mjs';
import { gpt2Checkpoint, llamaCheckpoint } from '../pretrained/checkpoint.mjs';
import * as O from '../oracle/pretrained.mjs';
import * as OT from '../oracle/transformer.mjs';

const { Transformer } = lab;

/** float64 against the oracle: each tensor's largest error over its largest entry. */
const F64_TOL = 1e-10;
/** float32: rounding of sums of a few dozen terms of size ~1 (the worst seen, 1.2e-6, is printed). */
const F32_TOL = 1e-5;

/** max |a − e| over max |e| (1 when e is all zeros). */
function scaledError(actual, expected) {
  assert.equal(actual.length, expected.length);
  let worst = 0, scale = 0;
  for (let i = 0; i < expected.length; i++) {
    worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
    scale = Math.max(scale, Math.abs(expected[i]));
  }
  return worst / (scale || 1);
}

export const CASES = [
  ['gpt2, no prefix, tied', () => gpt2Checkpoint({ embd: 8, heads: 2, layers: 2, seed: 51 })],
  ['gpt2, transformer. prefix, untied, BF16, F32 buffers', () => gpt2Checkpoint({ embd: 12, heads: 3, layers: 3, prefix: true, tied: false, buffers: 'F32', dtype: 'BF16', seed: 52 })],
  ['gpt2, F16, BOOL buffers, n_inner', () => gpt2Checkpoint({ embd: 16, heads: 4, layers: 1, inner: 24, buffers: 'BOOL', dtype: 'F16', vocab: 31, seed: 53 })],
  ['llama, grouped 4/2', () => llamaCheckpoint({ hidden: 8, heads: 4, kvHeads: 2, layers: 2, seed: 54 })],
  ['llama, 4/1, tied, rope_parameters, F16', () => llamaCheckpoint({ hidden: 16, heads: 4, kvHeads: 1, layers: 3, tied: true, ropeStyle: 'rope_parameters', ropeTheta: 500000, dtype: 'F16', seed: 55 })],
  ['llama, biases, head_dim, BF16, inv_freq', () => llamaCheckpoint({ hidden: 12, heads: 3, kvHeads: 3, headDim: 4, layers: 2, attentionBias: true, mlpBias: true, invFreq: true, dtype: 'BF16', seed: 56 })],
];

function tokensFor(V) {
  return [[1, 4, 2, 8, 5, 7, 0], [3, 3, 0, V - 1, 6, 2, 9 % V]];
}

for (const dtype of ['float64', 'float32']) {
  test(`${dtype}: logits, attention weights and hidden states agree with the float64 reference`, (t) => {
    const tol = dtype === 'float64' ? F64_TOL : F32_TOL;
    let worst = 0;
    for (const [name, make] of CASES) {
      const { config, weights } = make();
      const m = O.load(config, weights);
      const model = Transformer.fromPretrained({ config, weights, dtype });
      try {
        const tokens = tokensFor(m.V);
        const got = model.forward(tokens, { needWeights: true, needHidden: true });
        const want = O.forward(m, tokens);
        const B = tokens.length, T = tokens[0].length;
        assert.deepEqual(got.logits.shape, [B, T, m.V], name);
        assert.ok(got.logits.data instanceof (dtype === 'float64' ? Float64Array : Float32Array), name);
        const check = (what, a, e) => {
          const err = scaledError(a, e);
          assert.ok(err <= tol, `${name}: ${what} scaled error ${err} > ${tol}`);
          worst = Math.max(worst, err);
        };
        check('logits', got.logits.data, want.logits.data);
        assert.equal(got.weights.length, m.L, name);
        got.weights.forEach((w, l) => {
          assert.deepEqual(w.shape, [B, m.h, T, T]);
          check(`weights[${l}]`, w.data, want.weights[l].data);
        });
        assert.equal(got.hidden.length, m.L + 1, name);
        got.hidden.forEach((x, i) => {
          assert.deepEqual(x.shape, [B, T, m.C]);
          check(`hidden[${i}]`, x.data, want.hidden[i].data);
        });
        // the loss is the next-token cross-entropy of these logits
        assert.deepEqual(got.losses.shape, [B, T - 1]);
        const L = want.logits.data;
        let sum = 0;
        for (let b = 0; b < B; b++) {
          for (let s = 0; s < T - 1; s++) {
            const row = L.subarray((b * T + s) * m.V, (b * T + s + 1) * m.V);
            const max = Math.max(...row);
            const lse = Math.log(row.reduce((a, x) => a + Math.exp(x - max), 0)) + max;
            const loss = lse - row[tokens[b][s + 1]];
            assert.ok(Math.abs(got.losses.data[b * (T - 1) + s] - loss) <= tol * 10 * Math.max(1, loss), `${name}: losses[${b}][${s}]`);
            sum += loss;
          }
        }
        assert.ok(Math.abs(got.loss - sum / (B * (T - 1))) <= tol * 10 * Math.max(1, got.loss), `${name}: loss`);
        // without the options: the same logits, no weights, no hidden
        const plain = model.forward(tokens);
        assert.deepEqual(plain.logits.data, got.logits.data, `${name}: logits with and without needWeights/needHidden`);
        assert.equal(plain.weights, undefined);
        assert.equal(plain.hidden, undefined);
      } finally {
        model.free();
      }
    }
    t.diagnostic(`worst scaled error ${worst}`);
  });

  test(`${dtype}: greedy generation through the KV cache gives the reference's tokens, streamed by onToken`, () => {
    for (const [name, make] of CASES) {
      const { config, weights } = make();
      const m = O.load(config, weights);
      const model = Transformer.fromPretrained({ config, weights, dtype });
      try {
        const prompt = [1, 2, 3].map((x) => x % m.V);
        const maxNewTokens = Math.min(8, m.positions - prompt.length);
        const want = O.generateGreedy(m, prompt, maxNewTokens);
        const heard = [];
        const ids = model.generate(prompt, { maxNewTokens, temperature: 0, onToken: (id, index) => heard.push([id, index]) });
        assert.ok(Array.isArray(ids), name);
        assert.deepEqual(ids, want, `${name}: greedy tokens`);
        assert.deepEqual(heard, want.slice(prompt.length).map((id, i) => [id, i]), `${name}: onToken`);
        // the default temperature is 0; topK = 1 at any temperature is greedy too
        assert.deepEqual(model.generate(prompt, { maxNewTokens }), want, name);
        assert.deepEqual(model.generate(Int32Array.from(prompt), { maxNewTokens, temperature: 1.5, topK: 1, seed: 9 }), want, name);
        // one token of prompt, up to the last position
        assert.equal(model.generate([0], { maxNewTokens: m.positions - 1 }).length, m.positions);
        assert.deepEqual(model.generate(prompt, { maxNewTokens: 0 }), prompt);
      } finally {
        model.free();
      }
    }
  });
}

test('sampled generation: seeded (the same seed, the same tokens), every token below V, seeds differ', () => {
  const { config, weights } = llamaCheckpoint({ hidden: 8, heads: 4, kvHeads: 2, layers: 2, vocab: 50, positions: 64, seed: 61 });
  const model = Transformer.fromPretrained({ config, weights });
  try {
    const options = { maxNewTokens: 40, temperature: 2, topP: 0.95, seed: 123 };
    const a = model.generate([1, 2], options);
    assert.deepEqual(model.generate([1, 2], options), a);
    assert.deepEqual(model.generate([1, 2], { ...options, seed: 123n }), a);
    assert.ok(a.every((id) => Number.isInteger(id) && id >= 0 && id < 50));
    const others = [1, 2, 3, 4].map((seed) => model.generate([1, 2], { ...options, seed }).join());
    assert.ok(others.some((s) => s !== a.join()), 'four other seeds all gave the same 40 tokens');
  } finally {
    model.free();
  }
});

test('weights read from a view at any byte offset (an aligned one copies F32 straight in, an unaligned one a chunk at a time): the same model, bit for bit', () => {
  const { config, weights } = gpt2Checkpoint({ embd: 8, heads: 2, layers: 2, vocab: 30, positions: 16, seed: 62 });
  const tokens = [[1, 2, 3, 4, 5, 6]];
  const logits = (bytes) => {
    const model = Transformer.fromPretrained({ config, weights: bytes });
    try {
      return Array.from(model.forward(tokens).logits.data);
    } finally {
      model.free();
    }
  };
  const want = logits(weights);
  for (const offset of [1, 2, 3, 4, 8]) {
    const buffer = new Uint8Array(weights.length + offset + 5);
    buffer.set(weights, offset);
    const view = buffer.subarray(offset, offset + weights.length);
    assert.deepEqual(logits(view), want, `a view at byte offset ${offset}`);
    assert.deepEqual(logits(view.slice().buffer), want, `an ArrayBuffer copied from the view at byte offset ${offset}`);
  }
});

test('config, numParameters and step of a loaded model', () => {
  const { config, weights } = llamaCheckpoint({ hidden: 12, heads: 3, kvHeads: 1, headDim: 4, layers: 2, intermediate: 10, vocab: 29, positions: 32, ropeTheta: 1e5, seed: 62 });
  const model = Transformer.fromPretrained({ config, weights, dtype: 'float64' });
  try {
    assert.deepEqual(model.config, {
      modelType: 'llama', vocabSize: 29, contextLength: 32, embedDim: 12, numHeads: 3, numKVHeads: 1, headDim: 4, numLayers: 2,
      positions: 'rope', ropeBase: 1e5, norm: 'rms', normEps: 1e-6, mlp: 'silu_gated', mlpWidth: 10,
      attentionBias: false, mlpBias: false, tiedEmbeddings: false, dtype: 'float64',
    });
    // W_E, W_U, final norm; per layer: 2 norms, q (12×12), k, v (4×12), o (12×12), gate, up (10×12), down (12×10)
    const perLayer = 2 * 12 + 12 * 12 + 2 * 4 * 12 + 12 * 12 + 3 * 10 * 12;
    assert.equal(model.numParameters, 2 * 29 * 12 + 12 + 2 * perLayer);
    assert.equal(model.step, 0);
  } finally {
    model.free();
  }
  const g = gpt2Checkpoint({ embd: 8, heads: 2, layers: 1, vocab: 23, positions: 16 });
  const gpt2 = Transformer.fromPretrained(g);
  try {
    assert.equal(gpt2.config.modelType, 'gpt2');
    assert.equal(gpt2.config.tiedEmbeddings, true);
    assert.equal(gpt2.config.dtype, 'float32');
    assert.equal(gpt2.numParameters, 23 * 8 + 16 * 8 + 2 * 8 + (4 * 8 + 8 * 24 + 24 + 8 * 8 + 8 + 8 * 32 + 32 + 32 * 8 + 8));
  } finally {
    gpt2.free();
  }
});

/** The file with its header rewritten by `edit(header)` (an object, or a string to use as is). */
function rewriteHeader(bytes, edit) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(Buffer.from(bytes.subarray(8, 8 + n)).toString('utf8'));
  const edited = edit(header);
  const text = typeof edited === 'string' ? edited : JSON.stringify(edited);
  const head = Buffer.from(text, 'utf8');
  const out = new Uint8Array(8 + head.length + bytes.length - 8 - n);
  new DataView(out.buffer).setBigUint64(0, BigInt(head.length), true);
  out.set(head, 8);
  out.set(bytes.subarray(8 + n), 8 + head.length);
  return out;
}

test('bad input: a TypeError or RangeError naming the thing, and the module keeps working', () => {
  const { config, weights } = gpt2Checkpoint({ embd: 8, heads: 2, layers: 2, vocab: 23, positions: 16, seed: 71 });
  const llama = llamaCheckpoint({ hidden: 8, heads: 4, kvHeads: 2, layers: 1, seed: 72 });
  const refused = (call, kind, pattern) => assert.throws(call, (e) => {
    assert.equal(e.constructor, kind, `${e.constructor.name}: ${e.message}`);
    assert.match(e.message, pattern);
    return true;
  });
  const load = (o) => () => Transformer.fromPretrained(o).free();
  refused(() => Transformer.fromPretrained(), TypeError, /options is missing/);
  refused(load({ weights }), TypeError, /options\.config is missing/);
  refused(load({ config: 'gpt2', weights }), TypeError, /options\.config is a string/);
  refused(load({ config: [config], weights }), TypeError, /options\.config/);
  refused(load({ config }), TypeError, /options\.weights is missing/);
  refused(load({ config, weights: Array.from(weights) }), TypeError, /options\.weights is an array/);
  refused(load({ config, weights, dtype: 'float16' }), TypeError, /options\.dtype/);
  refused(load({ config, weights, dtpye: 'float64' }), TypeError, /dtpye/);
  refused(load({ config: { ...config, model_type: 'bert' }, weights }), RangeError, /config\.model_type is 'bert'/);
  const { n_embd: _drop, ...noEmbd } = config;
  refused(load({ config: noEmbd, weights }), TypeError, /config\.n_embd is missing/);
  refused(load({ config: { ...llama.config, rope_scaling: { rope_type: 'yarn', factor: 2 } }, weights: llama.weights }), RangeError, /yarn/);
  // tensors: missing, extra, misshapen (the config disagrees with the file)
  refused(load({ config: { ...config, n_layer: 3 }, weights }), TypeError, /no tensor "h\.2\.ln_1\.weight" \(expected shape \[8\]\)/);
  refused(load({ config: { ...config, n_layer: 1 }, weights }), TypeError, /tensor "h\.1\.[a-z_.0-9]+" that this gpt2 config has no place for/);
  refused(load({ config: { ...config, n_inner: 16 }, weights }), RangeError, /"h\.0\.mlp\.c_fc\.weight" has shape \[8, 32\]; expected \[8, 16\]/);
  refused(load({ config: { ...config, tie_word_embeddings: false }, weights }), TypeError, /lm_head\.weight/);
  // the file itself
  refused(load({ config, weights: weights.subarray(0, 5) }), RangeError, /has 5 bytes/);
  refused(load({ config, weights: weights.subarray(0, 40) }), RangeError, /safetensors/);
  refused(load({ config, weights: rewriteHeader(weights, () => '{"wte.weight": [') }), TypeError, /header is not JSON/);
  refused(load({ config, weights: rewriteHeader(weights, (h) => { h['wte.weight'].data_offsets[1] += 4; return h; }) }), RangeError, /wte\.weight/);
  refused(load({ config, weights: rewriteHeader(weights, (h) => { h['ln_f.bias'].data_offsets = [0, 32]; return h; }) }), RangeError, /ln_f\.bias|overlap/);
  refused(load({ config, weights: rewriteHeader(weights, (h) => { h['ln_f.bias'].dtype = 'I32'; return h; }) }), TypeError, /ln_f\.bias/);
  const huge = new Uint8Array(weights);
  new DataView(huge.buffer).setBigUint64(0, 1n << 40n, true);
  refused(load({ config, weights: huge }), RangeError, /header/);
  // a model too big for wasm memory, refused before anything is allocated
  refused(load({ config: { ...config, n_embd: 65536, n_layer: 48 }, weights }), RangeError, /needs about [\d,]+ MB of memory.*wasm32/);

  const model = Transformer.fromPretrained({ config, weights, dtype: 'float64' });
  try {
    const before = model.forward([[1, 2, 3]]).logits.data;
    refused(() => model.forward([[1, 23]]), RangeError, /tokens\[0\]\[1\] is 23; expected an integer in 0 … vocabSize − 1 = 22/);
    refused(() => model.forward([Array.from({ length: 17 }, () => 1)]), RangeError, /T = 17.*contextLength = 16/);
    refused(() => model.forward([[1, 2]], { headMask: [[true, true]] }), RangeError, /options\.headMask has 1 rows; expected numLayers = 2/);
    assert.notDeepEqual(model.forward([[1, 2, 3]], { headMask: [[true, false], [true, true]] }).logits.data, before, 'a head switched off changes the logits');
    refused(() => model.forward([[1, 2]], { needHidden: 'yes' }), TypeError, /needHidden/);
    refused(() => model.generate([1, 2]), TypeError, /options is missing/);
    refused(() => model.generate([1, 2], {}), TypeError, /options\.maxNewTokens is missing/);
    refused(() => model.generate([1, 2], { maxNewTokens: 1.5 }), RangeError, /maxNewTokens is 1\.5/);
    refused(() => model.generate([1, 2], { maxNewTokens: 15 }), RangeError, /prompt \(2 tokens\) \+ maxNewTokens \(15\) = 17 exceeds the 16 positions/);
    refused(() => model.generate([], { maxNewTokens: 1 }), RangeError, /prompt is empty/);
    refused(() => model.generate([1, 23], { maxNewTokens: 1 }), RangeError, /prompt\[1\] is 23/);
    refused(() => model.generate('hello', { maxNewTokens: 1 }), TypeError, /prompt is a string/);
    refused(() => model.generate([1], { maxNewTokens: 1, temperature: -1 }), RangeError, /temperature/);
    refused(() => model.generate([1], { maxNewTokens: 1, topK: 0 }), RangeError, /topK/);
    refused(() => model.generate([1], { maxNewTokens: 1, topP: 0 }), RangeError, /topP/);
    refused(() => model.generate([1], { maxNewTokens: 1, onToken: 5 }), TypeError, /options\.onToken is the number 5; expected a function/);
    refused(() => model.generate([1], { maxNewTokens: 1, maxTokens: 5 }), TypeError, /maxTokens/);
    // the caller's own error from onToken, unchanged; generation stops there
    const mine = new Error('stop here');
    let calls = 0;
    assert.throws(() => model.generate([1], { maxNewTokens: 5, onToken: () => { calls++; throw mine; } }), (e) => e === mine);
    assert.equal(calls, 1);
    // circuits read W_U: this GPT-2 ties it to W_E
    refused(() => model.compositionScores(), Error, /compositionScores reads W_U and one K\/V head per query head; this model ties W_U to W_E/);
    refused(() => model.setWeights({ layers: [{ W_K: [[1]] }] }), RangeError, /layers\[0\]\.W_K/);
    assert.deepEqual(model.forward([[1, 2, 3]]).logits.data, before, 'the model answers as before after every refused call');
  } finally {
    model.free();
  }
  refused(() => model.forward([[1, 2]]), Error, /free/);
});

test('a loaded model is a Transformer like any other: getWeights / setWeights, headScores, gradients, a fine-tuning step, getState / setState', () => {
  for (const [name, make] of [CASES[1], CASES[3], CASES[4]]) {
    const { config, weights } = make();
    const m = O.load(config, weights);
    const model = Transformer.fromPretrained({ config, weights, dtype: 'float64' });
    try {
      const tokens = tokensFor(m.V);
      const W = model.getWeights();
      // the checkpoint's tensors in the package's orientation ([in, out])
      assert.deepEqual(W.W_E, m.get(m.arch === 'gpt2' ? 'wte.weight' : 'model.embed_tokens.weight'), name);
      assert.equal(W.layers.length, m.L);
      if (m.arch === 'llama') {
        const q = m.get('model.layers.0.self_attn.q_proj.weight');
        assert.deepEqual(W.layers[0].W_Q, q[0].map((_, j) => q.map((row) => row[j])), `${name}: W_Q = q_projᵀ`);
        assert.equal(W.layers[0].W_K[0].length, m.hKv * m.d, `${name}: W_K is C × h_kv·d`);
        assert.ok(W.layers[0].W_gate && W.layers[0].W_up && W.layers[0].W_down && !W.layers[0].ln1_b, name);
      }
      assert.equal('W_U' in W, m.arch === 'llama' ? !config.tie_word_embeddings : !config.tie_word_embeddings, `${name}: W_U only when untied`);
      const before = model.forward(tokens).loss;
      // headScores: one row per layer, one score per head
      const scores = model.headScores(tokens);
      assert.equal(scores.length, m.L);
      assert.equal(scores[0].length, m.h);
      // gradients: every key of getWeights, nothing changed
      const { loss, grads } = model.gradients(tokens);
      assert.equal(loss, before);
      assert.deepEqual(Object.keys(grads).sort(), Object.keys(W).sort());
      // fine-tune: a few small AdamW steps on these tokens lower their loss
      for (let s = 0; s < 3; s += 1) model.trainStep(tokens, { learningRate: 1e-3, weightDecay: 0 });
      const after = model.forward(tokens).loss;
      assert.ok(after < before, `${name}: loss ${before} → ${after}`);
      assert.equal(model.step, 3);
      // the fine-tuned model still generates, and setWeights puts the checkpoint back, bit for bit
      assert.equal(model.generate([1], { maxNewTokens: 3 }).length, 4);
      const state = model.getState();
      model.setWeights(W);
      assert.equal(model.forward(tokens).loss, before, `${name}: setWeights restores the checkpoint's loss`);
      model.setState(state);
      assert.equal(model.forward(tokens).loss, after, `${name}: setState restores the fine-tuned model`);
    } finally {
      model.free();
    }
  }
});

test('generate and needHidden work on a model made by new Transformer(config) too', () => {
  for (const positions of ['shortformer', 'learned', 'rope', 'none']) {
    const toy = new Transformer({ vocabSize: 9, contextLength: 12, embedDim: 8, numHeads: 2, numLayers: 2, positions, mlp: true, layerNorm: true, dtype: 'float64', seed: 4 });
    try {
      const ids = toy.generate([1, 2], { maxNewTokens: 6 });
      for (let k = 2; k < ids.length; k += 1) {
        const row = Array.from(toy.forward([ids.slice(0, k).concat(k === 1 ? [0] : [])]).logits.data.subarray((k - 1) * 9, k * 9));
        assert.equal(ids[k], row.indexOf(Math.max(...row)), `${positions}: step ${k}`);
      }
      const out = toy.forward([ids.slice(0, 5)], { needHidden: true });
      assert.equal(out.hidden.length, 3);
      assert.deepEqual(out.hidden[2].shape, [1, 5, 8]);
    } finally {
      toy.free();
    }
  }
});

// ---- every toy-only method on a loaded model, float64, against the oracle -----------------------------

/** The keys getWeights() gives a loaded model (docs/api.md, "Weights of a loaded model"). */
function expectedKeys(config) {
  if (config.model_type === 'gpt2') {
    const top = ['W_E', 'W_pos', 'ln_final_w', 'ln_final_b', ...(config.tie_word_embeddings === false ? ['W_U'] : []), 'layers'];
    const layer = ['W_Q', 'W_K', 'W_V', 'W_O', 'b_Q', 'b_K', 'b_V', 'b_O', 'ln1_w', 'ln1_b', 'ln2_w', 'ln2_b', 'W_in', 'b_in', 'W_out', 'b_out'];
    return { top, layer };
  }
  const top = ['W_E', 'ln_final_w', ...(config.tie_word_embeddings ? [] : ['W_U']), 'layers'];
  const layer = [
    'W_Q', 'W_K', 'W_V', 'W_O', ...(config.attention_bias ? ['b_Q', 'b_K', 'b_V', 'b_O'] : []), 'ln1_w', 'ln2_w',
    ...(config.mlp_bias ? ['W_gate', 'b_gate', 'W_up', 'b_up', 'W_down', 'b_down'] : ['W_gate', 'W_up', 'W_down']),
  ];
  return { top, layer };
}

/** Every tensor of a weights tree as [get, set, path]: a flat view by index. */
function tensors(W) {
  const out = [];
  const visit = (obj, path) => {
    for (const [k, v] of Object.entries(obj)) {
      if (k === 'layers') { v.forEach((L, l) => visit(L, `layers[${l}].`)); continue; }
      const matrix = Array.isArray(v[0]);
      const cols = matrix ? v[0].length : 1;
      const n = matrix ? v.length * cols : v.length;
      out.push({
        path: path + k, n, decays: matrix,
        get: (i) => (matrix ? v[Math.floor(i / cols)][i % cols] : v[i]),
        set: (i, x) => { if (matrix) v[Math.floor(i / cols)][i % cols] = x; else v[i] = x; },
        flat: () => (matrix ? v.flat() : v.slice()),
      });
    }
  };
  visit(W, '');
  return out;
}

const clone = (W) => structuredClone(W);

/** A seeded generator of numbers in [−1, 1). */
function noise(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  };
}

const LOADED = [
  ['gpt2, tied', CASES[0]],
  ['gpt2, untied', CASES[1]],
  ['llama, grouped 4/2', CASES[3]],
  ['llama, 4/1, tied', CASES[4]],
  ['llama, biases', CASES[5]],
];

for (const [name, [, make]] of LOADED) {
  test(`float64, ${name}: getWeights / setWeights, headMask, headScores, gradients and trainStep against the oracle`, (t) => {
    const { config, weights } = make();
    const m = O.load(config, weights);
    const model = Transformer.fromPretrained({ config, weights, dtype: 'float64' });
    try {
      const tokens = tokensFor(m.V);
      // getWeights: the documented names, and the oracle built from them is the checkpoint's
      const W = model.getWeights();
      const keys = expectedKeys(config);
      assert.deepEqual(Object.keys(W).sort(), keys.top.slice().sort(), `${name}: top-level keys`);
      W.layers.forEach((L) => assert.deepEqual(Object.keys(L).sort(), keys.layer.slice().sort(), `${name}: layer keys`));
      const base = O.forward(m, tokens).logits.data;
      assert.ok(scaledError(O.forward(O.fromWeights(m, W), tokens).logits.data, base) <= 1e-14, `${name}: getWeights' tensors are the checkpoint's`);
      assert.ok(scaledError(model.forward(tokens).logits.data, base) <= F64_TOL, name);

      // setWeights: every tensor moved a little; the model answers as the oracle with those weights
      const rand = noise(7);
      const moved = clone(W);
      for (const x of tensors(moved)) for (let i = 0; i < x.n; i += 1) x.set(i, x.get(i) + 0.05 * rand());
      model.setWeights(moved);
      assert.deepEqual(model.getWeights(), moved, `${name}: getWeights after setWeights`);
      const mm = O.fromWeights(m, moved);
      assert.ok(scaledError(model.forward(tokens).logits.data, O.forward(mm, tokens).logits.data) <= F64_TOL, `${name}: forward after setWeights`);

      // headMask: each head off alone, and a whole layer off
      const masks = [];
      for (let l = 0; l < m.L; l += 1) {
        for (let i = 0; i < m.h; i += 1) masks.push(Array.from({ length: m.L }, (_, k) => Array.from({ length: m.h }, (_, j) => !(k === l && j === i))));
        masks.push(Array.from({ length: m.L }, (_, k) => Array.from({ length: m.h }, () => k !== l)));
      }
      for (const headMask of masks) {
        const got = model.forward(tokens, { headMask, needWeights: true });
        const want = O.forward(mm, tokens, { headMask });
        const err = scaledError(got.logits.data, want.logits.data);
        assert.ok(err <= F64_TOL, `${name}: headMask ${JSON.stringify(headMask)}: scaled error ${err}`);
        assert.ok(Math.abs(got.loss - O.loss(mm, tokens, { headMask })) <= 1e-12 * Math.max(1, got.loss), `${name}: loss with headMask`);
      }

      // headScores: the detectors on the oracle's attention weights
      const scores = model.headScores(tokens);
      const wantScores = OT.headScores(O.forward(mm, tokens).weights, tokens);
      scores.forEach((row, l) => row.forEach((s, i) => {
        for (const k of ['previousToken', 'induction', 'firstToken', 'self']) {
          assert.ok(Math.abs(s[k] - wantScores[l][i][k]) <= 1e-12, `${name}: headScores[${l}][${i}].${k} ${s[k]} vs ${wantScores[l][i][k]}`);
        }
      }));

      // gradients: central differences of the oracle's loss, three entries of every tensor
      const { loss, grads } = model.gradients(tokens);
      assert.ok(Math.abs(loss - O.loss(mm, tokens)) <= 1e-12 * Math.max(1, loss), `${name}: gradients' loss`);
      assert.deepEqual(Object.keys(grads).sort(), Object.keys(moved).sort());
      const h = 1e-5;
      let worst = 0;
      const G = tensors(grads);
      tensors(moved).forEach((x, k) => {
        assert.equal(G[k].path, x.path);
        const pick = [0, x.n - 1, Math.floor((rand() + 1) / 2 * x.n) % x.n];
        for (const i of pick) {
          const at = x.get(i);
          x.set(i, at + h);
          const up = O.loss(O.fromWeights(m, moved), tokens);
          x.set(i, at - h);
          const down = O.loss(O.fromWeights(m, moved), tokens);
          x.set(i, at);
          const fd = (up - down) / (2 * h);
          const err = Math.abs(G[k].get(i) - fd);
          worst = Math.max(worst, err);
          assert.ok(err <= 1e-7, `${name}: d loss / d ${x.path}[${i}] = ${G[k].get(i)}; central difference ${fd}`);
        }
      });
      t.diagnostic(`${name}: worst gradient error against the oracle's central differences ${worst.toExponential(2)}`);

      // trainStep: one AdamW step is the oracle's AdamW of these gradients (2-D tensors decay)
      const adamw = { learningRate: 1e-2, weightDecay: 0.1 };
      const step = model.trainStep(tokens, adamw);
      assert.equal(step.loss, loss);
      const after = tensors(model.getWeights());
      tensors(moved).forEach((x, k) => {
        const want = OT.adamwStep(x.flat(), G[k].flat(), new Array(x.n).fill(0), new Array(x.n).fill(0), 1, adamw, x.decays).p;
        const got = after[k].flat();
        for (let i = 0; i < x.n; i += 1) assert.ok(Math.abs(got[i] - want[i]) <= 1e-14 * Math.max(1, Math.abs(want[i])), `${name}: ${x.path}[${i}] after trainStep`);
      });
      // fine-tuning: more steps keep lowering the loss on these tokens
      let last = model.forward(tokens).loss;
      assert.ok(last < loss, `${name}: one step: ${loss} → ${last}`);
      for (let s = 0; s < 4; s += 1) model.trainStep(tokens, adamw);
      const final = model.forward(tokens).loss;
      assert.ok(final < last, `${name}: four more steps: ${last} → ${final}`);
      t.diagnostic(`${name}: loss ${loss.toFixed(4)} → ${final.toFixed(4)} in 5 AdamW steps`);
    } finally {
      model.free();
    }
    assert.throws(() => model.getWeights(), /free/);
  });
}
