// The package against an independent reference (tests/oracle/reference.mjs: plain JS from the math,
// compensated sums, no code shared with the Rust core) on seeded random well-conditioned inputs.
//
// Error measure, per entry: relErr(a, b) = |a − b| / max(1, |b|), a from the package, b from the
// reference; i.e. relative error for |b| ≥ 1 and absolute error below. Bound: 1e-12 for f64.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab from './support/lab.mjs';
import * as R from '../oracle/reference.mjs';
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
