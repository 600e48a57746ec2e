// The test-case rules of challenges/README.md, shared by the site, the Node tests and the
// `attention-lab` command (the package ships this file): the comparison rule, the random-case
// recipe, shape helpers, and one run's cases and verdicts. Pure functions, no DOM.

/** `rows×cols` of a matrix-like value, or null when it is not a non-empty array of equal rows. */
export function shapeOf(value) {
  if (!Array.isArray(value) || value.length === 0 || !Array.isArray(value[0])) return null;
  const cols = value[0].length;
  return value.every((row) => Array.isArray(row) && row.length === cols) ? [value.length, cols] : null;
}

export const shapeText = ([rows, cols]) => `${rows}×${cols}`;

/** The schema's rule: |a − e| ≤ tolerance · max(1, |e|); NaN and ±Infinity never pass. */
export function closeEnough(actual, expected, tolerance) {
  return typeof actual === 'number' && Number.isFinite(actual) && Math.abs(actual - expected) <= tolerance * Math.max(1, Math.abs(expected));
}

/**
 * Compares an actual output with an expected matrix.
 * Returns { pass, reason, differs } where differs[r][c] is true for cells that fail.
 */
export function compareMatrices(actual, expected, tolerance) {
  const want = shapeOf(expected);
  const got = shapeOf(actual);
  if (!got) return { pass: false, reason: `expected a ${shapeText(want)} array of rows, got ${describe(actual)}`, differs: null };
  if (got[0] !== want[0] || got[1] !== want[1]) {
    return { pass: false, reason: `expected a ${shapeText(want)} matrix, got ${shapeText(got)}`, differs: null };
  }
  const differs = expected.map((row, r) => row.map((e, c) => !closeEnough(actual[r][c], e, tolerance)));
  const bad = differs.flat().filter(Boolean).length;
  return { pass: bad === 0, reason: bad ? `${bad} of ${want[0] * want[1]} entries differ` : '', differs };
}

