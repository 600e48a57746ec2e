// Models of the known wrong answers, for mistake diagnosis. Each model computes what a
// specific mistake produces; a learner whose outputs match a model on every fixed case where
// the model is defined (and that model is wrong somewhere) made that mistake.
// Plain JS, no DOM, so the Node tests can check that every listed mistake is detectable.

import { concatColumns, identity, matMul, scaleBy, sliceColumns, softmaxRow, transpose } from './matrix.js';

/**
 * Attention with one knob per mistake. `allowed(i, j)` is the mask (null: none).
 * maskMode: 'minus-infinity' (right), 'zero' (masked score = 0), 'after-softmax' (zero the weights).
 */
function attend(Q, K, V, { scale = 1 / Math.sqrt(Q[0].length), axis = 'rows', stable = true, transposeK = true, transposeV = false, allowed = null, maskMode = 'minus-infinity' } = {}) {
  const scores = matMul(Q, transposeK ? transpose(K) : K);
  if (!scores || scores.length !== scores[0].length) return null;
  let scaled = scaleBy(scores, scale);
  if (allowed && maskMode !== 'after-softmax') {
    const fill = maskMode === 'zero' ? 0 : -Infinity;
    scaled = scaled.map((row, i) => row.map((x, j) => (allowed(i, j) ? x : fill)));
  }
  let weights = axis === 'rows' ? scaled.map((r) => softmaxRow(r, stable)) : transpose(transpose(scaled).map((r) => softmaxRow(r, stable)));
  if (allowed && maskMode === 'after-softmax') weights = weights.map((row, i) => row.map((w, j) => (allowed(i, j) ? w : 0)));
  return matMul(weights, transposeV ? transpose(V) : V);
}

const causalAllowed = (i, j) => j <= i;

/** dotProductAttention(Q, K, V, { causal }) with the mistake's knobs. */
const single = (knobs) => ([Q, K, V, options]) => {
  const causal = options?.causal === true;
  const extra = typeof knobs === 'function' ? knobs(causal) : knobs;
  return [attend(Q, K, V, { allowed: causal ? causalAllowed : null, ...extra })];
};

/** multiHeadAttention with per-head knobs; `headScale(d, C)` gives the scale. */
function multiHead([Q, K, V, { numberOfHeads: h, headDimensions: d, W_O, causal }], { headScale = (dh) => 1 / Math.sqrt(dh), knobs = {}, concat = 'columns' } = {}) {
  const C = h * d;
  const contexts = [];
  for (let head = 0; head < h; head++) {
    const [s, e] = [head * d, (head + 1) * d];
    // causal: true (challenge 09) masks as the reference does unless the mistake's knobs say otherwise
    const context = attend(sliceColumns(Q, s, e), sliceColumns(K, s, e), sliceColumns(V, s, e), { scale: headScale(d, C), ...(causal === true ? { allowed: causalAllowed } : {}), ...knobs });
    if (!context) return null;
    contexts.push(context);
  }
  const W = W_O ?? identity(C);
  if (concat === 'columns') return matMul(concatColumns(contexts), W);
  const stacked = contexts.flat(); // (h·T, d)
  if (concat === 'rows-raw') return stacked;
  return matMul(stacked, W.slice(0, d)); // what a row-by-row matMul makes of a d-wide input
}

/** Heads taken from rows i·d..(i+1)·d instead of columns. Two ways to put them back together. */
function rowsSliced([Q, K, V, { numberOfHeads: h, headDimensions: d, W_O }]) {
  const C = h * d;
  if (Q.length < h * d) return [null, null];
  const heads = [];
  for (let head = 0; head < h; head++) {
    const [s, e] = [head * d, (head + 1) * d];
    heads.push(attend(Q.slice(s, e), K.slice(s, e), V.slice(s, e), { scale: 1 / Math.sqrt(d) }));
  }
  const W = W_O ?? identity(C);
  return [matMul(concatColumns(heads), W), matMul(heads.flat(), W)];
}

/**
 * projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }): the
 * projections, then the multi-head model. `project(M, W)` is how a W is applied (right: M·W),
 * `outputProjection: false` leaves W_O out, `heads` is the multi-head model's options.
 */
