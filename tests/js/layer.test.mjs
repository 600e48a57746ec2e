// The MultiHeadAttention layer through the Node build, the way an npm user calls it:
// seeded weights reproduced in plain JS, an independent JS forward, finite-difference
// gradients, causality, masks, dropout, the GPT-2 small shapes and bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { assertClose } from './support/numbers.mjs';

const require = createRequire(import.meta.url);
const lab = require('../../target/pkg-node/attention_lab.js');
const { MultiHeadAttention } = lab;

// ---- plain-JS helpers ---------------------------------------------------------

/** SplitMix64 as documented in `layer::init`, with BigInt. */
function splitMix64(seed) {
  const MASK = (1n << 64n) - 1n;
  let state = BigInt(seed) & MASK;
  const nextU64 = () => {
    state = (state + 0x9E3779B97F4A7C15n) & MASK;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK;
    return z ^ (z >> 31n);
  };
  return { nextU64, nextUnit: () => Number(nextU64() >> 11n) * 2 ** -53 };
}

/** A deterministic rows×cols matrix with entries in [-1, 1). */
function randomMatrix(rows, cols, seed) {
  const rng = splitMix64(seed + 1000);
  return Array.from({ length: rows }, () => Array.from({ length: cols }, () => 2 * rng.nextUnit() - 1));
}

const matMul = (a, b) => a.map((row) => b[0].map((_, j) => row.reduce((s, x, k) => s + x * b[k][j], 0)));
const transpose = (m) => m[0].map((_, j) => m.map((row) => row[j]));
const addRow = (m, b) => m.map((row) => row.map((x, j) => x + b[j]));
const sliceCols = (m, s, e) => m.map((row) => row.slice(s, e));
const linear = (x, W, b) => (b ? addRow(matMul(x, W), b) : matMul(x, W));

/** An independent forward in plain JS (x·W + b orientation, no dropout). */
function referenceForward(w, h, q, k, v, mask) {
  const C = w.W_Q.length;
  const d = C / h;
  const [Q, K, V] = [linear(q, w.W_Q, w.b_Q), linear(k, w.W_K, w.b_K), linear(v, w.W_V, w.b_V)];
  const heads = [];
  for (let i = 0; i < h; i++) {
    const scores = matMul(sliceCols(Q, i * d, (i + 1) * d), transpose(sliceCols(K, i * d, (i + 1) * d)));
    const weights = scores.map((row, r) => {
      const allowed = row.map((_, c) => !mask || mask(r, c));
      const scaled = row.map((s) => s * (1 / Math.sqrt(d)));
      if (!allowed.some(Boolean)) return row.map(() => 0);
      const max = Math.max(...scaled.filter((_, c) => allowed[c]));
      const e = scaled.map((s, c) => (allowed[c] ? Math.exp(s - max) : 0));
      const sum = e.reduce((a, b) => a + b, 0);
      return e.map((x) => x / sum);
    });
    heads.push(matMul(weights, sliceCols(V, i * d, (i + 1) * d)));
  }
  const concat = heads[0].map((_, r) => heads.flatMap((hd) => hd[r]));
  return linear(concat, w.W_O, w.b_O);
}

const shapeOf = (x) => (Array.isArray(x) ? [x.length, ...shapeOf(x[0])] : []);
const sumProduct = (a, b) => a.flat(Infinity).reduce((s, x, i) => s + x * b.flat(Infinity)[i], 0);
const clone = (x) => structuredClone(x);

/** Random biases so a bias mistake cannot hide behind the zero initial biases. */
function withRandomBiases(layer, seed) {
  const C = layer.embedDim;
  layer.setWeights({ b_Q: randomMatrix(1, C, seed)[0], b_K: randomMatrix(1, C, seed + 1)[0], b_V: randomMatrix(1, C, seed + 2)[0], b_O: randomMatrix(1, C, seed + 3)[0] });
  return layer;
}

// ---- construction and weights --------------------------------------------------

test('GPT-2 small: {2, 16, 768} with 12 heads, headDim 64, parameter counts', () => {
  const layer = new MultiHeadAttention({ embedDim: 768, numHeads: 12 });
  assert.equal(layer.headDim, 64);
  assert.equal(layer.numParameters, 2_362_368);
  assert.equal(new MultiHeadAttention({ embedDim: 768, numHeads: 12, bias: false }).numParameters, 2_359_296);
  const x = Array.from({ length: 2 }, (_, b) => randomMatrix(16, 768, b));
  const { output } = layer.forward(x, undefined, undefined, { causal: true });
  assert.deepEqual(shapeOf(output), [2, 16, 768]);
  assert.ok(output.flat(2).every(Number.isFinite));
});

