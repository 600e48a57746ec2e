// The challenge page's diagnosis, run in Node on a learner's source as the page runs it: the code
// loaded through the runner's toScript (so errors carry the learner's lines), the test cases, the
// probes and locate() (www/src/diagnosis/locate.js), the traced run (www/src/diagnosis/instrument.js's
// runTraced, as the worker calls it) and firstLine (www/src/diagnosis/first-line.js).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareMatrices } from '../../../www/src/cases.js';
import { locate, probeCalls } from '../../../www/src/diagnosis/locate.js';
import { firstLine, traceCalls } from '../../../www/src/diagnosis/first-line.js';
import { repairCases, repairFinding } from '../../../www/src/diagnosis/repaired.js';
import { repairLines } from '../../../www/src/diagnosis/repair.js';
import { buildCases, judge } from '../../../www/src/cases.js';
import { runTraced } from '../../../www/src/diagnosis/instrument.js';
import { lineOf, toScript } from '../../../www/src/script.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const load = (script) => (0, eval)(script);

/** tests.json and diagnosis.json of a challenge folder. */
export function challengeData(folder) {
  const read = (name) => JSON.parse(readFileSync(join(ROOT, 'challenges', folder, name), 'utf8'));
  return { tests: read('tests.json'), data: read('diagnosis.json') };
}

/** The learner's function, loaded as the runner loads it. */
export function loadFunction(source, functionName) {
  const exported = load(toScript(source))();
  return exported[functionName] ?? exported.default;
}

/** What the worker answers for calls: Map id → { output } | { error: { name, message, line? } }. */
export function run(fn, calls) {
  return new Map(calls.map(({ id, args }) => {
    try {
      return [id, { output: fn(...structuredClone(args)) }];
    } catch (error) {
      return [id, { error: { name: error?.name ?? 'thrown value', message: String(error?.message ?? error), ...lineOf(error) } }];
    }
  }));
}

/** The traced run, as the worker makes it. */
export const traced = (source, functionName, calls) => runTraced(source, functionName, calls, { load, toScript, lineOf });

/**
 * The whole diagnosis of `source` for challenge `folder`: a promise of { failing (names of failing
 * fixed and error cases), found (the finding the page shows, or null), timed (the repairs were stopped by
 * their time guard, so the line found depends on the machine's speed) }. Async as the page's is: its
 * last step (repaired.js's repairFinding) asks the worker, here answered in Node (`worker`).
 */
export async function diagnose(folder, source, lab) {
  const { tests, data } = challengeData(folder);
  const fn = loadFunction(source, tests.function);
  const fixed = run(fn, tests.fixed.map((c, i) => ({ id: `fixed-${i}`, args: c.args })));
  const failing = tests.fixed.filter((c, i) => { const r = fixed.get(`fixed-${i}`); return r.error || !compareMatrices(r.output, c.expected, tests.tolerance).pass; }).map((c) => c.name);
  const errorRuns = run(fn, tests.errors.map((c, i) => ({ id: `error-${i}`, args: c.args })));
  const errors = tests.errors.map((c, i) => ({ name: c.name, args: c.args, throws: c.throws, result: errorRuns.get(`error-${i}`) }));
  for (const c of errors) if (!(c.result.error && c.result.error.name === c.throws.name && c.result.error.message.startsWith(c.throws.messageStartsWith))) failing.push(c.name);
  if (!failing.length) return { failing, found: null };
  const probeResults = run(fn, probeCalls(data));
  const located = locate(data, probeResults, lab, { errors, failing });
  const trace = traceCalls(data);
  const t = traced(source, tests.function, trace);
  const found = firstLine({ data, traced: t, lab, located, errors, probeResults, source, functionName: tests.function });
  // (the page asks for the repairs after a traced run, so only where the challenge has traced inputs)
  if (!trace.length || !found) return { failing, found };
  const judged = judgedCases(source, tests, lab);
  let timed = false;
  const answer = worker(source, tests.function);
  const send = async (message) => {
    const reply = await answer(message);
    if (reply.repair?.timed) timed = true;
    return reply;
  };
  return { failing, found: await repairFinding(found, { send, judged, source, data, trace, original: t, lab, functionName: tests.function }), timed };
}

/**
 * The worker's answers to the diagnosis's last messages (runner.worker.js), made in Node for the
 * learner's `source`: { repair: { cases, near } } and { trace, code }.
 */
export function worker(source, functionName) {
  return async ({ repair, trace, code }) => {
    if (repair) return { type: 'done', repair: repairLines(source, functionName, repair.cases, { load, toScript, judge, near: repair.near }) };
    return { type: 'done', traced: traced(code ?? source, functionName, trace) };
  };
}

/** The page's cases of `source`, judged (random ones of seed 1: the repairs do not read them). */
export function judgedCases(source, tests, lab) {
  const fn = loadFunction(source, tests.function);
  const cases = buildCases(tests, lab, 1);
  const results = run(fn, cases.map(({ id, args }) => ({ id, args })));
  return cases.map((c) => ({ ...c, verdict: judge(c, results.get(c.id)) }));
}

/** What the worker answers for { repair } (the bench): the lines one edit repairs of `source`, `near` first. */
export function repaired(source, tests, lab, near) {
  return repairLines(source, tests.function, repairCases(judgedCases(source, tests, lab)), { load, toScript, judge, near: near ? [near] : [] });
}
