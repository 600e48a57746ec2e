// The package's Transformer and repeatedTokens (issue 21) against tests/oracle/transformer.mjs, an
// independent plain-JS f64 model with a hand-derived backward: with dtype 'float64' the loss, the
// losses, the logits and every gradient agree to 1e-12 (relative to the tensor's largest entry) for
// every combination of positions × mlp × layerNorm × bias, 0/1/2 layers and several (h, C); central
// differences agree with the gradients; one AdamW step agrees with PyTorch's formula; the f32 model
// is within f32's tolerance; repeatedTokens is bit for bit the documented SplitMix64 algorithm; and
// headScores are the documented means of forward's attention weights.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab from './support/lab.mjs';
import { seeded } from './support/mulberry32.mjs';
import * as O from '../oracle/transformer.mjs';

/** f64: the package's f64 path against the oracle (both near-exact; measured worst about 2e-14). */
const F64_TOL = 1e-12;
/**
 * f32: the f32 model (f32 storage, f32 SIMD products; unit roundoff 2^-24 ≈ 6e-8) against the f64
 * oracle run on the same (f32) weights. A gradient passes through up to ~ten f32 products and
 * softmaxes, each relative error a few hundred ulps at most on these tiny models: 1e-4 of the
 * tensor's scale for logits and gradients, 1e-5 relative for the loss (a mean of f64-accumulated terms).
 */
const F32_TOL = { loss: 1e-5, tensor: 1e-4 };
/** Central differences (h = 1e-5 in f64): truncation h²·f‴/6 plus rounding ε·L/h, both well under this. */
const FD_TOL = 1e-7;

/** The one comparison of the suite: scaledError (max |a − e| over max |e|) within `tol`. */
function assertClose(actual, expected, tol, what) {
  const err = O.scaledError(actual, expected);
  assert.ok(err <= tol, `${what}: scaled error ${err} > ${tol}`);
  return err;
}

const POSITIONS = ['shortformer', 'learned', 'rope', 'none'];
const SHAPES = [[1, 4], [2, 4], [2, 8], [3, 6], [4, 8]];
const TOKENS = [[0, 3, 1, 6, 3, 2], [5, 5, 1, 0, 2, 4], [1, 2, 3, 1, 2, 3]];

const ARCHITECTURES = [
  { layerNorm: true, norm: 'rms', normEps: 1e-6, mlp: 'silu_gated', mlpWidth: 5, mlpBias: false, tiedEmbeddings: true },
  { layerNorm: true, norm: 'rms', mlp: 'silu_gated', numKVHeads: 2 },
  { layerNorm: true, norm: 'layer', normEps: 0.01, mlp: 'gelu_new', mlpWidth: 3, mlpBias: false, bias: true },
  { layerNorm: false, mlp: true, mlpWidth: 6, tiedEmbeddings: true, bias: true },
  { layerNorm: true, norm: 'rms', numKVHeads: 1, bias: true },
  { layerNorm: true, mlp: 'silu_gated', mlpBias: true, numKVHeads: 2, tiedEmbeddings: true, bias: true },
];

/**
 * Every config the sweep covers: positions × mlp × layerNorm × bias × numLayers 0/1/2, (h, C) cycling; then
 * positions × ARCHITECTURES × numLayers 1/2.
 */
function configs(dtype) {
  const out = [];
  let i = 0;
  for (const positions of POSITIONS) for (const mlp of [false, true]) for (const layerNorm of [false, true]) for (const bias of [false, true]) for (const numLayers of [0, 1, 2]) {
    const [numHeads, embedDim] = SHAPES[i % SHAPES.length];
    out.push({ vocabSize: 7, contextLength: 6, embedDim, numHeads, numLayers, positions, mlp, layerNorm, bias, seed: 11 + i, dtype });
    i += 1;
  }
  // the architecture options of a loaded checkpoint (issue 30): RMSNorm and ε, the SiLU-gated MLP, its width
  // and biases, grouped K/V heads, RoPE's base, tied W_U, in combinations a GPT-2 or a Llama has and others
  for (const positions of POSITIONS) for (const arch of ARCHITECTURES) for (const numLayers of [1, 2]) {
    const [numHeads, embedDim] = arch.numKVHeads ? [4, 8] : SHAPES[i % SHAPES.length];
    out.push({
      vocabSize: 7, contextLength: 6, embedDim, numHeads, numLayers, positions, bias: false, ...arch, seed: 11 + i, dtype,
      ...(positions === 'rope' ? { ropeBase: 500 } : {}),
    });
    i += 1;
  }
  return out;
}

