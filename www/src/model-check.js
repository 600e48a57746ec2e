// The model checks of challenges 09, 10 and 11 (tests.json's `model`, see challenges/README.md), drawn as
// extra result cases of kind 'model' on the challenge page. What is run and judged, and every word
// of the verdicts, is the challenge folders' model-check.js (shared with `attention-lab check`);
// this file adds the drawing:
//   - 'forward' (09): both shares of repeated tokens predicted, and every head's pattern, the
//     learner's next to the reference's;
//   - 'weights' (10): per config, each head's score, the hint when it fails, and its pattern next
//     to the one that would pass; the loss;
//   - 'circuits' (11): the learner's composition scores on the lab's trained model, each kind as a
//     table coloured by its excess over the random baseline, next to the package's; the heads they name;
//     for nameHeads, the scores it was given with the cells its answer names outlined, and both answers.
import { el, heatColour, textColourFor, formatNumber } from './common.js';
import { forwardCheck } from '../../challenges/09-attention-in-a-model/model-check.js';
import { weightsCases as weightsChecks } from '../../challenges/10-induction-head/model-check.js';

import { circuitsCalls, circuitsCases as circuitsChecks } from '../../challenges/11-find-the-circuit/model-check.js';

export { weightsCalls } from '../../challenges/10-induction-head/model-check.js';

// the model files, loaded when a challenge that has one runs its tests
const MODEL_FILES = import.meta.glob('../../challenges/*/model.json', { import: 'default' });

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
 * Runs challenge 09's model check (challenges/09-…/model-check.js). `sendProbes(calls)` runs
 * [{ id, args }] in the learner's worker and resolves with its reply. Returns a judged case.
 */
export async function forwardCase(lab, tests, challengeId, sendProbes) {
  const model = await MODEL_FILES[`../../challenges/${challengeId}/${tests.model.weights}`]();
  const judged = await forwardCheck(lab, tests, model, sendProbes);
  return { ...judged, render: () => renderForward(judged.model) };
}

function renderForward({ scores, note, pairs, tokens }) {
  const score = ({ label, value, text, id }) => el('p', { class: 'model-score', id }, el('span', {}, label), el('strong', { 'data-value': value === null ? '' : String(value) }, text));
  return [
    el('div', { class: 'model-scores' }, scores.map(score)),
    el('p', { class: 'hint' }, note),
    ...pairs.map(({ layer, head, yours, reference }) => el('div', { class: 'pattern-pair', 'data-layer': String(layer), 'data-head': String(head) },
      yours.pattern ? patternFigure(yours.caption, yours.pattern, { tokens }) : el('p', { class: 'reason' }, `Layer ${layer}, head ${head}: your weights could not be read`),
      patternFigure(reference.caption, reference.pattern, { tokens }))),
  ];
}

// ---- 10: the learner's weights, graded ---------------------------------------------------------

/** The judged cases of challenge 10 (challenges/10-…/model-check.js): per config, the two heads and the loss. `results` as the worker returns them. */
export function weightsCases(lab, tests, results) {
  return weightsChecks(lab, tests, results, formatNumber).map((judged) => ({ ...judged, render: () => renderWeights(judged.model) }));
}

function renderWeights(model) {
  if (model.kind === 'load') return [];
  const score = ({ label, value, text }) => el('p', { class: 'model-score' }, el('span', {}, label), el('strong', { 'data-value': String(value) }, text));
  if (model.kind === 'loss') return [score(model.score)];
  const { hint, yours, expected, tokens, note } = model;
  return [
    hint ? el('p', { class: 'hint', 'data-hint': hint.reason }, hint.text) : null,
    score(model.score),
    el('div', { class: 'pattern-pair' }, patternFigure(yours.caption, yours.pattern, { tokens }), patternFigure(expected.caption, expected.pattern, { tokens })),
    el('p', { class: 'hint' }, note),
  ];
}

// ---- 11: the learner's composition scores on the lab's trained model ------------------------------

/**
 * Runs challenge 11's model check (challenges/11-…/model-check.js): the learner's function on the
 * trained model's layers, once per kind, in the learner's worker (`sendProbes` as for 09). Returns the
 * judged cases (one per kind, and the heads the K-composition names).
 */
export async function circuitsCases(lab, tests, challengeId, sendProbes) {
  const model = await MODEL_FILES[`../../challenges/${challengeId}/${tests.model.weights}`]();
  const calls = circuitsCalls(tests, model, lab);
  const reply = await sendProbes(calls);
  const results = reply.type === 'done'
    ? reply.results
    : calls.map(({ id }) => ({ id, error: { name: 'Error', message: reply.type === 'timeout' ? 'your function ran longer than 2 s on the trained model' : reply.message ?? 'the worker stopped' } }));
  return circuitsChecks(lab, tests, model, results, formatNumber).map((judged) => ({ ...judged, render: () => renderCircuits(judged.model) }));
}