test('the seeded weights are reproduced bit for bit by the documented algorithm in plain JS', () => {
  for (const seed of [0, 7, 2 ** 53 - 1]) {
    const C = 6;
    const weights = new MultiHeadAttention({ embedDim: C, numHeads: 2, seed }).getWeights();
    const rng = splitMix64(seed);
    const limit = Math.sqrt(3 / C);
    for (const name of ['W_Q', 'W_K', 'W_V', 'W_O']) {
      const expected = Array.from({ length: C }, () => Array.from({ length: C }, () => limit * (2 * rng.nextUnit() - 1)));
      assert.deepEqual(weights[name], expected, `${name}, seed ${seed}`);
    }
    for (const name of ['b_Q', 'b_K', 'b_V', 'b_O']) assert.deepEqual(weights[name], Array(C).fill(0));
  }
  // a bigint seed beyond 2^53 works too, and differs from its neighbour
  const big = new MultiHeadAttention({ embedDim: 4, numHeads: 1, seed: 2n ** 64n - 1n }).getWeights();
  const rng = splitMix64(2n ** 64n - 1n);
  assert.equal(big.W_Q[0][0], Math.sqrt(3 / 4) * (2 * rng.nextUnit() - 1));
  assert.notDeepEqual(big, new MultiHeadAttention({ embedDim: 4, numHeads: 1, seed: 2n ** 64n - 2n }).getWeights());
});

test('setWeights/getWeights round-trip; a layer without bias has no b_* keys', () => {
  const layer = new MultiHeadAttention({ embedDim: 4, numHeads: 2, bias: false });
  const W = randomMatrix(4, 4, 3);
  layer.setWeights({ W_K: W });
  const got = layer.getWeights();
  assert.deepEqual(got.W_K, W);
  assert.deepEqual(Object.keys(got), ['W_Q', 'W_K', 'W_V', 'W_O']);
  got.W_K[0][0] = 99; // a copy: changing it changes nothing
  assert.deepEqual(layer.getWeights().W_K, W);
});

// ---- forward -------------------------------------------------------------------

test('forward equals an independent plain-JS implementation: self, cross, masked, batched', () => {
  const layer = withRandomBiases(new MultiHeadAttention({ embedDim: 6, numHeads: 3, seed: 5 }), 50);
  const w = layer.getWeights();
  const q = randomMatrix(3, 6, 1);
  const kv = randomMatrix(5, 6, 2);
  const v = randomMatrix(5, 6, 3);
  assertClose(layer.forward(q).output, referenceForward(w, 3, q, q, q), 1e-14, 'self');
  assertClose(layer.forward(q, kv, v).output, referenceForward(w, 3, q, kv, v), 1e-14, 'cross');
  assertClose(layer.forward(q, kv).output, referenceForward(w, 3, q, kv, kv), 1e-14, 'value defaults to key');
  assertClose(layer.forward(q, q, q, { causal: true }).output, referenceForward(w, 3, q, q, q, (i, j) => j <= i), 1e-14, 'causal');
  const mask = [[true, false, true, false, true], [false, false, false, false, false], [true, true, true, true, false]];
  const masked = layer.forward(q, kv, v, { mask }).output;
  assertClose(masked, referenceForward(w, 3, q, kv, v, (i, j) => mask[i][j]), 1e-14, 'mask');
  assert.deepEqual(masked[1], w.b_O, 'a row that may attend to nothing is the zero context, projected: exactly b_O');
  const batch = [q, randomMatrix(3, 6, 4)];
  const out = layer.forward(batch, [kv, randomMatrix(5, 6, 5)], [v, randomMatrix(5, 6, 6)]).output;
  assert.deepEqual(shapeOf(out), [2, 3, 6]);
  assertClose(out[0], referenceForward(w, 3, q, kv, v), 1e-14, 'batch item 0');
});

