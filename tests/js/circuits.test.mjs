// The Transformer's circuits (issue 32) against tests/oracle/circuits.mjs and the path ablation
// against tests/oracle/transformer.mjs (both independent plain-JS f64): compositionScores, circuits
// and the baseline agree to 1e-10 in f64; forward's pathMask agrees to 1e-12 in f64 and within f32's
// tolerance in f32; bad arguments are TypeErrors and RangeErrors naming the place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab from './support/lab.mjs';
import { seeded } from './support/mulberry32.mjs';
import * as C from '../oracle/circuits.mjs';
import * as O from '../oracle/transformer.mjs';

const TOL = 1e-10;
/** f32 models: the same f64 arithmetic on the f32 weights; the matrices are rounded to f32 once at the end. */
const F32_MATRIX_TOL = 2 ** -23;
const TOKENS = [[0, 3, 1, 6, 3, 2], [5, 5, 1, 0, 2, 4], [1, 2, 3, 1, 2, 3]];

function randomize(m, seed, scale = 0.7) {
  let s = seed;
  const fill = (v) => (Array.isArray(v[0]) ? v.map((row) => Array.from(seeded(row.length, s++, { scale }))) : Array.from(seeded(v.length, s++, { scale })));
  const w = m.getWeights();
  const update = { layers: w.layers.map((L) => Object.fromEntries(Object.entries(L).map(([k, v]) => [k, fill(v)]))) };
  for (const [k, v] of Object.entries(w)) if (k !== 'layers') update[k] = fill(v);
  m.setWeights(update);
  return m.getWeights();
}

const CONFIGS = [];
for (const positions of ['shortformer', 'learned', 'rope', 'none']) {
  for (const [numHeads, embedDim, numLayers] of [[2, 4, 2], [4, 8, 2], [1, 4, 3], [2, 8, 3], [3, 6, 1]]) {
    CONFIGS.push({ vocabSize: 7, contextLength: 6, embedDim, numHeads, numLayers, positions, layerNorm: numLayers === 3, bias: numHeads === 2, mlp: numHeads === 1, seed: CONFIGS.length + 3 });
  }
}
const label = (c) => `${c.positions} L=${c.numLayers} h=${c.numHeads} C=${c.embedDim}`;

/** max |a − e| over the scores, NaN matching NaN exactly. */
function scoreError(actual, expected, what) {
  const a = actual.flat(3);
  const e = expected.flat(3);
  assert.equal(a.length, e.length, `${what}: shape`);
  let worst = 0;
  a.forEach((x, k) => {
    assert.equal(Number.isNaN(x), Number.isNaN(e[k]), `${what}[${k}]: ${x} vs ${e[k]}`);
    if (!Number.isNaN(x)) worst = Math.max(worst, Math.abs(x - e[k]));
  });
  return worst;
}

for (const dtype of ['float64', 'float32']) {
  test(`${dtype}: compositionScores and circuits agree with the independent oracle`, () => {
    let worst = 0;
    for (const config of CONFIGS) {
      const m = new lab.Transformer({ ...config, dtype });
      try {
        const P = randomize(m, config.seed * 31);
        const got = m.compositionScores();
        const ref = C.compositionScores(P, config.numHeads);
        for (const key of ['q', 'k', 'v']) {
          assert.equal(got[key].length, config.numLayers);
          worst = Math.max(worst, scoreError(got[key], ref[key], `${label(config)} ${key}`));
        }
        const baseline = C.baseline(config.embedDim, config.embedDim / config.numHeads);
        assert.ok(Math.abs(got.baseline - baseline) <= 1e-12, `${label(config)} baseline ${got.baseline} vs ${baseline}`);
        for (let layer = 0; layer < config.numLayers; layer += 1) {
          for (let head = 0; head < config.numHeads; head += 1) {
            const c = m.circuits({ layer, head });
            const r = C.circuits(P, config, { layer, head });
            const tol = dtype === 'float64' ? TOL : F32_MATRIX_TOL;
            for (const key of ['ov', 'qk', 'qkPositional']) {
              if (r[key] === null) { assert.equal(c[key], null, `${label(config)} ${key} is null`); continue; }
              assert.ok(c[key].data instanceof (dtype === 'float64' ? Float64Array : Float32Array));
              assert.deepEqual(c[key].shape, [r[key].length, r[key].length]);
              const err = O.scaledError(c[key].data, r[key].flat());
              assert.ok(err <= tol, `${label(config)} (${layer}, ${head}) ${key}: ${err}`);
              if (dtype === 'float64') worst = Math.max(worst, err);
            }
            // the copying score is computed in f64 from the weights in both dtypes
            assert.ok(Math.abs(c.copyingScore - r.copyingScore) <= TOL, `${label(config)} (${layer}, ${head}) copyingScore ${c.copyingScore} vs ${r.copyingScore}`);
            worst = Math.max(worst, Math.abs(c.copyingScore - r.copyingScore));
          }
        }
      } finally {
        m.free();
      }
    }
    console.log(`${dtype}: worst difference from the oracle ${worst}`);
  });
}