function projected([X, options], { project = matMul, outputProjection = true, heads = {} } = {}) {
  const { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions } = options;
  const [Q, K, V] = [W_Q, W_K, W_V].map((W) => project(X, W)); // each (T, C)
  if (!Q || !K || !V) return null;
  const split = { numberOfHeads, headDimensions };
  if (!outputProjection) return multiHead([Q, K, V, split], heads); // W_O absent: the identity
  const concat = multiHead([Q, K, V, split], heads); // (T, C)
  return concat && project(concat, W_O);
}

/**
 * groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }) (challenge 06):
 * query head i reads K/V head kvHeadOf(i, numberOfHeads, numberOfKVHeads); no W_O.
 */
function grouped([Q, K, V, { numberOfHeads: h, numberOfKVHeads: kv, headDimensions: d }], { kvHeadOf = (i) => Math.floor(i / (h / kv)), headScale = (dh) => 1 / Math.sqrt(dh), knobs = {} } = {}) {
  const C = h * d;
  const contexts = [];
  for (let head = 0; head < h; head++) {
    const g = kvHeadOf(head, h, kv);
    const context = attend(sliceColumns(Q, head * d, (head + 1) * d), sliceColumns(K, g * d, (g + 1) * d), sliceColumns(V, g * d, (g + 1) * d), { scale: headScale(d, C), ...knobs });
    if (!context) return null;
    contexts.push(context);
  }
  return concatColumns(contexts);
}

/**
 * decode(Q, K, V, { numberOfHeads, headDimensions }) (challenge 05): every head attends over the
 * cache, i.e. causally (or over the whole sequence with causal: false); no W_O, so a NaN in one
 * head stays in that head's columns, as in a learner's loop.
 */
const decoded = ([Q, K, V, o], { causal = true, headScale, knobs = {} } = {}) =>
  grouped([Q, K, V, { ...o, numberOfKVHeads: o.numberOfHeads }], { headScale, knobs: { ...(causal ? { allowed: causalAllowed } : {}), ...knobs } });

/**
 * A model's prediction that the learner's code throws on a case (where the right answer is a
 * matrix): it matches a case on which the learner's function threw.
 */
export const THROWS = Symbol('throws');

/**
 * rotaryEmbedding(X, { numberOfHeads, headDimensions, base, offset }) with the mistake's knobs:
 * `pairs` 'half' (right: column i with i + d/2) or 'interleaved' (2i with 2i + 1), `exponent(i, d)`
 * the power of 1/base for pair i (right: 2i/d), `useOffset` false for positions that ignore the offset.
 */
function rope([X, { numberOfHeads: h, headDimensions: d, base = 10000, offset = 0 }], { pairs = 'half', exponent = (i, dh) => (2 * i) / dh, useOffset = true } = {}) {
  if (d % 2 !== 0 || X.some((row) => row.length !== h * d)) return null;
  return X.map((row, r) => {
    const p = (useOffset ? offset : 0) + r;
    const out = row.slice();
    for (let head = 0; head < h; head++) {
      for (let i = 0; i < d / 2; i++) {
        const [ia, ib] = pairs === 'half' ? [head * d + i, head * d + i + d / 2] : [head * d + 2 * i, head * d + 2 * i + 1];
        const angle = p * base ** -exponent(i, d);
        out[ia] = row[ia] * Math.cos(angle) - row[ib] * Math.sin(angle);
        out[ib] = row[ia] * Math.sin(angle) + row[ib] * Math.cos(angle);
      }
    }
    return out;
  });
}

/**
 * slidingWindowAttention(Q, K, V, { window }) with the mistake's knobs: `allowed(p, j, w)` is the
 * window rule (right: p − w < j ≤ p; w is Infinity without a window), `knobs` go to attend().
 */
const windowed = ({ allowed = (p, j, w) => p - w < j && j <= p, ...knobs } = {}) => ([Q, K, V, options]) => {
  const w = options?.window ?? Infinity;
  return [attend(Q, K, V, { allowed: (p, j) => allowed(p, j, w), ...knobs })];
};

