// The first wrong line (issue 28): the learner's code, instrumented (instrument.js) and run on the
// traced probe inputs of its challenge (challenges/NN-…/diagnosis.json: `reference`, the form of the
// package's trace; `probes`, the calls), is aligned step by step with the reference (align.js).
// Combined with the probe diagnosis (locate.js: it reads the outputs on inputs that show one
// step at a time, and words the catalogue's mistakes), it gives the headline's step and its line.
//
// How the two are combined, with no branch on a challenge:
//   - the traced run confirms a step when some recorded value matches it; a probe finding at a step
//     the traced run confirmed, or at a step after the traced run's first wrong step, is
//     contradicted, and the traced run's first wrong step is told instead;
//   - any other probe finding keeps its words (the catalogue's, the readings of the probes), and the
//     line is added: where the traced run built that step, or where its values left the reference;
//   - a check (an error case) takes the line of the throw, or, when nothing threw, the first line of
//     the function; a crash, the line it threw from.
import { STEPS } from './steps.js';
import { droppedKeys } from './bounds.js';
import { referenceSteps } from './reference.js';
import { alignProbe, builtOn, confirmed, cutInsideNext, firstWrongStep, siteOf, stepStatuses, unseenAfter } from './align.js';
import { firstForeignSite, foreignTest, holds, isInteger, sortedFinite } from './foreign.js';
import { chosenIndex, constantOperand, flagBehind, integerBehind, unshiftedSite, valueBehind } from './behind.js';
import { thrownUnder } from './calls.js';
import { earlyReturn, identityStandIn, resultWrite } from './returns.js';
import { incompleteCut } from './cuts.js';
import { doneTwice, saying } from './twice.js';
import { cutMappedBehind } from './sizes.js';
import { anotherHead, passedOther, repeatedSlice, shiftedColumns, stackedHeads } from './heads.js';

const ORDER = Object.keys(STEPS);

/** The traced calls of a challenge's diagnosis data: [{ id, args }], run instrumented by the worker. */
export function traceCalls(data) {
  return (data?.probes ?? []).map((probe, k) => ({ id: `trace:${k}`, args: probe.args }));
}

