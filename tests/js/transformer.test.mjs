// Issue 21 against the Node build: the Transformer trains the default lab model to induction from a
// fixed seed (behaviour, not time), the API's shapes and state, and bad input. The independent oracle
// of its gradients is tests/oracle/transformer.mjs; the plain trainer in tests/bench agrees too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab from './support/lab.mjs';

const { Transformer, repeatedTokens } = lab;
const MODEL = { vocabSize: 32, contextLength: 64, embedDim: 64, numHeads: 4, numLayers: 2, seed: 1 };
const TASK = { vocabSize: 32, length: 24, batch: 32 };

/** Mean loss on the repeated tokens and on the others, from trainStep's or forward's `losses`. */
function splitLoss(losses, repeated) {
  const T = repeated[0].length;
  const sums = { rep: [0, 0], other: [0, 0] };
  repeated.forEach((row, b) => {
    for (let t = 0; t < T - 1; t++) {
      const s = row[t + 1] ? sums.rep : sums.other;
      s[0] += losses.data[b * (T - 1) + t];
      s[1] += 1;
    }
  });
  return { repeated: sums.rep[0] / sums.rep[1], other: sums.other[0] / sums.other[1] };
}

test('the default model forms an induction head from seed 1: a layer-2 head scores > 0.4 and the repeated tokens\' loss falls below ¼ of the others\'', () => {
  const model = new Transformer(MODEL);
  const probe = repeatedTokens({ ...TASK, batch: 16, seed: 424242 });
  const before = model.headScores(probe.tokens);
  assert.ok(Math.max(...before[1].map((s) => s.induction)) < 0.2, 'no induction head at initialisation');
  let reached = null;
  for (let step = 1; step <= 400 && !reached; step++) {
    const { tokens, repeated } = repeatedTokens({ ...TASK, seed: 7 + step });
    const { losses } = model.trainStep(tokens, { learningRate: 1e-2 });
    if (step % 10) continue;
    const scores = model.headScores(probe.tokens);
    const induction = Math.max(...scores[1].map((s) => s.induction));
    const { repeated: rep, other } = splitLoss(losses, repeated);
    if (induction > 0.4 && rep < 0.25 * other) reached = { step, scores };
  }
  assert.ok(reached, 'induction within 400 steps');
  assert.equal(model.step, reached.step);
  // the mechanism: layer 1 has learned to attend to the previous token (what the induction head reads)
  const previous = (scores) => Math.max(...scores[0].map((s) => s.previousToken));
  assert.ok(previous(reached.scores) > 2 * previous(before), `${previous(reached.scores)} vs ${previous(before)} at initialisation`);
  // on held-out sequences, the repeated half is predicted far better than the first half
  const held = repeatedTokens({ ...TASK, seed: 99 });
  const { repeated: rep, other } = splitLoss(model.forward(held.tokens).losses, held.repeated);
  assert.ok(rep < 0.25 * other, `held-out: repeated ${rep}, other ${other}`);
  // switching the induction head off hurts the repeated tokens more than the others; switching all of
  // layer 2 off leaves no induction mechanism: the repeated tokens are no longer much easier
  const induction = reached.scores[1].map((s) => s.induction);
  const best = induction.indexOf(Math.max(...induction));
  const oneOff = splitLoss(model.forward(held.tokens, { headMask: [[true, true, true, true], [0, 1, 2, 3].map((i) => i !== best)] }).losses, held.repeated);
  assert.ok(oneOff.repeated - rep > oneOff.other - other, `ablating layer-2 head ${best}: repeated ${rep} → ${oneOff.repeated}, other ${other} → ${oneOff.other}`);
  const layerOff = splitLoss(model.forward(held.tokens, { headMask: [[true, true, true, true], [false, false, false, false]] }).losses, held.repeated);
  assert.ok(layerOff.repeated > 0.5 * layerOff.other, `layer 2 off: repeated ${layerOff.repeated}, other ${layerOff.other}`);
});