export const VARIANTS = {
  'no-scaling': {
    title: 'No scaling',
    hint: 'Your outputs match attention without the 1/√d scale. Divide every score by √d (the width of the keys: d_k, or headDimensions inside a head) before the softmax.',
    dotProduct: single({ scale: 1 }),
    multiHead: (args) => [multiHead(args, { headScale: () => 1 })],
    projected: (args) => [projected(args, { heads: { headScale: () => 1 } })],
    grouped: (args) => [grouped(args, { headScale: () => 1 })],
    decode: (args) => [decoded(args, { headScale: () => 1 })],
  },
  'scale-by-C': {
    title: 'Scaled by √C instead of √headDimensions',
    hint: 'Your outputs match dividing the scores by √C (all the columns). Inside a head the dot products run over headDimensions columns only, so divide by √headDimensions.',
    multiHead: (args) => [multiHead(args, { headScale: (d, C) => 1 / Math.sqrt(C) })],
    projected: (args) => [projected(args, { heads: { headScale: (d, C) => 1 / Math.sqrt(C) } })],
    grouped: (args) => [grouped(args, { headScale: (d, C) => 1 / Math.sqrt(C) })],
    decode: (args) => [decoded(args, { headScale: (d, C) => 1 / Math.sqrt(C) })],
  },
  'softmax-axis': {
    title: 'Softmax over the wrong axis',
    hint: 'Your weights are normalised down each column instead of along each row. Each query (a row of the scores) spreads its attention over the keys: apply softmax to every row.',
    dotProduct: single({ axis: 'columns' }),
    multiHead: (args) => [multiHead(args, { knobs: { axis: 'columns' } })],
    projected: (args) => [projected(args, { heads: { knobs: { axis: 'columns' } } })],
    grouped: (args) => [grouped(args, { knobs: { axis: 'columns' } })],
  },
  'no-max-subtraction': {
    title: 'Softmax without max-subtraction',
    hint: 'Your softmax overflows: on the large-score case exp() returns Infinity and Infinity / Infinity is NaN. Subtract each row\'s maximum before exp(); the weights are mathematically the same.',
    dotProduct: single({ stable: false }),
    multiHead: (args) => [multiHead(args, { knobs: { stable: false } })],
    projected: (args) => [projected(args, { heads: { knobs: { stable: false } } })],
    grouped: (args) => [grouped(args, { knobs: { stable: false } })],
    decode: (args) => [decoded(args, { knobs: { stable: false } })],
  },
  'k-not-transposed': {
    title: 'K not transposed',
    hint: 'Your scores match Q·K instead of Q·Kᵀ. Transpose K so that scores[i][j] is the dot product of query i with key j.',
    dotProduct: single({ transposeK: false }),
    multiHead: (args) => [multiHead(args, { knobs: { transposeK: false } })],
    projected: (args) => [projected(args, { heads: { knobs: { transposeK: false } } })],
  },
  'v-transposed': {
    title: 'V transposed',
    hint: 'Your outputs match weights·Vᵀ. Multiply the weights by V itself: output row i is the weighted average of the rows of V.',
    dotProduct: single({ transposeV: true }),
    multiHead: (args) => [multiHead(args, { knobs: { transposeV: true } })],
  },
  'rows-sliced': {
    title: 'Heads sliced by rows',
    hint: 'Your heads are slices of rows (tokens) instead of columns (features). Head i takes columns i·headDimensions up to (i+1)·headDimensions of every row: M.map(row => row.slice(start, end)).',
    multiHead: rowsSliced,
  },
  'concat-vertical': {
    title: 'Heads concatenated vertically',
    hint: 'Your head outputs are stacked on top of each other (numberOfHeads·T rows). Put them side by side instead: row r of the result is row r of head 0, then row r of head 1, and so on.',
    multiHead: (args) => [multiHead(args, { concat: 'rows' }), multiHead(args, { concat: 'rows-raw' })],
  },
  'no-projection': {
    title: 'Projections skipped',
    hint: 'Your outputs match attention on X itself, as if Q = K = V = X. Multiply first: Q = X·W_Q, K = X·W_K and V = X·W_V, and attend over those.',
    projected: ([X, { W_O, numberOfHeads, headDimensions }]) => [multiHead([X, X, X, { numberOfHeads, headDimensions, W_O }]), multiHead([X, X, X, { numberOfHeads, headDimensions }])],
  },
  'weights-transposed': {
    title: 'Weights used transposed',
    hint: 'Your outputs match X·Wᵀ: you treat the weights as [out, in] (the way PyTorch stores nn.Linear). Here every W is [in, out] (row i belongs to input feature i), so a projection is X·W, with no transpose.',
    // two forms: all four W transposed, or only W_Q, W_K and W_V (W_O applied the right way)
    projected: ([X, options]) => [
      projected([X, options], { project: (M, W) => matMul(M, transpose(W)) }),
      projected([X, { ...options, W_O: transpose(options.W_O) }], { project: (M, W) => matMul(M, transpose(W)) }),
    ],
  },
  'w-o-skipped': {
    title: 'W_O not applied',
    hint: 'Your outputs match the concatenated heads without the output projection. Multiply the heads, side by side, by W_O at the end.',
    projected: (args) => [projected(args, { outputProjection: false })],
  },
  'mask-ignored': {
    title: 'Mask not applied',
    hint: 'With causal: true your outputs equal plain attention, so the mask is not applied. Set every score with key j > query i to −Infinity before the softmax.',
    dotProduct: single({ allowed: null }),
  },
  'mask-reversed': {
    title: 'Mask reversed',
    hint: 'Your mask hides the past instead of the future. Query i may look at keys j ≤ i; it is the keys with j > i that must be masked.',
    dotProduct: single((causal) => ({ allowed: causal ? (i, j) => j >= i : null })),
  },
  'mask-after-softmax': {
    title: 'Mask applied after the softmax',
    hint: 'You zero the future weights after the softmax, so the rows no longer add up to 1. Mask the scores before the softmax (with −Infinity) so the allowed keys share the whole weight.',
    dotProduct: single({ maskMode: 'after-softmax' }),
  },
  'mask-with-zero': {
    title: 'Masked scores set to 0',
    hint: 'Masked scores set to 0 still get weight in the softmax, since e⁰ = 1. Use −Infinity, so that the weight e^(−∞) is exactly 0.',
    dotProduct: single({ maskMode: 'zero' }),
  },
  'cache-bypassed': {
    title: 'Attending over the whole sequence, not the cache',
    hint: 'Token t\'s output matches attention over all T keys and values, the later tokens\' too. When token t is decoded, tokens after t do not exist yet: its query may only see the cache, which holds the keys and values of tokens 0 … t.',
    decode: (args) => [decoded(args, { causal: false })],
  },
  'cache-overwritten': {
    title: 'Cache overwritten instead of appended',
    hint: 'Your output rows equal V\'s rows: each token attends to its own key and value only, so the cache keeps just the newest row. Append row t of K and V to the cache (push), keeping every earlier row.',
    decode: ([, , V]) => [V],
  },
  'kv-head-modulo': {
    title: 'KV head chosen by i mod numberOfKVHeads',
    hint: 'Your query head i reads key/value head i mod numberOfKVHeads, which spreads neighbouring query heads over different KV heads. The heads of a group are neighbours: query head i reads KV head ⌊i / (numberOfHeads / numberOfKVHeads)⌋, so with 4 query heads and 2 KV heads, heads 0 and 1 read KV head 0 and heads 2 and 3 read KV head 1.',
    grouped: (args) => [grouped(args, { kvHeadOf: (i, h, kv) => i % kv })],
  },
  'kv-sliced-as-query': {
    title: 'K and V sliced as if they had numberOfHeads heads',
    hint: 'Your function is right when numberOfKVHeads = numberOfHeads and throws otherwise: it reads K and V as if they were C = numberOfHeads · headDimensions wide (slicing them with query head i\'s own columns, or checking their width against C). K and V are only C_kv = numberOfKVHeads · headDimensions wide: query head i takes the columns of KV head ⌊i / (numberOfHeads / numberOfKVHeads)⌋.',
    grouped: (args) => [args[3].numberOfKVHeads === args[3].numberOfHeads ? grouped(args) : THROWS],
  },
  'rope-interleaved': {
    title: 'Interleaved pairs instead of rotate-half',
    hint: 'Your outputs match rotating the neighbouring columns (2i, 2i + 1) together, the layout of the original RoFormer paper. This challenge (like Llama and GPT-NeoX) uses the rotate-half layout: inside a head of width d, column i pairs with column i + d/2.',
    rope: (args) => [rope(args, { pairs: 'interleaved' })],
  },
  'rope-angle-exponent': {
    title: 'Angle base^(−i/d) instead of base^(−2i/d)',
    hint: 'Your outputs match turning pair i by p · base^(−i/d). The exponent is 2i/d: pair i holds columns i and i + d/2, and the frequencies run from 1 down to base^(−(d−2)/d), one per pair.',
    rope: (args) => [rope(args, { exponent: (i, d) => i / d })],
  },
  'rope-offset-ignored': {
    title: 'offset ignored',
    hint: 'Your outputs match positions that start at 0 whatever the offset. Row r is at position offset + r: with offset = 1000 the first row turns by 1000 · base^(−2i/d).',
    rope: (args) => [rope(args, { useOffset: false })],
  },
  'window-off-by-one': {
    title: 'Window one key too wide',
    hint: 'Your outputs match a window of w + 1 keys (p − w ≤ j ≤ p). The query at p sees exactly w keys: itself and the w − 1 before it, p − w < j ≤ p.',
    window: windowed({ allowed: (p, j, w) => p - w <= j && j <= p }),
  },
  'window-hides-self': {
    title: 'Window that hides the query itself',
    hint: 'Your outputs match a window that leaves out key p itself (p − w < j < p). The query always sees its own key: the window is p − w < j ≤ p, so window 1 means the token alone.',
    window: windowed({ allowed: (p, j, w) => p - w < j && j < p }),
  },
  'window-ignored': {
    title: 'Window not applied',
    hint: 'Your outputs match causal attention over every earlier key, as if there were no window. Also mask the keys with j ≤ p − w: they fell out of the window.',
    window: windowed({ allowed: (p, j) => j <= p }),
  },
  'window-not-causal': {
    title: 'Window on both sides',
    hint: 'Your outputs match a window that also lets a query see the next w − 1 keys (|p − j| < w). Sliding-window attention here is causal as well: no key after p.',
    window: windowed({ allowed: (p, j, w) => Math.abs(p - j) < w }),
  },
};

