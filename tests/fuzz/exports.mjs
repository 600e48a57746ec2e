// The table of exports the fuzzer, the oracle suite and the leak script drive. Each entry says how
// to build a valid call, how to call the package, what the reference answers and how to compare.
//
// Adding an export (e.g. the MultiHeadAttention layer) is one more entry: `valid` builds arguments
// from a seeded generator, `call` invokes the package (for a class: construct, call, free), and
// `reference` answers from tests/oracle/reference.mjs or throws `Invalid` for input that must be refused.
import * as G from './generate.mjs';
import * as R from '../oracle/reference.mjs';

/** Options of a valid mask-taking call: none, {}, causal, mask or both. */
function maskOptions(r, t) {
  return r.weighted([
    [3, () => undefined],
    [1, () => ({})],
    [1, () => null],
    [3, () => ({ causal: true })],
    [2, () => ({ mask: G.mask(r, t, t) })],
    [2, () => ({ causal: r.bool(), mask: G.mask(r, t, t) })],
  ])();
}

/** The arguments of a valid multi-head call: T×C matrices with C = h·d, options or positional form. */
function multiHeadArgs(r, { positional }) {
  const t = G.size(r);
  const h = r.weighted([[4, () => r.int(1, 3)], [1, () => r.int(4, 6)]])();
  const d = r.weighted([[4, () => r.int(1, 3)], [1, () => r.int(4, 8)]])();
  const c = h * d;
  const odd = r.pick([0, 0.02, 0.2]);
  const [Q, K, V] = [0, 1, 2].map(() => G.matrix(r, t, c, odd));
  if (positional) return [Q, K, V, h, d];
  const options = { numberOfHeads: h, headDimensions: d, ...(maskOptions(r, t) ?? {}) };
  if (r.bool(0.3)) options.W_O = G.matrix(r, c, c, odd);
  return [Q, K, V, options];
}

/** Compares a returned `number[][]` with the reference: same shape, finite, within the error bound. */
export function compareMatrix(actual, reference, what = 'result') {
  const { value: expected, bound } = reference;
  if (!Array.isArray(actual) || actual.length !== expected.length) return `${what} has ${actual?.length} rows, expected ${expected.length}`;
  for (let i = 0; i < expected.length; i += 1) {
    const row = actual[i];
    if (!Array.isArray(row) || row.length !== expected[i].length) return `${what}[${i}] has the wrong length`;
    for (let j = 0; j < row.length; j += 1) {
      const a = row[j];
      const b = expected[i][j];
      if (typeof a !== 'number' || !Number.isFinite(a)) return `${what}[${i}][${j}] is ${a}, a silent non-finite answer (reference ${b})`;
      // at the overflow edge the reference's own rounding may cross it where the package's does not
      if (!Number.isFinite(b) && reference.nearOverflow && Math.sign(a) === Math.sign(b) && Math.abs(a) >= Number.MAX_VALUE * (1 - 1e-12)) continue;
      if (!(Math.abs(a - b) <= bound[i][j])) return `${what}[${i}][${j}] is ${a}, reference ${b}, error ${Math.abs(a - b)} > bound ${bound[i][j]}`;
    }
  }
  return null;
}

/** Checks a trace: output as multiHeadAttention, 8 steps per head + 2, each head's weights within their bound. */
function compareTrace(actual, reference) {
  if (actual === null || typeof actual !== 'object') return 'the trace is not an object';
  const bad = compareMatrix(actual.output, reference, 'trace.output');
  if (bad) return bad;
  const h = reference.heads.length;
  if (!Array.isArray(actual.steps) || actual.steps.length !== 8 * h + 2) return `the trace has ${actual.steps?.length} steps, expected ${8 * h + 2}`;
  const eps = 2 ** -53;
  for (let head = 0; head < h; head += 1) {
    const step = actual.steps.find((s) => s.name === `weights_${head}`);
    const { weights, scoreError } = reference.heads[head];
    if (!step) return `no weights_${head} step`;
    for (let i = 0; i < weights.length; i += 1) {
      const w = weights[i];
      const mean = R.sum(w.map((x, l) => R.times(x, scoreError[i][l])));
      for (let j = 0; j < w.length; j += 1) {
        const bound = 8 * R.times(w[j], scoreError[i][j] + mean + (w.length + 4) * eps) + 1e-300;
        const got = step.values[i][j];
        if (!(Math.abs(got - w[j]) <= bound)) return `weights_${head}[${i}][${j}] is ${got}, reference ${w[j]}`;
      }
    }
  }
  return null;
}

export const EXPORTS = [
  {
    name: 'dotProductAttention',
    matrixArgs: [0, 1, 2],
    optionsArg: 3,
    options: { causal: 'flag', mask: 'mask' },
    valid(r) {
      const t = G.size(r);
      const [dk, dv] = [G.size(r), G.size(r)];
      const odd = r.pick([0, 0.02, 0.2]);
      const args = [G.matrix(r, t, dk, odd), G.matrix(r, t, dk, odd), G.matrix(r, t, dv, odd)];
      const options = maskOptions(r, t);
      if (options !== undefined || r.bool(0.3)) args.push(options);
      return args;
    },
    call: (lab, args) => lab.dotProductAttention(...args),
    reference: (args) => R.dotProductAttention(...args),
    compare: compareMatrix,
  },
  {
    name: 'multiHeadAttention (options)',
    matrixArgs: [0, 1, 2],
    optionsArg: 3,
    options: { numberOfHeads: 'count', headDimensions: 'count', W_O: 'matrix', causal: 'flag', mask: 'mask' },
    valid: (r) => multiHeadArgs(r, { positional: false }),
    call: (lab, args) => lab.multiHeadAttention(...args),
    reference: (args) => R.multiHeadAttention(args[0], args[1], args[2], args[3], args[4]),
    compare: compareMatrix,
  },
  {
    name: 'multiHeadAttention (positional)',
    matrixArgs: [0, 1, 2],
    countArgs: [3, 4],
    valid: (r) => multiHeadArgs(r, { positional: true }),
    call: (lab, args) => lab.multiHeadAttention(...args),
    reference: (args) => R.multiHeadAttention(args[0], args[1], args[2], args[3], args[4]),
    compare: compareMatrix,
  },
  {
    name: 'traceMultiHeadAttention',
    matrixArgs: [0, 1, 2],
    optionsArg: 3,
    options: { numberOfHeads: 'count', headDimensions: 'count', W_O: 'matrix', causal: 'flag', mask: 'mask' },
    valid: (r) => multiHeadArgs(r, { positional: false }),
    call: (lab, args) => lab.traceMultiHeadAttention(...args),
    // the export has four parameters: a fifth argument is ignored
    reference: (args) => R.multiHeadAttention(args[0], args[1], args[2], args[3], undefined, { trace: true }),
    compare: compareTrace,
  },
];
