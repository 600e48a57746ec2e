// The reference's steps on a traced probe input, from the package's traces (never from numbers
// written here): [{ step, head, matrix, layout }] in the order a correct answer builds them, the
// input matrices, and the numbers a right answer builds on the way (`parts`, see below). `layout` steps (slicing, concatenation) hold the inputs' own numbers in other
// places: they are matched by position, the others by value.
//
// A challenge's diagnosis.json names its reference form (`reference`), read here; the forms are the
// package's functions, not challenges: a new challenge with one of these forms adds only data.

import { compositionReference } from './composition.js';
import { sizesOf } from './loops.js';

const identity = (n) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));

/** The masked scores of a head: the scaled scores with −∞ where the softmax step did not allow the key. */
const masked = (scaled, allowed) => scaled.values.map((row, i) => row.map((x, j) => (allowed[i][j] ? x : -Infinity)));

/** The steps of one trace, in order, with the course's step names. */
function stepsOfTrace(trace, { heads = true, rope = false } = {}) {
  const steps = [];
  const byName = new Map(trace.steps.map((s) => [s.name, s]));
  const h = trace.steps.filter((s) => /^scores_\d+$/.test(s.name)).length;
  for (let i = 0; i < h; i++) {
    if (heads) {
      const k = byName.get(`K_${i}`);
      const kv = k.kvHead !== undefined && k.kvHead !== null ? 'kv-head' : 'slice';
      for (const [step, name] of [['slice', 'Q'], [kv, 'K'], [kv, 'V']]) {
        const input = trace.inputs[name];
        const kvHead = byName.get(`${name}_${i}`).kvHead ?? undefined;
        steps.push({ step, head: i, role: name, matrix: byName.get(`${name}_${i}`).values, layout: true, source: input ? input.flat() : null, ...(kvHead !== undefined ? { kvHead } : {}) });
      }
    }
    if (rope) {
      steps.push({ step: 'rotation', head: i, matrix: byName.get(`Q_${i}_rot`).values });
      steps.push({ step: 'rotation', head: i, matrix: byName.get(`K_${i}_rot`).values });
    }
    const scaled = byName.get(`scaled_${i}`);
    const weights = byName.get(`weights_${i}`);
    // with a mask, only the allowed scores need exist (an answer may score only the keys it may see)
    const allowed = weights.allowed ?? null;
    steps.push({ step: 'scores', head: i, matrix: byName.get(`scores_${i}`).values, allowed });
    steps.push({ step: 'scale', head: i, matrix: scaled.values, allowed });
    if (allowed) steps.push({ step: 'mask', head: i, matrix: masked(scaled, allowed), layout: true, source: scaled.values.flat(), allowed });
    steps.push({ step: 'softmax', head: i, matrix: weights.values, allowed });
    steps.push({ step: 'weighted-sum', head: i, matrix: byName.get(`context_${i}`).values });
  }
  if (heads) {
    const concat = trace.steps.find((s) => s.op === 'Concat');
    if (concat) steps.push({ step: 'concat', head: null, matrix: concat.values, layout: true, source: concat.values.flat() });
    const output = byName.get('output');
    if (output) steps.push({ step: 'w-o', head: null, matrix: output.values });
  }
  return steps;
}

const width = (M) => M[0].length;
/** A trace with the matrices it was called with (the sources of the slices). */
const withInputs = (trace, inputs) => ({ ...trace, inputs });

// ---- the numbers a right answer builds on the way (not steps) ---------------------------------
// A right answer builds numbers no step holds: the products and running sums of a dot product, the
// exps of a softmax and their running sum. They are listed here so that align.js does not take them
// for the first number that leaves the reference (they are never matched against a step).

/** The products a[k]·b[k] and their running sums, for every row of A against every column of B. */
function productSums(A, B, into) {
  for (const row of A) {
    for (let j = 0; j < B[0].length; j++) {
      const products = row.map((a, k) => a * B[k][j]);
      into.push(...products, ...runningSums(products, into));
    }
  }
}