// Challenge 08 (slidingWindowAttention): the generic mistakes, on the windowed mask.
Object.assign(VARIANTS['no-scaling'], { window: windowed({ scale: 1 }) });
Object.assign(VARIANTS['softmax-axis'], { window: windowed({ axis: 'columns' }) });
Object.assign(VARIANTS['no-max-subtraction'], { window: windowed({ stable: false }) });
Object.assign(VARIANTS['mask-with-zero'], { window: windowed({ maskMode: 'zero' }) });

// Challenge 09 (multiHeadAttention with a causal option): the mask mistakes, per head, and W_O left out.
/** multiHeadAttention whose mask, when causal is true, is the mistake's (`knobs` go to attend()). */
const causalHeads = (knobs) => (args) => [multiHead(args, { knobs: args[3]?.causal === true ? knobs : {} })];
VARIANTS['mask-off-by-one'] = {
  title: 'Mask one key too wide',
  hint: 'Your outputs match a mask that lets query i see key i + 1 as well (j ≤ i + 1): the next token leaks in. Query i may attend to keys 0 … i only; mask every j > i.',
};
Object.assign(VARIANTS['mask-ignored'], { multiHead: causalHeads({ allowed: null }) });
Object.assign(VARIANTS['mask-off-by-one'], { multiHead: causalHeads({ allowed: (i, j) => j <= i + 1 }) });
Object.assign(VARIANTS['mask-after-softmax'], { multiHead: causalHeads({ allowed: causalAllowed, maskMode: 'after-softmax' }) });
Object.assign(VARIANTS['mask-with-zero'], { multiHead: causalHeads({ allowed: causalAllowed, maskMode: 'zero' }) });
Object.assign(VARIANTS['w-o-skipped'], { multiHead: ([Q, K, V, options]) => [multiHead([Q, K, V, { ...options, W_O: undefined }])] });

