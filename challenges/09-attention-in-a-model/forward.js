// Challenge 09's model, run with any attention function: the forward pass of the package's
// Transformer (attention-only, shortformer positions, no biases) in a few lines around `linear`.
// `attention(calls, layer)` receives one argument list [Q, K, V, options] per sequence and returns
// (or resolves to) one T×C output per call: the learner's multiHeadAttention, or the package's.
// Plain ES module, no DOM: used by the challenge page and the Node tests.

/** The logits [T×V] of every sequence, and each layer's attention calls. */
export async function forward(lab, model, sequences, attention) {
  const { W_E, W_pos, W_U, layers, config } = model;
  const split = { numberOfHeads: config.numHeads, headDimensions: config.embedDim / config.numHeads, causal: true };
  let xs = sequences.map((tokens) => tokens.map((token) => W_E[token])); // embed: row t is W_E[token t]
  const calls = [];
  for (const [l, { W_Q, W_K, W_V, W_O }] of layers.entries()) {
    const layerCalls = xs.map((x) => {
      const withPositions = add(x, W_pos.slice(0, x.length)); // shortformer: positions go into q and k only
      return [lab.linear(withPositions, W_Q), lab.linear(withPositions, W_K), lab.linear(x, W_V), { ...split, W_O }]; // project
    });
    const outputs = await attention(layerCalls, l); // your attention
    xs = xs.map((x, b) => add(x, outputs[b])); // add it back into the residual stream
    calls.push(layerCalls);
  }
  return { logits: xs.map((x) => lab.linear(x, W_U)), calls }; // unembed
}

/** A + B, entry by entry; an output that is not a T×C matrix of numbers throws a TypeError naming the problem. */
function add(A, B) {
  if (!Array.isArray(B) || B.length !== A.length || !B.every((row) => Array.isArray(row) && row.length === A[0].length)) {
    throw new TypeError(`an attention output is not ${A.length}×${A[0].length}`);
  }
  return A.map((row, t) => row.map((x, c) => x + B[t][c]));
}

/** The share of repeated tokens (repeated[b][t]) whose logits at t − 1 put the right token first. */
export function repeatAccuracy(logits, tokens, repeated) {
  let right = 0;
  let count = 0;
  tokens.forEach((sequence, b) => sequence.forEach((token, t) => {
    if (t === 0 || !repeated[b][t]) return;
    const row = logits[b][t - 1];
    const best = row.reduce((arg, x, j) => (x > row[arg] ? j : arg), 0);
    count++;
    if (best === token && Number.isFinite(row[best])) right++;
  }));
  return count ? right / count : 0;
}

/**
 * Calls that read one head's attention weights out of an attention function: V made of one-hot
 * columns (W_O = I), so that output column i·d + c of call k is head i's weight on key k·d + c.
 * ceil(T / d) calls for the T×T weights of every head.
 */
export function readoutCalls([Q, K, , options]) {
  const T = Q.length;
  const { numberOfHeads: h, headDimensions: d } = options;
  const C = h * d;
  const identity = Array.from({ length: C }, (_, i) => Array.from({ length: C }, (_, j) => (i === j ? 1 : 0)));
  return Array.from({ length: Math.ceil(T / d) }, (_, k) => {
    const V = Array.from({ length: T }, (_, t) => Array.from({ length: C }, (_, col) => (t === k * d + (col % d) ? 1 : 0)));
    return [Q, K, V, { ...options, W_O: identity }];
  });
}

/** The weights [h][T][T] read from the outputs of readoutCalls (null when one is not T×C). */
export function readWeights(outputs, [Q, , , options]) {
  const T = Q.length;
  const { numberOfHeads: h, headDimensions: d } = options;
  if (!outputs.every((O) => Array.isArray(O) && O.length === T && O.every((row) => Array.isArray(row) && row.length === h * d))) return null;
  return Array.from({ length: h }, (_, i) => Array.from({ length: T }, (_, q) => Array.from({ length: T }, (_, key) => outputs[Math.floor(key / d)][q][i * d + (key % d)])));
}