/** A short description of any value, for messages. */
export function describe(value) {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : `an array of ${value.length} (${Array.isArray(value[0]) ? 'ragged rows' : 'not rows'})`;
  if (typeof value === 'number') return `the number ${value}`;
  if (typeof value === 'string') return 'a string';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** mulberry32: a tiny seeded generator, so a failing random case can be reproduced from its seed. */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One random case from the recipe `random` of a tests.json: returns the argument list. */
export function randomArgs(random, next) {
  const int = ([min, max]) => min + Math.floor(next() * (max - min + 1));
  const sizes = {};
  const specs = Object.entries(random.sizes);
  for (const [name, spec] of specs) if (Array.isArray(spec)) sizes[name] = int(spec);
  for (const [name, spec] of specs) if (!Array.isArray(spec)) sizes[name] = spec.product.reduce((p, f) => p * sizes[f], 1);
  const [lo, hi] = random.entries;
  const make = (template) => {
    if (template.matrix) {
      const [rows, cols] = template.matrix.map((n) => sizes[n]);
      return Array.from({ length: rows }, () => Array.from({ length: cols }, () => lo + next() * (hi - lo)));
    }
    if (template.size) return sizes[template.size];
    if (template.oneOf) return template.oneOf[Math.floor(next() * template.oneOf.length)];
    if ('literal' in template) return template.literal;
    if (template.object) return Object.fromEntries(Object.entries(template.object).map(([k, t]) => [k, make(t)]));
    if (template.list) return template.list.map(make);
    throw new Error(`unknown template ${JSON.stringify(template)}`);
  };
  return random.args.map(make);
}

/**
 * The package call that computes a case's answer, as [export name, arguments]: the export named
 * by tests.json's `function`, called with the learner's arguments; or, when the file has a
 * `reference` (the learner's function is not itself a package export), `reference.function`
 * with `reference.options` and, for each key of `reference.columnsOf`, the column count of that
 * argument merged into the options argument (index `reference.optionsArgument`).
 */
export function referenceCall(tests, args) {
  const reference = tests.reference;
  if (!reference) return [tests.function, args];
  const at = reference.optionsArgument;
  const columns = Object.entries(reference.columnsOf ?? {}).map(([key, i]) => [key, shapeOf(args[i])?.[1]]);
  const full = Array.from({ length: Math.max(args.length, at + 1) }, (_, i) => args[i]);
  full[at] = { ...(args[at] ?? {}), ...reference.options, ...Object.fromEntries(columns) };
  return [reference.function, full];
}

/**
 * A `transformer` reference (challenge 11): the answer is read from the package's Transformer
 * (float64, two layers, attention-only) holding `weights.layers` of the call `(weights, options)`,
 * with embedDim the row count of layers[0].W_Q and numHeads `options.numberOfHeads`:
 * `method` (compositionScores) returns scores indexed [l1][i][l2][j], and the answer is the
 * numberOfHeads × numberOfHeads matrix [0][i][1][j] of `options.kind` (q, k or v). The package
 * refuses weights of the wrong shapes with its own messages (setWeights).
 */
function transformerReference(lab, { method }, [weights, options]) {
  const C = weights.layers[0].W_Q.length;
  const model = new lab.Transformer({ vocabSize: 2, contextLength: 2, embedDim: C, numHeads: options.numberOfHeads, numLayers: 2, dtype: 'float64' });
  try {
    model.setWeights({ layers: weights.layers });
    return model[method]()[options.kind][0].map((row) => row[1]);
  } finally {
    model.free();
  }
}

/** The reference's answer for `args` (the package `lab`, see referenceCall); throws as it throws. */
export function callReference(lab, tests, args) {
  if (tests.transformer) return transformerReference(lab, tests.transformer, structuredClone(args));
  const [name, full] = referenceCall(tests, structuredClone(args));
  if (typeof lab[name] !== 'function') throw new Error(`the package has no export ${name}`);
  return lab[name](...full);
}

// ---- one run of the tests, as the challenge page and `attention-lab check` do it ----------------

/** How long the learner's code may run per message to its worker (the tests, then the probes). */
export const TIME_LIMIT_MS = 2000;
/**
 * How long the diagnosis's search for the line one edit repairs may take in the worker (diagnosis/repair.js,
 * its own message): its bounds count work, and its 4 s guard stays under this.
 */
export const REPAIR_TIME_LIMIT_MS = 5000;
export const TIME_LIMIT_MESSAGE = 'your code ran longer than 2 s (an infinite loop?)';
export const PROBE_TIME_LIMIT_MESSAGE = 'Your code ran longer than 2 s on the probe inputs that locate the wrong step (an infinite loop on one of them?), so it was stopped.';
/** Random cases are compared with the package's answer to this relative tolerance. */
export const RANDOM_TOLERANCE = 1e-9;

/**
 * The cases of one run of a challenge's `tests` (its tests.json): fixed (expected from
 * tests.json), `tests.random.count` random ones drawn from `seed` (expected from the package
 * `lab`), and the errors. Each is { id, kind, name, args, expected, tolerance } or, for an error
 * case, { id, kind: 'error', name, args, throws }; the worker is sent only { id, args }.
 */
export function buildCases(tests, lab, seed) {
  const next = seededRandom(seed);
  const random = Array.from({ length: tests.random.count }, (_, i) => {
    const args = randomArgs(tests.random, next);
    return { id: `random-${i}`, kind: 'random', name: `random case ${i + 1}`, args, expected: callReference(lab, tests, args), tolerance: RANDOM_TOLERANCE };
  });
  return [
    ...tests.fixed.map((c, i) => ({ id: `fixed-${i}`, kind: 'fixed', name: c.name, why: c.why, args: c.args, expected: c.expected, tolerance: tests.tolerance })),
    ...random,
    ...tests.errors.map((c, i) => ({ id: `error-${i}`, kind: 'error', name: c.name, args: c.args, throws: c.throws })),
  ];
}

/**
 * The verdict on one case (from buildCases) given the worker's `result` for it ({ output } or
 * { error: { name, message } }): { pass, reason, differs } (differs as compareMatrices gives it).
 */
export function judge(testCase, result) {
  if (testCase.kind === 'error') {
    if (!result.error) return { pass: false, reason: `expected ${testCase.throws.name}: "${testCase.throws.messageStartsWith}…" but your function returned normally` };
    const { name, message } = result.error;
    const pass = name === testCase.throws.name && message.startsWith(testCase.throws.messageStartsWith);
    return { pass, reason: pass ? '' : `expected ${testCase.throws.name}: "${testCase.throws.messageStartsWith}…", got ${name}: "${message}"` };
  }
  if (result.error) return { pass: false, reason: 'your function threw' };
  return compareMatrices(result.output, testCase.expected, testCase.tolerance);
}

/**
 * A tensor as nested arrays: `{ data, shape }` (the package's typed-array form) is reshaped,
 * nested arrays are returned as they are (typed-array rows become plain arrays).
 */
export function nested(value) {
  if (Array.isArray(value)) return value.map((row) => (ArrayBuffer.isView(row) ? Array.from(row) : row));
  if (value && ArrayBuffer.isView(value.data) && Array.isArray(value.shape)) {
    const { data, shape } = value;
    const build = (offset, dims) => {
      if (dims.length === 1) return Array.from(data.subarray(offset, offset + dims[0]));
      const stride = dims.slice(1).reduce((a, b) => a * b, 1);
      return Array.from({ length: dims[0] }, (_, i) => build(offset + i * stride, dims.slice(1)));
    };
    return build(0, shape);
  }
  throw new TypeError('expected nested arrays or { data, shape }');
}
