// A challenge page: the lesson (markdown + KaTeX), a CodeMirror editor, and "Run tests", which
// runs the learner's code in a worker (killed after 2 s) on the fixed, random and error cases
// of tests.json and compares with the expected values / the wasm reference. When a case fails,
// the same worker runs the diagnosis's probe inputs (another 2 s at most) and the page shows the
// first step where the code departs from the reference (diagnosis/locate.js), then any known mistakes.
import { EditorView, editorSetup, javascript } from './editor.js';
import { keymap } from '@codemirror/view';
import { Prec } from '@codemirror/state';
// The lesson arrives as HTML, KaTeX rendered at build time (build/lessons.js).
import 'katex/dist/katex.min.css';
import { wasm, progress, el, matrixTable, showFatal } from './common.js';
import { CHALLENGES, loadChallenge } from './challenges.js';
import { buildCases, judge, TIME_LIMIT_MS, TIME_LIMIT_MESSAGE, PROBE_TIME_LIMIT_MESSAGE } from './cases.js';
// What only a run needs loads with the first run (or when the learner first focuses the editor):
// the diagnosis, the first-wrong-line engine, the report's words, the model checks and the .wasm (see `loadForRun`).
let locate, probeCalls, walkthroughHref;
let firstLine, traceCalls, repairFinding;
let GROUP_TITLES, PROBLEM_LABELS, foundByLine, knownMistakes, locatedHeading, locateOptions, mistakesHeading, nonFiniteNote;
let forwardCase, weightsCalls, weightsCases, circuitsCases;

const SAVE_DELAY_MS = 300;
/** The reference answer is offered after this many runs of the tests; before, only on a deliberate request. */
const RUNS_BEFORE_ANSWER = 3;

const $ = (id) => document.getElementById(id);
const challenge = await loadChallenge(new URLSearchParams(location.search).get('id') ?? CHALLENGES[0].id);
let editor;
let running = null;

// ---- lesson -------------------------------------------------------------------------

function renderLesson() {
  $('lesson').innerHTML = challenge.lesson;
  // A display equation (or a code block, challenge 09, or a table) wider than the column scrolls; keyboard users must be able to scroll it too.
  const focusableWhenScrolling = () => $('lesson').querySelectorAll('.katex-display, pre, table').forEach((d) => {
    if (d.scrollWidth > d.clientWidth) d.setAttribute('tabindex', '0');
    else d.removeAttribute('tabindex');
  });
  focusableWhenScrolling();
  document.fonts.ready.then(focusableWhenScrolling);
  addEventListener('resize', focusableWhenScrolling);
  document.title = `${challenge.number} · ${challenge.title} · attention-lab`;
  // loadChallenge returns a copy of the index entry: find it by id, not by identity
  const i = CHALLENGES.findIndex((c) => c.id === challenge.id);
  $('challenge-nav').replaceChildren(
    ...(i > 0 ? [el('a', { href: `./challenge.html?id=${CHALLENGES[i - 1].id}` }, `← ${CHALLENGES[i - 1].number}`)] : []),
    el('a', { href: location.href, 'aria-current': 'page' }, `Challenge ${challenge.number}`),
    ...(i < CHALLENGES.length - 1 ? [el('a', { href: `./challenge.html?id=${CHALLENGES[i + 1].id}` }, `${CHALLENGES[i + 1].number} →`)] : []),
  );
}

// ---- editor -------------------------------------------------------------------------

function createEditor() {
  let timer;
  editor = new EditorView({
    doc: progress.code(challenge.id) ?? challenge.starter,
    parent: $('editor'),
    extensions: [
      editorSetup,
      javascript(),
      // long starter comments wrap instead of running off the edge (desktop and phone)
      EditorView.lineWrapping,
      Prec.highest(keymap.of([{ key: 'Mod-Enter', run: () => { runTests(); return true; } }])),
      EditorView.contentAttributes.of({ 'aria-label': `Your code for challenge ${challenge.number}`, tabindex: '0' }),
      EditorView.updateListener.of((update) => {
        if (!update.docChanged) return;
        clearTimeout(timer);
        timer = setTimeout(() => progress.saveCode(challenge.id, update.state.doc.toString()), SAVE_DELAY_MS);
      }),
    ],
  });
}

const code = () => editor.state.doc.toString();

// ---- running --------------------------------------------------------------------------