test('needWeights: [h, T_q, T_k] per head or [T_q, T_k] averaged, batched with a leading B', () => {
  const layer = new MultiHeadAttention({ embedDim: 4, numHeads: 2 });
  const q = randomMatrix(2, 4, 1);
  const kv = randomMatrix(3, 4, 2);
  assert.equal(layer.forward(q, kv).weights, undefined);
  const { weights } = layer.forward(q, kv, kv, { needWeights: true });
  assert.deepEqual(shapeOf(weights), [2, 2, 3]);
  weights.flat().forEach((row) => assert.ok(Math.abs(row.reduce((a, b) => a + b) - 1) < 1e-15));
  const averaged = layer.forward(q, kv, kv, { needWeights: true, averageWeights: true }).weights;
  assert.deepEqual(shapeOf(averaged), [2, 3]);
  assertClose(averaged, weights[0].map((row, i) => row.map((x, j) => (x + weights[1][i][j]) / 2)), 1e-16, 'mean');
  const batched = layer.forward([q, q], [kv, kv], undefined, { needWeights: true });
  assert.deepEqual(shapeOf(batched.weights), [2, 2, 2, 3]);
  assert.deepEqual(shapeOf(layer.forward([q], [kv], undefined, { needWeights: true, averageWeights: true }).weights), [1, 2, 3]);
});

test('identity projections and zero biases equal multiHeadAttention bit for bit', () => {
  for (const [C, h] of [[4, 1], [4, 2], [6, 3]]) {
    const eye = Array.from({ length: C }, (_, i) => Array.from({ length: C }, (_, j) => (i === j ? 1 : 0)));
    const layer = new MultiHeadAttention({ embedDim: C, numHeads: h });
    layer.setWeights({ W_Q: eye, W_K: eye, W_V: eye, W_O: eye });
    const x = randomMatrix(5, C, C + h);
    x[0][1] = 5e-324;
    assert.deepEqual(layer.forward(x).output, lab.multiHeadAttention(x, x, x, { numberOfHeads: h, headDimensions: C / h }));
  }
});

test('numHeads = 1 equals single-head attention on the projections, bit for bit', () => {
  const layer = withRandomBiases(new MultiHeadAttention({ embedDim: 5, numHeads: 1, seed: 9 }), 90);
  const w = layer.getWeights();
  const x = randomMatrix(4, 5, 91);
  for (const causal of [false, true]) {
    const context = lab.dotProductAttention(linear(x, w.W_Q, w.b_Q), linear(x, w.W_K, w.b_K), linear(x, w.W_V, w.b_V), { causal });
    assert.deepEqual(layer.forward(x, x, x, { causal }).output, linear(context, w.W_O, w.b_O));
  }
});

test('fromFusedQKV and fromPyTorch: the layouts of a small GPT and of PyTorch', () => {
  const C = 4;
  const W_QKV = randomMatrix(C, 3 * C, 1);
  const b_QKV = randomMatrix(1, 3 * C, 2)[0];
  const W_O = randomMatrix(C, C, 3);
  const b_O = randomMatrix(1, C, 4)[0];
  const fused = MultiHeadAttention.fromFusedQKV({ W_QKV, b_QKV, W_O, b_O, numHeads: 2 });
  const w = fused.getWeights();
  assert.deepEqual(w.W_V, sliceCols(W_QKV, 2 * C, 3 * C));
  assert.deepEqual(w.b_K, b_QKV.slice(C, 2 * C));
  // PyTorch: q = x·Wqᵀ + bq with in_proj_weight = [Wq; Wk; Wv] (3C×C), out = y·W_outᵀ + b_out
  const in_proj_weight = transpose(W_QKV);
  const out_proj_weight = transpose(W_O);
  const x = randomMatrix(3, C, 5);
  const torchLinear = (m, W, b) => m.map((row) => W.map((wRow, o) => row.reduce((s, xi, i) => s + xi * wRow[i], 0) + b[o]));
  const torch = MultiHeadAttention.fromPyTorch({ in_proj_weight, in_proj_bias: b_QKV, 'out_proj.weight': out_proj_weight, 'out_proj.bias': b_O, numHeads: 2 });
  assert.deepEqual(torch.getWeights(), w);
  const wq = in_proj_weight.slice(0, C);
  const Q = torchLinear(x, wq, b_QKV.slice(0, C));
  assertClose(linear(x, torch.getWeights().W_Q, torch.getWeights().b_Q), Q, 1e-15, 'PyTorch q projection');
  const torch2 = MultiHeadAttention.fromPyTorch({ in_proj_weight, in_proj_bias: b_QKV, out_proj_weight, out_proj_bias: b_O, numHeads: 2 });
  assert.deepEqual(torch2.forward(x).output, fused.forward(x).output);
  assert.equal(MultiHeadAttention.fromFusedQKV({ W_QKV, W_O, numHeads: 4 }).numParameters, 4 * C * C);
});

// ---- gradients -------------------------------------------------------------------

const STEP = 1e-5;
const FLOOR = 1e-3; // near zero, the bound becomes |analytic − numeric| ≤ 1e-9 (see the native tests)

