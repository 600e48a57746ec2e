// Properties of a model from Transformer.fromPretrained (issue 30) that need no oracle, over seeded
// random GPT-2 and Llama checkpoints in both dtypes: causality (a later token never changes an
// earlier position's logits, bit for bit), batch independence and permutation, the KV cache (each
// greedy token is the argmax of a full forward of the tokens so far), the file's layout (the
// `transformer.` prefix, ArrayBuffer or an offset Uint8Array, the order of the tensors) changes
// nothing, sampling with topK = 1 or a tiny topP is greedy at any temperature, and the same seed
// draws the same tokens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab from './support/lab.mjs';
import { rng } from '../fuzz/generate.mjs';
import { gpt2Checkpoint, llamaCheckpoint, safetensors } from '../pretrained/checkpoint.mjs';
import { readSafetensors } from '../oracle/pretrained.mjs';

const { Transformer } = lab;
const bits = (xs) => Buffer.from(Float64Array.from(xs).buffer).toString('hex');

/** Seeded checkpoints of both families: { name, config, weights }. */
function checkpoints(seed, n = 6) {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const heads = r.pick([1, 2, 4]);
    const options = { vocab: r.int(6, 20), positions: 16, layers: r.int(1, 3), seed: r.int(1, 1000), dtype: r.pick(['F32', 'F16', 'BF16']) };
    const made = i % 2
      ? llamaCheckpoint({ ...options, hidden: 2 * heads * r.int(1, 2), heads, kvHeads: r.pick([1, heads]), intermediate: r.int(3, 10), tied: r.bool(), attentionBias: r.bool(), mlpBias: r.bool() })
      : gpt2Checkpoint({ ...options, embd: heads * r.int(1, 3), heads, tied: r.bool(), prefix: r.bool() });
    return { name: `${i % 2 ? 'llama' : 'gpt2'} ${JSON.stringify(options)}`, ...made };
  });
}

function withModel(checkpoint, dtype, f) {
  const model = Transformer.fromPretrained({ config: checkpoint.config, weights: checkpoint.weights, dtype });
  try {
    return f(model);
  } finally {
    model.free();
  }
}

const argmax = (row) => row.reduce((best, x, j) => (x > row[best] ? j : best), 0);

for (const dtype of ['float64', 'float32']) {
  test(`${dtype}: causality — changing token s changes no logits, weights or hidden states of positions t < s, bit for bit`, () => {
    for (const c of checkpoints(1)) {
      withModel(c, dtype, (model) => {
        const { vocabSize: V, embedDim: C } = model.config;
        const T = 9;
        const r = rng(7);
        const a = Array.from({ length: T }, () => r.int(0, V - 1));
        for (const s of [1, 4, T - 1]) {
          const b = a.slice();
          b[s] = (b[s] + 1) % V;
          const [x, y] = [a, b].map((tokens) => model.forward([tokens], { needHidden: true }));
          assert.equal(bits(x.logits.data.subarray(0, s * V)), bits(y.logits.data.subarray(0, s * V)), `${c.name}: logits before ${s}`);
          x.hidden.forEach((h, i) => assert.equal(bits(h.data.subarray(0, s * C)), bits(y.hidden[i].data.subarray(0, s * C)), `${c.name}: hidden[${i}] before ${s}`));
          assert.notEqual(bits(x.logits.data.subarray(s * V)), bits(y.logits.data.subarray(s * V)), `${c.name}: the changed token changes its own logits`);
        }
      });
    }
  });

  test(`${dtype}: each sequence of a batch is answered as it would be alone, and permuting the batch permutes the answer`, () => {
    for (const c of checkpoints(2)) {
      withModel(c, dtype, (model) => {
        const V = model.config.vocabSize;
        const r = rng(8);
        const rows = Array.from({ length: 3 }, () => Array.from({ length: 7 }, () => r.int(0, V - 1)));
        const all = model.forward(rows, { needWeights: true });
        const size = 7 * V;
        rows.forEach((row, b) => {
          const alone = model.forward([row], { needWeights: true });
          assert.equal(bits(all.logits.data.subarray(b * size, (b + 1) * size)), bits(alone.logits.data), `${c.name}: sequence ${b}`);
        });
        const swapped = model.forward([rows[2], rows[0], rows[1]]);
        assert.equal(bits(swapped.logits.data.subarray(0, size)), bits(all.logits.data.subarray(2 * size)), c.name);
        assert.equal(swapped.loss.toFixed(12), all.loss.toFixed(12), c.name);
      });
    }
  });

  test(`${dtype}: greedy generation through the KV cache picks the argmax of a full forward of the tokens so far`, () => {
    for (const c of checkpoints(3)) {
      withModel(c, dtype, (model) => {
        const V = model.config.vocabSize;
        const ids = model.generate([1, 0], { maxNewTokens: 10 });
        for (let k = 2; k < ids.length; k += 1) {
          const { logits } = model.forward([ids.slice(0, k)]);
          const last = Array.from(logits.data.subarray((k - 1) * V, k * V));
          const best = argmax(last);
          // f32: the cached and the full forward may round differently; only a near-tie may pick another token
          if (ids[k] !== best) assert.ok(dtype === 'float32' && last[best] - last[ids[k]] <= 1e-5 * Math.max(1, Math.abs(last[best])), `${c.name}: step ${k} picked ${ids[k]}, argmax ${best}`);
        }
      });
    }
  });
}