/**
 * A fresh worker for the learner's code. send(message) resolves with its reply, or with
 * { type: 'timeout' } after TIME_LIMIT_MS, or `limitMs` (the worker is then terminated). One worker runs the
 * test cases and then, if one fails, the diagnosis's probes.
 */
function learnerWorker() {
  const worker = new Worker(new URL('./runner.worker.js', import.meta.url), { type: 'module', name: 'learner-code' });
  let answer = null;
  worker.onmessage = ({ data }) => answer?.(data);
  worker.onerror = (event) => { event.preventDefault(); answer?.({ type: 'load-error', name: 'Error', message: event.message || 'the test worker failed to start' }); };
  return {
    send(message, limitMs = TIME_LIMIT_MS) {
      return new Promise((resolve) => {
        const timer = setTimeout(() => { worker.terminate(); answer = null; resolve({ type: 'timeout' }); }, limitMs);
        answer = (data) => { clearTimeout(timer); answer = null; resolve(data); };
        worker.postMessage(message);
      });
    },
    close: () => worker.terminate(),
  };
}

let loaded;
/** The modules a run needs and the package (the attention-only .wasm, or the whole one for 09 and 10), once. */
function loadForRun() {
  loaded ??= Promise.all([import('./diagnosis/locate.js'), import('./diagnosis/first-line.js'), import('./report.js'), import('./model-check.js'), wasm({ model: Boolean(challenge.tests.model) }), import('./diagnosis/repaired.js')])
    .then(([diagnosis, first, report, modelCheck, lab, repaired]) => {
      ({ locate, probeCalls, walkthroughHref } = diagnosis);
      ({ firstLine, traceCalls } = first);
      ({ repairFinding } = repaired);
      ({ GROUP_TITLES, PROBLEM_LABELS, foundByLine, knownMistakes, locatedHeading, locateOptions, mistakesHeading, nonFiniteNote } = report);
      ({ forwardCase, weightsCalls, weightsCases, circuitsCases } = modelCheck);
      return lab;
    });
  return loaded;
}

async function runTests() {
  if (running) return running;
  const button = $('run-tests');
  button.disabled = true;
  progress.saveCode(challenge.id, code());
  progress.markAttempted(challenge.id);
  progress.countRun(challenge.id);
  offerAnswer();
  $('run-status').textContent = 'Running the tests…';
  $('results').replaceChildren();
  $('diagnosis').replaceChildren();
  $('diagnosis').removeAttribute('data-ms');
  running = (async () => {
    const lab = await loadForRun().catch((error) => { showFatal(`The WebAssembly reference could not be loaded: ${error.message}`); throw error; });
    const seed = (Math.random() * 2 ** 32) >>> 0;
    const cases = buildCases(challenge.tests, lab, seed);
    const started = performance.now();
    const session = learnerWorker();
    try {
      // challenge 10: the function returns a model's weights, called once per graded config
      const weights = challenge.tests.kind === 'weights';
      const calls = weights ? weightsCalls(challenge.tests) : cases.map(({ id, args }) => ({ id, args }));
      const reply = await session.send({ code: code(), functionName: challenge.tests.function, cases: calls, deep: weights });
      // the model checks (tests.json `model`): extra cases, judged here
      let modelCases = [];
      if (reply.type === 'done' && weights) modelCases = weightsCases(lab, challenge.tests, reply.results);
      else if (reply.type === 'done' && challenge.tests.model?.kind === 'forward') {
        $('run-status').textContent = 'Running the trained model on your attention…';
        modelCases = [await forwardCase(lab, challenge.tests, challenge.id, (probes) => session.send({ probes }))];
      } else if (reply.type === 'done' && challenge.tests.model?.kind === 'circuits') {
        $('run-status').textContent = 'Running your function on the trained model…';
        modelCases = await circuitsCases(lab, challenge.tests, challenge.id, (probes) => session.send({ probes }));
      }
      const elapsed = Math.round(performance.now() - started);
      const judged = showReply(reply, cases, seed, elapsed, modelCases);
      if (!judged || judged.every((c) => c.verdict.pass)) return;
      const probes = probeCalls(challenge.diagnosis);
      let located = null;
      let probeNote = null;
      if (probes.length) {
        $('diagnosis').replaceChildren(el('p', { class: 'hint' }, 'Looking for the first wrong step…'));
        const probeReply = await session.send({ probes });
        if (probeReply.type === 'timeout') probeNote = PROBE_TIME_LIMIT_MESSAGE;
        else if (probeReply.type === 'done') {
          const probeResults = new Map(probeReply.results.map((r) => [r.id, r]));
          try {
            located = locate(challenge.diagnosis, probeResults, lab, locateOptions(judged));
          } catch (error) {
            console.warn('the diagnosis could not read the probe results', error); // the test results still stand
          }
          located = await withFirstLine(session, lab, located, probeResults, judged);
        }
      }
      showDiagnosis(judged, located, probeNote);
      $('diagnosis').dataset.ms = String(Math.round(performance.now() - started));
    } finally {
      session.close();
    }
  })().finally(() => { running = null; button.disabled = false; });
  return running;
}

