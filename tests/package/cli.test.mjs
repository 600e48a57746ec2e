// The command `attention-lab` (pkg.json `bin`): the packed tarball installed into a fresh project,
// run as `npx attention-lab …` from there. Every challenge's solution passes (exit 0) and every
// starter fails (exit 1); on the corpus of mistakes (tests/corpus) the command gives the headline
// that the site's diagnosis gives, string for string; an infinite loop is stopped; usage errors
// exit 2 with one line; `--json` is valid JSON that lists every case.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, freshProject, temporaryDirectory } from './support.mjs';

const project = freshProject('cli');
const INSTALLED = join(project, 'node_modules/attention-lab');
const lab = createRequire(join(project, 'package.json'))('attention-lab');
const { locate, probeCalls } = await import(pathToFileURL(join(ROOT, 'www/src/diagnosis.js')));
const { foundByLine, locatedHeading, locateOptions } = await import(pathToFileURL(join(ROOT, 'www/src/report.js')));
const { buildCases, judge } = await import(pathToFileURL(join(ROOT, 'www/src/cases.js')));
/** The random cases' seed of the corpus runs, so that the page's run here draws the same cases. */
const SEED = 7;

const ALL_CHALLENGES = readdirSync(join(ROOT, 'challenges')).filter((f) => /^\d\d-/.test(f)).sort();
// challenge 10 is graded on the site only (its weights go into a Transformer): `check` refuses it with exit 2
const byWeights = (id) => JSON.parse(readFileSync(join(ROOT, 'challenges', id, 'tests.json'), 'utf8')).model?.kind === 'weights';
const CHALLENGES = ALL_CHALLENGES.filter((id) => !byWeights(id));
const testsOf = (id) => JSON.parse(readFileSync(join(ROOT, 'challenges', id, 'tests.json'), 'utf8'));
const caseCount = (tests) => tests.fixed.length + tests.random.count + tests.errors.length;

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
  for (const module of ['cases.js', 'diagnosis.js', 'variants.js', 'report.js', 'runner.worker.js']) {
    assert.equal(readFileSync(join(INSTALLED, 'course', module), 'utf8'), readFileSync(join(ROOT, 'www/src', module), 'utf8'), module);
  }
  for (const id of ALL_CHALLENGES) {
    for (const file of ['README.md', 'starter.js', 'tests.json']) {
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
    assert.match(stdout, new RegExp(`✓ All ${caseCount(testsOf(id))} tests pass\\. \\d+ ms; random seed \\d+\\. Challenge solved ✓`));
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
    return { error: { name: error?.name ?? 'thrown value', message: String(error?.message ?? error) } };
  }
}

/**
 * What the challenge page finds for an answer, computed here without the command: its function
 * run on the cases (cases.js, the same seed) and on the probes, then locate() with the options the
 * page gives it (report.js).
 */
async function siteDiagnosis(entry) {
  const copy = join(corpusCopies, `${entry.number}-${entry.file.replace(/\.js$/, '.mjs')}`);
  cpSync(entry.path, copy);
  const fn = (await import(pathToFileURL(copy)))[testsOf(entry.id).function];
  const judged = buildCases(testsOf(entry.id), lab, SEED).map((c) => {
    const result = call(fn, c.args);
    return { ...c, result, verdict: judge(c, result) };
  });
  const results = new Map(probeCalls(entry.id).map(({ id, args }) => [id, call(fn, args)]));
  return locate(entry.id, results, lab, locateOptions(judged));
}

/** The page's heading for a located finding (renderLocated in www/src/challenge.js). */
const pageHeading = locatedHeading;

test(`the corpus of mistakes (${CORPUS.length} answers): the site's headline, string for string, in the text and in --json`, async () => {
  assert.ok(CORPUS.length >= 150, `${CORPUS.length} corpus answers`);
  const runs = await pool(CORPUS, 3, async (entry) => ({
    text: await npx(['check', entry.number, entry.path, '--seed', String(SEED)], { bin: true }),
    json: await npx(['check', entry.number, entry.path, '--seed', String(SEED), '--json'], { bin: true }),
  }));
  for (const [i, entry] of CORPUS.entries()) {
    const where = `${entry.number}/${entry.file}`;
    const { text, json } = runs[i];
    const report = JSON.parse(json.stdout);
    const found = await siteDiagnosis(entry);
    const located = report.diagnosis?.located ?? null;
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
    [['check', '11', 'x.js'], /there is no challenge "11"/],
    [['check', '10', 'x.js'], /challenge 10 is graded by loading your weights into a Transformer and measuring its heads; the command cannot grade it yet/],
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
  assert.equal(calls, report.total + probeCalls('02-multi-head-attention').length, stderr);
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

test('list: every challenge in order, and whether the answer in ./<id>/ passes', async () => {
  const dir = scratch('list');
  mkdirSync(join(dir, '02-multi-head-attention'));
  cpSync(join(ROOT, 'challenges/02-multi-head-attention/solution.js'), join(dir, '02-multi-head-attention/multiHeadAttention.js'));
  assert.equal((await npx(['start', '03'], { cwd: dir })).status, 0);
  const text = await npx(['list'], { cwd: dir });
  assert.equal(text.status, 0, text.stderr);
  const lines = text.stdout.split('\n').filter((line) => /^\d\d {2}/.test(line));
  assert.deepEqual(lines.map((line) => line.slice(0, 2)), ALL_CHALLENGES.map((id) => id.slice(0, 2)));
  assert.match(lines[9], /graded on the site only/);
  assert.match(lines[1], /✓ passes \(02-multi-head-attention\/multiHeadAttention\.js\)$/);
  assert.match(lines[2], /✗ 0 of \d+ pass \(03-causal-mask\/dotProductAttention\.js\)$/);
  assert.match(lines[0], /not started$/);
  const json = JSON.parse((await npx(['list', '--json'], { cwd: dir })).stdout);
  assert.deepEqual(json.challenges.map((c) => [c.id, c.status]), ALL_CHALLENGES.map((id) => [id, { '02-multi-head-attention': 'pass', '03-causal-mask': 'fail' }[id] ?? (byWeights(id) ? 'site only' : null)]));
});
