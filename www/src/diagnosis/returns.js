// Where a result was returned or written (issue 28): the lines first-line.js names when the wrong number is
// the function's result itself, or what a call of the learner's own function returned.
import { foreignTest } from './foreign.js';

/**
 * When the wrong step has no site (none of its numbers built, none foreign: the result is made of
 * running sums a right answer builds on the way, stopped short), the first return of the result's
 * first number by a function that calls itself: a recursion's base case that returned early
 * (`if (j === V.length - 1) return acc`). Its site, or null.
 */
export function earlyReturn(sites, recording, resultId) {
  const first = resultId >= 0 ? recording.sites[resultId].values.find((v) => Number.isFinite(v) && !Number.isInteger(v)) : undefined;
  if (first === undefined) return null;
  let best = null;
  sites.forEach((s, id) => {
    if (!s.returns || !s.plain || !s.fn) return; // (a variable returned as it is, built before)
    const r = recording.sites[id];
    const k = r.values.indexOf(first);
    const recursive = r.callers.some((c) => c >= 0 && sites[c]?.fn === s.fn);
    if (k >= 0 && recursive && (!best || r.moments[k] < best.moment)) best = { id, moment: r.moments[k] };
  });
  return best ? { ...sites[best.id], probe: 0 } : null;
}

/**
 * When the wrong step has no site and nothing foreign was built (its numbers made of right ones put
 * together wrong: `out[n] = w * v` for `+=`), the first write into an array (an assignment) of the
 * result's first number that is no step's (a step's, as with W_O left out, says nothing of where
 * the result went wrong): the line that put it there. Its site, or null.
 */
export function resultWrite(sites, recording, resultId, reference) {
  const steps = new Set(reference.steps.filter((e) => !e.layout).flatMap((e) => e.matrix.flat()).filter(Number.isFinite).map((x) => x.toPrecision(12)));
  const first = resultId >= 0 ? recording.sites[resultId].values.find((v) => Number.isFinite(v) && !Number.isInteger(v) && !steps.has(v.toPrecision(12))) : undefined;
  if (first === undefined) return null;
  let best = null;
  sites.forEach((s, id) => {
    if (!s.writes || !s.operator) return;
    const r = recording.sites[id];
    const k = r.values.indexOf(first);
    if (k >= 0 && (!best || r.moments[k] < best.moment)) best = { id, moment: r.moments[k] };
  });
  return best ? { ...sites[best.id], probe: 0 } : null;
}

/**
 * When the first foreign number of site `id` is made of what a call of the learner's own function
 * on its line returned, and that was no step's number nor an input's (`dot(q, k) / √d` with a dot product that
 * skips a term: a product, a partial sum), the function built it wrong: the site inside that call
 * that first built the returned number. Its id, or null.
 */
export function returnedBehind(id, sites, recording, reference) {
  const foreign = foreignTest(reference);
  const site = recording.sites[id];
  const k = site.values.findIndex(foreign);
  if (k < 0) return null;
  const moment = site.moments[k];
  const steps = new Set([...reference.steps.map((e) => e.matrix), ...(reference.inputs ?? [])].flatMap((M) => M.flat()).filter(Number.isFinite).map((x) => x.toPrecision(12)));
  let call = null;
  sites.forEach((s, c) => {
    if (!s.call || s.line !== sites[id].line || c === id) return;
    const r = recording.sites[c];
    const j = r.moments.findLastIndex((m) => m < moment);
    if (j >= 0 && (!call || r.moments[j] > call.moment)) call = { id: c, moment: r.moments[j], value: r.values[j] };
  });
  if (!call || !Number.isFinite(call.value) || Number.isInteger(call.value) || steps.has(call.value.toPrecision(12))) return null;
  let best = null;
  recording.sites.forEach((r, j) => {
    r.values.forEach((v, n) => { if (r.callers[n] === call.id && v === call.value && (!best || r.moments[n] < best.moment)) best = { id: j, moment: r.moments[n] }; });
  });
  return best?.id ?? null;
}

/**
 * When the wrong step has no site, an identity matrix the code made (`i === j ? 1 : 0`) on an input where
 * the call passed a square matrix of that size that is no identity (`W_O`): the stand-in used in its place,
 * the line that was to read it. Its site, or null.
 */
export function identityStandIn(sites, recordings, references) {
  const identity = (s) => s.rows === s.cols && s.rows > 1 && s.data.every((x, n) => x === (Math.floor(n / s.cols) === n % s.cols ? 1 : 0));
  let best = null;
  recordings.forEach((recording, probe) => {
    const sizes = new Set((references[probe]?.inputs ?? []).filter((M) => M.length > 1 && M.every((row) => row.length === M.length) && !identity({ rows: M.length, cols: M.length, data: M.flat() })).map((M) => M.length));
    sites.forEach((s, id) => {
      const r = recording.sites[id];
      const k = (r.snapshots ?? []).findIndex((x) => sizes.has(x.rows) && identity(x));
      if (k >= 0 && !s.argument && (!best || r.snapshots[k].moment < best.moment)) best = { id, probe, moment: r.snapshots[k].moment };
    });
  });
  return best ? { ...sites[best.id], probe: best.probe } : null;
}