/**
 * The traced run (the learner's code instrumented, in the same worker, under a fresh 2 s limit):
 * the finding checked against it and given its line (diagnosis/first-line.js). A timeout or an
 * unreadable run leaves the finding as it was.
 */
async function withFirstLine(session, lab, located, probeResults, judged) {
  const trace = traceCalls(challenge.diagnosis);
  if (!trace.length) return located;
  const reply = await session.send({ trace });
  if (reply.type !== 'done') return located;
  let found;
  try {
    found = firstLine({ data: challenge.diagnosis, traced: reply.traced, lab, located, errors: locateOptions(judged).errors, probeResults, source: code(), functionName: challenge.tests.function });
  } catch (error) {
    console.warn('the diagnosis could not align the traced run', error);
    return located;
  }
  // the line one small edit repairs (diagnosis/repair.js), in the worker: the search under its own 5 s limit
  // (cases.js's REPAIR_TIME_LIMIT_MS; its bounds count work), its check under 2 s
  try {
    return await repairFinding(found, { send: (message, limitMs) => session.send(message, limitMs), judged, source: code(), data: challenge.diagnosis, trace, original: reply.traced, lab, functionName: challenge.tests.function });
  } catch (error) {
    console.warn('the diagnosis could not check a repair', error);
    return found;
  }
}

/** Puts the cursor at the start of line `line` (1-based; the editor highlights the cursor's line) and scrolls it into view. */
function showLine(line) {
  if (!line || line > editor.state.doc.lines) return;
  const at = editor.state.doc.line(line);
  editor.dispatch({ selection: { anchor: at.from }, effects: EditorView.scrollIntoView(at.from, { y: 'center', x: 'start' }) });
}

// ---- results ----------------------------------------------------------------------

function showReply(reply, cases, seed, elapsed, modelCases = []) {
  const status = $('run-status');
  status.className = 'status';
  if (reply.type === 'timeout') {
    status.classList.add('fail');
    status.replaceChildren(el('strong', {}, 'Stopped: '), TIME_LIMIT_MESSAGE);
    return null;
  }
  if (reply.type !== 'done') {
    status.classList.add('fail');
    const where = reply.line ? ` (line ${reply.line}${reply.column ? `, column ${reply.column}` : ''})` : '';
    const label = PROBLEM_LABELS[reply.type];
    status.replaceChildren(el('strong', {}, `${label}${where}: `), `${reply.name && reply.type !== 'syntax' ? `${reply.name}: ` : ''}${reply.message}`);
    return null;
  }
  const byId = new Map(reply.results.map((r) => [r.id, r]));
  const judged = [...cases.map((c) => ({ ...c, result: byId.get(c.id), verdict: judge(c, byId.get(c.id)) })), ...modelCases];
  const passed = judged.filter((c) => c.verdict.pass).length;
  const all = passed === judged.length;
  status.classList.add(all ? 'pass' : 'fail');
  status.replaceChildren(el('strong', {}, all ? 'All tests pass. ' : `${passed} of ${judged.length} tests pass. `),
    `${elapsed} ms; random seed ${seed}.`, all ? ' Challenge solved ✓' : '');
  if (all) {
    progress.markSolved(challenge.id);
    $('solved-badge').hidden = false;
  }
  const groups = Object.entries(GROUP_TITLES);
  $('results').replaceChildren(...groups.filter(([kind]) => judged.some((c) => c.kind === kind)).map(([kind, title]) => {
    const items = judged.filter((c) => c.kind === kind);
    const ok = items.filter((c) => c.verdict.pass).length;
    return el('section', { class: 'result-group', 'data-kind': kind }, el('h3', {}, `${title}: ${ok} of ${items.length} pass`),
      el('ul', { class: 'cases' }, items.map(renderCase)));
  }));
  return judged;
}