/** Seeded values (f32-representable, in ±scale) for every parameter of `m`, so biases and LN gains are not 0 and 1. */
function randomize(m, seed, scale = 0.7) {
  let s = seed;
  const fill = (v) => (Array.isArray(v[0]) ? v.map((row) => Array.from(seeded(row.length, s++, { scale }))) : Array.from(seeded(v.length, s++, { scale })));
  const w = m.getWeights();
  const update = { layers: w.layers.map((L) => Object.fromEntries(Object.entries(L).map(([k, v]) => [k, fill(v)]))) };
  for (const [k, v] of Object.entries(w)) if (k !== 'layers') update[k] = fill(v);
  m.setWeights(update);
  return m.getWeights();
}

const ARCH_KEYS = ['norm', 'normEps', 'mlpWidth', 'mlpBias', 'numKVHeads', 'ropeBase', 'tiedEmbeddings'];
const label = (c) => `${c.positions} mlp=${c.mlp} ln=${c.layerNorm} bias=${c.bias} L=${c.numLayers} h=${c.numHeads} C=${c.embedDim}${ARCH_KEYS.filter((k) => k in c).map((k) => ` ${k}=${c[k]}`).join('')}`;

/**
 * Without RoPE, b_K's gradient is exactly 0 in exact arithmetic (b_K shifts a query's every score by
 * the same q·b_K/√d, and softmax ignores a shift): both sides are rounding noise, so it is held to
 * `tol` of W_K's gradient's scale instead of its own.
 */
function compareGradients(actual, expected, config, tol) {
  const exp = Object.fromEntries(O.leaves(expected));
  const got = O.leaves(actual);
  assert.deepEqual(got.map(([k]) => k).sort(), Object.keys(exp).sort(), 'the gradient keys are the weights\' keys');
  let worst = 0;
  for (const [k, v] of got) {
    if (k.endsWith('.b_K') && config.positions !== 'rope') {
      const scale = Math.max(...exp[k.replace('b_K', 'W_K')].map(Math.abs));
      for (const x of [...v, ...exp[k]]) assert.ok(Math.abs(x) <= tol * scale, `${label(config)} ${k}: ${x} is not 0 to ${tol} of W_K's gradient scale ${scale}`);
      continue;
    }
    worst = Math.max(worst, assertClose(v, exp[k], tol, `${label(config)} grads.${k}`));
  }
  return worst;
}

const worst = { f64: 0, f32: 0 };

test('float64: loss, losses, logits and every gradient agree with the oracle to 1e-12, for every option combination', () => {
  for (const config of configs('float64')) {
    const m = new lab.Transformer(config);
    try {
      const P = randomize(m, config.seed * 100);
      const ref = O.gradients(config, P, TOKENS);
      const got = m.gradients(TOKENS);
      worst.f64 = Math.max(worst.f64, assertClose([got.loss], [ref.loss], F64_TOL, `${label(config)} loss`));
      worst.f64 = Math.max(worst.f64, compareGradients(got.grads, ref.grads, config, F64_TOL));
      const f = m.forward(TOKENS);
      const rf = O.forward(config, P, TOKENS);
      assert.deepEqual(f.logits.shape, [3, 6, 7]);
      assert.deepEqual(f.losses.shape, [3, 5]);
      worst.f64 = Math.max(worst.f64, assertClose(f.logits.data, rf.logits.flat(2), F64_TOL, `${label(config)} logits`));
      worst.f64 = Math.max(worst.f64, assertClose(f.losses.data, rf.losses.flat(), F64_TOL, `${label(config)} losses`));
      assertClose([f.loss], [rf.loss], F64_TOL, `${label(config)} forward loss`);
    } finally {
      m.free();
    }
  }
  console.log(`worst f64 scaled error over ${configs('float64').length} configs: ${worst.f64}`);
});

