// The command `attention-lab` (pkg.json `bin`): the packed tarball installed into a fresh project,
// run as `npx attention-lab …` from there. Every challenge's solution passes (exit 0) and every
// starter fails (exit 1); on the corpus of mistakes (tests/corpus) the command gives the headline
// that the site's diagnosis gives, string for string; the model checks of 09 and 10 give the page's
// verdicts, numbers and hints on their catalogued mistakes; an infinite loop is stopped (in the
// tests, the probes and the model); usage errors exit 2 with one line; `--json` is valid JSON that
// lists every case.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, freshProject, temporaryDirectory } from './support.mjs';
import { MISTAKES, WEIGHTS_MISTAKES, mistakenSource, solution } from '../mistakes.mjs';

const project = freshProject('cli');
const INSTALLED = join(project, 'node_modules/attention-lab');
const lab = createRequire(join(project, 'package.json'))('attention-lab');
const { locate, probeCalls } = await import(pathToFileURL(join(ROOT, 'www/src/diagnosis/locate.js')));
const { firstLine, traceCalls } = await import(pathToFileURL(join(ROOT, 'www/src/diagnosis/first-line.js')));
const { repairFinding } = await import(pathToFileURL(join(ROOT, 'www/src/diagnosis/repaired.js')));
// the learner's code loaded and traced as the runner does it (so errors carry the file's lines)
const { loadFunction, traced, worker } = await import(pathToFileURL(join(ROOT, 'tests/js/support/diagnose.mjs')));
const { lineOf } = await import(pathToFileURL(join(ROOT, 'www/src/script.js')));
const { foundByLine, knownMistakes, locatedHeading, locateOptions } = await import(pathToFileURL(join(ROOT, 'www/src/report.js')));
const { buildCases, judge } = await import(pathToFileURL(join(ROOT, 'www/src/cases.js')));
const { formatNumber } = await import(pathToFileURL(join(ROOT, 'www/src/matrix.js')));
// the model checks, as the challenge page (www/src/model-check.js) runs them
const { forwardCheck } = await import(pathToFileURL(join(ROOT, 'challenges/09-attention-in-a-model/model-check.js')));
const { weightsCalls, weightsCases } = await import(pathToFileURL(join(ROOT, 'challenges/10-induction-head/model-check.js')));
const { circuitsCalls, circuitsCases } = await import(pathToFileURL(join(ROOT, 'challenges/11-find-the-circuit/model-check.js')));
/** The random cases' seed of the corpus runs, so that the page's run here draws the same cases. */
const SEED = 7;

const CHALLENGES = readdirSync(join(ROOT, 'challenges')).filter((f) => /^\d\d-/.test(f)).sort();
/** The challenge without traced probes (its answer is weights, graded in a model). */
const testsOf = (id) => JSON.parse(readFileSync(join(ROOT, 'challenges', id, 'tests.json'), 'utf8'));
/** The cases of the model (tests.json `model`): 09 has one, 10 three per config (two heads and the loss). */
const modelCaseCount = (tests) => (tests.model?.kind === 'weights' ? 3 * tests.model.configs.length : tests.model?.kind === 'circuits' ? tests.model.kinds.length + 1 + (tests.model.naming ? tests.model.naming.cases.length + 1 : 0) : tests.model ? 1 : 0);
const caseCount = (tests) => tests.fixed.length + tests.random.count + tests.errors.length + modelCaseCount(tests);

/** The environment of a run: npm quiet (no notices, no spinner), no colour settings of ours. */
function environment(env = {}) {
  const base = { ...process.env, npm_config_loglevel: 'error', npm_config_progress: 'false', npm_config_update_notifier: 'false' };
  delete base.NO_COLOR;
  delete base.FORCE_COLOR;
  return { ...base, ...env };
}

/** A fresh folder inside the project (so that npx finds the project's attention-lab from it). */
const scratch = (name) => mkdtempSync(join(project, `${name}-`));

/**
 * `npx attention-lab …args` in `cwd` (the project by default): { status, stdout, stderr, ms }.
 * With `{ bin: true }`, what npx runs in the end: the project's node_modules/.bin/attention-lab
 * (the corpus runs it 200 times; npm's own start-up would double the time).
 */