/**
 * Central differences of loss = Σ output ⊙ G for every input, weight and bias entry, against
 * backward(G) and grads(). `make()` returns a fresh layer in the same state each time (so a
 * training pass draws the same dropout mask).
 */
function gradientCheck(make, inputs, options) {
  const layer = make();
  const { output } = layer.forward(...inputs, options);
  const G = clone(output).map(function fill(x, i) { return Array.isArray(x) ? x.map(fill) : Math.sin(3 * i + 1); });
  const inputGrads = layer.backward(G);
  const paramGrads = layer.grads();
  const loss = (ins, weights) => {
    const l = make();
    if (weights) l.setWeights(weights);
    return sumProduct(l.forward(...ins, options).output, G);
  };
  let worst = { error: 0, where: '' };
  const see = (analytic, numeric, where) => {
    const error = Math.abs(analytic - numeric) / Math.max(Math.abs(analytic), Math.abs(numeric), FLOOR);
    if (!(error <= worst.error)) worst = { error, where };
  };
  const paths = (shape) => (shape.length === 0 ? [[]] : Array.from({ length: shape[0] }, (_, i) => paths(shape.slice(1)).map((p) => [i, ...p])).flat());
  const at = (x, p) => p.reduce((m, i) => m[i], x);
  const set = (x, p, v) => { at(x, p.slice(0, -1))[p.at(-1)] = v; };
  ['query', 'key', 'value'].forEach((name, which) => {
    for (const p of paths(shapeOf(inputs[which]))) {
      const shifted = (delta) => { const ins = inputs.map(clone); // one clone each: x may be shared by query, key and value
      set(ins[which], p, at(ins[which], p) + delta); return loss(ins); };
      see(at(inputGrads[name], p), (shifted(STEP) - shifted(-STEP)) / (2 * STEP), `${name}${JSON.stringify(p)}`);
    }
  });
  const base = make().getWeights();
  for (const name of Object.keys(base)) {
    for (const p of paths(shapeOf(base[name]))) {
      const shifted = (delta) => { const w = clone(base); set(w[name], p, at(w[name], p) + delta); return loss(inputs, { [name]: w[name] }); };
      see(at(paramGrads[name], p), (shifted(STEP) - shifted(-STEP)) / (2 * STEP), `${name}${JSON.stringify(p)}`);
    }
  }
  assert.ok(worst.error <= 1e-6, `max relative error ${worst.error} at ${worst.where}`);
  return { worst };
}

test('JS-side finite differences: self and cross, causal or not, bias or not, batched', (t) => {
  for (const bias of [true, false]) {
    const make = () => {
      const l = new MultiHeadAttention({ embedDim: 4, numHeads: 2, bias, seed: 3 });
      return bias ? withRandomBiases(l, 40) : l;
    };
    const x = randomMatrix(3, 4, 1);
    for (const causal of [false, true]) {
      const self = gradientCheck(make, [x, x, x], { causal }).worst;
      const cross = gradientCheck(make, [x, randomMatrix(4, 4, 2), randomMatrix(4, 4, 3)], { causal }).worst;
      t.diagnostic(`bias=${bias} causal=${causal}: self ${self.error.toExponential(2)}, cross ${cross.error.toExponential(2)}`);
    }
    const batch = (s, T) => [randomMatrix(T, 4, s), randomMatrix(T, 4, s + 1)];
    const batched = gradientCheck(make, [batch(10, 2), batch(20, 3), batch(30, 3)], { mask: [[true, false, true], [false, false, false]] }).worst;
    t.diagnostic(`bias=${bias} batched, masked: ${batched.error.toExponential(2)}`);
  }
});

test('JS-side finite differences with dropout in training (backward reuses the mask)', (t) => {
  const make = () => withRandomBiases(new MultiHeadAttention({ embedDim: 4, numHeads: 2, dropout: 0.3, seed: 8 }), 60);
  const inputs = [[randomMatrix(3, 4, 1), randomMatrix(3, 4, 2)], [randomMatrix(5, 4, 3), randomMatrix(5, 4, 4)], [randomMatrix(5, 4, 5), randomMatrix(5, 4, 6)]];
  const used = make().forward(...inputs, { training: true, needWeights: true }).weights.flat(3);
  assert.ok(used.some((w) => w === 0), 'the mask must drop something for this test to test dropout');
  t.diagnostic(`dropout: ${gradientCheck(make, inputs, { training: true }).worst.error.toExponential(2)}`);
});