test('float32: the f32 model is within f32 tolerance of the f64 oracle on its own weights', () => {
  for (const config of configs('float32')) {
    const m = new lab.Transformer(config);
    try {
      const P = randomize(m, config.seed * 100);
      const ref = O.gradients(config, P, TOKENS);
      const got = m.gradients(TOKENS);
      worst.f32 = Math.max(worst.f32, assertClose([got.loss], [ref.loss], F32_TOL.loss, `${label(config)} f32 loss`));
      worst.f32 = Math.max(worst.f32, compareGradients(got.grads, ref.grads, config, F32_TOL.tensor));
      const f = m.forward(TOKENS);
      assert.ok(f.logits.data instanceof Float32Array);
      worst.f32 = Math.max(worst.f32, assertClose(f.logits.data, O.forward(config, P, TOKENS).logits.flat(2), F32_TOL.tensor, `${label(config)} f32 logits`));
    } finally {
      m.free();
    }
  }
  console.log(`worst f32 scaled error: ${worst.f32}`);
});

test('forward with headMask and needWeights agrees with the oracle (ablated heads, every layer\'s weights)', () => {
  for (const config of configs('float64').filter((c) => c.numLayers === 2 && c.numHeads > 1)) {
    const m = new lab.Transformer(config);
    try {
      const P = randomize(m, config.seed * 7);
      const headMask = [Array.from({ length: config.numHeads }, (_, i) => i !== 0), Array.from({ length: config.numHeads }, (_, i) => i % 2 === 1)];
      const f = m.forward(TOKENS, { needWeights: true, headMask });
      const rf = O.forward(config, P, TOKENS, { headMask });
      assertClose(f.logits.data, rf.logits.flat(2), F64_TOL, `${label(config)} masked logits`);
      assertClose(f.losses.data, rf.losses.flat(), F64_TOL, `${label(config)} masked losses`);
      assert.equal(f.weights.length, 2);
      f.weights.forEach((w, l) => {
        assert.deepEqual(w.shape, [3, config.numHeads, 6, 6]);
        assertClose(w.data, rf.weights[l].flat(3), F64_TOL, `${label(config)} weights[${l}]`);
      });
      // the mask changes the answer (a mask the package ignored would pass the rest only by accident)
      assert.ok(O.scaledError(m.forward(TOKENS).logits.data, rf.logits.flat(2)) > 1e-6, 'headMask had no effect');
    } finally {
      m.free();
    }
  }
});

test('central differences of the f64 loss agree with gradients() on entries of every kind of parameter', () => {
  const picks = configs('float64').filter((c) => c.numLayers === 2 && c.bias && (c.mlp || c.layerNorm));
  for (const config of picks) {
    const m = new lab.Transformer(config);
    try {
      const P = randomize(m, config.seed * 13);
      const { grads } = m.gradients(TOKENS);
      const lossAt = (path, index, value) => {
        const [top, name] = path.startsWith('layers[') ? [Number(path.slice(7, path.indexOf(']'))), path.slice(path.indexOf('.') + 1)] : [null, path];
        const tensor = structuredClone(top === null ? P[name] : P.layers[top][name]);
        if (Array.isArray(tensor[0])) tensor[Math.floor(index / tensor[0].length)][index % tensor[0].length] = value;
        else tensor[index] = value;
        m.setWeights(top === null ? { [name]: tensor } : { layers: P.layers.map((_, l) => (l === top ? { [name]: tensor } : {})) });
        const loss = m.forward(TOKENS).loss;
        m.setWeights(top === null ? { [name]: P[name] } : { layers: P.layers.map((_, l) => (l === top ? { [name]: P.layers[l][name] } : {})) });
        return loss;
      };
      for (const [path, g] of O.leaves(grads)) {
        const flatP = O.leaves(P).find(([k]) => k === path)[1];
        const scale = Math.max(...g.map(Math.abs));
        for (const index of [0, Math.floor(g.length / 2), g.length - 1]) {
          const h = 1e-5;
          const fd = (lossAt(path, index, flatP[index] + h) - lossAt(path, index, flatP[index] - h)) / (2 * h);
          assert.ok(Math.abs(fd - g[index]) <= FD_TOL * Math.max(1, scale), `${label(config)} ${path}[${index}]: gradient ${g[index]}, central difference ${fd}`);
        }
      }
      assert.deepEqual(m.getWeights(), P, 'the probe restored every weight');
    } finally {
      m.free();
    }
  }
});

