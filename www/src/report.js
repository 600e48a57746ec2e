// The words of the challenge page's results that `attention-lab check` prints too, from one
// source, so that the page and the terminal say the same, string for string. Pure functions, no
// DOM (the package ships this file with cases.js and diagnosis.js).

/** What each kind of case is called, in the order they run. */
export const GROUP_TITLES = { fixed: 'Fixed cases', random: 'Random cases (against the WebAssembly reference)', error: 'Cases that must throw' };

/** The label of a worker reply that means the code could not be tested. */
export const PROBLEM_LABELS = { syntax: 'Syntax error', 'load-error': 'Your code threw while loading', missing: 'Missing function' };

/** The heading of a finding of diagnosis.js's locate(): the step it names, or, with no step, where the code goes wrong. */
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
