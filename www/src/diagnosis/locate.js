// Locating the first wrong step of a learner's answer from its outputs on probe inputs (the probe
// diagnosis; the first wrong LINE, from the learner's own intermediate values, is first-line.js).
//
// The learner writes one function; its intermediate steps are not visible. So the diagnosis calls
// that function on PROBE INPUTS chosen so that one step at a time shows in the output:
//   - numberOfHeads = 1 (and W_O = I) leaves only one head's attention: slicing and
//     concatenation have nothing to do;
//   - V made of one-hot columns turns the output into the attention weights themselves, so the
//     learner's weights can be read (rows sum to 1? which scale do their log-ratios imply?);
//   - Q = 0 makes every weight 1/T whatever the scale or softmax, which isolates the slicing of V,
//     the concatenation and W_O; V's entries encode their column, so a misplaced column is named;
//   - a permutation W_O shows on which side, and which way round, W_O was applied;
//   - large scores show a softmax that overflows;
//   - V = 0 (W_V = 0 for the projections) checks the assumption under all of the above: the output is
//     a weighted average of V's rows. When it is not 0, the fault lies after the weights (a
//     residual, a bias, values from K or Q), and that finding wins over the weight readings;
//   - shapes are distinct (T, d_k, d_v, numberOfHeads, numberOfKVHeads), so that a constant read
//     back names one thing (1/√d_v is not 1/√T);
//   - which keys each token had in a KV cache is read from the same one-hot readout;
//   - a rotation has no attention: X = e_c on every row reads the learner's rotation of each
//     column at every position (pairs, angle per pair, position, direction of the turn).
// A throw on a valid probe from the learner's own check is located at the check ('check'), unless
// the probes it answered read a step of the computation wrong (that step); when
// nothing is located and an error case fails (passed in by the caller), the headline names that
// case: accepted, another error, or another message.
//
// ONE ENGINE, DATA PER CHALLENGE. Everything a challenge adds is in its challenges/NN-…/diagnosis.json
// (documented in docs/diagnosis.md), read here by tableOf():
//   reference   the call form (forms.js: how a probe becomes the arguments, shared with reference.js);
//   locate      { steps (in order, names of steps.js), labels (the challenge's own words for a step),
//                 dim ('d_k', 'd' or headDimensions by default: how a head's width is written),
//                 argNames (the arguments' names in the error cases' descriptions), validHint (a
//                 sentence for a check that rejects a valid probe), mask ('window': the mask is a
//                 sliding window), probes (probes.js), checks ([name, ...arguments], run in order;
//                 the names are CHECKS below) }.
// The engine has no branch on a challenge: a reading that names a step is made only where the
// challenge has that step (probes.js's hasStep). Expected values come from the package (`lab`:
// traceMultiHeadAttention, linear, projectedSelfAttention…), never from numbers written here.
//
// Plain ES modules, no DOM: used by the challenge page, by the terminal course (cli/) and by the Node tests.
import { isIdentity } from '../matrix.js';
import { STEPS } from './steps.js';
import { callsOf, describeProbe, formOf, hasStep, probeCalls } from './probes.js';
import { checkHeads, checkOwnValue, checkSameWidth, checkWeightedSum, checkWeights } from './checks.js';
import { checkAbsentZero, checkAverage, checkOutputProjection, checkStructure } from './structure.js';
import { checkProjectionHeads, checkProjectionQK, checkProjectionV } from './projections.js';
import { checkCache, checkCacheCrash, checkKVHead } from './kv.js';
import { checkRope, checkRopeDefault } from './rope.js';
import { checkComposition } from './composition.js';

export { STEPS, probeCalls };

const STEP_ORDER = Object.keys(STEPS);

/** The checks a diagnosis.json may name, each made from its arguments there. */
export const CHECKS = {
  average: checkAverage, absentZero: checkAbsentZero, sameWidth: checkSameWidth, ownValue: checkOwnValue,
  weights: checkWeights, weightedSum: checkWeightedSum, structure: checkStructure, heads: checkHeads,
  outputProjection: checkOutputProjection, projectionQK: checkProjectionQK, projectionHeads: checkProjectionHeads,
  projectionV: checkProjectionV, kvHead: checkKVHead, cache: checkCache, cacheCrash: checkCacheCrash,
  rope: checkRope, ropeDefault: checkRopeDefault, composition: checkComposition,
};

const tables = new WeakMap();

/**
 * The table of a challenge's diagnosis data: its `locate` section with the form and the checks
 * made, or null (no probe diagnosis). Throws on an unknown form, check or step, or a check that
 * names an unknown probe: a mistake in the data shows at once.
 */