test('trainStep is one AdamW step of PyTorch\'s formula from the weights, moments and gradients before it', () => {
  const options = [
    { learningRate: 1e-2 },
    { learningRate: 3e-2, betas: [0.8, 0.95], eps: 1e-6, weightDecay: 0.1 },
    { learningRate: 0, weightDecay: 0.5 },
  ];
  for (const config of configs('float64').filter((c) => c.numLayers === 1 && (c.bias || c.layerNorm))) {
    for (const opts of options) {
      const m = new lab.Transformer(config);
      try {
        randomize(m, config.seed * 3);
        m.trainStep(TOKENS.slice(1), { learningRate: 1e-2 }); // non-zero moments for the step under test
        const before = m.getState();
        assert.equal(before.step, 1);
        const { loss, grads } = m.gradients(TOKENS);
        const stepped = m.trainStep(TOKENS, opts);
        assert.equal(stepped.loss, loss, 'trainStep reports the loss at the weights before the update');
        const after = m.getState();
        assert.equal(after.step, 2);
        assert.equal(m.step, 2);
        const g = Object.fromEntries(O.leaves(grads));
        const [w0, m0, v0] = ['weights', 'm', 'v'].map((k) => Object.fromEntries(O.leaves(before[k])));
        const [w1, m1, v1] = ['weights', 'm', 'v'].map((k) => Object.fromEntries(O.leaves(after[k])));
        const shapes = Object.fromEntries(O.leaves(m.getWeights()).map(([k]) => [k, k]));
        const params = m.getWeights();
        for (const k of Object.keys(shapes)) {
          const [top, name] = k.startsWith('layers[') ? [Number(k.slice(7, k.indexOf(']'))), k.slice(k.indexOf('.') + 1)] : [null, k];
          const tensor = top === null ? params[name] : params.layers[top][name];
          const decays = Array.isArray(tensor[0]);
          const ref = O.adamwStep(w0[k], g[k], m0[k], v0[k], 2, opts, decays);
          assertClose(w1[k], ref.p, F64_TOL, `${label(config)} ${JSON.stringify(opts)} weights ${k}`);
          assertClose(m1[k], ref.m, F64_TOL, `${label(config)} m ${k}`);
          assertClose(v1[k], ref.v, F64_TOL, `${label(config)} v ${k}`);
        }
      } finally {
        m.free();
      }
    }
  }
});

test('repeatedTokens is bit for bit the documented SplitMix64 algorithm', () => {
  const cases = [
    { vocabSize: 32, length: 24, batch: 32, seed: 7 },
    { vocabSize: 10, length: 9, batch: 5, seed: 0 },
    { vocabSize: 2, length: 1, batch: 3, seed: 1 },
    { vocabSize: 50, length: 7, batch: 9, seed: 2 ** 53 - 1 },
    { vocabSize: 17, length: 16, batch: 4, seed: 123456789n },
    { vocabSize: 17, length: 5, batch: 4, seed: 2n ** 64n - 1n },
  ];
  for (const args of cases) {
    const got = lab.repeatedTokens(args);
    const ref = O.repeatedTokens(args);
    assert.deepEqual(got, ref, `repeatedTokens(${JSON.stringify(args, (k, v) => (typeof v === 'bigint' ? `${v}n` : v))})`);
    // the documented invariants, independent of the algorithm
    for (let b = 0; b < args.batch; b += 1) {
      const p = got.periods[b];
      assert.ok(p >= Math.ceil(args.length / 2) && p <= args.length);
      const seg = got.tokens[b].slice(1, 1 + p);
      assert.equal(new Set(seg).size, p, 'a period holds distinct tokens');
      assert.ok(seg.every((t) => t >= 1 && t < args.vocabSize));
      assert.equal(got.tokens[b].length, 1 + 2 * args.length);
      assert.equal(got.tokens[b][0], 0);
    }
  }
});