/** The model of mistake `id` for a tests.json `function`, or null when the mistake does not apply. */
export function modelFor(id, functionName) {
  const variant = VARIANTS[id];
  if (!variant) throw new Error(`unknown mistake id ${id}`);
  const kind = { dotProductAttention: 'dotProduct', multiHeadAttention: 'multiHead', projectedSelfAttention: 'projected', groupedQueryAttention: 'grouped', decode: 'decode', rotaryEmbedding: 'rope', slidingWindowAttention: 'window' }[functionName];
  if (!kind) throw new Error(`no mistake models for the function ${functionName}`);
  const model = variant[kind];
  if (!model) return null;
  return (args) => {
    try {
      return model(structuredClone(args));
    } catch {
      return [null];
    }
  };
}

/** Equal within tolerance, or both the same non-finite value (NaN matches NaN). */
function sameMatrix(a, b, tolerance) {
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  return a.every((row, r) => Array.isArray(row) && row.length === b[r].length && row.every((x, c) => {
    const y = b[r][c];
    if (typeof x !== 'number') return false;
    if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) && Number.isNaN(y);
    if (!Number.isFinite(x) || !Number.isFinite(y)) return x === y;
    return Math.abs(x - y) <= tolerance * Math.max(1, Math.abs(y));
  }));
}

