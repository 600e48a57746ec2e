// The package against an independent reference (tests/oracle/reference.mjs: plain JS from the math,
// compensated sums, no code shared with the Rust core) on seeded random well-conditioned inputs.
//
// Error measure, per entry: relErr(a, b) = |a − b| / max(1, |b|), a from the package, b from the
// reference; i.e. relative error for |b| ≥ 1 and absolute error below. Bound: 1e-12 for f64.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab from './support/lab.mjs';
import * as R from '../oracle/reference.mjs';
import * as R2 from '../oracle/layer.mjs';
import * as TR from '../oracle/typed.mjs';
import { rng, caseSeed } from '../fuzz/generate.mjs';

const CASES = 1000;
const BOUND = 1e-12;
const SEED = 4242;

const relErr = (a, b) => Math.abs(a - b) / Math.max(1, Math.abs(b));

/** Largest relErr over two same-shape matrices (Infinity on a shape mismatch or a non-number). */
function maxRelErr(actual, expected) {
  if (actual.length !== expected.length) return Infinity;
  let worst = 0;
  expected.forEach((row, i) => {
    if (actual[i].length !== row.length) worst = Infinity;
    row.forEach((b, j) => {
      const a = actual[i][j];
      worst = Math.max(worst, typeof a === 'number' && Number.isFinite(a) ? relErr(a, b) : Infinity);
    });
  });
  return worst;
}

const matrix = (r, rows, cols, scale = 2) => Array.from({ length: rows }, () => Array.from({ length: cols }, () => r.uniform(-scale, scale)));
const boolMatrix = (r, n, p) => Array.from({ length: n }, () => Array.from({ length: n }, () => r.bool(p)));

/** Mask options covering none, causal, an explicit mask (sometimes with fully masked rows) and both. */
function maskOptions(r, t) {
  const kind = r.int(0, 3);
  if (kind === 0) return {};
  if (kind === 1) return { causal: true };
  const mask = boolMatrix(r, t, r.pick([0.8, 0.5, 0.2]));
  return kind === 2 ? { mask } : { causal: true, mask };
}

/** Runs `cases` seeded cases of one export; returns the largest error seen. */
function check(name, build, call, reference, compareExtra) {
  let worst = 0;
  for (let i = 0; i < CASES; i += 1) {
    const r = rng(caseSeed(SEED + name.length, i));
    const args = build(r);
    const expected = reference(args);
    const actual = call(args);
    let err = maxRelErr(actual.output ?? actual, expected.value);
    if (compareExtra) err = Math.max(err, compareExtra(actual, expected));
    assert.ok(err <= BOUND, `${name} case ${i}: max relErr ${err} > ${BOUND}`);
    worst = Math.max(worst, err);
  }
  return worst;
}

const figures = {};
test.after(() => console.log(`oracle: max relErr over ${CASES} cases each: ${JSON.stringify(figures)}`));

test(`dotProductAttention: ${CASES} cases (plain, causal, masks with empty rows, d_v ≠ d_k)`, () => {
  figures.dotProductAttention = check(
    'dotProductAttention',
    (r) => {
      const [t, dk, dv] = [r.int(1, 12), r.int(1, 8), r.int(1, 8)];
      return [matrix(r, t, dk), matrix(r, t, dk), matrix(r, t, dv, r.pick([1, 10, 1000])), maskOptions(r, t)];
    },
    (a) => lab.dotProductAttention(...a),
    (a) => R.dotProductAttention(...a),
  );
});

/** Q, K, V (T×C) and options with h heads of d columns, sometimes W_O. */
function multiHeadCase(r) {
  const [t, h, d] = [r.int(1, 10), r.int(1, 4), r.int(1, 4)];
  const c = h * d;
  const options = { numberOfHeads: h, headDimensions: d, ...maskOptions(r, t) };
  if (r.bool(0.5)) options.W_O = matrix(r, c, c, 1);
  return [matrix(r, t, c), matrix(r, t, c), matrix(r, t, c), options];
}

test(`multiHeadAttention, options form: ${CASES} cases (heads, W_O, causal, masks)`, () => {
  figures.multiHeadAttention = check('multiHeadAttention', multiHeadCase, (a) => lab.multiHeadAttention(...a), (a) => R.multiHeadAttention(...a));
});

test(`multiHeadAttention, positional form: ${CASES} cases`, () => {
  figures.multiHeadAttentionPositional = check(
    'positional',
    (r) => {
      const [t, h, d] = [r.int(1, 10), r.int(1, 4), r.int(1, 4)];
      return [matrix(r, t, h * d), matrix(r, t, h * d), matrix(r, t, h * d), h, d];
    },
    (a) => lab.multiHeadAttention(...a),
    (a) => R.multiHeadAttention(...a),
  );
});