test('headScores are the documented means of forward(…, { needWeights: true }).weights', () => {
  for (const dtype of ['float64', 'float32']) {
    for (const positions of POSITIONS) {
      const config = { vocabSize: 12, contextLength: 24, embedDim: 8, numHeads: 2, numLayers: 2, positions, seed: 4, dtype };
      const m = new lab.Transformer(config);
      try {
        randomize(m, 77, 1.5);
        const { tokens } = lab.repeatedTokens({ vocabSize: 12, length: 9, batch: 3, seed: 5 });
        tokens[1][4] = tokens[1][2]; // a token seen twice inside a sequence's first period, too
        const scores = m.headScores(tokens);
        const ref = O.headScores(m.forward(tokens, { needWeights: true }).weights, tokens);
        assert.equal(scores.length, 2);
        scores.forEach((layer, l) => layer.forEach((s, i) => {
          for (const k of ['previousToken', 'induction', 'firstToken', 'self']) {
            assertClose([s[k]], [ref[l][i][k]], F64_TOL, `${dtype} ${positions} layer ${l} head ${i} ${k}`);
          }
        }));
      } finally {
        m.free();
      }
    }
  }
});

test('the checks can fail: a wrong oracle, a perturbed gradient, a wrong AdamW and a wrong score are all told apart', () => {
  const config = { vocabSize: 7, contextLength: 6, embedDim: 4, numHeads: 2, numLayers: 2, positions: 'shortformer', mlp: true, layerNorm: true, bias: true, seed: 3, dtype: 'float64' };
  const m = new lab.Transformer(config);
  try {
    const P = randomize(m, 5);
    const { loss, grads } = m.gradients(TOKENS);
    // positions learned instead of shortformer; no LN
    assert.ok(O.scaledError([loss], [O.gradients({ ...config, positions: 'learned' }, P, TOKENS).loss]) > F64_TOL);
    assert.ok(O.scaledError([loss], [O.gradients({ ...config, mlp: false }, P, TOKENS).loss]) > F64_TOL);
    // one gradient entry moved by 1e-11 of its tensor's scale
    const ref = O.gradients(config, P, TOKENS).grads;
    const w = grads.layers[1].W_V.map((row) => row.slice());
    const scale = Math.max(...w.flat().map(Math.abs));
    w[1][2] += 1e-11 * scale;
    assert.ok(O.scaledError(w.flat(), ref.layers[1].W_V.flat()) > F64_TOL, 'a 1e-11 gradient error went unnoticed');
    // AdamW without bias correction, or decaying a 1-D parameter
    const g = [0.5, -0.25];
    const right = O.adamwStep([1, 2], g, [0.1, 0.1], [0.01, 0.02], 1, { learningRate: 0.1 }, true).p;
    assert.ok(O.scaledError(right, O.adamwStep([1, 2], g, [0.1, 0.1], [0.01, 0.02], 1, { learningRate: 0.1 }, false).p) > F64_TOL);
    // a different seed or length changes repeatedTokens
    assert.notDeepEqual(O.repeatedTokens({ vocabSize: 32, length: 24, batch: 4, seed: 7 }).tokens, lab.repeatedTokens({ vocabSize: 32, length: 24, batch: 4, seed: 8 }).tokens);
  } finally {
    m.free();
  }
});
