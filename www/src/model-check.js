// The model checks of challenges 09 and 10 (tests.json's `model`, see challenges/README.md), as
// extra result cases of kind 'model' for the challenge page:
//   - 'forward' (09): the trained model of model.json runs both layers on the learner's attention
//     (in the learner's worker, one round of probe calls per layer) and on the package's; the case
//     compares the shares of repeated tokens predicted and shows every head's pattern side by side;
//   - 'weights' (10): the learner's function returns weights; grade.js loads them into the package's
//     Transformer and measures the heads and the loss; a head that fails is named and its pattern
//     shown next to the one that would pass.
import { el, heatColour, formatNumber } from './common.js';
import { forward, repeatAccuracy, readoutCalls, readWeights } from '../../challenges/09-attention-in-a-model/forward.js';
import { basisOf, grade, headHint, idealPattern } from '../../challenges/10-induction-head/grade.js';

// the model files, loaded when a challenge that has one runs its tests
const MODEL_FILES = import.meta.glob('../../challenges/*/model.json', { import: 'default' });

const percent = (x) => `${(100 * x).toFixed(1)} %`;

// ---- patterns ---------------------------------------------------------------------------------

const CELL = 8;

/**
 * A T×T attention pattern as a heatmap (rows: queries, columns: keys; light = large; white: exactly 0
 * above the diagonal, i.e. masked; red: not a finite number). A row that is null is drawn hatched
 * (nothing expected there). The text alternative names, for each query, the
 * key with the most weight.
 */
export function patternFigure(caption, pattern, { id, tokens } = {}) {
  const T = pattern.length;
  const canvas = el('canvas', { width: T * CELL, height: T * CELL, class: 'pattern' });
  const context = canvas.getContext('2d');
  pattern.forEach((row, q) => {
    for (let k = 0; k < T; k++) {
      if (row === null) context.fillStyle = (q + k) % 2 ? '#d5d9de' : '#eef0f2';
      // above the diagonal: white where the weight is 0 (masked); a weight there (a leaky mask) is drawn
      else context.fillStyle = !Number.isFinite(row[k]) ? '#a3261b' : k > q && row[k] === 0 ? '#ffffff' : heatColour(row[k]);
      context.fillRect(k * CELL, q * CELL, CELL, CELL);
    }
  });
  const strongest = pattern.map((row, q) => (row === null ? `${q}: —` : `${q}→${row.reduce((arg, x, k) => (x > row[arg] ? k : arg), 0)}`));
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', `${caption}: ${T}×${T} attention weights; for each query, the key with the most weight: ${strongest.join(', ')}`);
  return el('figure', { class: 'pattern-figure', id, 'data-rows': String(T) }, canvas,
    el('figcaption', {}, caption, tokens ? el('span', { class: 'visually-hidden' }, ` (tokens ${tokens.join(' ')})`) : null));
}

// ---- 09: the trained model on the learner's attention -----------------------------------------------

/**
 * Runs challenge 09's model check. `sendProbes(calls)` runs [{ id, args }] in the learner's worker
 * and resolves with its reply ({ type: 'done', results } or another type). Returns a judged case.
 */