test('shapes: forward, weights, headScores, getWeights and the config', () => {
  const model = new Transformer({ vocabSize: 7, contextLength: 9, embedDim: 8, numHeads: 2, numLayers: 3, seed: 5, mlp: true, layerNorm: true, bias: true });
  const tokens = [[0, 1, 2, 3, 4], [6, 5, 4, 3, 2]];
  const out = model.forward(tokens, { needWeights: true });
  assert.deepEqual(out.logits.shape, [2, 5, 7]);
  assert.ok(out.logits.data instanceof Float32Array);
  assert.deepEqual(out.losses.shape, [2, 4]);
  assert.equal(out.weights.length, 3);
  assert.deepEqual(out.weights[0].shape, [2, 2, 5, 5]);
  // causal rows that sum to 1
  const w = out.weights[2].data;
  for (let r = 0; r < 2 * 2 * 5; r++) {
    const t = r % 5;
    const row = w.subarray(r * 5, r * 5 + 5);
    assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-6);
    for (let s = t + 1; s < 5; s++) assert.equal(row[s], 0);
  }
  assert.ok(Math.abs(out.loss - Array.from(out.losses.data).reduce((a, b) => a + b, 0) / 8) < 1e-12);
  const scores = model.headScores(tokens);
  assert.equal(scores.length, 3);
  assert.deepEqual(Object.keys(scores[0][0]).sort(), ['firstToken', 'induction', 'previousToken', 'self']);
  const weights = model.getWeights();
  assert.deepEqual(Object.keys(weights).sort(), ['W_E', 'W_U', 'W_pos', 'layers', 'ln_final_b', 'ln_final_w']);
  assert.deepEqual(Object.keys(weights.layers[0]).sort(), ['W_K', 'W_O', 'W_Q', 'W_V', 'W_in', 'W_out', 'b_K', 'b_O', 'b_Q', 'b_V', 'b_in', 'b_out', 'ln1_b', 'ln1_w', 'ln2_b', 'ln2_w']);
  assert.equal(weights.layers[0].W_in.length, 8);
  assert.equal(weights.layers[0].W_in[0].length, 32);
  assert.equal(model.config.positions, 'shortformer');
  assert.equal(model.config.dtype, 'float32');
  const count = (x) => (Array.isArray(x) ? x.reduce((n, y) => n + count(y), 0) : typeof x === 'number' ? 1 : Object.values(x).reduce((n, y) => n + count(y), 0));
  assert.equal(count(weights), model.numParameters);
  // int typed tokens give the same answer as number[][]
  const typed = model.forward({ data: Int32Array.from(tokens.flat()), shape: [2, 5] });
  assert.deepEqual(typed.logits.data, out.logits.data);
});

test('getState → setState restores weights, moments and step: training continues bit for bit', () => {
  const config = { vocabSize: 11, contextLength: 16, embedDim: 8, numHeads: 2, numLayers: 2, seed: 3 };
  const batches = [1, 2, 3, 4].map((seed) => repeatedTokens({ vocabSize: 11, length: 6, batch: 4, seed }).tokens);
  const a = new Transformer(config);
  a.trainStep(batches[0], { learningRate: 1e-2 });
  const state = a.getState();
  assert.equal(state.step, 1);
  const continued = [a.trainStep(batches[1], { learningRate: 1e-2 }).loss, a.trainStep(batches[2], { learningRate: 1e-2 }).loss];
  const b = new Transformer({ ...config, seed: 99 });
  b.setState(state);
  assert.equal(b.step, 1);
  const replayed = [b.trainStep(batches[1], { learningRate: 1e-2 }).loss, b.trainStep(batches[2], { learningRate: 1e-2 }).loss];
  assert.deepEqual(replayed, continued);
  assert.deepEqual(b.getState().weights.layers[1].W_O, a.getState().weights.layers[1].W_O);
  // a state is one structured-clonable object
  const cloned = structuredClone(state);
  b.setState(cloned);
  assert.equal(b.step, 1);
});

test('a refused call is a TypeError or RangeError naming the argument, and changes nothing', () => {
  const model = new Transformer({ vocabSize: 5, contextLength: 6, embedDim: 4, numHeads: 2, numLayers: 1, seed: 2 });
  const good = [[0, 1, 2, 3]];
  model.trainStep(good, { learningRate: 0.01 });
  const state = model.getState();
  const refused = [
    [() => model.trainStep([[0, 5, 1]], { learningRate: 0.01 }), RangeError, /tokens\[0\]\[1\] is 5; expected an integer in 0 … vocabSize − 1 = 4/],
    [() => model.trainStep([[0, 1.5]], { learningRate: 0.01 }), RangeError, /tokens\[0\]\[1\] is 1.5/],
    [() => model.trainStep([[0, '1']], { learningRate: 0.01 }), TypeError, /tokens\[0\]\[1\] is a string/],
    [() => model.trainStep([[0, 1, 2, 3, 4, 0, 1]], { learningRate: 0.01 }), RangeError, /T = 7 per sequence; expected 2 ≤ T ≤ contextLength = 6/],
    [() => model.trainStep([[0, 1], [0]], { learningRate: 0.01 }), RangeError, /tokens\[1\] has 1 tokens but tokens\[0\] has 2/],
    [() => model.trainStep(good, { learningRate: NaN }), RangeError, /options.learningRate is NaN/],
    [() => model.trainStep(good, { learningRate: -1 }), RangeError, /options.learningRate is -1/],
    [() => model.trainStep(good, { learningRate: 0.01, betas: [0.9, 1] }), RangeError, /options.betas\[1\] is 1/],
    [() => model.trainStep(good, { learningRate: 0.01, lr: 1 }), TypeError, /lr/],
    [() => model.trainStep(good), TypeError, /options is missing/],
    [() => model.trainStep(good, { learningRate: 1e300 }), RangeError, /overflows/],
    [() => model.setWeights({ W_E: [[1, 2]] }), RangeError, /weights.W_E is 1×2 but must be 5×4/],
    [() => model.setWeights({ layers: [{ W_Q: [[1, 2, 3, NaN], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]] }] }), RangeError, /weights.layers\[0\].W_Q/],
    [() => model.setWeights({ W_X: [[1]] }), TypeError, /W_X/],
    [() => model.setState({ ...state, dtype: 'float64' }), TypeError, /state.dtype/],
    [() => model.forward(good, { headMask: [[true]] }), RangeError, /options.headMask\[0\] has 1 entries; expected numHeads = 2/],
    [() => new Transformer({ ...model.config, embedDim: 5 }), RangeError, /embedDim = 5 is not a positive multiple of config.numHeads = 2/],
    [() => new Transformer({ ...model.config, positions: 'sinusoidal' }), TypeError, /config.positions/],
    [() => new Transformer({ ...model.config, dtype: 'float16' }), TypeError, /config.dtype/],
    [() => repeatedTokens({ vocabSize: 8, length: 8, batch: 1 }), RangeError, /length is 8; expected an integer with 1 ≤ length ≤ vocabSize − 1 = 7/],
  ];
  for (const [call, kind, message] of refused) {
    assert.throws(call, (e) => e instanceof kind && message.test(e.message), String(call));
    const after = model.getState();
    assert.equal(after.step, state.step, String(call));
    assert.deepEqual(after, state, String(call));
  }
  assert.equal(model.trainStep(good, { learningRate: 0.01 }).losses.shape[1], 3);
});