/**
 * The running sums of xs from the first term on; those from the last term back go to `into.tails`
 * (a recursion adds the last term first: align.js takes them for on the way only in a recursive
 * call, since a loop that skips the first term builds them too).
 */
function runningSums(xs, into) {
  const sums = [];
  into.tails ??= [];
  let [forward, backward] = [0, 0];
  for (let k = 0; k < xs.length; k++) {
    forward += xs[k];
    backward += xs[xs.length - 1 - k];
    sums.push(forward);
    into.tails.push(backward);
  }
  return sums;
}

/** The exps of a softmax (with and without the row's maximum subtracted), their running sums, and its log-sum-exp. */
function softmaxParts(S, into) {
  for (const row of S) {
    const finite = row.filter(Number.isFinite);
    const max = Math.max(...finite);
    for (const shift of [max, 0]) {
      const exps = finite.map((x) => Math.exp(x - shift));
      const made = [...finite.map((x) => x - shift), ...exps, ...runningSums(exps, into)];
      into.push(...made);
      const sums = made.slice(2 * finite.length);
      (into.sums ??= []).push(...sums); // (the running sums of the exps, and each row's whole total: the last)
      (into.totals ??= []).push(sums.at(-1));
      // (without the maximum: a right answer's only when the whole softmax goes without it)
      if (shift === 0) (into.unshifted ??= []).push(...exps, ...made.slice(2 * finite.length));
    }
    // (a log-sum-exp softmax, exp(x − lse): lse = max + the log of the shifted total, and x − lse; the log
    // alone is on the way only where `max +` follows it, foreign.js's wayTest)
    const lse = max + Math.log(finite.reduce((sum, x) => sum + Math.exp(x - max), 0));
    into.push(lse, ...finite.map((x) => x - lse));
  }
}

/** The on-the-way numbers of one head: Q_h·K_hᵀ, the softmax of its scaled scores, weights·V_h. */
function headParts(byName, i, into) {
  const q = byName.get(`Q_${i}_rot`) ?? byName.get(`Q_${i}`);
  const k = byName.get(`K_${i}_rot`) ?? byName.get(`K_${i}`);
  if (q && k) productSums(q.values, transpose(k.values), into);
  const weights = byName.get(`weights_${i}`);
  const scalar = byName.get(`scaled_${i}`).scalar;
  into.push(scalar, 1 / scalar); // the scale and √d_head: a right `const scale = …` is on the way
  const scaled = byName.get(`scaled_${i}`).values;
  const masked = (S) => (weights.allowed ? S.map((row, r) => row.map((x, c) => (weights.allowed[r][c] ? x : -Infinity))) : S);
  softmaxParts(masked(scaled), into);
  // (the softmax's numbers of the scores themselves, the scale left out: `skipped`)
  const scores = byName.get(`scores_${i}`)?.values;
  const skipped = [];
  if (scores) softmaxParts(masked(scores), skipped);
  (into.skipped ??= []).push(...skipped.filter((x) => Number.isFinite(x) && !Number.isInteger(x)));
  const v = byName.get(`V_${i}`);
  if (v) productSums(weights.values, v.values, into);
}

const transpose = (M) => M[0].map((_, j) => M.map((row) => row[j]));

/** Every on-the-way number of a trace (and the output projection's, when there is one). */
function partsOfTrace(trace, W_O = null, into = []) {
  const byName = new Map(trace.steps.map((s) => [s.name, s]));
  const h = trace.steps.filter((s) => /^scores_\d+$/.test(s.name)).length;
  for (let i = 0; i < h; i++) headParts(byName, i, into);
  const concat = byName.get('concat');
  if (concat && W_O) productSums(concat.values, W_O, into);
  return into;
}

