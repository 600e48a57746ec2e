// What the challenge page makes of a run, and the words it says it in, from one source for the
// page and for `attention-lab check`, so that both say the same, string for string: the options
// that locate() gets, the known mistakes that are shown, the headings and notes. Pure functions,
// no DOM (the package ships this file with cases.js, diagnosis/ and variants.js).
import { diagnose, modelFor, THROWS } from './variants.js';

/** What each kind of case is called, in the order they run. */
export const GROUP_TITLES = { fixed: 'Fixed cases', random: 'Random cases (against the WebAssembly reference)', error: 'Cases that must throw', model: 'The model' };

/** The label of a worker reply that means the code could not be tested. */
export const PROBLEM_LABELS = { syntax: 'Syntax error', 'load-error': 'Your code threw while loading', missing: 'Missing function' };

/** The heading of a finding of diagnosis/locate.js's locate(): the step it names, or, with no step, where the code goes wrong. */
export const locatedHeading = (found) => (found.step ? `First wrong step: ${found.stepLabel}` : 'Where your code goes wrong');

/**
 * The note for fixed cases whose output holds NaN or ±Infinity (shown when neither a located step
 * nor a known mistake explains the failure): { title, detail }, or null when there are none.
 * `fixed`: the judged fixed cases, each { name, result: { output } | { error } }.
 */
export function nonFiniteNote(fixed) {
  const cases = fixed.filter((c) => Array.isArray(c.result?.output) && c.result.output.flat().some((x) => typeof x !== 'number' || !Number.isFinite(x)));
  if (!cases.length) return null;
  return {
    title: 'NaN or Infinity in your output',
    detail: `In ${cases.map((c) => `"${c.name}"`).join(', ')}: look for exp() of a large number (subtract the row maximum first), a division by zero, or an index past the end of a row (undefined turns into NaN).`,
  };
}

/** The heading over the known mistakes (variants.js's diagnose()) that match. */
export const mistakesHeading = (count) => (count === 1 ? 'This looks like a known mistake' : 'These look like known mistakes');

/**
 * The options of diagnosis/locate.js's locate() for one run: the error cases as run (when only they fail,
 * the headline names the missing or wrong check) and the names of the failing cases. `judged`:
 * the cases of cases.js's buildCases, each with its worker `result` and judge() `verdict`. A case of
 * another export of the learner's module (`function`: challenge 11's nameHeads) is not the probed
 * function's failure: it is not listed.
 */
export function locateOptions(judged) {
  const errors = judged.filter((c) => c.kind === 'error').map(({ name, args, throws, result }) => ({ name, args, throws, result }));
  const failing = judged.filter((c) => !c.verdict.pass && !c.function).map((c) => c.name);
  return { errors, failing };
}

/**
 * The known mistakes (variants.js) that the fixed cases' outputs match, as { id, title, hint }.
 * A located check that rejects valid input explains the throws: a catalogued mistake that only
 * predicts them would contradict it, so it is left out.
 */
export function knownMistakes(tests, judged, located) {
  const outputs = judged.filter((c) => c.kind === 'fixed').map((c) => (c.result?.error ? undefined : c.result?.output));
  const predictsThrow = (id) => tests.fixed.some((c) => modelFor(id, tests.function)(c.args).includes(THROWS));
  return diagnose(tests, outputs).filter((d) => !(located?.step === 'check' && predictsThrow(d.id)));
}

/** How a located finding was made, as a sentence: on a probe input, or on a test case. */
export const foundByLine = (found) => `Found by ${found.foundBy ?? `calling your function on a probe input (${found.probe})`}.`;