/** The traced run aligned with the reference: { statuses, wrong, siteFor(step) }, or null when there is nothing to align. */
export function alignAnswer(data, traced, lab, functionName) {
  if (!data || !traced?.results?.length) return null;
  const calls = traceCalls(data);
  const results = calls.map((call) => traced.results.find((r) => r.id === call.id));
  // (every traced input threw: what each run recorded before its throw, read for the step it was building)
  const crashed = !results.some((r) => r && !r.error);
  const runs = results.filter((r) => r && (crashed ? r.recording : !r.error));
  if (!runs.length) return null;
  const references = runs.map((r) => referenceSteps(data.reference, calls.find((c) => c.id === r.id).args, lab));
  // what the alignment reads: every site but those recorded only as arguments (the rules below follow a parameter to them)
  const full = runs.map((r) => r.recording);
  // (`whole`: every site's, for a rule that reads what a call passed)
  const recordings = full.map((r) => ({ ...r, whole: r.sites, sites: r.sites.map((s, id) => (traced.sites[id]?.argument ? { values: [], moments: [], callers: [], snapshots: [], flags: { values: [], moments: [] } } : s)) }));
  const alignments = runs.map((r, k) => droppedKeys(repeatedSlice(stackedHeads(alignProbe(recordings[k], references[k], traced.sites), recordings[k], traced.sites), recordings[k]), recordings[k], references[k], foreignTest(references[k])));
  const statuses = stepStatuses(alignments, ORDER);
  const site = (step) => {
    const found = siteOf(step, alignments, recordings, references, traced.sites);
    if (!found) return null;
    const [sites, recording] = [traced.sites, full[found.probe]];
    // a layout held right for every head, where a call was passed another head's: that argument
    // (chosen for each head by an index of another order: that index; so too when the step is wrong
    // here, each head reading the part that index chose: `const g = h % numberOfKVHeads`)
    const chosen = chosenIndex(step, sites, recording, references[found.probe]);
    if (chosen !== null) return { ...traced.sites[chosen], probe: found.probe };
    const passed = found.right ? passedOther(references[found.probe].steps.filter((e) => e.step === step && e.layout), sites, recording) : null;
    if (passed !== null) return { ...traced.sites[passed], probe: found.probe };
    // a step right here (wrong only on other inputs): the constant it is made with, where that was computed
    // (or the exps taken without the row's maximum, right here and Infinity where the scores are large)
    if (found.right) return { ...traced.sites[constantOperand(found.site, sites, recording) ?? unshiftedSite(recording, references[found.probe]) ?? found.site], probe: found.probe };
    if (found.final) return { ...traced.sites[flagBehind(found.site, sites, recording, references[found.probe]) ?? cutMappedBehind(step, found.site, sites) ?? found.site], probe: found.probe };
    const from = valueBehind(step, found.site, sites, recording, references[found.probe]);
    return { ...traced.sites[from ?? found.site], probe: found.probe };
  };
  const foreigns = references.map(foreignTest);
  const plain = firstWrongStep(statuses);
  const next = cutInsideNext(plain, statuses, traced.sites, (entry) => cutShort(entry, recordings[entry.probe], foreigns[entry.probe]));
  // (a step made inside the next one's expression, cut short with it: the next one, at the first one's line, the loop that stopped)
  const first = next ? { ...next, site: site(plain.step), inside: plain.step } : plain;
  // a head that read another head's columns: its slice, at the line that passed them
  // (or columns read by index at the wrong place: the layout that chose them, at the line that read them)
  const shifted = first && !anotherHead(first.step, alignments, recordings, traced.sites) ? shiftedColumns(first.step, alignments, recordings, references, references.map(foreignTest), traced.sites) : null;
  const moved = first && (anotherHead(first.step, alignments, recordings, traced.sites) ?? shifted);
  const held = moved ? null : holes(first, statuses, recordings, site) ?? doneTwice(first, statuses, recordings, traced.sites);
  const found = moved ? { step: moved.step, entries: [{ ...moved.entry, status: 'missing' }], site: { ...traced.sites[moved.site], probe: moved.probe }, walked: moved.walked } : held ?? first;
  // (a cut of an input that holds some heads' columns and never another's: every step after it is built on it)
  const cut = found && ORDER.indexOf(found.step) >= ORDER.indexOf('slice') && ORDER.indexOf(found.step) <= ORDER.indexOf('residual') ? cutAtFault(full, references, traced.sites) : null;
  // (its bounds passed to the function that cuts, as whole numbers no right answer passes: `head(Q, K, V, h, h + d)`, that argument)
  const cutSite = cut ? integerBehind(cut.site, traced.sites, full[cut.probe], references[cut.probe]) ?? cut.site : null;
  const wrong = cut ? { step: cut.step, entries: [{ ...cut.entry, status: 'missing' }], site: { ...traced.sites[cutSite], probe: cut.probe } } : found;
  // when no step is wrong here (a residual added, W_O left out): the first number foreign to the
  // reference, else the last line that returned the function's result (not a `return y` never reached)
  const foreign = firstForeignSite(recordings[0], references[0], 0, traced.sites);
  const returned = traced.sites.findLast((s) => s.name === `the value returned by ${functionName}`); // its last return: the result, not a callback's
  const anywhere = foreign ? traced.sites[foreign.site] : traced.sites.findLast((s, id) => s.name === returned?.name && full[0].sites[id]?.values.length) ?? returned ?? null;
  // (`shifted`: the columns each head read were found, so the layout at fault is known, whatever the probes read)
  const resultId = returned ? traced.sites.indexOf(returned) : -1;
  const at = wrong ? wrong.site ?? site(wrong.step) ?? earlyReturn(traced.sites, full[0], resultId) ?? resultWrite(traced.sites, full[0], resultId, references[0]) ?? identityStandIn(traced.sites, full, references) : null;
  // (no number foreign to the reference built on any traced input, nor a NaN)
  const clean = recordings.every((r, k) => !firstForeignSite(r, references[k], 0, traced.sites) && r.sites.every((x) => !x.values.some(Number.isNaN)));
  // (the first number foreign to the reference is built at the wrong step's own site, with no constant
  // factor (a scale's) among its operands: the run left the reference there, in that step's own arithmetic)
  const own = foreign && at && traced.sites[foreign.site] && at.line === traced.sites[foreign.site].line && at.column === traced.sites[foreign.site].column;
  const departs = Boolean(own) && constantOperand(foreign.site, traced.sites, full[0]) === null;
  return { statuses, wrong: wrong ? { step: wrong.step, entry: wrong.entries.find((e) => e.status === 'missing'), site: at, shifted: Boolean(shifted), walked: Boolean(wrong.walked), cut: Boolean(cut), departs, how: wrong.how ?? null, inside: wrong.inside ?? null } : null, siteFor: site, anywhere, references, clean, crashed };
}

