// Properties of the Transformer (issue 21) that need no oracle: determinism for a seed, getState →
// setState round trips that continue training bit for bit, a neutral head mask, a fresh model near
// the uniform loss ln V, batch permutation, f32 near f64, refused calls that change nothing, and
// the regressions the fuzzer found. Seeded over several configs each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab from './support/lab.mjs';
import { rng } from '../fuzz/generate.mjs';

/** Bits of a float64 (as a hex string) for exact comparisons of f64 values and Float*Arrays. */
const bits = (xs) => Buffer.from(Float64Array.from(xs).buffer).toString('hex');
const stateBits = (s) => JSON.stringify(s, (k, v) => (ArrayBuffer.isView(v) ? bits(v) : v));
/** The one tolerance helper: |a − e| ≤ tol · max(1, |e|). */
const near = (a, e, tol) => Math.abs(a - e) <= tol * Math.max(1, Math.abs(e));

/**
 * A handful of seeded configs: every positions, with and without mlp / layerNorm / bias, both dtypes, and
 * the architecture options of a loaded checkpoint (RMSNorm and its ε, the SiLU-gated MLP, its width and
 * biases, fewer K/V heads, RoPE's base, tied W_U).
 */
function configs(seed, n = 8) {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const c = {
      vocabSize: r.int(4, 16),
      contextLength: 12,
      embedDim: 8,
      numHeads: r.pick([1, 2, 4]),
      numLayers: r.int(1, 2),
      positions: ['shortformer', 'learned', 'rope', 'none'][i % 4],
      mlp: r.bool(),
      layerNorm: r.bool(),
      bias: r.bool(),
      seed: r.int(0, 1000),
      dtype: i % 2 ? 'float32' : 'float64',
    };
    if (c.layerNorm && r.bool()) Object.assign(c, { norm: 'rms', normEps: r.pick([1e-5, 1e-6]) });
    if (c.mlp && r.bool()) Object.assign(c, { mlp: r.pick(['gelu_new', 'silu_gated']), mlpWidth: r.int(4, 20), mlpBias: r.bool() });
    c.numKVHeads = r.pick([1, 2, 4].filter((k) => c.numHeads % k === 0));
    if (c.positions === 'rope') c.ropeBase = r.pick([10000, 500]);
    c.tiedEmbeddings = r.bool();
    return c;
  });
}
const label = (c) => JSON.stringify(c);
const batch = (c, seed, B = 3) => lab.repeatedTokens({ vocabSize: c.vocabSize, length: Math.min(5, c.vocabSize - 1), batch: B, seed }).tokens;

function withModels(n, config, f) {
  const models = Array.from({ length: n }, () => new lab.Transformer(config));
  try {
    return f(...models);
  } finally {
    for (const m of models) m.free();
  }
}

test('trainStep is deterministic: the same config and seed give the same losses and state, bit for bit', () => {
  for (const c of configs(1)) {
    withModels(2, c, (a, b) => {
      for (let s = 0; s < 4; s += 1) {
        const tokens = batch(c, s);
        assert.equal(bits([a.trainStep(tokens, { learningRate: 1e-2 }).loss]), bits([b.trainStep(tokens, { learningRate: 1e-2 }).loss]), label(c));
      }
      assert.equal(stateBits(a.getState()), stateBits(b.getState()), label(c));
    });
  }
});

test('getState → setState round-trips bit for bit (also through structuredClone) and training continues identically', () => {
  for (const c of configs(2)) {
    withModels(2, c, (a, b) => {
      b.setWeights({ W_E: b.getWeights().W_E.map((row) => row.map((x) => -x)) }); // b starts elsewhere
      for (let s = 0; s < 3; s += 1) a.trainStep(batch(c, s), { learningRate: 1e-2, betas: [0.8, 0.99] });
      const saved = structuredClone(a.getState());
      b.setState(saved);
      assert.equal(stateBits(b.getState()), stateBits(saved), `${label(c)}: the restored state`);
      assert.equal(b.step, 3);
      for (let s = 3; s < 6; s += 1) {
        const tokens = batch(c, s);
        assert.equal(bits([b.trainStep(tokens, { learningRate: 1e-2, betas: [0.8, 0.99] }).loss]), bits([a.trainStep(tokens, { learningRate: 1e-2, betas: [0.8, 0.99] }).loss]), label(c));
      }
      assert.equal(stateBits(b.getState()), stateBits(a.getState()), label(c));
    });
  }
});

