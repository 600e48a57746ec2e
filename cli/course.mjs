// Where the command finds the course: the challenges (lesson, starter, tests.json, and for 09, 10 and 11
// the model check: model-check.js, the modules it imports and model.json) and the site's own modules
// (cases.js, diagnosis/, variants.js, report.js, matrix.js, script.js, runner.worker.js). In the npm package they are
// under course/ (tests/package/assemble.mjs copies them there unchanged); in the repository the
// command runs from cli/ against www/src/ and challenges/ (and the Node build in target/pkg-node).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const PACKAGED = existsSync(fileURLToPath(new URL('../course/cases.js', import.meta.url)));
const SHARED = new URL(PACKAGED ? '../course/' : '../www/src/', import.meta.url);
const CHALLENGES_DIR = new URL(PACKAGED ? '../course/challenges/' : '../challenges/', import.meta.url);

/** The site's runner (the worker script that loads and calls the learner's code). */
export const RUNNER = new URL('runner.worker.js', SHARED);

const cases = await import(new URL('cases.js', SHARED));
const diagnosis = await import(new URL('diagnosis/locate.js', SHARED));
const firstLineModule = await import(new URL('diagnosis/first-line.js', SHARED));
const report = await import(new URL('report.js', SHARED));
const matrix = await import(new URL('matrix.js', SHARED));

/** The site's test run (www/src/cases.js). */
export const { buildCases, judge, TIME_LIMIT_MS, TIME_LIMIT_MESSAGE, PROBE_TIME_LIMIT_MESSAGE } = cases;
/** The site's first-wrong-step diagnosis (www/src/diagnosis/locate.js). */
export const { locate, probeCalls, walkthroughHref } = diagnosis;
/** The first wrong line: the traced run aligned with the reference (www/src/diagnosis/first-line.js). */
export const { firstLine, traceCalls } = firstLineModule;
export const { repairFinding } = await import(new URL('diagnosis/repaired.js', SHARED));
/** How the pages write a number (www/src/matrix.js). */
export const { formatNumber } = matrix;
/** The words of the page's results (www/src/report.js). */
export const { GROUP_TITLES, PROBLEM_LABELS, foundByLine, knownMistakes, locatedHeading, locateOptions, mistakesHeading, nonFiniteNote } = report;

/** The package itself (the Node build), for the reference answers; loaded on first use. */
export function loadLab() {
  const require = createRequire(import.meta.url);
  return require(PACKAGED ? '../node.cjs' : '../target/pkg-node/attention_lab.js');
}

/**
 * A challenge's model check (challenges/NN-…/model-check.js, the module the challenge page uses
 * too), imported on first use: 09's forwardCheck, 10's weightsCalls and weightsCases, 11's circuitsCalls and circuitsCases.
 */
export const modelCheckOf = (challenge) => import(new URL(`${challenge.id}/model-check.js`, CHALLENGES_DIR));

/**
 * The challenges in course order, as the site's challenges.js reads them: { id, number, title,
 * summary, functionName, readme, starter, tests }. Files are read when first asked for.
 */
export const CHALLENGES = readdirSync(CHALLENGES_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && /^\d\d-/.test(entry.name))
  .map((entry) => entry.name)
  .sort()
  .map((id) => {
    const file = (name) => readFileSync(new URL(`${id}/${name}`, CHALLENGES_DIR), 'utf8');
    const tests = JSON.parse(file('tests.json'));
    let diagnosis;
    return {
      id,
      number: id.slice(0, 2),
      title: tests.title,
      summary: tests.summary,
      functionName: tests.function,
      tests,
      get readme() { return file('README.md'); },
      get starter() { return file('starter.js'); },
      /** The challenge's diagnosis data (diagnosis.json: its probes and traced probe inputs), read once, or null (challenge 10). */
      get diagnosis() { diagnosis ??= existsSync(new URL(`${id}/diagnosis.json`, CHALLENGES_DIR)) ? JSON.parse(file('diagnosis.json')) : null; return diagnosis; },
      /** The trained model of a 'forward' model check (tests.json model.weights), as data. */
      get model() { return JSON.parse(file(tests.model.weights)); },
    };
  });

/** The challenge named by `02`, `2` or `02-multi-head-attention`; undefined for anything else. */
export function challengeByName(name) {
  const text = String(name ?? '').trim();
  if (/^\d{1,2}$/.test(text)) return CHALLENGES.find((c) => Number(c.number) === Number(text));
  return CHALLENGES.find((c) => c.id === text);
}