/** An h × h table of scores (rows: layer-1 heads, columns: layer-2 heads), each cell coloured by its excess over the baseline. */
function scoresTable(caption, M, baseline, { id, mark, top: highest } = {}) {
  const top = Math.max(baseline * 1.5, highest ?? 0, ...M.flat()) - baseline;
  const head = el('tr', {}, el('th', { scope: 'col' }, el('span', { class: 'visually-hidden' }, 'layer-1 head')), M[0].map((_, j) => el('th', { scope: 'col' }, `L2 h${j}`)));
  const body = M.map((row, i) => el('tr', {}, el('th', { scope: 'row' }, `L1 h${i}`), row.map((x, j) => {
    const excess = x - baseline;
    const background = heatColour(Math.max(0, excess) / top);
    return el('td', {
      class: `composition-cell${mark?.(i, j) ? ' strongest' : ''}`, 'data-value': String(x), style: { background, color: textColourFor(background) },
      title: `L1 h${i} → L2 h${j}: ${formatNumber(x)}, ${excess >= 0 ? `${formatNumber(excess)} above` : `${formatNumber(-excess)} below`} the random baseline ${formatNumber(baseline)}`,
    }, el('span', { class: 'score-value' }, x.toFixed(3)), el('span', { class: 'excess' }, `${excess >= 0 ? '+' : '−'}${Math.abs(excess).toFixed(3)}`));
  })));
  return el('div', { class: 'matrix-wrap', role: 'region', 'aria-label': caption, tabindex: '0' },
    el('table', { class: 'composition', id }, el('caption', {}, caption), el('thead', {}, head), el('tbody', {}, body)));
}

/** nameHeads' case: the K-composition it was given, the row and cells your answer names marked, and both answers in words. */
function renderNaming({ index, kComposition, baseline, yours, expected }) {
  const pair = ([l, h]) => `L${l + 1} h${h}`;
  const list = (heads) => (heads.length ? heads.map(pair).join(', ') : 'none');
  const induction = Array.isArray(yours?.induction) ? yours.induction.filter((x) => Array.isArray(x) && x.length === 2) : [];
  const named = (i, j) => yours && yours.previousToken[1] === i && induction.some(([l, h]) => l === 1 && h === j);
  return [
    el('p', { class: 'hint', 'data-naming': 'answers' },
      yours ? `Yours: previous-token head ${pair(yours.previousToken)}, induction heads ${list(induction)}. ` : 'Your answer could not be read as { previousToken, induction }. ',
      `Expected: previous-token head ${pair(expected.previousToken)}, induction heads ${list(expected.induction)}.`),
    scoresTable(`The K-composition your nameHeads was given (baseline ${formatNumber(baseline)})${yours ? '; outlined: the cells your answer names' : ''}`, kComposition, baseline, { id: `naming-scores-${index}`, mark: named }),
  ];
}

function renderCircuits(model) {
  if (model.kind === 'scores') {
    const { label, yours, expected, baseline, hint, scoreKind, top } = model;
    const note = `Each cell: the score, and below it its excess over the random baseline ${formatNumber(baseline)} (what two random matrices of these shapes score). Dark blue: at or below the baseline; the lighter, up to yellow, the further above it (one scale for Q, K and V).`;
    return [
      hint ? el('p', { class: 'hint', 'data-hint': hint.reason }, hint.text) : null,
      el('div', { class: 'composition-tables' },
        yours ? scoresTable(`${label}: yours`, yours, baseline, { id: `circuits-yours-${scoreKind}`, top }) : el('p', { class: 'reason' }, 'Your scores could not be read as a matrix.'),
        scoresTable(`${label}: the package's`, expected, baseline, { id: `circuits-expected-${scoreKind}`, top })),
      el('p', { class: 'hint' }, note),
    ];
  }
  if (model.kind === 'naming') return renderNaming(model);
  const { behaviour, yours, note } = model;
  const rows = [
    ...behaviour.first.map((s, i) => [`L1 h${i}`, s, yours?.row === i ? 'its strongest row' : '']),
    ...behaviour.second.map((s, i) => [`L2 h${i}`, s, yours?.column === i ? 'the strongest cell of that row' : '']),
  ];
  const table = el('div', { class: 'matrix-wrap', role: 'region', 'aria-label': 'what each head does', tabindex: '0' },
    el('table', { class: 'composition', id: 'circuits-behaviour' },
      el('caption', {}, 'What each head does on the lab\'s evaluation batch (headScores), and what your scores point at'),
      el('thead', {}, el('tr', {}, ['head', 'previous-token score', 'induction score', 'your K-composition'].map((t) => el('th', { scope: 'col' }, t)))),
      el('tbody', {}, rows.map(([head, s, mark]) => el('tr', { class: mark ? 'named' : null }, el('th', { scope: 'row' }, head),
        el('td', {}, formatNumber(s.previousToken)), el('td', {}, formatNumber(s.induction)), el('td', {}, mark))))));
  return [note ? el('p', { class: 'hint' }, note) : null, table];
}