test('causal: later positions change no earlier output and receive no gradient from it', () => {
  const layer = withRandomBiases(new MultiHeadAttention({ embedDim: 6, numHeads: 3, seed: 14 }), 100);
  const x = randomMatrix(5, 6, 101);
  const before = layer.forward(x, x, x, { causal: true }).output;
  for (let cut = 0; cut < 4; cut++) {
    const changed = x.map((row, r) => (r > cut ? row.map((v) => -3 * v + 7) : row));
    const after = layer.forward(changed, changed, changed, { causal: true }).output;
    assert.deepEqual(after.slice(0, cut + 1), before.slice(0, cut + 1));
    assert.notDeepEqual(after[cut + 1], before[cut + 1]);
    const G = randomMatrix(5, 6, 102).map((row, r) => (r > cut ? row.map(() => 0) : row));
    const grads = layer.backward(G);
    for (const name of ['query', 'key', 'value']) {
      grads[name].slice(cut + 1).forEach((row) => row.forEach((g) => assert.equal(Math.abs(g), 0, `${name} gradient leaked past ${cut}`)));
    }
  }
});

test('a row whose mask allows nothing: zero weights, no NaN, zero gradient', () => {
  const layer = new MultiHeadAttention({ embedDim: 4, numHeads: 2, bias: false });
  const q = randomMatrix(2, 4, 1);
  const kv = randomMatrix(3, 4, 2);
  const { output, weights } = layer.forward(q, kv, kv, { mask: [[false, false, false], [true, true, false]], needWeights: true });
  assert.deepEqual(output[0], [0, 0, 0, 0]);
  weights.forEach((head) => assert.deepEqual(head[0], [0, 0, 0]));
  const grads = layer.backward([[1, 2, 3, 4], [0, 0, 0, 0]]);
  for (const g of [grads.query, grads.key, grads.value]) g.flat().forEach((x) => assert.equal(x, 0));
  Object.values(layer.grads()).flat(2).forEach((x) => assert.equal(x, 0));
});

test('dropout applies only when training, scales kept weights by 1/(1−p), and is seeded', () => {
  const config = { embedDim: 8, numHeads: 2, dropout: 0.25, seed: 21 };
  const q = randomMatrix(16, 8, 1);
  const a = new MultiHeadAttention(config);
  const evalRun = a.forward(q, q, q, { needWeights: true });
  assert.deepEqual(new MultiHeadAttention({ ...config, dropout: 0 }).forward(q, q, q, { needWeights: true }), evalRun);
  const trained = a.forward(q, q, q, { needWeights: true, training: true });
  const kept = trained.weights.flat(2);
  const full = evalRun.weights.flat(2);
  const dropped = kept.filter((x) => x === 0).length;
  kept.forEach((x, i) => assert.ok(x === 0 || x === full[i] * (1 / 0.75)));
  assert.ok(Math.abs(dropped / kept.length - 0.25) < 0.06, `dropped ${dropped} of ${kept.length}`);
  const b = new MultiHeadAttention(config);
  assert.deepEqual(b.forward(q, q, q, { needWeights: true, training: true }), trained);
  assert.notDeepEqual(b.forward(q, q, q, { needWeights: true, training: true }), trained);
});

// ---- bad input ------------------------------------------------------------------------

test('bad construction: RangeError/TypeError naming the argument', () => {
  assert.throws(() => new MultiHeadAttention({ embedDim: 10, numHeads: 3 }),
    { name: 'RangeError', message: 'config.embedDim = 10 is not divisible by numHeads = 3: each head takes C / numHeads columns' });
  assert.throws(() => new MultiHeadAttention(), { name: 'TypeError', message: /^config is missing/ });
  assert.throws(() => new MultiHeadAttention({ embedDim: 4 }), { name: 'TypeError', message: 'config.numHeads is missing; expected a positive integer' });
  assert.throws(() => new MultiHeadAttention({ embedDim: 4, numHeads: 0 }), { name: 'RangeError', message: 'config.numHeads is 0; expected a positive integer' });
  assert.throws(() => new MultiHeadAttention({ embedDim: 4, numHeads: 2, numheads: 2 }), { name: 'TypeError', message: /^config\.numheads is not an option \(did you mean numHeads\?\)/ });
  assert.throws(() => new MultiHeadAttention({ embedDim: 4, numHeads: 2, dropout: 1 }), { name: 'RangeError', message: 'config.dropout is 1; expected a probability with 0 ≤ dropout < 1' });
  assert.throws(() => new MultiHeadAttention({ embedDim: 4, numHeads: 2, seed: -1 }), { name: 'RangeError', message: /^config\.seed is -1; expected an integer/ });
  assert.throws(() => new MultiHeadAttention({ embedDim: 4, numHeads: 2, seed: '1' }), { name: 'TypeError', message: /^config\.seed is a string/ });
  assert.throws(() => new MultiHeadAttention({ embedDim: 4, numHeads: 2, bias: 1 }), { name: 'TypeError', message: 'config.bias is the number 1; expected true or false' });
  assert.throws(() => MultiHeadAttention.fromFusedQKV({ W_QKV: randomMatrix(4, 11, 1), W_O: randomMatrix(4, 4, 2), numHeads: 2 }),
    { name: 'RangeError', message: 'W_QKV is 4×11 but must be C×3C = 4×12 (Q, K and V weights side by side)' });
  assert.throws(() => MultiHeadAttention.fromPyTorch({ in_proj_weight: randomMatrix(12, 4, 1), out_proj_weight: randomMatrix(4, 4, 2), 'out_proj.weight': randomMatrix(4, 4, 2), numHeads: 2 }),
    { name: 'TypeError', message: /^state has both out_proj_weight and "out_proj.weight"/ });
});