test(`traceMultiHeadAttention: ${CASES} cases (output, and every head's scores, weights and context)`, () => {
  figures.traceMultiHeadAttention = check(
    'traceMultiHeadAttention',
    multiHeadCase,
    (a) => lab.traceMultiHeadAttention(...a),
    (a) => R.multiHeadAttention(...a),
    (trace, expected) => {
      const step = (name) => trace.steps.find((s) => s.name === name).values;
      let worst = 0;
      expected.heads.forEach((head, i) => {
        worst = Math.max(worst, maxRelErr(step(`scaled_${i}`), head.scaled), maxRelErr(step(`weights_${i}`), head.weights), maxRelErr(step(`context_${i}`), head.output));
      });
      return Math.max(worst, maxRelErr(step('concat'), expected.concat));
    },
  );
});

test('the oracle is not vacuous: it sees a 1e-11 error and a swapped mask convention', () => {
  const r = rng(1);
  const [Q, K, V] = [matrix(r, 4, 3), matrix(r, 4, 3), matrix(r, 4, 2)];
  const expected = R.dotProductAttention(Q, K, V, { causal: true }).value;
  const nudged = lab.dotProductAttention(Q, K, V, { causal: true }).map((row) => row.map((x) => x + 1e-11));
  assert.ok(maxRelErr(nudged, expected) > BOUND);
  const mask = [[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]];
  const inverted = mask.map((row) => row.map((x) => !x));
  assert.ok(maxRelErr(lab.dotProductAttention(Q, K, V, { mask: inverted }), expected) > 1e-3);
  assert.ok(maxRelErr(lab.dotProductAttention(Q, K, V, { mask }), expected) <= BOUND);
});

// ---- the MultiHeadAttention layer (tests/oracle/layer.mjs) ----------------------------------

/** Largest relErr of a returned matrix or batch against tracked reference items ({ v }). */
function maxRelErrItems(actual, items, batched) {
  if (!batched) return maxRelErr(actual, items[0].v);
  if (!Array.isArray(actual) || actual.length !== items.length) return Infinity;
  return Math.max(...items.map((item, b) => maxRelErr(actual[b], item.v)));
}

/**
 * One seeded layer case: a layer built one of three ways, with biases or not, inputs for
 * self- or cross-attention, unbatched or a batch of 1–3, masks and causal, needWeights
 * (per head or averaged), dropout in training; then forward, backward and grads().
 */
function layerCase(r, i) {
  const [h, d] = [r.int(1, 4), r.int(1, 4)];
  const C = h * d;
  const bias = r.bool(0.7);
  const vec = (n) => Array.from({ length: n }, () => r.uniform(-1, 1));
  const how = i % 3;
  let build;
  if (how === 0) {
    const config = { embedDim: C, numHeads: h, bias, seed: r.int(0, 2 ** 31), dropout: r.pick([0, 0.3]) };
    const update = { W_O: matrix(r, C, C, 1) };
    if (bias) Object.assign(update, { b_Q: vec(C), b_K: vec(C), b_V: vec(C), b_O: vec(C) });
    build = {
      lab: () => {
        const layer = new lab.MultiHeadAttention(config);
        layer.setWeights(update);
        return layer;
      },
      ref: () => R2.setWeights(R2.construct(config), update),
    };
  } else if (how === 1) {
    const fused = { W_QKV: matrix(r, C, 3 * C, 1), W_O: matrix(r, C, C, 1), numHeads: h };
    if (bias) Object.assign(fused, { b_QKV: vec(3 * C), b_O: vec(C) });
    if (r.bool(0.3)) Object.assign(fused, { dropout: 0.2, seed: BigInt(r.int(0, 2 ** 31)) << 20n });
    build = { lab: () => lab.MultiHeadAttention.fromFusedQKV(fused), ref: () => R2.fromFusedQKV(fused) };
  } else {
    const state = { in_proj_weight: matrix(r, 3 * C, C, 1), out_proj_weight: matrix(r, C, C, 1), numHeads: h };
    if (bias) Object.assign(state, { in_proj_bias: vec(3 * C), out_proj_bias: vec(C) });
    build = { lab: () => lab.MultiHeadAttention.fromPyTorch(state), ref: () => R2.fromPyTorch(state) };
  }
  const tq = r.int(1, 8);
  const cross = r.bool(0.5);
  const tk = cross ? r.int(1, 8) : tq;
  const batch = r.bool(0.4) ? r.int(1, 3) : 0;
  const make = (t) => (batch ? Array.from({ length: batch }, () => matrix(r, t, C)) : matrix(r, t, C));
  const query = make(tq);
  const [key, value] = cross ? [make(tk), make(tk)] : [null, null];
  const options = {};
  if (r.bool(0.5)) options.causal = true;
  if (r.bool(0.3)) options.mask = Array.from({ length: tq }, () => Array.from({ length: tk }, () => r.bool(0.7)));
  if (r.bool(0.5)) {
    options.needWeights = true;
    if (r.bool(0.5)) options.averageWeights = true;
  }
  if (r.bool(0.5)) options.training = true;
  const gradOutput = make(tq);
  return { build, query, key, value, options, gradOutput };
}