/** Each reference form: (args, lab) → { steps, inputs, parts }. The args are the learner function's. */
const FORMS = {
  // dotProductAttention(Q, K, V, { causal }): one head; V as wide as Q in the traced probes
  'dot-product': ([Q, K, V, options], lab) => {
    const trace = withInputs(lab.traceMultiHeadAttention(Q, K, V, { numberOfHeads: 1, headDimensions: width(Q), W_O: identity(width(Q)), causal: options?.causal === true }), { Q, K, V });
    return { steps: stepsOfTrace(trace, { heads: false }), inputs: [Q, K, V], parts: partsOfTrace(trace) };
  },
  // multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O, causal })
  'multi-head': ([Q, K, V, options], lab) => {
    const W_O = options.W_O ?? identity(width(Q));
    const trace = withInputs(lab.traceMultiHeadAttention(Q, K, V, { ...options, W_O }), { Q, K, V });
    return { steps: stepsOfTrace(trace), inputs: [Q, K, V, options.W_O].filter(Boolean), parts: partsOfTrace(trace, options.W_O) };
  },
  // decode(Q, K, V, { numberOfHeads, headDimensions }): causal multi-head attention, no W_O
  decode: ([Q, K, V, options], lab) => {
    const trace = withInputs(lab.traceMultiHeadAttention(Q, K, V, { ...options, W_O: identity(width(Q)), causal: true }), { Q, K, V });
    // which keys a token sees is what its cache holds: the causal mask is the cache's (applied by
    // what was appended, never written); the cache holds the values too, which the keys scored do not show
    const steps = stepsOfTrace(trace).filter((s) => s.step !== 'w-o').map((s) => (s.step === 'mask' ? { ...s, step: 'cache', values: true } : s));
    return { steps, inputs: [Q, K, V], parts: partsOfTrace(trace) };
  },
  // projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions })
  projected: ([X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }], lab) => {
    const [Q, K, V] = [W_Q, W_K, W_V].map((W) => lab.linear(X, W));
    const trace = withInputs(lab.traceMultiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }), { Q, K, V });
    const parts = [];
    for (const W of [W_Q, W_K, W_V]) productSums(X, W, parts);
    return {
      steps: [
        { step: 'project-Q', head: null, matrix: Q }, { step: 'project-K', head: null, matrix: K }, { step: 'project-V', head: null, matrix: V },
        ...stepsOfTrace(trace),
      ],
      inputs: [X, W_Q, W_K, W_V, W_O],
      parts: partsOfTrace(trace, W_O, parts),
    };
  },
  // groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }): no W_O
  grouped: ([Q, K, V, options], lab) => {
    const trace = withInputs(lab.traceGroupedQueryAttention(Q, K, V, options), { Q, K, V });
    return { steps: stepsOfTrace(trace).filter((s) => s.step !== 'w-o'), inputs: [Q, K, V], parts: partsOfTrace(trace) };
  },
  // slidingWindowAttention(Q, K, V, { window }): one causal head over a window of keys
  window: ([Q, K, V, options], lab) => {
    const trace = withInputs(lab.traceGroupedQueryAttention(Q, K, V, { numberOfHeads: 1, numberOfKVHeads: 1, headDimensions: width(Q), causal: true, window: options.window }), { Q, K, V });
    return { steps: stepsOfTrace(trace, { heads: false }), inputs: [Q, K, V], parts: partsOfTrace(trace) };
  },
  // compositionScores(weights, { numberOfHeads, kind }): composition.js (slices, circuits, reader, products, norms; the scores are the package's)
  composition: compositionReference,
  // rotaryEmbedding(X, options): the rotated rows (the package's); the frequencies base^(−2i/d) and the
  // angles p·base^(−2i/d) of every row's position p = offset + r are the formula's (the package keeps no trace of them)
  rope: ([X, options], lab) => {
    const { headDimensions: d, base = 10000, offset = 0 } = options;
    const frequencies = Array.from({ length: d / 2 }, (_, i) => base ** ((-2 * i) / d));
    const angles = X.map((_, r) => frequencies.map((f) => (offset + r) * f));
    const parts = angles.flat().flatMap((a) => [Math.cos(a), Math.sin(a)]);
    for (const row of X) for (const x of row) for (const a of angles.flat()) parts.push(x * Math.cos(a), x * Math.sin(a));
    // the columns a right answer reads as the first and as the second of each pair (rotate-half: i and i + d/2 of each head)
    const heads = X[0].length / d;
    // (each rotate-half pair in polar form: its radius, its phase, the phase turned by the angle and its cos and sin)
    X.forEach((row, r) => {
      for (let h = 0; h < heads; h++) {
        angles[r].forEach((a, i) => {
          const [x, y] = [row[h * d + i], row[h * d + i + d / 2]];
          const turned = Math.atan2(y, x) + a;
          parts.push(Math.hypot(x, y), Math.atan2(y, x), turned, Math.cos(turned), Math.sin(turned));
        });
      }
    });
    const role = (shift) => Array.from({ length: heads }, (_, h) => Array.from({ length: d / 2 }, (_, i) => h * d + i + shift)).flat();
    return {
      reads: [role(0), role(d / 2)],
      steps: [
        { step: 'frequency', head: null, matrix: [frequencies] },
        { step: 'position', head: null, matrix: angles },
        { step: 'rotation', head: null, matrix: lab.rotaryEmbedding(X, options) },
      ],
      inputs: [X],
      parts,
    };
  },
};

