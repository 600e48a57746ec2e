// The lab's Circuit panel, the worker's half (issue 32): what lab.worker.js adds to each view, from
// the package's Transformer: its composition scores (compositionScores), the focused head's OV and QK
// circuits and copying score (circuits), and the path-ablation matrix (forward with pathMask: the loss
// on the repeated tokens with each layer-1 head → layer-2 head path cut at the query, key or value).
// No DOM here: lab-circuits.js draws it on the page.

export const INPUTS = ['query', 'key', 'value'];

/** The strongest K-composition of the model: { score, from: [l1, i], to: [l2, j] } (null with one layer). */
export function strongestK(scores) {
  let best = null;
  scores.k.forEach((heads, l1) => heads.forEach((later, i) => later.forEach((row, l2) => row.forEach((x, j) => {
    if (!Number.isNaN(x) && (!best || x > best.score)) best = { score: x, from: [l1, i], to: [l2, j] };
  }))));
  return best;
}

/**
 * The path-ablation matrix on a fixed batch: `cuts[i][j][k]` is the mean loss on the repeated tokens
 * (those whose value copying predicts) with head (0, i)'s output removed from input INPUTS[k] of head
 * (1, j) only, and `cuts[i][h][k]` with it removed from that input of every layer-2 head at once (a
 * model with several induction heads copies with any one of them, so one path alone may matter
 * little); `uncut` the same loss with nothing cut. `lossOf(output)` reads the repeated-token loss of a
 * forward's output. Only layers 1 → 2 (0 → 1 in the package's count).
 */
export function pathAblation(m, tokens, lossOf, headMask) {
  const { numHeads: h, numLayers } = m.config;
  if (numLayers < 2) return null;
  const run = (pathMask) => lossOf(m.forward(tokens, headMask ? { headMask, pathMask } : { pathMask }));
  const uncut = run([]);
  const into = (i, j, input) => (j < h ? [{ from: [0, i], to: [1, j], input }] : Array.from({ length: h }, (_, later) => ({ from: [0, i], to: [1, later], input })));
  const cuts = Array.from({ length: h }, (_, i) => Array.from({ length: h + 1 }, (__, j) => INPUTS.map((input) => run(into(i, j, input)))));
  return { uncut, cuts };
}

/**
 * What the Circuit panel shows of model `m`: the three composition tables, their baseline and
 * strongest K entry, and the focused head's circuits ({ layer, head } 0-based; V × V Float32Arrays, and
 * the positional QK circuit, contextLength × contextLength, or null when positions do not reach Q and K
 * through W_pos: 'rope', 'none').
 */
export function circuitView(m, focus) {
  const scores = m.compositionScores();
  const { numLayers, numHeads } = m.config;
  let head = null;
  if (focus && focus.layer < numLayers && focus.head < numHeads) {
    const c = m.circuits(focus);
    const f32 = ({ data, shape }) => ({ data: Float32Array.from(data), shape });
    head = { ...focus, ov: f32(c.ov), qk: f32(c.qk), qkPositional: c.qkPositional && f32(c.qkPositional), copyingScore: c.copyingScore };
  }
  return { q: scores.q, k: scores.k, v: scores.v, baseline: scores.baseline, strongestK: strongestK(scores), head };
}