test('headMask all true equals no mask, bit for bit; gradients() changes nothing', () => {
  for (const c of configs(3)) {
    withModels(1, c, (m) => {
      const tokens = batch(c, 9);
      const all = Array.from({ length: c.numLayers }, () => Array.from({ length: c.numHeads }, () => true));
      const plain = m.forward(tokens, { needWeights: true });
      const masked = m.forward(tokens, { needWeights: true, headMask: all });
      assert.equal(bits(masked.logits.data), bits(plain.logits.data), label(c));
      assert.equal(bits(masked.losses.data), bits(plain.losses.data), label(c));
      const before = stateBits(m.getState());
      m.gradients(tokens);
      assert.equal(stateBits(m.getState()), before, `${label(c)}: gradients() moved the state`);
    });
  }
});

// At the lab's sizes (C = 32, V ≥ 16) and without layerNorm. (Xavier-uniform W_E and W_U give logits
// of variance about C·Var(W_E)·Var(W_U) = C·(2/(V + C))², small there but not for tiny C and V; the
// final LN makes the residual stream unit-variance, so with it the logits' variance is 2C/(C + V).)
test('a fresh model (C = 32, no layerNorm) predicts near uniformly: its loss is within 15% of ln(vocabSize)', () => {
  for (const V of [16, 32, 64]) {
    for (const c of configs(4 + V, 4)) {
      // (untied: a tied W_U gives each token's own logit ‖W_E[token]‖², not near uniform at these sizes)
      const config = { ...c, vocabSize: V, embedDim: 32, contextLength: 16, layerNorm: false, norm: undefined, normEps: undefined, mlpWidth: undefined, tiedEmbeddings: false };
      withModels(1, config, (m) => {
        const loss = m.forward(batch(config, 1, 8)).loss;
        assert.ok(Math.abs(loss / Math.log(V) - 1) <= 0.15, `${label(config)}: loss ${loss}, ln V = ${Math.log(V)}`);
      });
    }
  }
});

test('permuting the batch permutes the losses (bit for bit) and the logits; the mean loss stays', () => {
  for (const c of configs(5)) {
    withModels(1, c, (m) => {
      const tokens = batch(c, 11, 4);
      const order = [2, 0, 3, 1];
      const f = m.forward(tokens);
      const g = m.forward(order.map((i) => tokens[i]));
      const T = tokens[0].length;
      order.forEach((i, k) => {
        assert.equal(bits(g.losses.data.subarray(k * (T - 1), (k + 1) * (T - 1))), bits(f.losses.data.subarray(i * (T - 1), (i + 1) * (T - 1))), label(c));
        const row = T * c.vocabSize;
        assert.equal(bits(g.logits.data.subarray(k * row, (k + 1) * row)), bits(f.logits.data.subarray(i * row, (i + 1) * row)), label(c));
      });
      assert.ok(near(g.loss, f.loss, 1e-15), label(c));
    });
  }
});

test('the f32 model is close to the f64 model on the same (f32) weights: loss to 1e-5, after 5 steps to 1e-3', () => {
  for (const c of configs(6).filter((x) => x.dtype === 'float64')) {
    const m64 = new lab.Transformer(c);
    const m32 = new lab.Transformer({ ...c, dtype: 'float32' });
    try {
      m64.setWeights(m32.getWeights());
      const tokens = batch(c, 3);
      assert.ok(near(m32.forward(tokens).loss, m64.forward(tokens).loss, 1e-5), label(c));
      for (let s = 0; s < 5; s += 1) {
        const [l32, l64] = [m32, m64].map((m) => m.trainStep(batch(c, s), { learningRate: 1e-2 }).loss);
        assert.ok(near(l32, l64, 1e-3), `${label(c)} step ${s}: ${l32} vs ${l64}`);
      }
    } finally {
      m64.free();
      m32.free();
    }
  }
});

