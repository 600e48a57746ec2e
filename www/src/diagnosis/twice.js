// A step done twice (issue 28): the softmax taken of weights already right (`.softmax().softmax()`,
// a program that lists the step twice). The traced run matches that step, so the first wrong step
// looks like the next one (the weighted sum); but a later site built the step's own operation applied
// once more to its right value: that site is where the step went wrong.
import { builtOn } from './align.js';

const TOLERANCE = 1e-9;
const near = (a, b) => Math.abs(a - b) <= TOLERANCE * Math.max(1, Math.abs(b));
const isInteger = (x) => Math.abs(x - Math.round(x)) <= 1e-12;

function softmaxRow(row) {
  const top = Math.max(...row);
  const e = row.map((x) => Math.exp(x - top));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}

/**
 * A step's operation applied again to its right value (`entry`, the reference's step entry): lists of
 * the numbers it makes, one per way a right answer may compute the step. The softmax over the whole
 * row (the hidden keys' zeros taken in), or over the keys the mask lets through.
 */
const AGAIN = {
  softmax: (entry) => [entry.matrix.flatMap(softmaxRow), entry.allowed ? entry.matrix.flatMap((row, r) => softmaxRow(row.filter((_, c) => entry.allowed[r][c]))) : null],
};

/** When a site had built every number of `wanted`: { done (the moment), caller (the call it was built under, or −1) }, or null. */
function builtAll(site, wanted) {
  let done = -Infinity;
  let caller = -1;
  for (const x of wanted) {
    const k = site.values.findIndex((v) => near(v, x));
    if (k < 0) return null;
    if (site.moments[k] > done) [done, caller] = [site.moments[k], site.callers?.[k] ?? -1];
  }
  return { done, caller };
}

/**
 * The site that first built, after `entry` was built, the numbers of one of `lists` (each the step's
 * operation on a right value) not already in `entry`'s own, or the call of the helper it built them in:
 * its id, or null.
 */
function builtAfter(entry, lists, recording) {
  const own = entry.matrix.flat();
  for (const numbers of lists) {
    const wanted = [...new Set((numbers ?? []).filter((x) => Number.isFinite(x) && !isInteger(x) && !own.some((y) => near(x, y))))];
    if (!wanted.length) continue;
    // (the site that built them first: a later one only passed them on)
    let best = null;
    for (const [id, site] of recording.sites.entries()) {
      const built = builtAll(site, wanted);
      if (built && built.done > entry.moment && (!best || built.done < best.done)) best = { id, ...built };
    }
    // (built in a helper of the learner's: the call that applied it again, `softmax(softmax(x))`)
    if (best) return best.caller >= 0 && best.caller !== best.id ? best.caller : best.id;
  }
  return null;
}

/**
 * Two steps right, the next wrong (`first`, of `statuses`), and a site that built, after the right one:
 * - the operation of the step before `first` applied once more to its own right value (a step done
 *   twice: that step, at that site);
 * - or `first`'s operation applied to the value of the step before that one (a step done too late,
 *   `softmax` then `scale`: the step skipped, at that site).
 * { step, entries, site, again } (`again`: done twice), as firstLine's findings are, or null. `recordings`: the traced probes'
 * recordings; `sites`: the instrumented sites.
 */
export function doneTwice(first, statuses, recordings, sites) {
  const k = first ? statuses.indexOf(first) : -1;
  const before = k > 0 ? statuses[k - 1] : null;
  if (!before || before.status !== 'ok' || !builtOn(before.step).has(first.step)) return null;
  const at = (entry, id, again = false) => (id === null || !sites[id] ? null : { step: entry.step, entries: [{ ...entry, status: 'missing' }], site: { ...sites[id], probe: entry.probe }, again });
  for (const entry of before.entries) {
    if (entry.status !== 'ok' || !recordings[entry.probe] || !AGAIN[before.step]) continue;
    const found = at(entry, builtAfter(entry, AGAIN[before.step](entry), recordings[entry.probe]), true);
    if (found) return found;
  }
  const earlier = k > 1 ? statuses[k - 2] : null;
  if (!earlier || earlier.status !== 'ok' || !AGAIN[first.step] || !builtOn(earlier.step).has(before.step)) return null;
  for (const entry of earlier.entries) {
    const skipped = before.entries.find((e) => e.probe === entry.probe && e.head === entry.head && e.status === 'ok');
    if (entry.status !== 'ok' || !skipped || !recordings[entry.probe]) continue;
    const found = at(skipped, builtAfter(entry, AGAIN[first.step](entry), recordings[entry.probe]));
    if (found) return found;
  }
  return null;
}