test(`MultiHeadAttention: ${CASES} cases each of forward and backward (constructor + setWeights, fromFusedQKV, fromPyTorch; biases, masks, causal, cross-attention, batches, dropout)`, () => {
  let worstForward = 0;
  let worstBackward = 0;
  let worstWeights = 0;
  const seen = { batched: 0, cross: 0, masked: 0, dropout: 0, noBias: 0, averaged: 0 };
  for (let i = 0; i < CASES; i += 1) {
    const r = rng(caseSeed(SEED + 77, i));
    const { build, query, key, value, options, gradOutput } = layerCase(r, i);
    const L = build.ref();
    const F = R2.forward(L, query, key, value, options);
    const Bk = R2.backward(L, F, gradOutput);
    const layer = build.lab();
    let out;
    try {
      out = { forward: layer.forward(query, key, value, options), backward: layer.backward(gradOutput), grads: layer.grads(), weights: layer.getWeights() };
    } finally {
      layer.free();
    }
    let fwd = maxRelErrItems(out.forward.output, F.output, F.batched);
    if (F.weights) {
      const per = (got, ref) => (options.averageWeights ? maxRelErr(got, ref.v) : maxRelErrItems(got, ref, true));
      fwd = Math.max(fwd, F.batched ? Math.max(...F.weights.map((w, b) => per(out.forward.weights[b], w))) : per(out.forward.weights, F.weights[0]));
    }
    let bwd = Math.max(...['query', 'key', 'value'].map((n) => maxRelErrItems(out.backward[n], Bk.inputs[n], Bk.batched)));
    for (const [name, M] of Object.entries(Bk.params)) bwd = Math.max(bwd, maxRelErr(name.startsWith('b_') ? [out.grads[name]] : out.grads[name], M.v));
    const params = R2.parameters(L);
    const w = Math.max(...Object.entries(params).map(([name, M]) => maxRelErr(name.startsWith('b_') ? [out.weights[name]] : out.weights[name], M)));
    assert.ok(fwd <= BOUND, `layer case ${i}: forward max relErr ${fwd}`);
    assert.ok(bwd <= BOUND, `layer case ${i}: backward max relErr ${bwd}`);
    assert.equal(w, 0, `layer case ${i}: getWeights differs from the reference's parameters (seeded or set)`);
    [worstForward, worstBackward, worstWeights] = [Math.max(worstForward, fwd), Math.max(worstBackward, bwd), Math.max(worstWeights, w)];
    seen.batched += F.batched ? 1 : 0;
    seen.cross += key ? 1 : 0;
    seen.masked += options.mask || options.causal ? 1 : 0;
    seen.dropout += F.items[0].heads[0].factor ? 1 : 0;
    seen.noBias += L.b ? 0 : 1;
    seen.averaged += options.averageWeights ? 1 : 0;
  }
  figures.layerForward = worstForward;
  figures.layerBackward = worstBackward;
  figures.layerGetWeights = worstWeights;
  for (const [what, n] of Object.entries(seen)) assert.ok(n >= CASES / 20, `only ${n} cases with ${what}`);
});

test('the layer oracle is not vacuous: the seeded weights, a 1e-11 error and a wrong bias gradient are seen', () => {
  // the documented generator reproduces the package's seeded weights bit for bit
  const layer = new lab.MultiHeadAttention({ embedDim: 6, numHeads: 2, seed: 123n });
  const reference = R2.construct({ embedDim: 6, numHeads: 2, seed: 123n });
  assert.deepEqual(layer.getWeights().W_K, reference.W.W_K);
  const x = matrix(rng(3), 4, 6);
  const F = R2.forward(reference, x, null, null, { causal: true });
  const out = layer.forward(x, null, null, { causal: true }).output;
  assert.ok(maxRelErr(out, F.output[0].v) <= BOUND);
  assert.ok(maxRelErr(out.map((row) => row.map((v) => v + 1e-11)), F.output[0].v) > BOUND);
  const g = matrix(rng(4), 4, 6);
  const Bk = R2.backward(reference, F, g);
  layer.backward(g);
  const grads = layer.grads();
  assert.ok(maxRelErr([grads.b_O], Bk.params.b_O.v) <= BOUND);
  assert.ok(maxRelErr([grads.b_O.map((v) => -v)], Bk.params.b_O.v) > 1e-3);
  layer.free();
});