/** The located step first (if any), then the catalogued mistakes the outputs match, else a NaN note. */
function showDiagnosis(judged, located, probeNote) {
  const fixed = judged.filter((c) => c.kind === 'fixed');
  const found = knownMistakes(challenge.tests, judged, located);
  const parts = [];
  if (located) parts.push(renderLocated(located));
  if (probeNote) parts.push(el('div', { class: 'diagnosis', role: 'alert' }, el('p', {}, probeNote)));
  if (found.length) {
    parts.push(el('div', { class: 'diagnosis', role: located ? null : 'alert' },
      el('h3', {}, mistakesHeading(found.length)),
      el('ul', {}, found.map((d) => el('li', { 'data-mistake': d.id }, el('strong', {}, `${d.title}. `), d.hint)))));
  } else if (!located) {
    const note = nonFiniteNote(fixed);
    if (note) parts.push(el('div', { class: 'diagnosis', role: 'alert' }, el('h3', {}, note.title), el('p', {}, note.detail)));
  }
  $('diagnosis').replaceChildren(...parts);
}

const shown = (M) => M.map((row) => (Array.isArray(row) ? row : [row]).map((x) => (typeof x === 'number' ? x : String(x?.unexpected ?? x))));

/** The first wrong step: what was found, on which probe input, expected vs yours for that step, and a walkthrough link. */
function renderLocated(found) {
  const heading = locatedHeading(found);
  const sides = [];
  const { expected, actual } = found;
  // weights: rows are queries, columns keys (as in the walkthrough)
  const axes = /weights/.test(expected?.label ?? '') ? { rowLabel: (r) => `q${r}`, colLabel: (c) => `k${c}` } : {};
  if (expected) sides.push(matrixTable(`expected ${expected.label}`, expected.matrix, { id: 'located-expected', ...axes }));
  if (actual && Array.isArray(actual.matrix) && actual.matrix.length && actual.matrix.every(Array.isArray)) {
    const values = shown(actual.matrix);
    const sameShape = expected && values.length === expected.matrix.length && values.every((row, r) => row.length === expected.matrix[r].length);
    const differs = (r, c) => !sameShape || !(typeof values[r][c] === 'number' && Math.abs(values[r][c] - expected.matrix[r][c]) <= 1e-7 * Math.max(1, Math.abs(expected.matrix[r][c])));
    sides.push(matrixTable(actual.label, values, {
      id: 'located-actual',
      ...(sameShape ? axes : {}),
      cellClass: (r, c) => (differs(r, c) ? 'differs' : ''),
      cellTitle: (r, c) => (differs(r, c) ? 'differs from the expected value' : undefined),
    }));
  }
  if (found.line) queueMicrotask(() => showLine(found.line));
  return el('section', { class: 'diagnosis located', role: 'alert', 'data-step': found.step ?? 'none', ...(found.line ? { 'data-line': String(found.line) } : {}), 'aria-labelledby': 'located-heading' },
    el('h3', { id: 'located-heading' }, heading),
    el('p', { class: 'located-title' }, el('strong', {}, found.title)),
    found.line ? el('pre', { class: 'line-text', 'aria-label': `line ${found.line} of your code` }, el('span', { class: 'line-number', 'aria-hidden': 'true' }, `${found.line} │`), el('code', {}, found.lineText)) : null,
    found.line ? el('p', {}, el('button', { type: 'button', class: 'line-link', onclick: () => { showLine(found.line); editor.focus(); } }, `Show line ${found.line} in the editor`)) : null,
    el('p', {}, found.detail),
    el('p', { class: 'hint' }, foundByLine(found)),
    sides.length ? el('div', { class: 'matrix-row side-by-side' }, sides) : null,
    found.walkthrough ? el('p', {}, el('a', { href: walkthroughHref(found.walkthrough), id: 'located-walkthrough' }, 'Open this step in the walkthrough, with these inputs →')) : null);
}