test('float64 and float32 agree to rounding; the model is seeded', () => {
  const config = { vocabSize: 9, contextLength: 8, embedDim: 8, numHeads: 2, numLayers: 2, seed: 4, mlp: true, layerNorm: true };
  const m32 = new Transformer(config);
  const m64 = new Transformer({ ...config, dtype: 'float64' });
  const { tokens } = repeatedTokens({ vocabSize: 9, length: 3, batch: 3, seed: 1 });
  const [l32, l64] = [m32.forward(tokens).loss, m64.forward(tokens).loss];
  assert.ok(Math.abs(l32 - l64) < 1e-5 * l64, `${l32} vs ${l64}`);
  assert.ok(m64.forward(tokens).logits.data instanceof Float64Array);
  const again = new Transformer(config);
  assert.deepEqual(again.getWeights(), m32.getWeights());
});

test('repeatedTokens: the period repeats, its tokens are distinct, BOS first', () => {
  const { tokens, repeated, periods } = repeatedTokens({ vocabSize: 32, length: 24, batch: 20, seed: 7 });
  assert.equal(tokens.length, 20);
  tokens.forEach((seq, b) => {
    const p = periods[b];
    assert.equal(seq.length, 49);
    assert.equal(seq[0], 0);
    assert.ok(p >= 12 && p <= 24);
    assert.equal(new Set(seq.slice(1, p + 1)).size, p);
    seq.forEach((tok, t) => assert.equal(repeated[b][t], t > p && seq[t - p] === tok));
  });
  assert.deepEqual(repeatedTokens({ vocabSize: 32, length: 24, batch: 20, seed: 7 }).tokens, tokens);
});

test('a freed model, layer or cache (or a second free()) is an Error that says so, not wasm-bindgen\'s message', () => {
  const model = new Transformer({ vocabSize: 5, contextLength: 4, embedDim: 4, numHeads: 2, numLayers: 1 });
  model.free();
  const freed = (e) => e instanceof Error && /^this Transformer was freed \(free\(\) or the end of a `using` block\) and cannot be used; create a new one/.test(e.message);
  for (const call of [() => model.step, () => model.free(), () => model.trainStep([[0, 1]], { learningRate: 0.1 }), () => model.getState(), () => model[Symbol.dispose]()]) {
    assert.throws(call, freed, String(call));
  }
  const layer = new lab.MultiHeadAttention({ embedDim: 4, numHeads: 2 });
  const cache = layer.createCache();
  cache.free();
  assert.throws(() => cache.length, /^Error: this KvCache was freed .*layer\.createCache\(\)$/);
  layer.free();
  assert.throws(() => layer.embedDim, /^Error: this MultiHeadAttention was freed/);
  assert.throws(() => new lab.KvCache().length, /^Error: this KvCache was not made by attention-lab; create a new one with layer\.createCache\(\)$/);
  // the module keeps working
  const again = new Transformer({ vocabSize: 5, contextLength: 4, embedDim: 4, numHeads: 2, numLayers: 1 });
  assert.ok(again.forward([[0, 1, 2]]).loss > 0);
  again.free();
});