/**
 * Whether the site of a step entry's partial numbers built, in each row, the numbers of its first keys and
 * none of the others (`for (j = 0; j < T - 1; j++)`, a `break`), and no number foreign to the reference, nor a NaN.
 */
function cutShort(entry, recording, foreign) {
  const values = recording?.sites[entry.partial?.site]?.values;
  if (!values || values.some((x) => foreign(x) || Number.isNaN(x))) return false;
  const held = sortedFinite(values);
  return entry.matrix.every((row) => {
    const built = row.map((x) => !Number.isFinite(x) || isInteger(x) || holds(held, x));
    return built.every((b, j) => b || built.slice(j).every((c, n) => !c || !Number.isFinite(row[j + n]) || isInteger(row[j + n])));
  });
}

/** The first probe's cut that misses a head (cuts.js): { step, entry, site, probe }, or null. */
function cutAtFault(recordings, references, sites) {
  for (const [probe, recording] of recordings.entries()) { const cut = incompleteCut(sites, recording, references[probe]); if (cut) return { ...cut, probe }; }
  return null;
}

/**
 * A layout step no array holds (`unknown`), just before the first wrong step, when the traced run
 * read a NaN (a number never written in its place: `concat[i][c] = x` leaves columns empty) and
 * the layout's numbers were written one by one somewhere (`siteFor`): that layout, at that write.
 * The first wrong step's entries are none built. { step, entries, site } or null.
 */
function holes(first, statuses, recordings, siteFor) {
  const k = first ? statuses.indexOf(first) : -1;
  const layout = k > 0 ? statuses[k - 1] : null;
  if (!layout || layout.status !== 'unknown' || !layout.entries.every((e) => e.layout && e.head === null)) return null;
  if (!first.entries.every((e) => e.status === 'missing' && !e.coverage && !e.partial)) return null;
  if (!recordings.some((r) => r.sites.some((x) => x.values.some(Number.isNaN)))) return null;
  const at = siteFor(layout.step);
  return at ? { step: layout.step, entries: layout.entries.map((e) => ({ ...e, status: 'missing' })), site: at } : null;
}

/** `found` told at `where` ({ line, column?, name? }): its line, that line of `source`, and `Line N: ` before its title. */
export function withLine(found, where, source) {
  if (!where?.line) return found;
  const text = source.split('\n')[where.line - 1] ?? '';
  return { ...found, line: where.line, column: where.column ?? null, lineText: text.trim(), name: where.name ?? null, title: `Line ${where.line}: ${found.title}` };
}

/** The line of a check finding: the throw of the failing error case, else where the function's body starts. */
function checkLine(errors, traced, functionName) {
  for (const c of errors) {
    const e = c.result?.error;
    if (e?.line && !(e.name === c.throws.name && e.message.startsWith(c.throws.messageStartsWith))) return { line: e.line, column: e.column };
  }
  const line = traced?.bodyLines?.[functionName];
  return line ? { line } : null;
}

/**
 * Whether the traced run saw step `step` built whole and kept, on every traced input, while the step
 * it finds wrong first (`wrong`, a later one) is either not built on it (so `step` cannot be what
 * made it wrong) or built on it in part (some of its own numbers were built, which takes the right
 * values of `step`, a step of new numbers): the probes' reading of `step` is then the later step's mistake seen from outside.
 */
function builtWhole(step, wrong, statuses, clean, departs = false) {
  if (ORDER.indexOf(step) >= ORDER.indexOf(wrong.step)) return false;
  const status = statuses.find((s) => s.step === step);
  const kept = (e) => e.status === 'ok' && e.site !== null && e.site !== undefined && !e.transposed && !(e.inner && !e.kept);
  if (!status?.entries.length || !status.entries.every(kept)) return false;
  const missing = wrong.entries.filter((e) => e.status === 'missing');
  const partly = missing.length > 0 && missing.every((e) => e.coverage > 0 && e.partial);
  // (or none of its numbers built at all, and no number foreign to the reference anywhere: the later
  // step stopped short on `step`'s numbers kept whole, a sum that ends early; or the first foreign
  // number is the later step's own, built from `step`'s kept numbers: `Math.exp(x / top)`)
  const none = missing.length > 0 && missing.every((e) => !e.coverage && !e.partial);
  // (a layout step, the mask, moves numbers the step before it built: a later step's right numbers
  // may come from those, not from the layout, as with a mask applied after the softmax)
  // (unless the later step read the layout's own marks: a mask's −∞ computed with after it)
  const values = status.entries.every((e) => !e.layout || e.read);
  // (departing in the later step counts only when it is the step right after `step` in this
  // challenge's steps, or every step between them built on `step` is a layout held right, array by
  // array: `step`'s numbers reached the later step in place, V's heads' slices between project-V and
  // the weighted sum; a step of values between, matched as a set of numbers, may hold them moved)
  const between = statuses.slice(statuses.indexOf(status) + 1, statuses.indexOf(wrong)).filter((s) => builtOn(step).has(s.step));
  const next = statuses.indexOf(wrong) > statuses.indexOf(status) && between.every((s) => s.status === 'ok' && s.entries.every((e) => e.layout));
  return builtOn(step).has(wrong.step) ? (partly || (none && (clean || (departs && next)))) && values : wrong.coverage < 1 / 3;
}