export function tableOf(data) {
  if (!formOf(data) || !data.locate) return null;
  if (tables.has(data)) return tables.get(data);
  const spec = data.locate;
  const ids = new Set(spec.probes.map((p) => p.id));
  for (const step of spec.steps) if (!STEPS[step]) throw new Error(`diagnosis.json: unknown step ${step}`);
  const checks = spec.checks.map(([name, ...args]) => {
    if (!CHECKS[name]) throw new Error(`diagnosis.json: unknown check ${name} (known: ${Object.keys(CHECKS).join(', ')})`);
    const named = args.flatMap((a) => (typeof a === 'string' ? [a] : Array.isArray(a) ? a : [])).filter((a) => !STEPS[a] && !/^[a-z]+$/.test(a));
    for (const id of named) if (!ids.has(id)) throw new Error(`diagnosis.json: check ${name} names an unknown probe ${id}`);
    return CHECKS[name](...args);
  });
  const table = { ...spec, form: formOf(data), checks };
  tables.set(data, table);
  return table;
}


/**
 * The first step where the learner's function departs from the reference, or null.
 * `results`: Map (or object) of probe call id → { output } or { error }, as the worker returns them.
 * `lab`: the package (for expected values). Checks run in the table's order; the finding whose
 * step comes first in the course's order wins; findings without a step (a throw, a shape) only
 * when nothing is located.
 * `options.errors`: the challenge's error cases as run, [{ name, args, throws, result }] (a case of
 * tests.json `errors` with the learner's { output } or { error }). When the probes locate nothing
 * and one of them fails, the finding names the check that is missing or wrong (step 'check').
 * `options.failing`: names of failing cases; when nothing else is found, a finding still says so.
 */
export function locate(data, results, lab, { errors = [], failing = [] } = {}) {
  const table = tableOf(data);
  if (!table) return null;
  const byId = results instanceof Map ? results : new Map(Object.entries(results));
  const probes = new Map(table.probes.map((p) => [p.id, p]));
  const ctx = { lab, table, results: byId, facts: {}, probe: (id) => probes.get(id) };
  const findings = [];
  for (const check of table.checks) {
    let finding;
    try {
      finding = check(ctx);
    } catch (error) {
      finding = null; // a learner output the analysis cannot read: other checks may still locate the step
    }
    if (finding) findings.push(finding);
  }
  if (!findings.length) {
    const missing = errorCaseFinding(table, errors);
    if (missing) return decorate(missing, table);
    if (failing.length && byId.size) {
      return decorate({ step: null, title: `Every probe input is answered right, yet ${failing.length === 1 ? 'a case fails' : `${failing.length} cases fail`}: “${failing[0]}”${failing.length > 1 ? ' …' : ''}`, detail: 'The probes call your function on small inputs chosen to show one step at a time, and every step came out right there. Compare your output with the expected one on the failing case: a size the probes do not use (one token, one head, a larger T) may take another path through your code.', foundBy: 'the test cases' }, table);
    }
    return null;
  }
  const rank = (f) => (f.step ? STEP_ORDER.indexOf(f.step) : STEP_ORDER.length);
  // a valid probe rejected by a throw of the learner's own, while the probes it answered read a step
  // of the computation wrong: that step (a shape check inside the computation, `matmul` checking its
  // operands, caught what the wrong step built; a check of the arguments too strict lets through
  // probes whose answers are right)
  const answered = findings.some((f) => f.step && f.step !== 'check');
  const weighed = answered ? findings.filter((f) => !f.rejected) : findings;
  // an output that is not a weighted average of V's rows: the probes that read weights read them wrong
  const trusted = weighed.some((f) => f.assumption) ? weighed.filter((f) => f.assumption || f.step === 'check') : weighed;
  // at one step, a finding marked weak (told with fewer heads) gives way to another
  const first = trusted.reduce((best, f) => (rank(f) < rank(best) || (rank(f) === rank(best) && best.weak && !f.weak) ? f : best));
  return decorate(first, table);
}

/** The arguments of a call in words: matrices by their shape, options as written. */
function describeArgs(table, args) {
  const names = table.argNames ?? ['Q', 'K', 'V', 'options'];
  return args.map((a, i) => {
    const shape = Array.isArray(a) && Array.isArray(a[0]) ? `${a.length}×${a[0].length}` : null;
    if (shape) return `${names[i] ?? `argument ${i + 1}`} ${shape}`;
    if (a && typeof a === 'object') return JSON.stringify(a).replace(/"(\w+)":/g, '$1: ').replace(/,/g, ', ');
    return `${names[i] ?? `argument ${i + 1}`} ${JSON.stringify(a)}`;
  }).join(', ');
}

/**
 * The first error case the learner's function gets wrong, as a finding at the step 'check':
 * accepted (returned normally), or rejected with another error or another message.
 */
