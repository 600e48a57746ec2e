// `attention-lab check`: one run of a challenge's tests on the learner's code, as the challenge
// page's runTests() does it, returned as plain data (the report that `--json` prints and that
// ./format.mjs turns into text). Same cases (buildCases), same verdicts (judge), same worker
// script (the site's runner, in ./session.mjs's sandbox), the same model checks for 09 and 10 (the
// challenge folder's model-check.js: the learner's code answers in the sandbox, the package's
// Transformer runs here, outside it), and on a failure the same diagnosis: the probes and locate()
// of diagnosis/locate.js, then the known mistakes, as report.js says.
import {
  buildCases, judge, locate, probeCalls, firstLine, traceCalls, repairFinding, walkthroughHref, loadLab, modelCheckOf, formatNumber, RUNNER,
  TIME_LIMIT_MESSAGE, PROBE_TIME_LIMIT_MESSAGE, foundByLine, knownMistakes, locatedHeading, locateOptions, nonFiniteNote,
} from './course.mjs';
import { learnerWorker } from './session.mjs';

/** Where the walkthrough links point unless --site says otherwise: `make start`'s address. */
export const DEFAULT_SITE = 'http://127.0.0.1:8080/';

/**
 * Runs `challenge`'s tests on `code` (the text of the learner's module) with random cases drawn
 * from `seed`. `site` is the course site's base URL for walkthrough links. Resolves with the
 * report: { challenge, file, seed, status, problem, passed, total, elapsedMs, cases, diagnosis }.
 * status: 'pass', 'fail', or why the code could not be tested: 'syntax', 'load-error',
 * 'missing' (no such export), 'timeout'.
 */
export async function check({ challenge, code, file, seed, site = DEFAULT_SITE, output }) {
  const lab = loadLab();
  const { tests } = challenge;
  const cases = buildCases(tests, lab, seed);
  // challenge 10: the function returns a model's weights, called once per graded config
  const weights = tests.kind === 'weights';
  const modelCheck = tests.model ? await modelCheckOf(challenge) : null;
  const report = {
    challenge: { id: challenge.id, number: challenge.number, title: challenge.title, function: challenge.functionName },
    file,
    seed,
    status: 'fail',
    problem: null,
    passed: 0,
    total: cases.length, // and the model's cases, once they are judged
    elapsedMs: 0,
    cases: [],
    diagnosis: null,
  };
  const started = performance.now();
  const session = learnerWorker(RUNNER, output);
  try {
    const calls = weights ? modelCheck.weightsCalls(tests) : cases.map(({ id, args }) => ({ id, args }));
    const reply = await session.send({ code, functionName: challenge.functionName, cases: calls, deep: weights });
    report.elapsedMs = Math.round(performance.now() - started);
    if (reply.type === 'timeout') {
      report.status = 'timeout';
      report.problem = { type: 'timeout', message: TIME_LIMIT_MESSAGE };
      return report;
    }
    if (reply.type !== 'done') {
      report.status = reply.type;
      report.problem = { type: reply.type, name: reply.name ?? null, message: reply.message, line: reply.line ?? null, column: reply.column ?? null };
      return report;
    }
    // the model checks (tests.json `model`): extra cases of kind 'model', judged as on the page
    let modelCases = [];
    if (weights) modelCases = modelCheck.weightsCases(lab, tests, reply.results, formatNumber);
    else if (tests.model?.kind === 'forward') modelCases = [await modelCheck.forwardCheck(lab, tests, challenge.model, (probes) => session.send({ probes }))];
    else if (tests.model?.kind === 'circuits') modelCases = await circuitsCases(modelCheck, lab, tests, challenge.model, session);
    const byId = new Map(reply.results.map((r) => [r.id, r]));
    const judged = [...cases.map((c) => ({ ...c, result: byId.get(c.id), verdict: judge(c, byId.get(c.id)) })), ...modelCases];
    report.cases = judged.map(caseReport);
    report.total = judged.length;
    report.passed = judged.filter((c) => c.verdict.pass).length;
    report.elapsedMs = Math.round(performance.now() - started);
    if (report.passed === report.total) {
      report.status = 'pass';
      return report;
    }
    let located = null;
    let probeNote = null;
    const probes = probeCalls(challenge.diagnosis);
    if (probes.length) {
      const probeReply = await session.send({ probes });
      if (probeReply.type === 'timeout') probeNote = PROBE_TIME_LIMIT_MESSAGE;
      else if (probeReply.type === 'done') {
        const probeResults = new Map(probeReply.results.map((r) => [r.id, r]));
        try {
          located = locate(challenge.diagnosis, probeResults, lab, locateOptions(judged));
        } catch {
          located = null; // as on the page: the test results still stand
        }
        located = await withFirstLine(session, challenge, lab, located, probeResults, judged, code);
      }
    }
    report.diagnosis = diagnosisReport(challenge, judged, located, probeNote, site);
    report.elapsedMs = Math.round(performance.now() - started);
    return report;
  } finally {
    await session.close();
  }
}

