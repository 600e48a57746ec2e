// The numbers foreign to the reference (in no step, input or part of it) and the first site that
// built one: where the learner's values leave the reference (align.js names its line).

import { roundedArguments } from './loops.js';
import { LIMITS } from './instrument.js';

const flat = (M) => M.flat();
export const TOLERANCE = 1e-9;
export const near = (a, b) => (Number.isFinite(b) ? Math.abs(a - b) <= TOLERANCE * Math.max(1, Math.abs(b)) : a === b);
export const isInteger = (x) => Math.abs(x - Math.round(x)) <= 1e-12;

/** Sorted copy of the finite numbers of `values`. */
export const sortedFinite = (values) => Float64Array.from(values.filter(Number.isFinite)).sort();

/** Whether the sorted array holds a number near x. */
export function holds(sorted, x) {
  let lo = 0;
  let hi = sorted.length;
  const floor = x - TOLERANCE * Math.max(1, Math.abs(x));
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < floor) lo = mid + 1;
    else hi = mid;
  }
  return lo < sorted.length && near(sorted[lo], x);
}

/**
 * The site that built the first number foreign to the reference after moment `after`: the line
 * where the learner's values leave the reference. null when no site built one. With `sites` (the
 * instrumented sites), a number the enclosing expression turned back into the reference's is on the
 * way, not a departure (`(offset + t) / Math.pow(base, 2 * i / d)`: the divisor, for a right angle).
 * With `during` ([{ start, done, site }]: when each right step before it began and was done, and the
 * site that built it), a site whose last number came while one of them was built, and that is no part
 * of one of their sites, is passed over.
 */
export function firstForeignSite(recording, reference, after, sites = null, during = []) {
  const foreign = foreignTest(reference);
  const onTheWay = sites ? wayTest(recording, sites, foreign) : () => false;
  // (a sum from the last term back, built in a call the function made of itself: a recursion's partial sum)
  const tails = sortedFinite(reference.tails ?? []);
  const rounded = sites ? roundedArguments(sites) : new Set(); // (`n / T` of `Math.floor(n / T)`: index arithmetic)
  const recursive = (id, caller) => Boolean(sites) && caller >= 0 && Boolean(sites[id]?.fn) && sites[caller]?.fn === sites[id].fn;
  let best = null;
  recording.sites.forEach((site, id) => {
    // (a site whose last number came while a right step before it was built, not cut short by the bound:
    // it built that step, an online softmax's rescaling, not the step after it; not a table made before
    // any, `inverse[i] = base ** (-2 * i / d)`, nor a part of the very expression that built a right step,
    // right for some keys and foreign for others, a mask left out where each weight is made)
    const last = site.moments[site.moments.length - 1];
    const inside = (k) => sites?.[k] && sites[id] && sites[k].at <= sites[id].at && sites[id].end <= sites[k].end;
    const between = during.some(({ start, done }) => start <= last && last <= done) && !during.some(({ site: k }) => inside(k));
    if (between && site.values.length && site.values.length < LIMITS.MAX_PER_SITE) return;
    for (let k = 0; k < site.values.length; k++) {
      const moment = site.moments[k];
      if (moment <= after || (best && moment >= best.moment)) continue;
      const tail = holds(tails, site.values[k]) && recursive(id, site.callers?.[k] ?? -1);
      if (foreign(site.values[k]) && !tail && !rounded.has(id) && !onTheWay(id, moment)) { best = { site: id, moment, caller: site.callers?.[k] ?? -1 }; break; }
    }
  });
  return best;
}

/**
 * (id, moment) → whether the innermost recorded expression around site `id` next built, after
 * `moment`, numbers all known to the reference (finite, not integers only: else the one around it).
 */
function wayTest(recording, sites, foreign) {
  const around = new Map();
  const enclosing = (id) => {
    if (!around.has(id)) {
      const s = sites[id];
      let best = null;
      sites.forEach((o, j) => {
        if (j === id || o.end === undefined || s.end === undefined || !(o.at <= s.at && s.end <= o.end) || (o.at === s.at && o.end === s.end)) return;
        if (best === null || o.end - o.at < sites[best].end - sites[best].at) best = j;
      });
      around.set(id, best);
    }
    return around.get(id);
  };
  // (whole numbers only, `base ** 0.5` = 10: the expression around that one says)
  const way = (id, moment, depth) => {
    const j = enclosing(id);
    if (j === null || depth > 8) return false;
    const { values, moments } = recording.sites[j];
    const k = moments.findIndex((m) => m > moment);
    if (k < 0) return false;
    const next = values.filter((_, n) => moments[n] === moments[k]);
    if (next.some(foreign)) return false;
    return next.some((x) => Number.isFinite(x) && !isInteger(x)) || way(j, moments[k], depth + 1);
  };
  return (id, moment) => way(id, moment, 0);
}

/** x → whether x is foreign to the reference: finite, not an integer, in no step, input or part. */
export function foreignTest(reference) {
  const known = sortedFinite([...reference.inputs.flatMap(flat), ...reference.steps.flatMap((s) => flat(s.matrix)), ...(reference.parts ?? [])]);
  return (x) => Number.isFinite(x) && !isInteger(x) && !holds(known, x);
}