// ---- Float32Array training: the f32 step against the oracle in f32's error model ------------------
// tests/oracle/typed.mjs runs the layer oracle with f32's unit roundoff (2^-24, η = 2^-149, the weights
// f32's exp flushes to zero, dropout's factor rounded to f32) through forward AND backward; the package's
// f32 training output, input gradients and grads() must lie within 8e + 4η (+ 2^-125 per entry, what f32
// loses below its normal range) of the oracle's values. Shapes cross the 64-row query block.
test('MultiHeadAttention Float32Array training step (forward + f32 backward) within the oracle\'s f32 error model', (t) => {
  const r = rng(caseSeed(SEED, 77));
  let worst = 0;
  for (const [B, Tq, Tk, C, h, dropout, causal, bias] of [[2, 70, 70, 8, 2, 0.25, true, true], [1, 66, 80, 12, 3, 0, false, false], [3, 5, 9, 4, 1, 0.5, true, true]]) {
    const config = { embedDim: C, numHeads: h, dropout, seed: r.int(0, 1000), bias };
    const f32 = (rows, cols, scale) => Float32Array.from({ length: rows * cols }, () => r.uniform(-scale, scale));
    const rowsOf = (flat, n, cols) => Array.from({ length: n }, (_, i) => Array.from(flat.subarray(i * cols, (i + 1) * cols)));
    const update = {};
    for (const name of ['W_Q', 'W_K', 'W_V', 'W_O']) update[name] = rowsOf(f32(C, C, 0.6), C, C);
    if (bias) for (const name of ['b_Q', 'b_K', 'b_V', 'b_O']) update[name] = Array.from(f32(1, C, 0.3));
    const typed = (T) => ({ data: f32(B * T, C, 2), shape: [B, T, C] });
    const [query, key, value, grad] = [typed(Tq), typed(Tk), typed(Tk), typed(Tq)];
    const options = { training: true, causal };
    const L = R2.setWeights(R2.construct(config), update);
    const fwd = TR.layerForward(L, query, key, value, options);
    const bwd = TR.layerBackward(L, fwd, grad);
    assert.equal(fwd.mode, 'training');
    assert.ok(!fwd.nearOverflow && !bwd.nearOverflow);
    const layer = new lab.MultiHeadAttention(config);
    try {
      layer.setWeights(update);
      const out = layer.forward(query, key, value, options);
      const grads = layer.backward(grad);
      const params = layer.grads();
      /** |got − v| ≤ 8e + 4η + 2^-125 for flat `got` against the tracked matrices' rows; returns the largest error / bound. */
      const within = (got, tracked, what) => {
        const v = tracked.flatMap((m) => m.v).flat();
        const e = tracked.flatMap((m) => m.e).flat();
        assert.equal(got.length, v.length, `${what}: length`);
        let ratio = 0;
        for (let i = 0; i < v.length; i += 1) {
          const bound = 8 * e[i] + 4 * 2 ** -149 + 2 ** -125;
          const error = Math.abs(got[i] - v[i]);
          assert.ok(error <= bound, `${what}[${i}]: ${got[i]} vs ${v[i]}, error ${error} > bound ${bound}`);
          ratio = Math.max(ratio, error / bound);
        }
        return ratio;
      };
      worst = Math.max(worst, within(out.output.data, fwd.F.output, 'output'));
      for (const name of ['query', 'key', 'value']) worst = Math.max(worst, within(grads[name].data, bwd.Bk.inputs[name], `backward.${name}`));
      for (const [name, M] of Object.entries(bwd.Bk.params)) {
        const got = [params[name]].flat(2);
        assert.ok(got.every((x) => Math.fround(x) === x), `grads().${name} holds f32 values`);
        worst = Math.max(worst, within(got, [M], `grads().${name}`));
      }
    } finally {
      layer.free();
    }
  }
  t.diagnostic(`largest |package − oracle| / bound: ${worst.toExponential(2)}`);
  assert.ok(worst > 0, 'no rounding at all: the step cannot have run in f32');
});