/** A finding of the traced run alone (the probe diagnosis was contradicted or found nothing). */
function tracedFinding(aligned, table, labels = {}) {
  const { step, entry } = aligned.wrong;
  const label = labels[step] ?? STEPS[step].label;
  const head = entry?.head ?? null;
  const what = head === null || new Set(aligned.references?.[0]?.steps.map((e) => e.head)).size < 2 ? label : `${label} (head ${head})`; // (a head named where there are several)
  const moved = entry?.layout ? ' An array here holds the right numbers in the wrong places.' : '';
  const said = saying(aligned.wrong.how, what);
  return {
    step,
    stepLabel: label,
    head,
    title: said?.title ?? `your code departs from the reference at ${what}`,
    detail: said?.detail ?? `On the traced input your code builds the steps before ${what} as the reference does, but no value it builds equals this one, and everything after is built on what it computed here instead.${moved}`,
    probe: null,
    foundBy: 'running your code on a traced input and comparing every value it builds with the reference’s steps',
    expected: entry ? { label: step, matrix: entry.matrix } : null,
    actual: null,
  };
}

/**
 * The finding to show: the probe diagnosis's `located` (or null), checked against the traced run
 * and given its line. `errors`: the error cases as run; `probeResults`: the probe calls' results
 * (a crash's line); `source`: the learner's file. Returns a finding or null.
 */