/** Challenge 11's model check: the learner's function on the trained model's layers, in the sandbox, then judged here (as www/src/model-check.js does). */
async function circuitsCases(modelCheck, lab, tests, model, session) {
  const reply = await session.send({ probes: modelCheck.circuitsCalls(tests, model, lab) });
  const results = reply.type === 'done'
    ? reply.results
    : modelCheck.circuitsCalls(tests, model, lab).map(({ id }) => ({ id, error: { name: 'Error', message: reply.type === 'timeout' ? 'your function ran longer than 2 s on the trained model' : reply.message ?? 'the worker stopped' } }));
  return modelCheck.circuitsCases(lab, tests, model, results, formatNumber);
}

/** As the page's withFirstLine: the traced run checks the finding and gives it its line; a timeout leaves it as it was. */
async function withFirstLine(session, challenge, lab, located, probeResults, judged, source) {
  const data = challenge.diagnosis;
  const trace = traceCalls(data);
  if (!trace.length) return located;
  const reply = await session.send({ trace });
  if (reply.type !== 'done') return located;
  let found;
  try {
    found = firstLine({ data, traced: reply.traced, lab, located, errors: locateOptions(judged).errors, probeResults, source, functionName: challenge.functionName });
  } catch {
    return located;
  }
  // the line one small edit repairs (diagnosis/repair.js), asked of the worker as the page asks it
  try {
    return await repairFinding(found, { send: (message, limitMs) => session.send(message, limitMs), judged, source, data, trace, original: reply.traced, lab, functionName: challenge.functionName });
  } catch {
    return found;
  }
}

/**
 * One case of the report: what was asked, the verdict, and for a failure what came back. A case of
 * the model also carries what the page draws for it (`model`: the scores, the hint, the patterns).
 */
function caseReport(c) {
  const { pass, reason } = c.verdict;
  const entry = { id: c.id, kind: c.kind, name: c.name, pass, reason: reason || null };
  if (c.why) entry.why = c.why;
  if (c.kind === 'model') return { ...entry, model: c.model };
  if (c.kind === 'error') entry.throws = c.throws;
  if (!pass) {
    entry.args = c.args;
    if (c.kind !== 'error') entry.expected = c.expected;
    if (c.result && 'output' in c.result) entry.output = c.result.output;
    if (c.result?.error) entry.error = c.result.error;
  }
  return entry;
}

/** What the challenge page's showDiagnosis shows: the located step, the probe note, the known mistakes, else a NaN note. */
function diagnosisReport(challenge, judged, located, probeNote, site) {
  const fixed = judged.filter((c) => c.kind === 'fixed');
  const mistakes = knownMistakes(challenge.tests, judged, located).map(({ id, title, hint }) => ({ id, title, hint }));
  const nonFinite = !located && !mistakes.length ? nonFiniteNote(fixed) : null;
  return {
    // the line of the learner's file the finding names (1-based), or null
    line: located?.line ?? null,
    located: located && {
      step: located.step ?? null,
      stepLabel: located.stepLabel ?? null,
      heading: locatedHeading(located),
      title: located.title,
      line: located.line ?? null,
      lineText: located.lineText ?? null,
      detail: located.detail,
      probe: located.probe ?? null,
      foundBy: foundByLine(located),
      expected: located.expected,
      actual: located.actual,
      walkthrough: located.walkthrough ? walkthroughHref(located.walkthrough, new URL('walkthrough.html', site).href) : null,
    },
    probeNote,
    mistakes,
    nonFinite,
  };
}