export async function forwardCase(lab, tests, challengeId, sendProbes) {
  const spec = tests.model;
  const model = await MODEL_FILES[`../../challenges/${challengeId}/${spec.weights}`]();
  const { tokens, repeated } = lab.repeatedTokens(spec.evaluation);
  const shown = spec.displaySequence ?? 0;
  const reference = { patterns: [] };
  const { logits: referenceLogits } = await forward(lab, model, tokens, (calls) => {
    reference.patterns.push(readWeights(readoutCalls(calls[shown]).map((args) => lab.multiHeadAttention(...args)), calls[shown]));
    return calls.map((args) => lab.multiHeadAttention(...args));
  });
  const learner = { patterns: [], problem: null };
  let logits = null;
  try {
    ({ logits } = await forward(lab, model, tokens, async (calls, layer) => {
      const readouts = readoutCalls(calls[shown]);
      const probes = [...calls, ...readouts].map((args, i) => ({ id: `model:${layer}:${i}`, args }));
      const reply = await sendProbes(probes);
      if (reply.type === 'timeout') throw new ModelStop(`your function ran longer than 2 s on layer ${layer + 1}'s ${calls.length} sequences`);
      if (reply.type !== 'done') throw new ModelStop(reply.message ?? 'the worker stopped');
      const byId = new Map(reply.results.map((r) => [r.id, r]));
      const outputs = probes.map((p) => byId.get(p.id));
      const failed = outputs.find((r) => !r || r.error);
      if (failed) throw new ModelStop(`your function threw on layer ${layer + 1}: ${failed?.error ? `${failed.error.name}: ${failed.error.message}` : 'no result'}`);
      const values = outputs.map((r) => r.output);
      learner.patterns.push(readWeights(values.slice(calls.length), calls[shown]));
      return values.slice(0, calls.length);
    }));
  } catch (error) {
    // a stop, a throw or a timeout in the worker, or an output the next layer cannot use
    learner.problem = error instanceof ModelStop ? error.message : `${error.name}: ${error.message}`;
  }
  const referenceAccuracy = repeatAccuracy(referenceLogits, tokens, repeated);
  const accuracy = logits ? repeatAccuracy(logits, tokens, repeated) : null;
  const repeats = repeated.flat().filter(Boolean).length;
  const pass = accuracy !== null && Math.abs(accuracy - referenceAccuracy) < 0.5 / repeats;
  const reason = accuracy === null
    ? `the model could not run on your function: ${learner.problem}`
    : pass ? '' : `with your attention the model predicts ${percent(accuracy)} of the repeated tokens; with the reference, ${percent(referenceAccuracy)}`;
  return {
    id: 'model-forward',
    kind: 'model',
    name: 'the trained model still copies with your attention',
    why: `Both layers of the trained model call your function on ${tokens.length} sequences of ${tokens[0].length} tokens; it must predict as many of the ${repeats} repeated tokens as with the reference.`,
    verdict: { pass, reason },
    render: () => renderForward({ accuracy, referenceAccuracy, repeats, learner, reference, tokens: tokens[shown], heads: model.config.numHeads }),
  };
}

class ModelStop extends Error {}

function renderForward({ accuracy, referenceAccuracy, repeats, learner, reference, tokens, heads }) {
  const score = (label, value, id) => el('p', { class: 'model-score', id }, el('span', {}, label), el('strong', { 'data-value': value === null ? '' : String(value) }, value === null ? 'did not run' : percent(value)));
  const parts = [
    el('div', { class: 'model-scores' },
      score('Repeated tokens predicted with your attention', accuracy, 'model-accuracy-yours'),
      score('with the reference', referenceAccuracy, 'model-accuracy-reference')),
    el('p', { class: 'hint' }, `Of ${repeats} repeated tokens. The patterns below are each head's weights on the first sequence (${tokens.length} tokens: rows are queries, columns keys; light = large; white above the diagonal is masked, so a colour there is a future key leaking in).`),
  ];
  reference.patterns.forEach((layerPatterns, l) => {
    for (let i = 0; i < heads; i++) {
      const yours = learner.patterns[l]?.[i];
      parts.push(el('div', { class: 'pattern-pair', 'data-layer': String(l + 1), 'data-head': String(i) },
        yours ? patternFigure(`Layer ${l + 1}, head ${i}: yours`, yours, { tokens }) : el('p', { class: 'reason' }, `Layer ${l + 1}, head ${i}: your weights could not be read`),
        patternFigure(`Layer ${l + 1}, head ${i}: reference`, layerPatterns[i], { tokens })));
    }
  });
  return parts;
}

// ---- 10: the learner's weights, graded ---------------------------------------------------------

/** The calls of challenge 10: the learner's function once per graded config (the basis as its argument). */
export function weightsCalls(tests) {
  return tests.model.configs.map((config, i) => ({ id: `config-${i}`, args: [basisOf(config)] }));
}

const HEAD_TEXT = {
  'previous-token': { name: 'previous-token head', article: 'a', score: 'previous-token score', kind: 'previous-token' },
  induction: { name: 'induction head', article: 'an', score: 'induction score', kind: 'induction' },
};