test('bad forward/backward/setWeights input is a precise error and the layer keeps working', () => {
  const layer = new MultiHeadAttention({ embedDim: 4, numHeads: 2, seed: 1 });
  const x = randomMatrix(3, 4, 1);
  const G = randomMatrix(3, 4, 2);
  assert.throws(() => layer.backward(G), { name: 'Error', message: /^backward needs the forward pass it differentiates/ });
  assert.throws(() => layer.grads(), { name: 'Error', message: /^grads\(\) has nothing to return yet/ });
  const good = layer.forward(x).output;
  const goodGrads = layer.backward(G);
  assert.throws(() => layer.forward(randomMatrix(3, 5, 1)), { name: 'RangeError', message: "query is 3×5 but the layer's embedDim is 4: query must be T×4" });
  assert.throws(() => layer.forward(x, randomMatrix(2, 4, 1), x), { name: 'RangeError', message: 'value has T = 3 rows but key has T_k = 2: each key position needs one value' });
  assert.throws(() => layer.forward(x, [x]), { name: 'RangeError', message: /^key is a batch \[B, T, C\] but query is one \[T, C\] matrix/ });
  assert.throws(() => layer.forward([[1, 2, NaN, 4]]), { name: 'RangeError', message: 'query[0][2] is NaN; expected a finite number' });
  assert.throws(() => layer.forward([x, randomMatrix(2, 4, 3)]), { name: 'RangeError', message: 'query[1] is 2×4 but query[0] is 3×4: every item of a batch must have the same T' });
  assert.throws(() => layer.forward(x, x, x, { mask: [[true]] }), { name: 'RangeError', message: /^options\.mask|^mask is 1×1 but the scores are 3×3/ });
  assert.throws(() => layer.forward(x, x, x, { casual: true }), { name: 'TypeError', message: /did you mean causal\?/ });
  assert.throws(() => layer.forward(x, x, x, { averageWeights: true }), { name: 'TypeError', message: /^options\.averageWeights only applies with options\.needWeights/ });
  assert.throws(() => layer.forward('x'), { name: 'TypeError', message: 'query is a string; expected an array of rows (number[][])' });
  // the failed forwards left the last good one in place
  assert.deepEqual(layer.backward(G), goodGrads);
  assert.throws(() => layer.backward(randomMatrix(2, 4, 1)), { name: 'RangeError', message: "gradOutput is 2×4 but the output was 3×4; gradOutput must have the output's shape" });
  assert.throws(() => layer.backward([G]), { name: 'RangeError', message: /^gradOutput is a batch \[B, T, C\] but the last forward returned one \[T, C\] matrix/ });
  assert.throws(() => layer.setWeights({ W_Q: randomMatrix(4, 3, 1) }), { name: 'RangeError', message: /^W_Q is 4×3 but must be C×C = 4×4/ });
  assert.throws(() => layer.setWeights({ b_O: [1, 2] }), { name: 'RangeError', message: 'b_O has 2 entries but must have C = 4' });
  assert.throws(() => layer.setWeights({ w_q: randomMatrix(4, 4, 1) }), { name: 'TypeError', message: /^weights\.w_q is not an option \(did you mean W_Q\?\)/ });
  assert.throws(() => new MultiHeadAttention({ embedDim: 4, numHeads: 2, bias: false }).setWeights({ b_Q: [0, 0, 0, 0] }),
    { name: 'TypeError', message: /^weights\.b_Q: this layer has no biases/ });
  // failed setWeights changed nothing; a successful one discards the forward pass
  assert.deepEqual(layer.forward(x).output, good);
  layer.setWeights({});
  assert.throws(() => layer.backward(G), { name: 'Error' });
  layer.forward(x);
  assert.deepEqual(layer.backward(G), goodGrads);
});

