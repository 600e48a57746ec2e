// The call forms of the probe diagnosis: how a probe input becomes the arguments of the learner's
// function, how the call is described, which package function gives its output when the trace does
// not, and which walkthrough mode shows it. A challenge's diagnosis.json names its form (`reference`,
// the same names as reference.js's forms): the forms are the package's function signatures, shared by
// the challenges that use them, so that a new challenge with one of them adds only data.
import { closeMatrix, identity, range, zeros } from '../matrix.js';

const causalText = (p) => (p.causal === undefined ? null : `{ causal: ${p.causal} }`);

/** The walkthrough's token for challenge 05: the first row where two matrices differ, or 0. */
function firstDifferentRow(expected, actual) {
  if (!expected || !Array.isArray(actual)) return 0;
  const r = expected.findIndex((row, k) => !closeMatrix([actual[k]], [row], 1e-9));
  return Math.max(0, r);
}

/** X = [I_T | 0] and W = [M; 0]: X·W_Q = Q, X·W_K = K, X·W_V = V exactly (needs T ≤ C). */
function embedded(p) {
  const pad = (M) => [...M, ...zeros(p.C - p.T, p.C)];
  const X = range(p.T).map((t) => range(p.C).map((c) => (c === t ? 1 : 0)));
  const W_O = p.W_O === 'absent' ? identity(p.C) : p.W_O;
  return [X, { W_Q: pad(p.Q), W_K: pad(p.K), W_V: pad(p.V), W_O, numberOfHeads: p.numberOfHeads, headDimensions: p.headDimensions }];
}

/**
 * Each form: `args(call)` the arguments; `options(p)` the words for its options in a probe's
 * description; `note(p)` a last word on how the probe is passed; `output(lab, p)` the reference
 * output when the multi-head trace is not it; `walkthrough(w, f)` the walkthrough's inputs from the
 * plain ones `w` (`valueWidth`: the width V must have to be shown there).
 */
export const FORMS = {
  // dotProductAttention(Q, K, V[, { causal }]): no options object when the probe has no causal
  'dot-product': {
    args: (p) => (p.causal === undefined ? [p.Q, p.K, p.V] : [p.Q, p.K, p.V, { causal: p.causal }]),
    options: (p) => causalText(p) ?? 'no options',
  },
  'multi-head': {
    args: (p) => [p.Q, p.K, p.V, { numberOfHeads: p.numberOfHeads, headDimensions: p.headDimensions, ...(p.W_O === 'absent' ? {} : { W_O: p.W_O }), ...(p.causal === undefined ? {} : { causal: p.causal }) }],
    options: causalText,
  },
  // decode(Q, K, V, { numberOfHeads, headDimensions }): causal by construction, no W_O
  decode: {
    args: (p) => [p.Q, p.K, p.V, { numberOfHeads: p.numberOfHeads, headDimensions: p.headDimensions }],
    options: () => null,
    walkthrough: (w, f) => ({ ...w, mode: 'decoding', W_O: null, step: 'token', head: 0, token: firstDifferentRow(f.expected?.matrix, f.actual?.matrix) }),
  },
  // projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads, headDimensions }): a probe without X is passed through X = [I | 0]
  projected: {
    args: (p) => (p.X ? [p.X, { W_Q: p.W_Q, W_K: p.W_K, W_V: p.W_V, W_O: p.W_O, numberOfHeads: p.numberOfHeads, headDimensions: p.headDimensions }] : embedded(p)),
    options: causalText,
    note: (p) => (p.X ? null : 'X = [I | 0] and W_Q, W_K, W_V holding Q, K, V, so that X·W_Q = Q'),
    output: (lab, p) => (p.X ? lab.projectedSelfAttention(p.X, { W_Q: p.W_Q, W_K: p.W_K, W_V: p.W_V, W_O: p.W_O, numberOfHeads: p.numberOfHeads, headDimensions: p.headDimensions }) : null),
  },
  // groupedQueryAttention(Q, K, V, { numberOfHeads, numberOfKVHeads, headDimensions }): numberOfKVHeads = numberOfHeads unless the probe says otherwise
  grouped: {
    args: (p) => [p.Q, p.K, p.V, { numberOfHeads: p.numberOfHeads, numberOfKVHeads: p.numberOfKVHeads ?? p.numberOfHeads, headDimensions: p.headDimensions }],
    options: causalText,
    output: (lab, p) => lab.groupedQueryAttention(p.Q, p.K, p.V, { numberOfHeads: p.numberOfHeads, numberOfKVHeads: p.numberOfKVHeads ?? p.numberOfHeads, headDimensions: p.headDimensions }),
    valueWidth: (p) => (p.numberOfKVHeads ?? p.numberOfHeads) * p.headDimensions,
    walkthrough: (w, f) => ({ ...w, mode: 'grouped', numberOfKVHeads: f.probe.numberOfKVHeads ?? f.probe.numberOfHeads, W_O: null }),
  },
  // slidingWindowAttention(Q, K, V, { window })
  window: {
    args: (p) => [p.Q, p.K, p.V, { window: p.window }],
    options: () => null,
    walkthrough: (w, f) => (f.probe.window !== undefined ? { ...w, mode: 'window', window: f.probe.window } : w),
  },
  // compositionScores(weights, { numberOfHeads, kind }): a probe holds `layers` (two layers of C×C W_Q, W_K, W_V, W_O) and `kind`
  composition: {
    args: (p) => [{ layers: p.layers }, { numberOfHeads: p.numberOfHeads, kind: p.kind }],
    options: (p) => `kind '${p.kind}'`,
    describe: (p) => `C = ${p.layers[0].W_Q.length}, numberOfHeads = ${p.numberOfHeads}, kind '${p.kind}'`,
  },
  // rotaryEmbedding(X, options): the probe's X (its call's, for a basis probe) as Q, K and V of the walkthrough
  rope: {
    args: (p) => [p.X, { ...p.options }],
    options: causalText,
    rotation: ({ call, probe: p, f, step }) => ({ mode: 'rope', Q: call.X, K: call.X, V: call.X, numberOfHeads: p.numberOfHeads, headDimensions: p.headDimensions, causal: false, W_O: null, base: p.options.base, offset: p.options.offset, step, head: f.column === undefined ? 0 : Math.floor(f.column / p.headDimensions) }),
  },
};