export function firstLine({ data, traced, lab, located, errors = [], probeResults = new Map(), source = '', functionName, labels }) {
  let aligned = null;
  try {
    aligned = alignAnswer(data, traced, lab, functionName);
  } catch { /* an unreadable traced run says nothing: the probe diagnosis stands */ }
  if (located?.step === 'check') return withLine(located, checkLine(errors, traced, functionName), source);
  // a throw with a line: on a probe, or on the traced input (which may take another path)
  const crash = [...probeResults.values(), ...(traced?.results ?? [])].find((r) => r?.error?.line);
  // a crash of JavaScript's own (a TypeError) on every traced input, told with no step, after the run
  // built some step right: the step it was building when it threw (the first it did not build), at
  // the throw's line (not a throw of the learner's, `throw new Error('not written yet')`)
  if (aligned?.crashed) {
    // (a read of undefined where the step before it is a layout no array holds, read in place by
    // index: an index past that layout's columns, `c <= first + d`: that layout)
    const k = aligned.wrong ? aligned.statuses.findIndex((s) => s.step === aligned.wrong.step) : -1;
    const before = k > 0 ? aligned.statuses[k - 1] : null;
    const past = before?.status === 'unknown' && before.entries.every((e) => e.layout) && /undefined/.test(crash?.error?.message ?? '');
    const went = crash?.error?.name === 'TypeError' && aligned.statuses.some((s) => s.status === 'ok');
    const step = located && !located.step && went ? (past ? before.step : aligned.wrong?.step) : null;
    if (step) return withLine({ ...located, step, stepLabel: labels?.[step] ?? STEPS[step].label }, crash.error, source);
    // (the probes' step, the one the traced run was building when it threw inside a helper of the
    // learner's, `matmul` checking its operands: the call it threw under, the line that passed them)
    if (located?.step && located.step === aligned.wrong?.step) {
      const under = thrownUnder(traced);
      if (under) return withLine(located, under, source);
    }
    aligned = null;
  }
  if (!aligned) return located && withLine(located, crash?.error ?? null, source);
  if (located && (located.step || !aligned.wrong)) {
    if (!located.step) return withLine(located, crash?.error ?? null, source); // a shape, nothing returned: no line to name
    // the probes' step is right in the traced run (the steps built on it are right), or comes after
    // the step the traced run finds wrong and that step is clearly wrong (most of its numbers differ,
    // or an array holds its numbers moved): contradicted
    const wrong = aligned.wrong && aligned.statuses.find((s) => s.step === aligned.wrong.step);
    const later = wrong && ORDER.indexOf(located.step) > ORDER.indexOf(wrong.step) && wrong.coverage < 1 / 3;
    // (or the probes' step is a mask applied by bounds, and each query scored exactly the keys it may see)
    const bounded = aligned.statuses.find((s) => s.step === located.step)?.entries.every((e) => e.bounded);
    // (or the probes' step is a layout the traced run found held right, head by head, where it found an
    // array of another layout step's shape holding that step's numbers moved)
    const moved = wrong?.entries.some((e) => e.layout && e.status === 'missing' && Number.isInteger(e.site));
    const held = moved && aligned.statuses.find((s) => s.step === located.step)?.entries.every((e) => e.layout && e.status === 'ok' && e.site !== null);
    // (or the probes' step is none of the challenge's steps, a whole-output reading, and the traced run finds a step clearly wrong)
    // (clearly: most of its numbers differ, or it is a step the traced run built right whose place another took: heads.js)
    const outside = wrong && (wrong.coverage < 1 / 3 || wrong.status === 'ok') && Array.isArray(data.locate?.steps) && !data.locate.steps.includes(located.step);
    // (or the probes' step is one the traced run cannot see, and every step built on it before the
    // traced run's wrong one is right, the wrong one made of right numbers only: `out[n] = w * v`)
    const between = wrong ? aligned.statuses.filter((s) => builtOn(located.step).has(s.step) && ORDER.indexOf(s.step) < ORDER.indexOf(wrong.step)) : [];
    const unseen = wrong && aligned.clean && builtOn(located.step).has(wrong.step) && between.length > 0 && between.every((s) => s.status === 'ok') && aligned.statuses.find((s) => s.step === located.step)?.entries.every((e) => e.status === 'unknown');
    // (unless the site that built the probes' step right is the very one the traced run left the reference at: that
    // step's own expression built the foreign number, `base ** (-(2 * (i + 1)) / d)`, some of its numbers by chance)
    const at = aligned.wrong?.site;
    const builtAt = (st, inside = false) => st?.status === 'ok' && st.entries.some((e) => e.status === 'ok' && Number.isInteger(e.site) && (inside ? e.site !== at.id && traced.sites[e.site]?.at <= at.at && at.end <= traced.sites[e.site]?.end && traced.sites[e.site].end - traced.sites[e.site].at > at.end - at.at : traced.sites[e.site]?.line === at.line && traced.sites[e.site]?.column === at.column));
    const own = at && ORDER.indexOf(located.step) < ORDER.indexOf(wrong.step) && builtAt(aligned.statuses.find((s) => s.step === located.step));
    // (nor is it confirmed by a step built on it whose numbers were matched by an expression that holds that site:
    // `Math.exp(score(h, i, j) - rowMax(h, i)) / rowSum(h, i)` right for the keys a query may see and foreign for
    // the others, a mask left out where each weight is made)
    const after = at && aligned.statuses.some((s) => builtOn(located.step).has(s.step) && ORDER.indexOf(s.step) < ORDER.indexOf(wrong.step) && builtAt(s, true));
    // (or the probes' step is one the traced run found made only inside the wrong one's expression, right as far as it went: `inside`)
    const contradicted = wrong && !own && (later || aligned.wrong.inside === located.step || unseen || bounded || held || outside || ((aligned.wrong.shifted || aligned.wrong.cut) && aligned.wrong.step !== located.step) || builtWhole(located.step, wrong, aligned.statuses, aligned.clean, aligned.wrong.departs) || (confirmed(located.step, aligned.statuses) && !after));
    // (the traced run found the heads walked in another order, pairing each with another's columns, at
    // the probes' step: the index that walked them)
    const agreed = (aligned.wrong?.walked || aligned.wrong?.cut) && aligned.wrong.step === located.step ? aligned.wrong.site : null;
    const lost = aligned.wrong ? null : unseenAfter(located.step, aligned.statuses);
    if (lost) return withLine({ ...located, step: lost, stepLabel: labels?.[lost] ?? STEPS[lost].label }, aligned.siteFor(lost) ?? aligned.anywhere, source);
    if (!contradicted) return withLine(located, agreed ?? (after && confirmed(located.step, aligned.statuses) ? at : null) ?? aligned.siteFor(located.step) ?? aligned.wrong?.site ?? crash?.error ?? aligned.anywhere, source);
  }
  if (!aligned.wrong) return located;
  return withLine(tracedFinding(aligned, data, labels), aligned.wrong.site, source);
}