/**
 * The mistakes that explain a learner's fixed-case outputs.
 * `outputs[i]` is the learner's return value for tests.fixed[i] (undefined when it threw).
 * A form of a model matches when it is defined on at least one case, equals the learner's output
 * wherever it is defined, and differs from the expected answer on at least one such case. A
 * prediction THROWS matches a case where the learner's function threw (outputs[i] undefined).
 */
export function diagnose(tests, outputs) {
  const tolerance = Math.max(tests.tolerance, 1e-9);
  const wrong = (output, expected) => !sameMatrix(output, expected, tolerance) || output.flat().some((x) => !Number.isFinite(x));
  const failedSomewhere = tests.fixed.some((c, i) => wrong(outputs[i], c.expected));
  if (!failedSomewhere) return [];
  const found = [];
  for (const id of tests.variants ?? []) {
    const model = modelFor(id, tests.function);
    if (!model) continue;
    const perCase = tests.fixed.map((c) => model(c.args));
    const forms = Math.max(...perCase.map((f) => f.length));
    for (let form = 0; form < forms; form++) {
      let defined = 0;
      let distinguishing = 0;
      let matches = true;
      tests.fixed.forEach((c, i) => {
        const predicted = perCase[i][form];
        if (!predicted || !matches) return;
        defined++;
        if (predicted === THROWS) {
          if (outputs[i] !== undefined) matches = false;
          else distinguishing++; // the right answer is a matrix, never a throw
          return;
        }
        if (!sameMatrix(outputs[i], predicted, tolerance)) matches = false;
        else if (wrong(predicted, c.expected)) distinguishing++;
      });
      if (matches && defined > 0 && distinguishing > 0) {
        found.push({ id, title: VARIANTS[id].title, hint: VARIANTS[id].hint });
        break;
      }
    }
  }
  return found;
}

/** For the Node tests: whether mistake `id` is distinguishable from the right answer on tests.fixed. */
export function detectable(tests, id) {
  const model = modelFor(id, tests.function);
  if (!model) return false;
  const outputsPerForm = tests.fixed.map((c) => model(c.args));
  return outputsPerForm.some((forms, i) => forms.some((p) => p && (p === THROWS || !sameMatrix(p, tests.fixed[i].expected, tests.tolerance) || p.flat().some((x) => !Number.isFinite(x)))));
}