function renderCase(c) {
  const { pass, reason, differs } = c.verdict;
  const summary = el('summary', {}, el('span', { class: `verdict ${pass ? 'pass' : 'fail'}` }, pass ? '✓ pass' : '✗ fail'), ` ${c.name}`);
  const body = [];
  if (c.why) body.push(el('p', { class: 'why' }, c.why));
  if (reason) body.push(el('p', { class: 'reason' }, reason));
  if (c.result?.error && c.kind !== 'error') {
    const { name, message, line } = c.result.error;
    body.push(el('p', { class: 'exception' }, `${name}: ${message}${line ? ` (line ${line})` : ''}`));
  }
  if (c.kind === 'model') body.push(...c.render());
  else if (c.kind !== 'error') {
    const actual = c.result?.output;
    const sides = [matrixTable('expected', c.expected)];
    if (Array.isArray(actual) && actual.every(Array.isArray) && actual.length) {
      sides.push(matrixTable('your output', actual.map((row) => row.map((x) => (typeof x === 'number' ? x : String(x?.unexpected ?? x)))), {
        cellClass: (r, col) => (!differs || differs[r]?.[col] ? 'differs' : ''),
        cellTitle: (r, col) => (!differs || differs[r]?.[col] ? 'differs from the expected value' : undefined),
      }));
    } else if (actual !== undefined) {
      sides.push(el('p', { class: 'reason' }, `your output: ${JSON.stringify(actual)}`));
    }
    body.push(el('div', { class: 'matrix-row side-by-side' }, sides));
  }
  return el('li', { class: `case ${pass ? 'pass' : 'fail'}`, 'data-case': c.id }, el('details', { open: (!pass && c.kind === 'fixed') || c.kind === 'model' ? true : null }, summary, ...body));
}

// ---- reference answer ---------------------------------------------------------------

/**
 * The reference answer is offered (its button shown) once the tests have run RUNS_BEFORE_ANSWER
 * times; before that a line says when, with a quieter "show it now" for a learner who decides to look
 * anyway. Either way two confirmations come before the answer.
 */
function offerAnswer() {
  const runs = progress.runs(challenge.id);
  const offered = runs >= RUNS_BEFORE_ANSWER || progress.solved(challenge.id);
  $('show-answer').hidden = !offered;
  $('show-answer').disabled = !offered;
  const left = RUNS_BEFORE_ANSWER - runs;
  $('answer-offer').hidden = offered;
  $('answer-offer-text').textContent = runs === 0
    ? `The reference answer is offered after ${RUNS_BEFORE_ANSWER} runs of the tests. `
    : `The reference answer is offered after ${left} more run${left === 1 ? '' : 's'} of the tests (the results and hints usually get you there first). `;
}

function askForAnswer() {
  const area = $('answer-area');
  const ask = (question, yes, then) => {
    area.replaceChildren(el('div', { class: 'confirm', role: 'group', 'aria-label': 'Confirm' }, el('p', {}, question),
      el('button', { type: 'button', class: 'danger', onclick: then }, yes),
      el('button', { type: 'button', onclick: () => area.replaceChildren() }, 'No, keep trying')));
    area.querySelector('button').focus();
  };
  ask('Show the reference answer? Working it out yourself teaches far more.', 'Yes, show it', () =>
    ask('Are you sure? Once seen, it cannot be unseen.', 'Yes, I am sure', () => {
      area.replaceChildren(el('section', { class: 'answer', 'aria-labelledby': 'answer-heading' },
        el('h3', { id: 'answer-heading', tabindex: '-1' }, 'Reference answer'), el('pre', {}, el('code', {}, challenge.solution))));
      area.querySelector('h3').focus();
    }));
}

// ---- start ------------------------------------------------------------------------------

if (!challenge) {
  showFatal('There is no such challenge. Pick one on the home page.');
} else {
  renderLesson();
  createEditor();
  $('solved-badge').hidden = !progress.solved(challenge.id);
  offerAnswer();
  $('run-tests').addEventListener('click', runTests);
  $('show-answer').addEventListener('click', askForAnswer);
  $('answer-early').addEventListener('click', askForAnswer);
  $('reset-code').addEventListener('click', () => {
    editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: challenge.starter } });
    progress.clearCode(challenge.id);
  });
  $('editor').addEventListener('focusin', () => loadForRun().catch((error) => showFatal(`The WebAssembly reference could not be loaded: ${error.message}`)), { once: true });
}