test('refused trainStep / setWeights / setState change nothing, and step counts only accepted steps', () => {
  for (const c of configs(7, 4)) {
    withModels(1, c, (m) => {
      const tokens = batch(c, 2);
      m.trainStep(tokens, { learningRate: 1e-2 });
      const before = stateBits(m.getState());
      const refusals = [
        () => m.trainStep(tokens, { learningRate: NaN }),
        () => m.trainStep(tokens, { learningRate: 1e-2, betas: [1, 0.9] }),
        () => m.trainStep([[0, c.vocabSize]], { learningRate: 1e-2 }),
        () => m.trainStep(tokens, { learningRate: 1e-2, momentum: 0.9 }),
        () => m.setWeights({ W_E: m.getWeights().W_E.map((row) => row.map(() => NaN)) }),
        () => m.setWeights({ W_U: m.getWeights().W_U, W_E: [[1]] }), // (no W_U when tied: W_E alone is refused)
        () => m.setState({ ...m.getState(), step: -1 }),
        () => { const s = m.getState(); s.v.W_E = s.v.W_E.map(() => -1); m.setState(s); },
        () => { const s = m.getState(); const key = s.weights.W_U ? 'W_U' : 'W_E'; s.weights[key] = s.weights[key].map(() => 7); s.m.W_E = new Float64Array(1); m.setState(s); },
      ];
      for (const [i, f] of refusals.entries()) {
        assert.throws(f, (e) => e instanceof TypeError || e instanceof RangeError, `refusal ${i}`);
        assert.equal(stateBits(m.getState()), before, `${label(c)}: refusal ${i} changed the state`);
        assert.equal(m.step, 1);
      }
    });
  }
});

test('regression: a tokens row or headMask row whose read throws is a TypeError naming it, and the model keeps working (fuzzer: "attempted to take ownership of Rust value while it was borrowed")', () => {
  const c = { vocabSize: 5, contextLength: 4, embedDim: 4, numHeads: 2, numLayers: 1, dtype: 'float64' };
  const throwing = (target, key) => new Proxy(target, { get(t, k) { if (k === key) throw new Error('boom'); return Reflect.get(t, k); } });
  const calls = [
    ['tokens[0][1]', (m) => m.forward([throwing([1, 2, 3], '1')])],
    ['tokens[0]', (m) => m.trainStep([throwing([1, 2, 3], 'length')], { learningRate: 0.1 })],
    ['tokens', (m) => m.gradients(throwing([[1, 2, 3]], '0'))],
    ['options.headMask[0]', (m) => m.forward([[1, 2, 3]], { headMask: [throwing([true, true], 'length')] })],
    ['tokens.shape', (m) => m.forward({ data: Int32Array.of(1, 2, 3), shape: throwing([1, 3], '0') })],
  ];
  for (const [name, call] of calls) {
    const m = new lab.Transformer(c);
    const before = stateBits(m.getState());
    assert.throws(() => call(m), (e) => e instanceof TypeError && e.message.includes(name), `${name}: expected a TypeError naming it`);
    assert.equal(stateBits(m.getState()), before, `${name}: the model no longer answers or changed`);
    assert.doesNotThrow(() => m.free(), `${name}: free() after the refusal`);
  }
});

test('regression: options.headMask with a huge declared length is a RangeError, not a wasm trap (fuzzer: "capacity overflow", then "unreachable")', () => {
  const c = { vocabSize: 5, contextLength: 4, embedDim: 4, numHeads: 2, numLayers: 1, dtype: 'float64' };
  for (const rows of [2 ** 32 - 1, 2 ** 31]) {
    const m = new lab.Transformer(c);
    const headMask = new Array(rows);
    headMask[0] = [true, true];
    assert.throws(() => m.forward([[1, 2, 3]], { headMask }), (e) => e instanceof RangeError && e.message.includes('options.headMask'), `${rows} rows: expected a RangeError naming options.headMask`);
    assert.doesNotThrow(() => m.forward([[1, 2, 3]]), 'the model answers after the refusal');
    m.free();
  }
});