function npx(args, { cwd = project, env = {}, bin = false } = {}) {
  const started = Date.now();
  const [command, prefix] = bin ? [join(project, 'node_modules/.bin/attention-lab'), []] : ['npx', ['--no-install', 'attention-lab']];
  return new Promise((resolve) => {
    execFile(command, [...prefix, ...args], { cwd, encoding: 'utf8', timeout: 120_000, env: environment(env) }, (error, stdout, stderr) => {
      resolve({ status: error ? error.code : 0, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** A value as the JSON report carries it: NaN and ±Infinity as the strings "NaN", "Infinity", "-Infinity". */
const asReported = (value) => JSON.parse(JSON.stringify(value, (_key, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v)));

/** `f` over `items`, `width` at a time (the machine's cores are shared). */
async function pool(items, width, f) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await f(items[i], i);
    }
  }));
  return results;
}

const noStackTrace = (text) => assert.doesNotMatch(text, /^\s+at .+:\d+:\d+\)?$/m, `a stack trace:\n${text}`);
const ESCAPE = /\x1b\[/;

test('the package ships the site\'s own modules, unchanged, and the command as its bin', () => {
  const diagnosis = readdirSync(join(ROOT, 'www/src/diagnosis')).filter((f) => f.endsWith('.js')).map((f) => `diagnosis/${f}`);
  for (const module of ['cases.js', 'variants.js', 'report.js', 'matrix.js', 'script.js', 'runner.worker.js', ...diagnosis]) {
    assert.equal(readFileSync(join(INSTALLED, 'course', module), 'utf8'), readFileSync(join(ROOT, 'www/src', module), 'utf8'), module);
  }
  // the model checks: the modules the page imports, and the trained model
  const modelFiles = { '09-attention-in-a-model': ['model-check.js', 'forward.js', 'model.json'], '10-induction-head': ['model-check.js', 'grade.js'], '11-find-the-circuit': ['model-check.js', 'model.json'] };
  for (const id of CHALLENGES) {
    for (const file of ['README.md', 'starter.js', 'tests.json', ...(existsSync(join(ROOT, 'challenges', id, 'diagnosis.json')) ? ['diagnosis.json'] : []), ...(modelFiles[id] ?? [])]) {
      assert.equal(readFileSync(join(INSTALLED, 'course/challenges', id, file), 'utf8'), readFileSync(join(ROOT, 'challenges', id, file), 'utf8'), `${id}/${file}`);
    }
    assert.ok(!existsSync(join(INSTALLED, 'course/challenges', id, 'solution.js')), `${id}: no solution in the package`);
  }
  assert.ok(existsSync(join(project, 'node_modules/.bin/attention-lab')), 'npm linked the bin');
  assert.ok(existsSync(join(INSTALLED, 'node_modules/acorn/package.json')), 'acorn is bundled (installed offline)');
});

test('every challenge\'s solution passes: exit 0, whichever way its id is written', async () => {
  const results = await pool(CHALLENGES, 2, (id, i) => {
    const name = [id.slice(0, 2), String(Number(id.slice(0, 2))), id][i % 3];
    return npx(['check', name, join(ROOT, 'challenges', id, 'solution.js')]);
  });
  CHALLENGES.forEach((id, i) => {
    const { status, stdout, stderr } = results[i];
    assert.equal(status, 0, `${id}:\n${stdout}${stderr}`);
    // a seed only where there are random cases (10 has none)
    const seed = testsOf(id).random.count ? '; random seed \\d+' : '';
    assert.match(stdout, new RegExp(`✓ All ${caseCount(testsOf(id))} tests pass\\. \\d+ ms${seed}\\. Challenge solved ✓`));
    assert.doesNotMatch(stdout, ESCAPE, 'no colour when piped');
  });
});

test('start writes the starter and the lesson (TeX left as TeX), never overwrites; every starter fails its check (exit 1)', async () => {
  const dir = scratch('start');
  const started = await pool(CHALLENGES, 2, (id) => npx(['start', id.slice(0, 2)], { cwd: dir }));
  CHALLENGES.forEach((id, i) => {
    const { status, stdout } = started[i];
    assert.equal(status, 0, stdout);
    const fn = testsOf(id).function;
    assert.equal(readFileSync(join(dir, id, `${fn}.js`), 'utf8'), readFileSync(join(ROOT, 'challenges', id, 'starter.js'), 'utf8'));
    const lesson = readFileSync(join(dir, id, `${id}.md`), 'utf8');
    assert.equal(lesson, readFileSync(join(ROOT, 'challenges', id, 'README.md'), 'utf8'));
    assert.match(lesson, /\$\$\n[^$]+\n\$\$/, `${id}: display math kept as TeX`);
    assert.match(stdout, new RegExp(`wrote ${id}/${fn}\\.js`));
  });
  const checked = await pool(CHALLENGES, 2, (id) => npx(['check', id], { cwd: dir }));
  CHALLENGES.forEach((id, i) => {
    const { status, stdout, stderr } = checked[i];
    assert.equal(status, 1, `${id}: the starter must fail\n${stdout}${stderr}`);
    assert.match(stdout, /✗ \d+ of \d+ tests pass\./);
    noStackTrace(stdout + stderr);
  });
  // a second start keeps the learner's work
  const answer = join(dir, CHALLENGES[1], `${testsOf(CHALLENGES[1]).function}.js`);
  writeFileSync(answer, '// my work\n');
  const again = await npx(['start', '2'], { cwd: dir });
  assert.equal(again.status, 0);
  assert.equal(readFileSync(answer, 'utf8'), '// my work\n');
  assert.match(again.stdout, /kept +02-multi-head-attention\/multiHeadAttention\.js: it exists/);
  // start into a folder of one's own
  const own = await npx(['start', '02-multi-head-attention', 'mine'], { cwd: dir });
  assert.equal(own.status, 0, own.stderr);
  assert.ok(existsSync(join(dir, 'mine/multiHeadAttention.js')) && existsSync(join(dir, 'mine/02-multi-head-attention.md')));
  assert.match(own.stdout, /npx attention-lab check 02 mine\/multiHeadAttention\.js/);
});

/** The corpus answers: tests/corpus/NN/*.js, each with its `// expect: <step>` line. */
const CORPUS = readdirSync(join(ROOT, 'tests/corpus')).sort().flatMap((number) => readdirSync(join(ROOT, 'tests/corpus', number))
  .filter((f) => f.endsWith('.js')).sort().map((file) => ({
    number,
    file,
    path: join(ROOT, 'tests/corpus', number, file),
    id: CHALLENGES.find((c) => c.startsWith(number)),
    expect: readFileSync(join(ROOT, 'tests/corpus', number, file), 'utf8').match(/^\/\/ expect: ([\w-]+)/)?.[1],
  })));

const corpusCopies = temporaryDirectory('cli-corpus');
/** The worker's answer for one call: { output } or { error: { name, message } }. */
function call(fn, args) {
  try {
    return { output: fn(...structuredClone(args)) };
  } catch (error) {
    return { error: { name: error?.name ?? 'thrown value', message: String(error?.message ?? error), ...lineOf(error) } };
  }
}

/**
 * What the challenge page makes of the answer in `file` (a module exporting the challenge's
 * function), computed here without the command, as runTests() in www/src/challenge.js does it: the
 * function run on the cases (cases.js, the same seed), then the model check (the challenge
 * folder's model-check.js, which www/src/model-check.js draws), then on the probes, locate() with
 * the options the page gives it and the known mistakes (report.js).
 * Resolves with { judged, modelCases, located, mistakes }.
 */
async function sitePage(id, file) {
  const tests = testsOf(id);
  const source = readFileSync(file, 'utf8');
  const fn = loadFunction(source, tests.function);
  const cases = buildCases(tests, lab, SEED).map((c) => {
    const result = call(fn, c.args);
    return { ...c, result, verdict: judge(c, result) };
  });
  let modelCases = [];
  if (tests.model?.kind === 'weights') {
    modelCases = weightsCases(lab, tests, weightsCalls(tests).map(({ id: callId, args }) => ({ id: callId, ...call(fn, args) })), formatNumber);
  } else if (tests.model?.kind === 'forward') {
    const model = JSON.parse(readFileSync(join(ROOT, 'challenges', id, tests.model.weights), 'utf8'));
    const sendProbes = async (probes) => ({ type: 'done', results: probes.map((p) => ({ id: p.id, ...call(fn, p.args) })) });
    modelCases = [await forwardCheck(lab, tests, model, sendProbes)];
  } else if (tests.model?.kind === 'circuits') {
    const model = JSON.parse(readFileSync(join(ROOT, 'challenges', id, tests.model.weights), 'utf8'));
    modelCases = circuitsCases(lab, tests, model, circuitsCalls(tests, model, lab).map(({ id: callId, args, function: other }) => ({ id: callId, ...call(other ? loadFunction(source, other) : fn, args) })), formatNumber);
  }
  const judged = [...cases, ...modelCases];
  const data = existsSync(join(ROOT, 'challenges', id, 'diagnosis.json')) ? JSON.parse(readFileSync(join(ROOT, 'challenges', id, 'diagnosis.json'), 'utf8')) : null;
  const results = new Map(probeCalls(data).map(({ id: probeId, args }) => [probeId, call(fn, args)]));
  // the page asks only when a case fails; asked of a right answer, locate() must find nothing
  const probed = locate(data, results, lab, locateOptions(judged));
  // then the traced run gives it its line (www/src/diagnosis/first-line.js), as the page does
  const original = data ? traced(source, tests.function, traceCalls(data)) : null;
  const found = data ? firstLine({ data, traced: original, lab, located: probed, errors: locateOptions(judged).errors, probeResults: results, source, functionName: tests.function }) : probed;
  // then the line one edit repairs (www/src/diagnosis/repaired.js), as the page asks the worker
  const located = data && traceCalls(data).length ? await repairFinding(found, { send: worker(source, tests.function), judged, source, data, trace: traceCalls(data), original, lab, functionName: tests.function }) : found;
  return { judged, modelCases, located, mistakes: knownMistakes(tests, judged, located).map(({ id: mistake, title, hint }) => ({ id: mistake, title, hint })) };
}

/** A module copy of an answer's source (the page runs a script; Node imports a module). */
function answerModule(name, source) {
  const file = join(corpusCopies, `${name}.mjs`);
  writeFileSync(file, source);
  return file;
}

/** What the corpus's site run locates for an answer. */
async function siteDiagnosis(entry) {
  const page = await sitePage(entry.id, answerModule(`${entry.number}-${entry.file.replace(/\.js$/, '')}`, readFileSync(entry.path, 'utf8')));
  return { ...page, found: page.located };
}

/** A model case as the --json report lists it (cli/check.mjs's caseReport). */
const modelEntry = (c) => asReported({ id: c.id, kind: c.kind, name: c.name, pass: c.verdict.pass, reason: c.verdict.reason || null, ...(c.why ? { why: c.why } : {}), model: c.model });

/** The page's heading for a located finding (renderLocated in www/src/challenge.js). */
const pageHeading = locatedHeading;

test(`the corpus of mistakes (${CORPUS.length} answers): the site's headline, string for string, in the text and in --json`, async () => {
  assert.ok(CORPUS.length >= 150, `${CORPUS.length} corpus answers`);
  // (two at a time, as many as CI's cores: each runs the repairs, whose 1.5 s guard a busier machine
  // reaches sooner, and the page's diagnosis, computed here after them, must match)
  const runs = await pool(CORPUS, 2, async (entry) => ({
    text: await npx(['check', entry.number, entry.path, '--seed', String(SEED)], { bin: true }),
    json: await npx(['check', entry.number, entry.path, '--seed', String(SEED), '--json'], { bin: true }),
  }));
  for (const [i, entry] of CORPUS.entries()) {
    const where = `${entry.number}/${entry.file}`;
    const { text, json } = runs[i];
    const report = JSON.parse(json.stdout);
    const { found, modelCases } = await siteDiagnosis(entry);
    const located = report.diagnosis?.located ?? null;
    // 09: the model check, as the page judges it: the same verdict, reason, numbers and patterns
    assert.deepEqual(report.cases.filter((c) => c.kind === 'model'), modelCases.map(modelEntry), `${where}: the model's cases`);
    for (const c of modelCases.filter((m) => !m.verdict.pass)) assert.ok(text.stdout.includes(`✗ ${c.name}: ${c.verdict.reason}`), `${where}: the model's verdict\n${text.stdout}`);
    assert.equal(text.status, report.status === 'pass' ? 0 : 1, `${where}:\n${text.stdout}${text.stderr}`);
    assert.equal(json.status, text.status, where);
    if (entry.expect === 'none') {
      assert.equal(text.status, 0, `${where} is right:\n${text.stdout}`);
      assert.equal(report.status, 'pass', where);
      assert.equal(found, null, where);
      assert.equal(report.diagnosis, null, where);
      continue;
    }
    assert.equal(text.status, 1, `${where}:\n${text.stdout}${text.stderr}`);
    assert.ok(found, `${where}: the site locates a step`);
    assert.ok(located, `${where}: the command locates a step`);
    assert.equal(located.step, found.step, where);
    assert.equal(located.step, entry.expect, `${where}: the corpus expects ${entry.expect}`);
    assert.equal(located.heading, pageHeading(found), where);
    assert.equal(located.title, found.title, where);
    // the line: in --json, and in the text as file:line with that line of the file under it
    assert.ok(Number.isInteger(found.line), `${where}: a line`);
    assert.equal(report.diagnosis.line, found.line, `${where}: diagnosis.line`);
    assert.ok(text.stdout.includes(`${entry.path}:${found.line}`), `${where}: file:line\n${text.stdout}`);
    assert.ok(text.stdout.includes(`│ ${found.lineText}`), `${where}: the source line\n${text.stdout}`);
    assert.equal(located.detail, found.detail, where);
    assert.equal(located.foundBy, foundByLine(found), where);
    assert.deepEqual(located.expected, asReported(found.expected), `${where}: expected for the step`);
    assert.deepEqual(located.actual, asReported(found.actual), `${where}: actual for the step`);
    const lines = text.stdout.split('\n').map((line) => line.trim());
    assert.ok(lines.includes(pageHeading(found)), `${where}: the heading line\n${text.stdout}`);
    assert.ok(lines.includes(found.title), `${where}: the title line\n${text.stdout}`);
    assert.ok(lines.includes(foundByLine(found)), `${where}: how it was found\n${text.stdout}`);
    if (found.walkthrough) {
      assert.equal(located.walkthrough, `http://127.0.0.1:8080/walkthrough.html?${new URL(located.walkthrough).searchParams}`);
      assert.ok(lines.includes(located.walkthrough), `${where}: the walkthrough link`);
      assert.equal(new URL(located.walkthrough).searchParams.get('Q'), JSON.stringify(found.walkthrough.Q));
    }
  }
});

test('a catalogued mistake gets its hint; --site moves the walkthrough link', async () => {
  const { status, stdout } = await npx(['check', '02', join(ROOT, 'tests/corpus/02/03-scale-by-C.js'), '--site', 'https://example.org/course']);
  assert.equal(status, 1);
  const variants = await import(pathToFileURL(join(ROOT, 'www/src/variants.js')));
  assert.match(stdout, /^This looks like a known mistake$/m);
  assert.ok(stdout.includes(`${variants.VARIANTS['scale-by-C'].title}. ${variants.VARIANTS['scale-by-C'].hint}`), stdout);
  assert.match(stdout, /^ {2}https:\/\/example\.org\/course\/walkthrough\.html\?Q=/m);
  assert.match(stdout, /^ {2}expected weights_0/m, 'expected against actual for the step');
});

const C09 = '09-attention-in-a-model';
const C10 = '10-induction-head';
const C11 = '11-find-the-circuit';
const starterOf = (id) => readFileSync(join(ROOT, 'challenges', id, 'starter.js'), 'utf8');
/**
 * Answers to the two challenges graded in a model: 09's catalogued mistakes (tests/mistakes.mjs,
 * the variants the page names), 10's wrong answers (WEIGHTS_MISTAKES), the folder's one-layer
 * counter-example, weights the model refuses, a function that throws on one config, and the starters.
 */
const MODEL_ANSWERS = [
  ...MISTAKES.filter((m) => m.challenge === C09).map((m) => ({ id: C09, name: `09-${m.id}`, source: mistakenSource(m), mistake: m })),
  { id: C09, name: '09-starter', source: starterOf(C09) },
  ...WEIGHTS_MISTAKES.map((m) => ({ id: C10, name: `10-${m.id}`, source: mistakenSource(m), mistake: m })),
  { id: C10, name: '10-one-layer', source: readFileSync(join(ROOT, 'challenges', C10, 'one-layer.js'), 'utf8').replace('export function oneLayerWeights(', 'export function inductionWeights(') },
  { id: C10, name: '10-wrong-shapes', source: 'export function inductionWeights() { return { W_U: [[1]], layers: [] }; }\n' },
  { id: C10, name: '10-throws-on-one-config', source: solution(C10).replace('  const C = embedDim;\n', "  if (vocabSize === 12) throw new RangeError('twelve tokens are too many for me');\n  const C = embedDim;\n") },
  { id: C10, name: '10-starter', source: starterOf(C10) },
  { id: C11, name: '11-k-as-q', source: solution(C11).replace('k: (h) => transpose(qk(second, h))', 'k: (h) => qk(second, h)') },
  { id: C11, name: '11-no-norms', source: solution(C11).replace('norm(matMul(a, b)) / (norm(a) * norm(b))', 'norm(matMul(a, b))') },
  { id: C11, name: '11-starter', source: starterOf(C11) },
];

test(`09, 10 and 11, ${MODEL_ANSWERS.length} wrong answers: the page's verdicts of the model, the same head named, the same numbers and hints, in the text and in --json`, async () => {
  assert.ok(MODEL_ANSWERS.every((a) => a.source.includes(`export function ${testsOf(a.id).function}(`)), 'every answer exports the function');
  assert.ok(MODEL_ANSWERS.filter((a) => a.id !== C09).every((a) => a.source !== solution(a.id)), 'every edit applies');
  const runs = await pool(MODEL_ANSWERS, 2, async (answer) => {
    const file = join(project, `model-answer-${answer.name}.js`);
    writeFileSync(file, answer.source);
    return {
      text: await npx(['check', answer.id.slice(0, 2), file, '--seed', String(SEED)], { bin: true }),
      json: await npx(['check', answer.id.slice(0, 2), file, '--seed', String(SEED), '--json'], { bin: true }),
    };
  });
  for (const [i, answer] of MODEL_ANSWERS.entries()) {
    const { text, json } = runs[i];
    const where = `${answer.name}:\n${text.stdout}${text.stderr}`;
    const report = JSON.parse(json.stdout);
    const page = await sitePage(answer.id, answerModule(`model-${answer.name}`, answer.source));
    assert.equal(text.status, 1, where);
    assert.equal(json.status, 1, where);
    assert.equal(report.status, 'fail', where);
    // the same cases of the model, with every verdict, reason, number, hint and pattern
    const fromPage = page.modelCases.map(modelEntry);
    assert.ok(fromPage.length > 0, where);
    assert.deepEqual(report.cases.filter((c) => c.kind === 'model'), fromPage, where);
    assert.equal(report.total, page.judged.length, where);
    assert.equal(report.passed, page.judged.filter((c) => c.verdict.pass).length, where);
    assert.match(text.stdout, new RegExp(`^✗ ${report.passed} of ${report.total} tests pass\\.`, 'm'), where);
    // the same diagnosis: the located step (09) and the known mistakes the page names
    assert.deepEqual(report.diagnosis.mistakes, page.mistakes, where);
    assert.equal(report.diagnosis.located?.title ?? null, page.located?.title ?? null, where);
    if (answer.mistake && answer.id === C09) assert.ok(page.mistakes.some((m) => m.id === answer.mistake.id), `${answer.name}: the page names the mistake`);
    // the text says what the page says, line for line (piped: lines are not wrapped)
    for (const c of page.modelCases) {
      if (c.verdict.pass) {
        const score = c.model.score ?? c.model.scores?.[0];
        assert.ok(text.stdout.includes(`✓ ${c.name}`), `${where}: ${c.name}`);
        if (score) assert.ok(text.stdout.includes(`${score.label}: ${score.text}`), `${where}: the score of ${c.name}`);
        continue;
      }
      assert.ok(text.stdout.includes(`✗ ${c.name}: ${c.verdict.reason}`), `${where}: the verdict of ${c.name}`);
      if (c.model.hint) assert.ok(text.stdout.includes(`      ${c.model.hint.text}`), `${where}: the hint of ${c.name}`);
      if (c.model.kind === 'head') {
        assert.match(text.stdout, new RegExp(`^ {4}${c.model.yours.caption} +${c.model.expected.caption}$`, 'm'), `${where}: the head's pattern next to the expected one`);
      }
    }
    // 10's wrong answers: the heads and the loss that fail, and how each failing head is read
    if (answer.mistake && answer.id === C10) {
      const { fails, hints } = answer.mistake;
      for (const n of testsOf(C10).model.configs.keys()) {
        const ofConfig = report.cases.filter((c) => c.id.startsWith(`weights-${n}-`));
        assert.deepEqual(ofConfig.filter((c) => !c.pass).map((c) => c.id.slice(`weights-${n}-`.length)), fails, `${answer.name}, config ${n}`);
        assert.deepEqual(Object.fromEntries(ofConfig.filter((c) => c.model.hint).map((c) => [c.model.check, c.model.hint.reason])), hints, `${answer.name}, config ${n}`);
      }
    }
  }
  // named, as the page names them
  const byName = (name) => JSON.parse(runs[MODEL_ANSWERS.findIndex((a) => a.name === name)].json.stdout);
  assert.match(byName('09-mask-off-by-one').cases.at(-1).reason, /^with your attention the model predicts \d+\.\d % of the repeated tokens; with the reference, 95\.8 %$/);
  assert.equal(byName('09-starter').cases.at(-1).reason, 'the model could not run on your function: your function threw on layer 1: Error: not written yet');
  assert.match(byName('10-k-composition-broken').cases[1].reason, /^the induction head is not doing its job: layer 2, head 0 has an induction score of 0\.\d{4}$/);
  // one layer of weights: setWeights keeps the second layer the model was made with, and nothing copies
  assert.deepEqual(byName('10-one-layer').cases.map((c) => c.pass), [false, false, false, false, false, false]);
  assert.equal(byName('10-one-layer').cases[0].reason, 'the previous-token head is not doing its job: layer 1, head 0 has a previous-token score of 0.0000');
  assert.deepEqual(byName('10-wrong-shapes').cases.map((c) => c.id), ['weights-0', 'weights-1']);
  assert.match(byName('10-wrong-shapes').cases[0].reason, /^the model refused your weights: RangeError: .*W_U/);
  assert.deepEqual(byName('10-throws-on-one-config').cases.map((c) => [c.id, c.pass]), [['weights-0-previous-token', true], ['weights-0-induction', true], ['weights-0-loss', true], ['weights-1', false]]);
  assert.equal(byName('10-throws-on-one-config').cases[3].reason, 'your function threw: RangeError: twelve tokens are too many for me');
  // 11: K computed as Q is named as such, and its strongest row names another head; the starter reaches no model case
  const kAsQ = byName('11-k-as-q').cases.filter((c) => c.kind === 'model');
  assert.deepEqual(kAsQ.map((c) => [c.id, c.pass]), [['circuits-q', true], ['circuits-k', false], ['circuits-v', true], ['circuits-heads', false], ['naming-0', true], ['naming-1', true], ['naming-2', true], ['naming-3', true]]);
  assert.equal(kAsQ[1].model.hint.kind, 'q');
  assert.match(kAsQ[3].reason, /^your K-composition's strongest row is layer-1 head [1-3], but the previous-token head is head 0$/);
  assert.deepEqual(byName('11-no-norms').cases.filter((c) => c.kind === 'model').map((c) => c.pass), [false, false, false, true, true, true, true, true]);
  assert.ok(byName('11-starter').cases.filter((c) => c.kind === 'model').every((c) => !c.pass && /^your (function threw: Error: not written yet|function gave no K-composition|nameHeads threw: Error: nameHeads is not written yet)/.test(c.reason)));
});

test('the model checks keep the learner\'s code in the sandbox: an endless loop is stopped on 10\'s call and on 09\'s model sequences', async () => {
  writeFileSync(join(project, 'weights-loop.js'), 'export function inductionWeights() { while (true) {} }\n');
  const weights = await npx(['check', '10', 'weights-loop.js']);
  assert.equal(weights.status, 1, weights.stderr);
  assert.match(weights.stdout, /^✗ Stopped: your code ran longer than 2 s \(an infinite loop\?\)$/m);
  assert.ok(weights.ms < 20_000, `took ${weights.ms} ms`);
  // right on every case (at most 6 tokens), endless on the model's sequences of 25
  const code = solution(C09).replace(/export function multiHeadAttention\([^)]*\) \{/, '$&\n  if (Q.length === 25) while (true) {}');
  assert.match(code, /while \(true\)/);
  writeFileSync(join(project, 'model-loop.js'), code);
  const model = await npx(['check', '09', 'model-loop.js', '--json']);
  assert.equal(model.status, 1, model.stderr);
  const report = JSON.parse(model.stdout);
  assert.equal(report.passed, report.total - 1, 'every case but the model passes');
  assert.equal(report.cases.at(-1).reason, `the model could not run on your function: your function ran longer than 2 s on layer 1's ${testsOf(C09).model.evaluation.batch} sequences`);
  assert.equal(report.cases.at(-1).model.accuracy, null);
  assert.ok(model.ms < 30_000, `took ${model.ms} ms`);
});

test('an infinite loop is stopped after 2 s, in the tests and in the probes', async () => {
  const loop = await npx(['check', '02', 'infinite-loop.js']);
  assert.equal(loop.status, 1);
  assert.match(loop.stdout, /^✗ Stopped: your code ran longer than 2 s \(an infinite loop\?\)$/m);
  assert.ok(loop.ms < 20_000, `took ${loop.ms} ms`);
  // wrong on every case (no scaling), endless on the probes of six tokens only
  const code = readFileSync(join(ROOT, 'tests/corpus/02/05-no-scaling.js'), 'utf8')
    .replace('export function multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, W_O }) {', '$&\n  if (Q.length === 6) while (true) {}');
  assert.match(code, /while \(true\)/);
  writeFileSync(join(project, 'probe-loop.js'), code);
  const probes = await npx(['check', '02', 'probe-loop.js', '--json']);
  assert.equal(probes.status, 1);
  const report = JSON.parse(probes.stdout);
  assert.equal(report.status, 'fail');
  assert.ok(report.cases.length === caseCount(testsOf('02-multi-head-attention')), 'the test results stay');
  assert.match(report.diagnosis.probeNote, /longer than 2 s on the probe inputs/);
});

test('code that cannot be run gets one clear line and exit 1: syntax error, missing export, a throw while loading', async () => {
  const cases = [
    ['syntax-error.js', /^✗ Syntax error \(syntax-error\.js line 3, column 42\): Unexpected token$/m],
    ['no-export.js', /^✗ Missing function \(no-export\.js\): your code does not export a function named multiHeadAttention/m],
    ['throws-on-load.js', /^✗ Your code threw while loading \(throws-on-load\.js line 3, column \d+\): TypeError: Cannot read properties of undefined \(reading 'length'\)$/m],
  ];
  for (const [file, line] of cases) {
    const { status, stdout, stderr } = await npx(['check', '02', file]);
    assert.equal(status, 1, file);
    assert.match(stdout, line);
    assert.equal(stdout.trim().split('\n').length, 2, `a title and one line:\n${stdout}`);
    noStackTrace(stdout + stderr);
  }
});

test('usage errors exit 2 with one line on stderr, and no stack trace', async () => {
  const dir = scratch('usage');
  mkdirSync(join(dir, 'a-folder'));
  const cases = [
    [[], /which command\?/],
    [['grade'], /unknown command "grade"/],
    [['check'], /which challenge\?/],
    [['check', '12', 'x.js'], /there is no challenge "12"/],
    [['check', 'multi-head', 'x.js'], /there is no challenge "multi-head"/],
    [['check', '02', 'missing.js'], /cannot read missing\.js: no such file$/m],
    [['check', '02'], /cannot read 02-multi-head-attention\/multiHeadAttention\.js: no such file \(run `attention-lab start 02` to create it\)/],
    [['check', '02', 'a-folder'], /a-folder is a folder/],
    [['check', '02', 'x.js', 'y.js'], /check takes a challenge and a file/],
    [['check', '02', 'x.js', '--seed', 'abc'], /--seed must be a whole number/],
    [['check', '02', 'x.js', '--site', 'ftp://x'], /--site must be an http\(s\) address/],
    [['check', '02', 'x.js', '--colour'], /Unknown option '--colour'/],
    [['list', 'extra'], /list takes no arguments/],
    [['start'], /which challenge\?/],
    [['start', '02', 'dir', 'more'], /start takes a challenge and a folder/],
  ];
  for (const [args, message] of cases) {
    const { status, stdout, stderr } = await npx(args, { cwd: dir });
    assert.equal(status, 2, `${args.join(' ')}: ${stderr}`);
    assert.equal(stdout, '');
    const lines = stderr.trim().split('\n');
    assert.equal(lines.length, 2, stderr);
    assert.match(lines[0], /^attention-lab: /);
    assert.match(lines[0], message);
    assert.equal(lines[1], 'Run `attention-lab --help` for usage.');
  }
  const json = await npx(['check', '02', 'missing.js', '--json'], { cwd: dir });
  assert.equal(json.status, 2);
  assert.deepEqual(JSON.parse(json.stdout), { error: { type: 'usage', message: 'cannot read missing.js: no such file' } });
  const help = await npx(['--help'], { cwd: dir });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^Usage: attention-lab <command>/);
});

test('--json is valid JSON that lists every case, with the seed that reproduces the random ones', async () => {
  const id = '02-multi-head-attention';
  const tests = testsOf(id);
  const runs = await Promise.all([
    npx(['check', '2', join(ROOT, 'challenges', id, 'starter.js'), '--json', '--seed', '12345']),
    npx(['check', '2', join(ROOT, 'tests/corpus/02/16-heads-reversed.js'), '--json', '--seed', '12345']),
    npx(['check', '2', join(ROOT, 'tests/corpus/02/16-heads-reversed.js'), '--json', '--seed', '12345']),
  ]);
  const [starter, wrong, again] = runs.map((r) => JSON.parse(r.stdout));
  for (const report of [starter, wrong]) {
    assert.equal(report.seed, 12345);
    assert.equal(report.challenge.id, id);
    assert.equal(report.cases.length, caseCount(tests));
    assert.equal(report.total, report.cases.length);
    assert.deepEqual(report.cases.filter((c) => c.kind === 'fixed').map((c) => c.name), tests.fixed.map((c) => c.name));
    assert.deepEqual(report.cases.filter((c) => c.kind === 'error').map((c) => c.name), tests.errors.map((c) => c.name));
    assert.equal(report.cases.filter((c) => c.kind === 'random').length, tests.random.count);
    assert.equal(new Set(report.cases.map((c) => c.id)).size, report.cases.length);
    assert.equal(report.passed, report.cases.filter((c) => c.pass).length);
    for (const c of report.cases) assert.equal(typeof c.pass, 'boolean');
  }
  assert.equal(starter.passed, 0);
  assert.equal(starter.cases[0].error.message, 'not written yet');
  // the same seed, the same random cases
  assert.deepEqual(wrong.cases.map((c) => c.args ?? null), again.cases.map((c) => c.args ?? null));
  assert.ok(wrong.cases.some((c) => c.kind === 'random' && !c.pass && Array.isArray(c.expected) && Array.isArray(c.output)));
});

test('the sandbox: no network globals, no process bindings, kill or file access, an empty environment; import() is refused', async () => {
  const { stdout } = await npx(['check', '02', 'reaches-out.js'], { env: { SECRET_TOKEN: 'x' } });
  assert.match(stdout, /Error: fetch: refused; globalThis\.fetch: refused; WebSocket: refused; getBuiltinModule: refused; binding: refused; env: undefined; kill: refused; loadEnvFile: refused; report: refused/);
  // import() settles asynchronously: ask the installed sandbox directly until it has
  const { learnerWorker } = await import(pathToFileURL(join(INSTALLED, 'cli/session.mjs')));
  const { RUNNER } = await import(pathToFileURL(join(INSTALLED, 'cli/course.mjs')));
  const session = learnerWorker(RUNNER);
  try {
    const code = `let state = 'pending';
import('node:net').then(() => { state = 'reached'; }, (error) => { state = 'refused: ' + error.message; });
export function f() { return [[state]]; }`;
    let reply = await session.send({ code, functionName: 'f', cases: [{ id: 'a', args: [] }] });
    for (let i = 0; i < 50 && reply.results[0].output[0][0].unexpected === 'a string (pending)'; i++) {
      await new Promise((done) => setTimeout(done, 40));
      reply = await session.send({ probes: [{ id: 'a', args: [] }] });
    }
    assert.match(reply.results[0].output[0][0].unexpected, /^a string \(refused: imports are not available/);
  } finally {
    await session.close();
  }
});

test('what the learner\'s code prints goes to stderr, all of it (tests and probes), and --json stays valid', async () => {
  const { status, stdout, stderr } = await npx(['check', '02', 'prints.js', '--json']);
  assert.equal(status, 1);
  const report = JSON.parse(stdout);
  const calls = stderr.split('\n').filter((line) => line === 'called').length;
  assert.equal(stderr.split('\n').filter((line) => line === 'loaded').length, 1);
  const data = JSON.parse(readFileSync(join(ROOT, 'challenges', '02-multi-head-attention', 'diagnosis.json'), 'utf8'));
  assert.equal(calls, report.total + probeCalls(data).length, stderr);
});

test('colour on a terminal only, and never with NO_COLOR', async (t) => {
  const piped = await npx(['check', '02', 'no-export.js'], { env: { FORCE_COLOR: '1' } });
  assert.doesNotMatch(piped.stdout, ESCAPE, 'piped: plain');
  // a learner's terminal: script(1) gives the command a pseudo-terminal. Node decides how many
  // colours it has (tty.getColorDepth): a CI runner's own CI or NODE_DISABLE_COLORS would say two, so
  // they are left out here, and checked on their own below.
  const onTerminal = (env) => new Promise((resolve) => {
    const learner = environment({ TERM: 'xterm-256color', ...env });
    for (const name of ['CI', 'NODE_DISABLE_COLORS']) if (!(name in env)) delete learner[name];
    execFile('script', ['-qec', 'npx --no-install attention-lab check 02 no-export.js', '/dev/null'], {
      cwd: project, encoding: 'utf8', env: learner,
    }, (error, stdout) => resolve({ status: error ? error.code : 0, stdout }));
  });
  if (!existsSync('/usr/bin/script')) {
    t.skip('no script(1) here to give the command a terminal');
    return;
  }
  const coloured = await onTerminal({});
  assert.equal(coloured.status, 1);
  assert.match(coloured.stdout, /\x1b\[31m✗ Missing function/, 'a terminal: coloured');
  const plain = await onTerminal({ NO_COLOR: '1' });
  assert.match(plain.stdout, /Missing function/);
  assert.doesNotMatch(plain.stdout, ESCAPE, 'NO_COLOR: plain');
  // a CI runner's log is a terminal that Node gives two colours: plain, as every Node tool there
  const onCi = await onTerminal({ CI: 'true' });
  assert.match(onCi.stdout, /Missing function/);
  assert.doesNotMatch(onCi.stdout, ESCAPE, 'CI: plain');
});

test('list: every challenge in order, and whether the answer in ./<id>/ passes (09 and 10 graded in their model too)', async () => {
  const dir = scratch('list');
  const place = (id, source) => {
    mkdirSync(join(dir, id));
    writeFileSync(join(dir, id, `${testsOf(id).function}.js`), source);
  };
  place('02-multi-head-attention', solution('02-multi-head-attention'));
  place(C10, solution(C10));
  // right on the cases, wrong in the model: a mask one key too wide only on the model's sequences
  place(C09, solution(C09).replace('(j <= i ? x : -Infinity)', '(j <= i + (Q.length === 25 ? 1 : 0) ? x : -Infinity)'));
  assert.equal((await npx(['start', '03'], { cwd: dir })).status, 0);
  const text = await npx(['list'], { cwd: dir });
  assert.equal(text.status, 0, text.stderr);
  const lines = text.stdout.split('\n').filter((line) => /^\d\d {2}/.test(line));
  assert.deepEqual(lines.map((line) => line.slice(0, 2)), CHALLENGES.map((id) => id.slice(0, 2)));
  assert.match(lines[1], /✓ passes \(02-multi-head-attention\/multiHeadAttention\.js\)$/);
  assert.match(lines[2], /✗ 0 of \d+ pass \(03-causal-mask\/dotProductAttention\.js\)$/);
  assert.match(lines[0], /not started$/);
  const total09 = caseCount(testsOf(C09));
  assert.match(lines[8], new RegExp(`✗ ${total09 - 1} of ${total09} pass \\(09-attention-in-a-model/multiHeadAttention\\.js\\)$`));
  assert.match(lines[9], /✓ passes \(10-induction-head\/inductionWeights\.js\)$/);
  const json = JSON.parse((await npx(['list', '--json'], { cwd: dir })).stdout);
  const expected = { '02-multi-head-attention': 'pass', '03-causal-mask': 'fail', [C09]: 'fail', [C10]: 'pass' };
  assert.deepEqual(json.challenges.map((c) => [c.id, c.status]), CHALLENGES.map((id) => [id, expected[id] ?? null]));
  assert.deepEqual(json.challenges.find((c) => c.id === C09).passed, total09 - 1);
});
