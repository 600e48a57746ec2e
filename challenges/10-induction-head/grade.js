// Challenge 10's grader: the learner's weights, loaded with setWeights into the package's
// Transformer (float64, attention-only, one head per layer, shortformer positions), measured with
// headScores and the loss on repeated tokens. Plain ES module, no DOM: used by the challenge page,
// generate.mjs and the Node tests; the Rust tests repeat the measurement on the stored weights.

/** The residual stream's fixed basis for a config: where the token, position and free dims start. */
export function basisOf({ vocabSize, contextLength }) {
  return { vocabSize, contextLength, embedDim: 3 * vocabSize + contextLength, token: 0, position: vocabSize, free: vocabSize + contextLength };
}

const oneHot = (n, width, at) => Array.from({ length: n }, (_, r) => Array.from({ length: width }, (_, c) => (c === at(r) ? 1 : 0)));

/** W_E (token i → dim token + i) and W_pos (position t → dim position + t): given, not the learner's. */
export function fixedEmbeddings(basis) {
  const { vocabSize: V, contextLength: L, embedDim: C, token, position } = basis;
  return { W_E: oneHot(V, C, (i) => token + i), W_pos: oneHot(L, C, (t) => position + t) };
}

/** The model's config for a graded config ({ vocabSize, contextLength, numLayers? }). */
export function modelConfig(config) {
  const { vocabSize, contextLength, embedDim } = basisOf(config);
  return { vocabSize, contextLength, embedDim, numHeads: 1, numLayers: config.numLayers ?? 2, positions: 'shortformer', dtype: 'float64' };
}

/** Row t of a head's ideal pattern: previous-token (all weight on t − 1), or induction (shared over s + 1 for every earlier s with the same token; null where the token is new). */
export function idealPattern(kind, tokens) {
  const T = tokens.length;
  return tokens.map((token, t) => {
    const row = new Array(T).fill(0);
    if (kind === 'previous-token') {
      row[Math.max(0, t - 1)] = 1;
      return row;
    }
    const after = tokens.slice(0, t).flatMap((x, s) => (x === token && s + 1 <= t ? [s + 1] : []));
    if (!after.length) return null;
    for (const s of after) row[s] = 1 / after.length;
    return row;
  });
}

/**
 * Loads `weights` ({ W_U, layers: [{ W_Q, W_K, W_V, W_O }, …] }) into a fresh model for `config`
 * and measures it on `grading` ({ batch, seed, previousToken, induction, loss }; length = vocabSize − 1):
 * { error } when the model refuses the weights, else { checks, loss, scores, patterns, tokens }.
 * checks: [{ id, layer, head, value, bound, pass }]; patterns[l][i]: head i of layer l on sequence 0.
 */
export function grade(lab, config, grading, weights) {
  const basis = basisOf(config);
  const model = new lab.Transformer(modelConfig(config));
  try {
    try {
      if (!weights || typeof weights !== 'object') throw new TypeError(`expected an object { W_U, layers }, got ${weights === null ? 'null' : typeof weights}`);
      model.setWeights({ ...weights, ...fixedEmbeddings(basis) });
    } catch (error) {
      return { error: { name: error.name, message: error.message } };
    }
    const { tokens, repeated } = lab.repeatedTokens({ vocabSize: config.vocabSize, length: grading.length ?? config.vocabSize - 1, batch: grading.batch, seed: grading.seed });
    const scores = model.headScores(tokens);
    const out = model.forward(tokens, { needWeights: true });
    const T = tokens[0].length;
    let sum = 0;
    let count = 0;
    tokens.forEach((_, b) => {
      for (let t = 1; t < T; t++) if (repeated[b][t]) { sum += out.losses.data[b * (T - 1) + t - 1]; count++; }
    });
    const loss = sum / count;
    const best = (layer, key) => scores[layer].reduce((arg, s, i) => (s[key] > scores[layer][arg][key] ? i : arg), 0);
    const checks = [];
    const prevHead = best(0, 'previousToken');
    checks.push({ id: 'previous-token', layer: 0, head: prevHead, value: scores[0][prevHead].previousToken, bound: grading.previousToken, pass: scores[0][prevHead].previousToken >= grading.previousToken });
    const last = scores.length - 1;
    const indHead = best(last, 'induction');
    checks.push({ id: 'induction', layer: last, head: indHead, value: scores[last][indHead].induction, bound: grading.induction, pass: last > 0 && scores[last][indHead].induction >= grading.induction });
    checks.push({ id: 'loss', value: loss, bound: grading.loss, pass: Number.isFinite(loss) && loss < grading.loss });
    const h = model.config.numHeads;
    const patterns = out.weights.map(({ data }) => Array.from({ length: h }, (_, i) => Array.from({ length: T }, (_, q) => Array.from(data.subarray((i * T + q) * T, (i * T + q + 1) * T)))));
    return { checks, loss, scores, patterns, tokens: tokens[0], pass: checks.every((c) => c.pass) };
  } finally {
    model.free();
  }
}

/**
 * Why a head fails, from its pattern on one sequence: 'blurred' when most scored rows put their
 * largest weight where the ideal pattern does (the right keys, not sharply enough), else 'elsewhere'.
 * Returns { reason, share } (share: the fraction of scored rows whose largest weight is in place).
 */
export function headHint(kind, pattern, tokens) {
  const ideal = idealPattern(kind, tokens);
  const rows = ideal.map((row, t) => [row, pattern[t], t]).filter(([row, , t]) => row && (kind !== 'previous-token' || t >= 1));
  const inPlace = rows.filter(([row, actual]) => row[actual.reduce((arg, x, k) => (x > actual[arg] ? k : arg), 0)] > 0).length;
  const share = rows.length ? inPlace / rows.length : 0;
  return { reason: share >= 0.9 ? 'blurred' : 'elsewhere', share };
}

/** A weights object with only its non-zero entries: { shape, entries: [[row, col, value], …] } per matrix (tests.json). */
export function sparse(weights) {
  const pack = (M) => ({ shape: [M.length, M[0].length], entries: M.flatMap((row, r) => row.flatMap((x, c) => (x !== 0 ? [[r, c, x]] : []))) });
  return { W_U: pack(weights.W_U), layers: weights.layers.map((layer) => Object.fromEntries(Object.entries(layer).map(([k, M]) => [k, pack(M)]))) };
}

/** The dense weights of sparse(weights). */
export function dense(packed) {
  const unpack = ({ shape: [rows, cols], entries }) => {
    const M = Array.from({ length: rows }, () => new Array(cols).fill(0));
    for (const [r, c, x] of entries) M[r][c] = x;
    return M;
  };
  return { W_U: unpack(packed.W_U), layers: packed.layers.map((layer) => Object.fromEntries(Object.entries(layer).map(([k, M]) => [k, unpack(M)]))) };
}