/** What to try when a head fails, from headHint's reading of its pattern. */
function hintText(id, { reason, share }, C) {
  const inPlace = `${Math.round(100 * share)} % of its rows put their largest weight in the right place`;
  if (reason === 'blurred') return `It looks in the right place (${inPlace}) but not sharply: the layer divides every score by √headDimensions = √${C} ≈ ${Math.sqrt(C).toFixed(2)}, so a match needs a score of about 10 after that division. Scale up the W_Q entries of this head.`;
  return id === 'previous-token'
    ? `Only ${inPlace}. QK: the query at position t must match the key at position t − 1: W_Q takes dim position + t to the same head column as W_K takes dim position + t − 1 (positions reach queries and keys only).`
    : `Only ${inPlace}. QK (K-composition): the query's token i must match keys whose previous token is i, which layer 1 wrote into free dims; W_K must read those dims, not the key's own token. Check layer 1's OV (W_V·W_O) writes token i there.`;
}

/** The judged cases of challenge 10: per config, the two heads and the loss. `results` as the worker returns them. */
export function weightsCases(lab, tests, results) {
  const byId = new Map(results.map((r) => [r.id, r]));
  return tests.model.configs.flatMap((config, n) => {
    const { vocabSize: V, contextLength: L, embedDim: C } = basisOf(config);
    const label = `V = ${V}, L = ${L}, C = ${C}`;
    const result = byId.get(`config-${n}`);
    let graded;
    if (!result || result.error) graded = { error: result?.error ?? { name: 'Error', message: 'no result' }, threw: true };
    else graded = grade(lab, config, tests.model.grading, result.output);
    if (graded.error) {
      const message = `${graded.threw ? 'your function threw' : 'the model refused your weights'}: ${graded.error.name}: ${graded.error.message}`;
      return [{ id: `weights-${n}`, kind: 'model', name: `${label}: the weights load into the model`, verdict: { pass: false, reason: message }, render: () => [] }];
    }
    return graded.checks.map((check) => {
      if (check.id === 'loss') {
        return {
          id: `weights-${n}-loss`, kind: 'model', name: `${label}: loss on repeated tokens < ${check.bound}`,
          why: 'The mean cross-entropy of the model\'s prediction of every repeated token (the first repeat of each sequence cannot be predicted: about 2 nats there).',
          verdict: { pass: check.pass, reason: check.pass ? '' : `your model's loss on repeated tokens is ${formatNumber(check.value)}` },
          render: () => [el('p', { class: 'model-score' }, el('span', {}, 'loss on repeated tokens'), el('strong', { 'data-value': String(check.value) }, formatNumber(check.value)))],
        };
      }
      const text = HEAD_TEXT[check.id];
      const layer = check.layer + 1;
      const where = `layer ${layer}, head ${check.head}`;
      return {
        id: `weights-${n}-${check.id}`, kind: 'model', name: `${label}: a layer-${layer} ${text.name} (${text.score} ≥ ${check.bound})`,
        why: check.id === 'previous-token'
          ? 'Its mean weight on the previous token t − 1, over every position t ≥ 1.'
          : 'At every token that occurred before, its summed weight on the positions right after the earlier copies.',
        verdict: { pass: check.pass, reason: check.pass ? '' : `the ${text.name} is not doing its job: ${where} has ${text.article} ${text.score} of ${formatNumber(check.value)}` },
        render: () => [
          check.pass ? null : el('p', { class: 'hint', 'data-hint': headHint(text.kind, graded.patterns[check.layer][check.head], graded.tokens).reason }, hintText(check.id, headHint(text.kind, graded.patterns[check.layer][check.head], graded.tokens), C)),
          el('p', { class: 'model-score' }, el('span', {}, `${text.score} of ${where}`), el('strong', { 'data-value': String(check.value) }, formatNumber(check.value))),
          el('div', { class: 'pattern-pair' },
            patternFigure(`Layer ${layer}, head ${check.head}: yours`, graded.patterns[check.layer][check.head], { tokens: graded.tokens }),
            patternFigure(`Expected of ${text.article} ${text.name}`, idealPattern(text.kind, graded.tokens), { tokens: graded.tokens })),
          el('p', { class: 'hint' }, `On the first sequence: ${graded.tokens.join(' ')}. Rows are queries, columns keys; light = large${check.id === 'induction' ? '; hatched rows are tokens with no earlier copy, not scored' : ''}.`),
        ],
      };
    });
  });
}