test('the baseline is about 1/√embedDim and a freshly initialised model scores about it', () => {
  const m = new lab.Transformer({ vocabSize: 32, contextLength: 49, embedDim: 64, numHeads: 4, numLayers: 2, seed: 1, dtype: 'float64' });
  try {
    const s = m.compositionScores();
    assert.ok(Math.abs(s.baseline - 1 / 8) < 0.02, `baseline ${s.baseline}`);
    const all = ['q', 'k', 'v'].flatMap((key) => s[key].flat(3).filter((x) => !Number.isNaN(x)));
    assert.equal(all.length, 3 * 16);
    const mean = all.reduce((a, b) => a + b, 0) / all.length;
    // 48 draws of the baseline's own distribution (Xavier-uniform factors): their mean within 10 %
    assert.ok(Math.abs(mean - s.baseline) < 0.1 * s.baseline, `mean ${mean} vs baseline ${s.baseline}`);
  } finally {
    m.free();
  }
});

test('pathMask agrees with the oracle in f64 (1e-12) and f32 (its tolerance); an empty one changes nothing', () => {
  for (const dtype of ['float64', 'float32']) {
    for (const config of CONFIGS.filter((c) => c.numLayers >= 2)) {
      const m = new lab.Transformer({ ...config, dtype });
      try {
        const P = randomize(m, config.seed * 17);
        const h = config.numHeads;
        const pathMask = [
          { from: [0, 0], to: [1, h - 1], input: 'key' },
          { from: [0, h - 1], to: [1, h - 1], input: 'key' },
          { from: [0, 0], to: [1, 0], input: 'query' },
          { from: [0, h - 1], to: [1, 0], input: 'value' },
        ];
        if (config.numLayers === 3) pathMask.push({ from: [1, 0], to: [2, 0], input: 'key' }, { from: [0, 0], to: [2, h - 1], input: 'value' });
        const headMask = Array.from({ length: config.numLayers }, (_, l) => Array.from({ length: h }, (__, i) => !(l === 0 && i === 1)));
        for (const options of [{ pathMask }, { pathMask, headMask }]) {
          const got = m.forward(TOKENS, { ...options, needWeights: true });
          const ref = O.forward(config, P, TOKENS, options);
          const tol = dtype === 'float64' ? 1e-12 : 1e-4;
          assert.ok(O.scaledError(got.logits.data, ref.logits.flat(2)) <= tol, `${dtype} ${label(config)} logits`);
          assert.ok(O.scaledError(got.losses.data, ref.losses.flat()) <= tol, `${dtype} ${label(config)} losses`);
          got.weights.forEach((w, l) => assert.ok(O.scaledError(w.data, ref.weights[l].flat(3)) <= tol, `${dtype} ${label(config)} weights[${l}]`));
        }
        const plain = m.forward(TOKENS);
        const empty = m.forward(TOKENS, { pathMask: [] });
        assert.deepEqual(empty.logits.data, plain.logits.data);
      } finally {
        m.free();
      }
    }
  }
});

test('bad arguments are TypeErrors and RangeErrors that name the place', () => {
  const m = new lab.Transformer({ vocabSize: 7, contextLength: 6, embedDim: 4, numHeads: 2, numLayers: 2, dtype: 'float64' });
  try {
    const throwsWith = (f, Class, pattern) => assert.throws(f, (e) => e instanceof Class && pattern.test(e.message), `${Class.name} ${pattern}`);
    throwsWith(() => m.circuits(), TypeError, /options/);
    throwsWith(() => m.circuits({ layer: 2, head: 0 }), RangeError, /options\.layer is 2; expected 0 … numLayers − 1 = 1/);
    throwsWith(() => m.circuits({ layer: 0, head: 2 }), RangeError, /options\.head is 2/);
    throwsWith(() => m.circuits({ layer: 0 }), TypeError, /options\.head is undefined/);
    throwsWith(() => m.circuits({ layer: -1, head: 0 }), RangeError, /options\.layer is -1/);
    throwsWith(() => m.circuits({ layer: 0, head: 0, heads: 1 }), TypeError, /heads/);
    const cut = (c) => () => m.forward(TOKENS, { pathMask: [c] });
    throwsWith(() => m.forward(TOKENS, { pathMask: 3 }), TypeError, /options\.pathMask is the number 3/);
    throwsWith(cut({ from: [1, 0], to: [1, 1], input: 'key' }), RangeError, /options\.pathMask\[0\]\.from is in layer 1 and options\.pathMask\[0\]\.to in layer 1/);
    throwsWith(cut({ from: [0, 0], to: [1, 5], input: 'key' }), RangeError, /options\.pathMask\[0\]\.to is \[1, 5\]/);
    throwsWith(cut({ from: [0, 0], to: [1, 1], input: 'keys' }), TypeError, /options\.pathMask\[0\]\.input is "keys"; expected 'query', 'key' or 'value'/);
    throwsWith(cut({ from: [0], to: [1, 1], input: 'key' }), RangeError, /options\.pathMask\[0\]\.from has 1 entries/);
    throwsWith(cut({ from: [0, 0.5], to: [1, 1], input: 'key' }), RangeError, /options\.pathMask\[0\]\.from\[1\] is 0\.5/);
    throwsWith(cut({ from: [0, 0], to: [1, 1], input: 'key', extra: 1 }), TypeError, /extra/);
    throwsWith(cut(null), TypeError, /options\.pathMask\[0\]/);
  } finally {
    m.free();
  }
});