function errorCaseFinding(table, errors) {
  for (const c of errors) {
    const r = c.result;
    if (!r) continue;
    const want = c.throws;
    const said = want.referenceMessage ?? `${want.messageStartsWith}…`;
    const call = describeArgs(table, c.args);
    const base = { step: 'check', probe: null, foundBy: `the case “${c.name}” (${call})` };
    if (!r.error) {
      return { ...base, title: `A missing check: “${c.name}” was accepted; expected a ${want.name} saying “${want.messageStartsWith}…”`, detail: `Called with ${call}, your function returned ${describeValue(r.output)} instead of throwing. The reference throws ${want.name}: “${said}”. Check the arguments before computing anything, and throw new ${want.name}(…) with a message that starts “${want.messageStartsWith}”.` };
    }
    if (r.error.name !== want.name) {
      const crash = r.error.name === 'TypeError' && !r.error.message.startsWith(want.messageStartsWith);
      return { ...base, title: `“${c.name}”: your function threw ${r.error.name}, expected ${want.name}`, detail: `Called with ${call}, it threw ${r.error.name}: “${r.error.message}”.${crash ? ' That is a crash inside the computation, not a check: nothing stopped the bad input first.' : ''} The reference throws ${want.name}: “${said}”.` };
    }
    if (!r.error.message.startsWith(want.messageStartsWith)) {
      return { ...base, title: `“${c.name}”: the right error (${want.name}) with another message`, detail: `Called with ${call}, your function threw ${r.error.name}: “${r.error.message}”. The message must start “${want.messageStartsWith}” (the reference says “${said}”).` };
    }
  }
  return null;
}

const describeValue = (v) => (Array.isArray(v) && Array.isArray(v[0]) ? `a ${v.length}×${v[0].length} matrix` : v === undefined ? 'undefined' : Array.isArray(v) ? `an array of ${v.length}` : typeof v);

function decorate(f, table) {
  const p = f.probe;
  const located = Boolean(f.step);
  const result = {
    step: f.step,
    stepLabel: located ? table.labels?.[f.step] ?? STEPS[f.step].label : null,
    head: f.head ?? null,
    title: f.title,
    detail: f.detail,
    probe: p ? describeProbe(p, table) : null,
    // how the finding was made, in words: a probe input, or a test case
    foundBy: f.foundBy ?? (p ? `calling your function on a probe input (${describeProbe(p, table)})` : null),
    expected: f.expected ?? null,
    actual: f.actual ?? null,
  };
  if (located && p && STEPS[f.step].walk) result.walkthrough = walkthroughOf(f, table);
  // (the other step the same outputs may be, for the line that repairs them to choose: repaired.js)
  if (f.readInstead) result.readInstead = decorate({ ...f, ...f.readInstead, readInstead: null }, table);
  return result;
}

/**
 * The walkthrough's inputs for a finding, in the challenge's own mode and settings (its form's
 * `walkthrough`, from the plain multi-head inputs; a rotation's own, from the probe's call);
 * plain (causal) multi-head attention otherwise. null when the probe cannot be shown there (a V
 * wider than Q, the projections' X).
 */
function walkthroughOf(f, table) {
  const p = f.probe;
  const form = table.form;
  // a challenge without W_O: its output is the concatenation (one head: the weighted sum), not the W_O page
  const last = hasStep(table, 'concat') ? 'concat' : 'context';
  const step = STEPS[f.step].walk === 'output' && !hasStep(table, 'w-o') ? last : STEPS[f.step].walk;
  if (form.rotation) return form.rotation({ call: p.basis ? callsOf(p)[f.column ?? 0] : p, probe: p, f, step });
  if (!p.Q || !p.V || p.X) return null;
  if (p.V[0].length !== (form.valueWidth ? form.valueWidth(p) : p.Q[0].length)) return null;
  const w = {
    Q: p.Q, K: p.K, V: p.V, numberOfHeads: p.numberOfHeads, headDimensions: p.headDimensions,
    causal: p.causal === true || p.window !== undefined, W_O: p.W_O === 'absent' || isIdentity(p.W_O) ? null : p.W_O, step, head: f.head ?? 0,
  };
  return form.walkthrough ? form.walkthrough(w, f) : w;
}

/** The walkthrough's address for a finding's `walkthrough` (its query string carries the inputs). */
export function walkthroughHref(w, base = './walkthrough.html') {
  const params = new URLSearchParams();
  params.set('Q', JSON.stringify(w.Q));
  params.set('K', JSON.stringify(w.K));
  params.set('V', JSON.stringify(w.V));
  params.set('numberOfHeads', String(w.numberOfHeads));
  params.set('headDimensions', String(w.headDimensions));
  if (w.causal) params.set('causal', '1');
  if (w.W_O) params.set('W_O', JSON.stringify(w.W_O));
  // a modern mode and its settings (see the walkthrough's applyModeLink)
  if (w.mode) params.set('mode', w.mode);
  if (w.numberOfKVHeads !== undefined) params.set('numberOfKVHeads', String(w.numberOfKVHeads));
  if (w.window !== undefined) params.set('window', String(w.window));
  if (w.base !== undefined) params.set('base', String(w.base));
  if (w.offset !== undefined) params.set('offset', String(w.offset));
  params.set('step', w.step);
  if (w.token !== undefined) params.set('token', String(w.token));
  else if (w.head) params.set('head', String(w.head));
  return `${base}?${params}`;
}