/**
 * The whole numbers a right answer indexes by, one per head or per row: each head's index, its
 * first and last column, and the K/V head it reads (from the trace), the position of each row (RoPE). A wrong number is not
 * blamed on an integer that is one of these.
 */
function indicesOf(args, steps, form) {
  const heads = [...new Set(steps.map((e) => e.head).filter((h) => h !== null && h !== undefined))];
  const indices = heads.length > 1 ? [heads] : [];
  // each head's columns: where its slice starts and ends
  const width = steps.find((e) => e.step === 'slice')?.matrix[0].length;
  if (heads.length > 1 && width) indices.push(heads.map((h) => h * width), heads.map((h) => (h + 1) * width));
  const kv = steps.filter((e) => e.step === 'kv-head' && e.kvHead !== undefined);
  if (kv.length) indices.push(heads.map((h) => kv.find((e) => e.head === h)?.kvHead));
  if (form === 'rope') {
    const [X, { offset = 0 }] = args;
    indices.push(X.map((_, r) => offset + r));
  }
  return indices;
}

/**
 * RoPE's index of each pair within its head, i of base^(−2i/d): an index where it is computed with, not where
 * it chooses a column (`const a = i` for `h * d + i`), so integerBehind reads it for operands only. Else null.
 */
function pairIndicesOf(args, form) {
  const d = form === 'rope' ? args[1]?.headDimensions : 0;
  return d >= 4 ? Array.from({ length: d / 2 }, (_, i) => i) : null;
}

/** The reference steps of one traced probe: { steps, inputs, parts, indices, sizes, flags }; throws on an unknown form. */
export function referenceSteps(form, args, lab) {
  const make = FORMS[form];
  if (!make) throw new Error(`diagnosis.json: unknown reference form ${form} (known: ${Object.keys(FORMS).join(', ')})`);
  const made = make(structuredClone(args), lab);
  // the booleans of the call's options (`causal: true`): a flag the code computes otherwise is its own
  const flags = args.flatMap((a) => (a && typeof a === 'object' && !Array.isArray(a) ? Object.values(a).filter((v) => typeof v === 'boolean') : []));
  return { ...made, tails: made.parts?.tails ?? [], unshifted: made.parts?.unshifted ?? [], totals: made.parts?.totals ?? [], sums: made.parts?.sums ?? [], skipped: made.parts?.skipped ?? [], indices: indicesOf(args, made.steps, form), pairIndices: pairIndicesOf(args, form), sizes: sizesOf(args, made.steps), flags, scales: scalesOf(made.steps) };
}

/** The factors a right answer scales its scores by (each head's scale entry over its scores entry), and their inverses. */
function scalesOf(steps) {
  const scales = [];
  for (const e of steps.filter((s) => s.step === 'scale')) {
    const scores = steps.find((s) => s.step === 'scores' && s.head === e.head)?.matrix;
    const at = scores?.flat().findIndex((x) => Number.isFinite(x) && Math.abs(x) > 1e-6) ?? -1;
    if (at >= 0) scales.push(e.matrix.flat()[at] / scores.flat()[at]);
  }
  return [...scales, ...scales.map((x) => 1 / x)];
}