test('trace: projections and biases recorded, replayed in plain JS to forward’s output bit for bit', () => {
  for (const bias of [true, false]) {
    const layer = new MultiHeadAttention({ embedDim: 4, numHeads: 2, bias, seed: 12 });
    if (bias) withRandomBiases(layer, 120);
    const q = randomMatrix(2, 4, 1);
    const kv = randomMatrix(3, 4, 2);
    const { output, steps } = layer.trace(q, kv, kv, { causal: true });
    assert.deepEqual(output, layer.forward(q, kv, kv, { causal: true }).output);
    const w = layer.getWeights();
    const env = new Map([['query', q], ['key', kv], ['value', kv], ...Object.entries(w).map(([k, v]) => [k, Array.isArray(v[0]) ? v : [v]])]);
    const ops = {
      Slice: (s, [m]) => sliceCols(m, s.columns[0], s.columns[1]),
      Transpose: (s, [m]) => transpose(m),
      MatMul: (s, [a, b]) => matMul(a, b),
      Mul: (s, [m]) => m.map((row) => row.map((x) => x * s.scalar)),
      StableSoftmax: (s, [m]) => m.map((row, i) => {
        const ok = row.map((_, j) => !s.allowed || s.allowed[i][j]);
        if (!ok.some(Boolean)) return row.map(() => 0);
        const max = Math.max(...row.filter((_, j) => ok[j]));
        const e = row.map((x, j) => (ok[j] ? Math.exp(x - max) : 0));
        const sum = e.reduce((a, b) => a + b, 0);
        return e.map((x) => x / sum);
      }),
      Concat: (s, parts) => parts[0].map((_, r) => parts.flatMap((p) => p[r])),
      Add: (s, [m, b]) => addRow(m, b[0]),
    };
    let last;
    for (const step of steps) {
      last = ops[step.op](step, step.inputs.map((n) => env.get(n)));
      assert.deepEqual(last, step.values, `step ${step.name}`);
      env.set(step.name, last);
    }
    assert.deepEqual(last, output);
    assert.deepEqual(steps.slice(0, 2).map((s) => s.name), bias ? ['query·W_Q', 'Q'] : ['Q', 'K']);
    assert.equal(steps.filter((s) => s.op === 'Add').length, bias ? 4 : 0);
  }
  assert.throws(() => new MultiHeadAttention({ embedDim: 4, numHeads: 2 }).trace([randomMatrix(2, 4, 1)]), { name: 'RangeError', message: /^query is a batch/ });
});

// ---- projectedSelfAttention: the layer as a function, challenge 04's reference ---------------

test('projectedSelfAttention equals a bias-free layer with the same weights, bit for bit, and an independent JS forward', () => {
  for (const [h, d, causal] of [[1, 3, false], [2, 2, true], [3, 2, false]]) {
    const C = h * d;
    const layer = new MultiHeadAttention({ embedDim: C, numHeads: h, bias: false, seed: 40 + C });
    const weights = layer.getWeights();
    const X = randomMatrix(4, C, 50 + C);
    const got = lab.projectedSelfAttention(clone(X), { numberOfHeads: h, headDimensions: d, causal, ...clone(weights) });
    assert.deepEqual(got, layer.forward(X, undefined, undefined, { causal }).output);
    assertClose(got, referenceForward(weights, h, X, X, X, causal ? (i, j) => j <= i : null), 1e-12, `h=${h}`);
    const { output } = layer.trace(X, null, null, { causal });
    assert.deepEqual(got, output);
    layer.free();
  }
});