// A product of at most 4 rows (a decoding step, or a short sequence alone) reads the weights where
// they lie, four rows of W at a time, and the unembedding's transposed rows eight at a time; a larger
// one packs them. Both must be the same sums in the same order: widths whose products end in partial
// SIMD vectors and partial groups of four (C = 38, vocab 37, an MLP of 4·38 or 30).
test('float32: a sequence of 2 to 4 tokens alone gets the bits it gets as one of a batch of 5 (the few-row products are the packed ones)', () => {
  const made = [
    gpt2Checkpoint({ vocab: 37, positions: 8, embd: 38, heads: 2, layers: 2, seed: 31 }),
    llamaCheckpoint({ vocab: 37, positions: 8, hidden: 36, heads: 2, kvHeads: 1, intermediate: 30, layers: 2, tied: true, seed: 32 }),
  ];
  for (const [i, c] of made.entries()) {
    withModel(c, 'float32', (model) => {
      const r = rng(40 + i);
      for (let T = 2; T <= 4; T += 1) {
        const rows = Array.from({ length: 5 }, () => Array.from({ length: T }, () => r.int(0, 36)));
        const all = model.forward(rows, { needHidden: true });
        const alone = model.forward([rows[0]], { needHidden: true });
        assert.equal(bits(alone.logits.data), bits(all.logits.data.subarray(0, T * 37)), `checkpoint ${i}, T = ${T}: logits`);
        alone.hidden.forEach((h, l) => assert.equal(bits(h.data), bits(all.hidden[l].data.subarray(0, h.data.length)), `checkpoint ${i}, T = ${T}: hidden ${l}`));
      }
    });
  }
});

test('the file layout changes nothing: transformer. prefix or not, ArrayBuffer or an offset Uint8Array, tensors in another order', () => {
  for (const c of checkpoints(4)) {
    const reference = withModel(c, 'float64', (m) => bits(m.forward([[1, 2, 3, 0, 5]]).logits.data));
    const tensors = [...readSafetensors(c.weights).entries()];
    // the same tensors written again in reverse order (and, for GPT-2, with the other key layout)
    const prefixed = c.config.model_type === 'gpt2' && tensors.some(([name]) => name.startsWith('transformer.'));
    const rename = (name) => (c.config.model_type !== 'gpt2' || name === 'lm_head.weight' ? name : prefixed ? name.replace(/^transformer\./, '') : `transformer.${name}`);
    const rewritten = safetensors(tensors.reverse().map(([name, t]) => ({ name: rename(name), dtype: 'F32', shape: t.shape, values: t.values })));
    const offset = new Uint8Array(c.weights.length + 3);
    offset.set(c.weights, 3);
    for (const weights of [rewritten, c.weights.slice().buffer, offset.subarray(3)]) {
      const got = withModel({ config: c.config, weights }, 'float64', (m) => bits(m.forward([[1, 2, 3, 0, 5]]).logits.data));
      assert.equal(got, reference, c.name);
    }
  }
});

test('sampling: topK = 1 or a tiny topP is greedy at any temperature; the same seed draws the same tokens', () => {
  for (const c of checkpoints(5, 4)) {
    withModel(c, 'float32', (model) => {
      const greedy = model.generate([0], { maxNewTokens: 12 });
      for (const temperature of [0.3, 1, 5]) {
        assert.deepEqual(model.generate([0], { maxNewTokens: 12, temperature, topK: 1, seed: 3 }), greedy, c.name);
        assert.deepEqual(model.generate([0], { maxNewTokens: 12, temperature, topP: 1e-9, seed: 4 }), greedy, c.name);
        const a = model.generate([0], { maxNewTokens: 12, temperature, seed: 11 });
        assert.deepEqual(model.generate([0], { maxNewTokens: 12, temperature, seed: 11 }), a, c.name);
      }
    });
  }
});