test('projectedSelfAttention on typed arrays: Float64Array is the number[][] bits per item, Float32Array the f32 layer bits', () => {
  const [h, d, T, B] = [3, 2, 5, 2];
  const C = h * d;
  const layer = new MultiHeadAttention({ embedDim: C, numHeads: h, bias: false, seed: 61 });
  const weights = layer.getWeights();
  const items = [0, 1].map((b) => randomMatrix(T, C, 70 + b));
  const f64 = (m) => ({ data: Float64Array.from(m.flat()), shape: [m.length, m[0].length] });
  // Float64Array, batched [B, T, C], with W_Q typed and the rest number[][]
  const options = { numberOfHeads: h, headDimensions: d, causal: true, ...clone(weights), W_Q: f64(weights.W_Q) };
  const got = lab.projectedSelfAttention({ data: Float64Array.from(items.flat(2)), shape: [B, T, C] }, options);
  assert.ok(got.data instanceof Float64Array);
  assert.deepEqual(got.shape, [B, T, C]);
  const want = items.flatMap((X) => lab.projectedSelfAttention(X, { numberOfHeads: h, headDimensions: d, causal: true, ...clone(weights) }).flat());
  assert.ok(want.every((x, i) => Object.is(x, got.data[i])), 'Float64Array differs from number[][]');
  // Float32Array [T, C]: the bias-free layer's f32 forward with the same weights, bit for bit
  const X32 = { data: Float32Array.from(items[0].flat()), shape: [T, C] };
  const got32 = lab.projectedSelfAttention(X32, { numberOfHeads: h, headDimensions: d, causal: true, ...clone(weights) });
  assert.ok(got32.data instanceof Float32Array);
  assert.deepEqual(got32.shape, [T, C]);
  const want32 = layer.forward(X32, null, null, { causal: true }).output.data;
  assert.ok(want32.every((x, i) => Object.is(x, got32.data[i])), 'Float32Array differs from the f32 layer forward');
  const exact = lab.projectedSelfAttention(Array.from({ length: T }, (_, i) => Array.from(X32.data.subarray(i * C, (i + 1) * C))), { numberOfHeads: h, headDimensions: d, causal: true, ...clone(weights) }).flat();
  assertClose([Array.from(got32.data)], [exact], 1e-5, 'Float32Array against f64');
  layer.free();
});

test('projectedSelfAttention: bad input is a precise TypeError/RangeError and the module keeps working', () => {
  const I = [[1, 0], [0, 1]];
  const ok = { numberOfHeads: 2, headDimensions: 1, W_Q: I, W_K: I, W_V: I, W_O: I };
  const cases = [
    [[[1, 2, 3]], ok, 'RangeError', /^X is 1×3 but numberOfHeads · headDimensions = 2 · 1 = 2/],
    [[[1, 2]], { ...ok, W_V: [[1, 0, 0], [0, 1, 0]] }, 'RangeError', /^W_V is 2×3 but must be C×C = 2×2/],
    [[[1, 2]], { ...ok, W_Q: undefined }, 'TypeError', /^options\.W_Q is missing/],
    [[[1, 2]], { ...ok, W_O: 'I' }, 'TypeError', /^options\.W_O is a string; expected an array of rows/],
    [[[1, 2]], { ...ok, W_K: [[1, 0], [0, Infinity]] }, 'RangeError', /^options\.W_K\[1\]\[1\] is Infinity; expected a finite number/],
    [[[1, 2]], { ...ok, headDimensions: 1.5 }, 'RangeError', /^options\.headDimensions is 1\.5; expected a positive integer/],
    [[[1, 2]], { ...ok, bias: true }, 'TypeError', /^options\.bias is not an option/],
    [[[1, 2], [3, 4]], { ...ok, mask: [[true]] }, 'RangeError', /^mask is 1×1/],
    [{ data: new Float64Array(2), shape: [1, 2] }, { ...ok, W_Q: { data: new Float32Array(4), shape: [2, 2] } }, 'TypeError',
      /^options\.W_Q\.data is a Float32Array but X\.data is a Float64Array; pass W_Q in X's precision \(or as number\[\]\[\]\)$/],
    [{ data: new Float64Array(2), shape: [1, 2] }, { ...ok, W_K: undefined }, 'TypeError',
      /^options\.W_K is missing; expected a C×C number\[\]\[\] or \{ data: Float64Array, shape: \[C, C\] \} oriented \[in, out\]$/],
    [{ data: new Float32Array(2), shape: [1, 2] }, { ...ok, W_O: [[1, 0], [0, 1e39]] }, 'RangeError', /^options\.W_O\[1\]\[1\] is 1e\+39, beyond the range of Float32Array/],
    [{ data: new Float32Array(3), shape: [1, 3] }, ok, 'RangeError', /^X is 1×3 but numberOfHeads · headDimensions = 2 · 1 = 2/],
    [{ data: [1, 2], shape: [1, 2] }, ok, 'TypeError', /^X\.data is an array; expected a Float32Array or Float64Array$/],
  ];
  for (const [X, options, name, message] of cases) {
    assert.throws(() => lab.projectedSelfAttention(X, options), { name, message }, String(message));
  }
  assert.deepEqual(lab.projectedSelfAttention([[1, 2], [3, 4]], ok), lab.multiHeadAttention([[1, 2], [3, 4]], [[1, 2], [3, 4]], [[1, 2], [3, 4]], 2, 1));
});
