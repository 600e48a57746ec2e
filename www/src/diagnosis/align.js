// Aligning what the learner's code recorded (instrument.js) with the reference's steps
// (reference.js), on each traced probe input.
//
// A step's VALUES are matched by value: a recording site matches a head's step when every
// informative number of that step (a number not already in the inputs or in an earlier step, not
// an integer) is among the numbers the site built, in any order. So a transposed matrix, one row
// or one head at a time, a row filled entry by entry, a sum built in a loop (its last partial sum is
// the entry), all match. A LAYOUT step (slicing, the mask, concatenation: the inputs' numbers moved)
// is matched by position: some array the code built equals it, or its transpose, or each of its
// rows (an `exact` step, a transpose that is itself the step, W_QKᵀ: not its transpose; held only as
// its transpose by a site that built no earlier step, it is missing there). A step whose numbers are all uninformative on a probe says nothing there.
//
// First wrong step: the first step that no site matches and on which no matched step is built
// (a step skipped by the recording, like scores scaled in the same expression, is not wrong when
// later work built on it matches: BUILDS_ON). First wrong line: the site that built the first number foreign to the
// reference (in no step, no input, not one a right answer builds on the way: reference.js's parts)
// after the last right step was complete; when the step is
// right on these inputs (a mistake only other inputs show), the site that built it. Before the
// first foreign number, siteOf tries what leaves no foreign number: a mask applied by bounds
// (bounds.js), a layout written straight into place, a matrix kept in a step's place, rows sliced
// apart from the keys scored (see docs/contributors.md).

import { boundSite, scoredRight, skipsKeys, slicedApart } from './bounds.js';
import { shortLoop, stoppedShort } from './loops.js';
import { columnsListed } from './heads.js';
import { helperWrong, reordered, summedFeed, transposedFeed, wrongFromEveryCall } from './feeds.js';
import { callSiteAtFault, sameParameter } from './calls.js';
import { firstForeignSite, foreignTest, holds, isInteger, near, sortedFinite } from './foreign.js';

const flat = (M) => M.flat();
const transpose = (M) => M[0].map((_, j) => M.map((row) => row[j]));
const sameMatrix = (data, rows, cols, M) => rows === M.length && cols === M[0].length && data.every((x, k) => near(x, M[Math.floor(k / cols)][k % cols]) || (x === M[Math.floor(k / cols)][k % cols]));

/** Per step entry: the informative numbers (by value) — not integers, not in the inputs or an earlier step. */
function informative(steps, inputs) {
  const known = sortedFinite(inputs.flatMap(flat));
  let seen = Array.from(known);
  return steps.map((entry) => {
    const cells = entry.allowed ? entry.matrix.flatMap((row, r) => row.filter((_, c) => entry.allowed[r][c])) : flat(entry.matrix);
    const mine = entry.layout ? [] : [...new Set(cells.filter((x) => Number.isFinite(x) && !isInteger(x)))];
    const sortedSeen = Float64Array.from(seen).sort();
    const fresh = mine.filter((x) => !holds(sortedSeen, x));
    seen = seen.concat(flat(entry.matrix).filter(Number.isFinite));
    return fresh.slice(0, 256);
  });
}

/** When the site built the numbers of `wanted`: { start (the first), done (the last first occurrence) }, or null. */
function completion(site, wanted) {
  let done = 0;
  let start = Infinity;
  for (const x of wanted) {
    const k = site.values.findIndex((v) => near(v, x));
    if (k < 0) return null;
    done = Math.max(done, site.moments[k]);
    start = Math.min(start, site.moments[k]);
  }
  return { start, done };
}

/** The moment a site first built one of the numbers of `wanted`. */
function firstMatch(site, wanted) {
  let start = Infinity;
  site.values.forEach((v, k) => { if (site.moments[k] < start && wanted.some((x) => near(v, x))) start = site.moments[k]; });
  return start;
}

/** A layout entry against the sites' arrays: { moment, site } of a match; 'missing' when an array of its shape matches nothing known; null. */
function matchLayout(entry, recording, knownMatrices, used = new Set(), inputs = [], inputRows = inputs.flat()) {
  const M = entry.matrix;
  const T = transpose(M);
  let sameShape = false;
  let transposed = null;
  let rowMoved = null;
  let narrow = null;
  const rowsSeen = new Map();
  const knownRows = knownMatrices.flat();
  for (const [id, site] of recording.sites.entries()) {
    for (const snap of site.snapshots) {
      if (sameMatrix(snap.data, snap.rows, snap.cols, M) || (!entry.exact && sameMatrix(snap.data, snap.rows, snap.cols, T))) return { site: id, moment: snap.moment };
      // an `exact` step (a transpose that is itself the step: W_QKᵀ) held only as its transpose, where no earlier step was matched
      if (entry.exact && !transposed && !used.has(id) && sameMatrix(snap.data, snap.rows, snap.cols, T)) transposed = { site: id, moment: snap.moment };
      if (snap.rows === 1) M.forEach((row, r) => { if (!rowsSeen.has(r) && sameMatrix(snap.data, 1, snap.cols, [row])) rowsSeen.set(r, { site: id, moment: snap.moment }); });
      // (or as many numbers in another shape: heads stacked, `heads.flat()`)
      const shaped = (snap.rows === M.length && snap.cols === M[0].length) || (snap.rows === T.length && snap.cols === T[0].length) || (snap.rows > 1 && snap.rows * snap.cols === M.length * M[0].length);
      // a wrong layout: the step's own numbers (entry.source), moved; nothing known
      const moved = entry.source && snap.data.some((x) => Number.isFinite(x) && !isInteger(x)) && snap.data.every((x) => !Number.isFinite(x) || isInteger(x) || holds(entry.source, x));
      // (in another shape, not a cache of whole input rows that holds the input itself by its end, `keys.push(K[t])`,
      // or its first rows at every moment, `K.slice(0, i)`; a head's rows of W_K are a wrong slice, not all at its top)
      const rowsKnown = snap.cols !== M[0].length && everyRowKnown(snap, inputRows) && (site.snapshots.some((s) => s.moment > snap.moment && knownMatrices.some((K) => sameMatrix(s.data, s.rows, s.cols, K))) || site.snapshots.every((s) => inputs.some((I) => s.rows < I.length && sameMatrix(s.data, s.rows, s.cols, I.slice(0, s.rows)))));
      if (shaped && moved && !rowsKnown && (!sameShape || snap.moment < sameShape.moment) && !knownMatrices.some((K) => sameMatrix(snap.data, snap.rows, snap.cols, K))) sameShape = { site: id, moment: snap.moment, caller: snap.caller ?? -1 };
      // a row of its width, of its numbers, that is a row of nothing known (`q.slice(h, h + d)`)
      // (of a mask, a row that holds −∞: the keys it hides are written, in the wrong places)
      // (a head's slice narrower than the head, as many rows, of its input's numbers: `slice(from, from + d - 1)`;
      // or one row of it, of no mask, when rows are sliced one at a time: `row.slice(h * d, h + d)`)
      const rowsOf = (snap.rows === M.length && snap.rows > 1) || (snap.rows === 1 && M.length > 1 && !entry.allowed);
      if (Number.isInteger(entry.head) && !narrow && rowsOf && snap.cols < M[0].length && moved && !knownMatrices.some((K) => sameMatrix(snap.data, snap.rows, snap.cols, K))) narrow = { site: id, moment: snap.moment, caller: snap.caller ?? -1 };
      if ((!entry.allowed || snap.data.includes(-Infinity)) && snap.rows === 1 && snap.cols === M[0].length && moved && !rowMoved && !knownRows.some((row) => row.length === snap.cols && sameMatrix(snap.data, 1, snap.cols, [row]))) rowMoved = { site: id, moment: snap.moment, caller: snap.caller ?? -1 };
    }
  }
  // an array of its shape that is nothing known outweighs rows seen one by one (they may be moved later)
  if (sameShape) return { missing: true, ...sameShape };
  if (transposed) return { missing: true, ...transposed };
  if (rowsSeen.size === M.length) return [...rowsSeen.values()].reduce((a, b) => (b.moment > a.moment ? b : a));
  if (rowMoved) return { missing: true, ...rowMoved };
  if (narrow) return { missing: true, ...narrow };
  return null;
}

/** Whether every row of a snapshot is one of `rows` (the inputs' rows, as given) of its width. */
function everyRowKnown(snap, knownRows) {
  for (let r = 0; r < snap.rows; r += 1) {
    const row = snap.data.slice(r * snap.cols, (r + 1) * snap.cols);
    if (!knownRows.some((known) => known.length === snap.cols && sameMatrix(row, 1, snap.cols, [known]))) return false;
  }
  return true;
}

/** Whether some arithmetic of the run (not a call, not `x = …`) built −∞ out of a name after the array `found` ({ site, moment }) was built. */
function readAfter(found, recording, sites) {
  const arithmetic = (id) => id !== found.site && !sites[id]?.call && sites[id]?.operator !== '=' && (sites[id]?.operands ?? []).some((n) => n !== 'Infinity');
  return recording.sites.some((site, id) => arithmetic(id) && site.values.some((v, k) => v === -Infinity && site.moments[k] > found.moment));
}

/** A square, non-symmetric step that some array holds transposed and none holds as it is. */
function onlyTransposed(M, recording) {
  if (M.length !== M[0].length) return false;
  const T = transpose(M);
  if (sameMatrix(flat(T), T.length, T[0].length, M)) return false;
  const snaps = recording.sites.flatMap((site) => site.snapshots);
  return !snaps.some((s) => sameMatrix(s.data, s.rows, s.cols, M)) && snaps.some((s) => sameMatrix(s.data, s.rows, s.cols, T));
}

/**
 * Aligns one traced probe: for every step entry, { status: 'ok' | 'missing' | 'unknown', site, moment }.
 * `recording`: { sites: [{ values, moments, snapshots }] }; `reference`: { steps, inputs }.
 */
export function alignProbe(recording, reference, sites = []) {
  const fresh = informative(reference.steps, reference.inputs);
  const foreign = foreignTest(reference);
  // a part kept: the larger expression it is in builds no number foreign to the reference
  const kept = (id) => sites[id]?.outer !== null && sites[id]?.outer !== undefined && !recording.sites[sites[id].outer].values.some(foreign);
  const sorted = recording.sites.map((s) => sortedFinite(s.values));
  // `known`: arrays a right answer may build that are no step (a slice the kind does not read): not a wrong layout
  const knownMatrices = [...reference.inputs, ...reference.steps.map((s) => s.matrix), ...(reference.known ?? [])].flatMap((M) => [M, transpose(M)]);
  const used = new Set(); // the sites that built an earlier step
  return reference.steps.map((entry, k) => {
    if (entry.layout) {
      const found = matchLayout({ ...entry, source: entry.source && sortedFinite(entry.source) }, recording, knownMatrices, used, reference.inputs);
      if (found?.missing) return { ...entry, status: 'missing', coverage: 0, site: found.site, moment: found.moment, caller: found.caller };
      if (found) {
        used.add(found.site);
        // (a mask's −∞ computed with after the mask was built, `x − top`: the step after it read its array)
        const read = entry.matrix.some((row) => row.includes(-Infinity)) && readAfter(found, recording, sites);
        return { ...entry, status: 'ok', ...found, read };
      }
      // a mask no array holds, applied by bounds: right when each query scored exactly its keys
      // (a step that holds the values too, a KV cache, is not shown right by its keys alone)
      return entry.allowed && !entry.values && scoredRight(entry, recording, reference) ? { ...entry, status: 'ok', site: null, bounded: true } : { ...entry, status: 'unknown' };
    }
    const wanted = fresh[k];
    if (!wanted.length) return { ...entry, status: 'unknown' };
    let best = null;
    let coverage = 0;
    let partial = null;
    sorted.forEach((values, id) => {
      const found = wanted.filter((x) => holds(values, x)).length;
      coverage = Math.max(coverage, found / wanted.length);
      if (found > 0 && found < wanted.length) {
        const start = firstMatch(recording.sites[id], wanted);
        if (!partial || start < partial.start) partial = { site: id, start };
      }
      if (found < wanted.length) return;
      const moment = completion(recording.sites[id], wanted);
      const inner = Boolean(sites[id]?.inner);
      // a value kept (assigned, returned, passed) before a part of a larger expression, then the earliest
      if (moment !== null && (!best || (best.inner && !inner) || (best.inner === inner && moment.done < best.moment))) best = { site: id, moment: moment.done, start: moment.start, inner };
    });
    // coverage: the largest share of the step's numbers one site built (a mask that drops keys leaves some)
    if (best) used.add(best.site);
    return best ? { ...entry, status: 'ok', ...best, kept: best.inner && kept(best.site), transposed: onlyTransposed(entry.matrix, recording) } : { ...entry, status: 'missing', coverage, partial };
  });
}

/** The steps' statuses over every traced probe, by step name, in order: [{ step, status, entries }]. */
export function stepStatuses(alignments, order) {
  const names = order.filter((name) => alignments.some((entries) => entries.some((e) => e.step === name)));
  return names.map((step) => {
    const entries = alignments.flatMap((entries, probe) => entries.filter((e) => e.step === step).map((e) => ({ ...e, probe })));
    const status = entries.some((e) => e.status === 'missing') ? 'missing' : entries.some((e) => e.status === 'ok') ? 'ok' : 'unknown';
    const coverage = Math.min(...entries.filter((e) => e.status === 'missing').map((e) => e.coverage ?? 0), 1);
    return { step, status, coverage, entries };
  });
}

/**
 * Which steps build on which, in the course's terms (not a challenge's): a step that no recorded
 * value matches is not wrong when a step built on it is right (it was computed inside an
 * expression, or in place). Steps absent from a challenge are skipped.
 */
const BUILDS_ON = {
  'project-Q': ['scores'], 'project-K': ['scores'], 'project-V': ['weighted-sum'],
  slice: ['scores', 'weighted-sum', 'circuit-ov', 'circuit-qk', 'reader'], 'kv-head': ['scores', 'weighted-sum'],
  frequency: ['position'], position: ['rotation'], pairs: ['rotation'], rotation: ['scores'],
  scores: ['scale'], scale: ['mask', 'softmax'], mask: ['softmax'], softmax: ['weighted-sum'],
  'weighted-sum': ['concat', 'w-o'], concat: ['w-o'],
  // which keys the cache holds shows in the weights, its values in the weighted sum
  cache: ['softmax', 'weighted-sum'],
  // composition scores: the circuits, the reader, the products, the norms, the score
  'circuit-ov': ['product'], 'circuit-qk': ['reader'], reader: ['product'], product: ['norms'], norms: ['ratio'],
};

/** Every step built on `step`, directly or not. */
export function builtOn(step, seen = new Set()) {
  for (const next of BUILDS_ON[step] ?? []) if (!seen.has(next)) { seen.add(next); builtOn(next, seen); }
  return seen;
}

/**
 * Whether the steps built on `step` say it was right, recorded or not: each of them (that the
 * traced run can judge) is right, or is itself confirmed, and one at least. A step matched only as
 * the transpose of a square matrix confirms nothing (a set of numbers cannot tell Sᵀ from S), nor
 * one matched only inside a larger expression (its value may be changed before it is kept) unless
 * that expression builds no foreign number (`(w / sum) * v`: the weights, kept).
 */
export function confirmed(step, statuses, seen = new Set()) {
  seen.add(step);
  const judged = (BUILDS_ON[step] ?? []).map((next) => statuses.find((s) => s.step === next)).filter((s) => s && s.status !== 'unknown' && !seen.has(s.step));
  const right = (s) => (s.status === 'ok' && !s.entries.every((e) => e.status !== 'ok' || e.transposed || (e.inner && !e.kept))) || confirmed(s.step, statuses, seen);
  return judged.length > 0 && judged.every(right);
}

/**
 * When the traced run found no step wrong, built the probes' step `step` right (every entry matched
 * and kept, or the steps built on it right), and no array it built holds the result (the last step, a
 * layout, unseen): the first step built on `step` it could not see, where the result was lost (each
 * head's weighted sum right, the heads written over one another or left unjoined). Else null.
 */
export function unseenAfter(step, statuses) {
  const status = statuses.find((s) => s.step === step);
  const last = statuses[statuses.length - 1];
  if (!status || !last || last.status !== 'unknown' || !last.entries.every((e) => e.layout) || confirmed(last.step, statuses)) return null;
  const kept = (e) => e.status === 'ok' && e.site !== null && e.site !== undefined && !e.transposed && !(e.inner && !e.kept);
  if (!((status.status === 'ok' && status.entries.every(kept)) || confirmed(step, statuses))) return null;
  return statuses.find((s, k) => k > statuses.indexOf(status) && s.status === 'unknown' && builtOn(step).has(s.step) && !confirmed(s.step, statuses))?.step ?? null;
}

/** The first wrong step: the first missing step on which no right step is built; null when there is none. */
export function firstWrongStep(statuses) {
  return statuses.find((s) => s.status === 'missing' && !confirmed(s.step, statuses)) ?? null;
}

/**
 * The step after `first` (of `statuses`), when `first`'s numbers were made only inside its expression and a
 * loop cut both short: the two cut at the same point (`row[c] += (ws[j] / den) * V[j][c]` under a `break`),
 * or none of the next one's built. `cut(entry)`: whether the site of the entry's partial numbers built, for
 * each row, those of a first run of its keys and no number foreign to the reference (a loop stopped, not a
 * wrong read). Else null.
 */
export function cutInsideNext(first, statuses, sites, cut) {
  const next = first && statuses[statuses.indexOf(first) + 1];
  if (!next || next.status !== 'missing' || !builtOn(first.step).has(next.step) || next.entries.length !== first.entries.length) return null;
  const inside = (mine, theirs) => {
    const [a, b] = [sites[mine.partial?.site], sites[theirs.partial?.site]];
    return Boolean(a && b) && mine.status === 'missing' && theirs.status === 'missing' && mine.head === theirs.head && mine.coverage === theirs.coverage && b.at <= a.at && a.end <= b.end && b.end - b.at > a.end - a.at && cut(mine);
  };
  // (or none of the next one's numbers built, where the step's own were made as an operand of a larger
  // expression, `(w[j] / sum) * vals[j][c]`, and none of them wrong: only some keys reached)
  const short = (mine, theirs) => mine.status === 'missing' && theirs.status === 'missing' && mine.head === theirs.head && !theirs.coverage && !theirs.partial && sites[mine.partial?.site]?.inner === true && cut(mine);
  return first.entries.every((e, k) => inside(e, next.entries[k])) || first.entries.every((e, k) => short(e, next.entries[k])) ? next : null;
}

/**
 * The call at fault for a matrix kept in a step's place (`found`: { site, moment, caller }): the
 * call of the helper it was built in, when that helper is used from several places (callSiteAtFault),
 * and so on up while that call is itself what a helper used from several places returns
 * (`project = (W) => times(X, W)` called as `project(W_K)` for V). Its id.
 */
function calledFrom(found, sites, recording) {
  let at = found;
  for (let depth = 0; depth < 8; depth++) {
    const call = callSiteAtFault(at, sites, recording);
    if (call === null) return at.site;
    const snap = sites[call].returns ? recording.sites[call].snapshots.find((s) => s.moment >= at.moment) : null;
    if (!snap) return call;
    at = { site: call, moment: snap.moment, caller: snap.caller ?? -1 };
  }
  return at.site;
}

/**
 * When the helper the first foreign number was built in is wrong in every call (`dot`, given a
 * transposed weight's rows by `times`), the call that passed it those arguments is in a helper of
 * its own: up through the calls that built the foreign number, the first helper used from several
 * places that is not wrong in every call (`times(X, transpose(W_Q))`), its call site. Its id, or null.
 */
function outerCallAtFault(found, sites, recording, reference) {
  let at = found;
  for (let depth = 0; depth < 4 && at.caller >= 0; depth++) {
    const c = at.caller;
    const r = recording.sites[c];
    const k = r.moments.findIndex((m) => m > at.moment);
    if (k < 0) return null;
    at = { site: c, moment: r.moments[k], caller: r.callers[k] ?? -1 };
    const call = callSiteAtFault(at, sites, recording, foreignTest(reference));
    if (call !== null) return call;
  }
  return null;
}

/** The array an assignment site writes into (`out` of `out[i + half] = …`), or null. */
const arrayOf = (site) => site?.writes ?? null;

/** The number recorded at `found` ({ site, moment }). */
const foundValue = (found, recording) => recording.sites[found.site].values[recording.sites[found.site].moments.indexOf(found.moment)];

/** The site of the largest arithmetic expression site `id` is a part of (itself when it is none). */
function outermost(id, sites) {
  let k = id;
  for (let depth = 0; depth < 16 && Number.isInteger(sites[k]?.outer); depth++) k = sites[k].outer;
  return k;
}

/**
 * The assignment into an array (`concat[i][off + c] += …`) that wrote every number of a layout
 * step, when no array held the step whole: the line that put the numbers where they are. The site
 * that completed them first, or null.
 */
function writeSite(entry, recording, sites) {
  const wanted = [...new Set(flat(entry.matrix).filter((x) => Number.isFinite(x) && !isInteger(x)))];
  if (!wanted.length) return null;
  let best = null;
  recording.sites.forEach((site, id) => {
    if (!sites[id]?.writes) return;
    const done = completion(site, wanted)?.done;
    if (done !== undefined && (!best || done < best.done)) best = { id, done };
  });
  return best?.id ?? null;
}

/** The site that last wrote into the variable a wrong array is (`out` of `return out`) before it was recorded, or null. `found`: { site, moment }. */
function lastWrite(found, sites, recording) {
  let at = { id: found.site, moment: found.moment };
  // (and on, while that write put in another array: `out.push(Array.from(row))`, the last write into `row` before)
  for (let depth = 0; depth < 4; depth++) {
    const name = sites[at.id]?.reads;
    let best = null;
    if (name) sites.forEach((site, id) => {
      if (site.writes !== name || site.fn !== sites[found.site].fn || id === at.id) return;
      const m = recording.sites[id].moments.findLast((t) => t < at.moment);
      if (m !== undefined && (!best || m > best.moment)) best = { id, moment: m };
    });
    if (!best) return depth ? at.id : null;
    at = best;
  }
  return at.id;
}

/**
 * The declaration of a function value that site `id` applies (`cut` of `M.map(cut)`), made by a
 * call of the learner's own function (`const cut = columnsOf(from, headDimensions)`): what the site
 * does is what that call chose. Its id, or null.
 */
function madeWith(id, sites, recording) {
  for (const name of sites[id]?.uses ?? []) {
    const k = sites.findIndex((s, j) => j !== id && s.declares === name && s.fn === sites[id].fn && s.call);
    if (k >= 0 && recording.sites[k].functions > 0) return k;
  }
  return null;
}

/**
 * A wrong array that a call returned (`rows.map((row, t) => { …; return row.concat(part); })`),
 * whose last row was built, just before, by an expression inside that call (the callback's return):
 * that expression put the numbers where they are. Its id, or null. `found`: { site, moment }.
 */
function rowBuilder(found, sites, recording) {
  const outer = sites[found.site];
  const snap = recording.sites[found.site]?.snapshots.find((x) => x.moment === found.moment);
  if (!snap || snap.rows < 2 || outer?.end === undefined) return null;
  const last = snap.data.slice((snap.rows - 1) * snap.cols);
  let best = null;
  sites.forEach((site, id) => {
    if (id === found.site || !(outer.at < site.at && site.end <= outer.end)) return;
    const before = recording.sites[id].snapshots.findLast((x) => x.moment < found.moment);
    const same = before && before.rows === 1 && before.cols === snap.cols && before.data.every((x, k) => Object.is(x, last[k]) || x === last[k]);
    if (same && (!best || before.moment > best.moment)) best = { id, moment: before.moment };
  });
  return best?.id ?? null;
}

/**
 * A wrong array (a layout's) whose first wrong row was built whole, as a row of its own, somewhere
 * before (`return [...attendHeads(q, cache, h + 1), ...part]`, a recursion that puts the heads in
 * another order, its row then pushed as it is): the site that first held that row. Its id, or null.
 * `found`: { site, moment, matrix } (the reference's matrix of the step).
 */
function rowOrigin(found, sites, recording) {
  const snap = recording.sites[found.site]?.snapshots.find((x) => x.moment === found.moment);
  const M = found.matrix;
  if (!snap || !M || snap.rows !== M.length || snap.cols !== M[0]?.length || snap.cols < 2) return null;
  const row = (r) => Array.from(snap.data.slice(r * snap.cols, (r + 1) * snap.cols));
  const r = M.findIndex((want, k) => row(k).some((x, c) => !(Math.abs(x - want[c]) <= 1e-9 * Math.max(1, Math.abs(want[c])))));
  if (r < 0) return null;
  const wrong = row(r);
  let best = null;
  recording.sites.forEach((rec, id) => {
    if (id === found.site || sites[id].inner) return;
    const first = rec.snapshots.find((x) => x.moment < found.moment && x.rows === 1 && x.cols === snap.cols && Array.from(x.data).every((v, c) => Object.is(v, wrong[c])));
    if (first && (!best || first.moment < best.moment)) best = { id, moment: first.moment };
  });
  return best?.id ?? null;
}

/**
 * A wrong array (a layout's) whose numbers not in the reference's matrix are all one number (a mask
 * that fills its hidden keys with `Number.MIN_VALUE`, no whole number): the site that first built that number
 * on another line, the line that chose it. Its id, or null. `found`: { site, moment, matrix }.
 */
function fillOrigin(found, sites, recording) {
  const snap = recording.sites[found.site]?.snapshots.find((x) => x.moment === found.moment);
  if (!snap || !found.matrix) return null;
  const known = found.matrix.flat();
  const odd = Array.from(snap.data).filter((x) => !known.some((y) => Object.is(x, y) || (Number.isFinite(y) && Math.abs(x - y) <= 1e-12 * Math.max(1, Math.abs(y)))));
  if (!odd.length || Number.isInteger(odd[0]) || !odd.every((x) => Object.is(x, odd[0]))) return null; // (a whole number is built everywhere: a count, a start)
  let best = null;
  recording.sites.forEach((rec, id) => {
    if (sites[id].line === sites[found.site].line || sites[id].inner) return;
    const k = rec.values.findIndex((v) => Object.is(v, odd[0]));
    if (k >= 0 && rec.moments[k] < found.moment && (!best || rec.moments[k] < best.moment)) best = { id, moment: rec.moments[k] };
  });
  return best?.id ?? null;
}

/**
 * A step none of whose numbers were built, where a matrix the code already had was kept in its
 * place (`const V = X`; `const K = project(X, W_Q)`: another step's numbers built again): the
 * earliest snapshot of an input, or of another step after its numbers were built a second time, of
 * the step's shape, between the right steps before it and those after it. { site, moment, caller } or null.
 */
function standInSite(entry, index, alignment, recording, reference) {
  const before = alignment.slice(0, index).filter((e) => e.status === 'ok').map((e) => e.moment).filter(Number.isFinite);
  const after = alignment.slice(index + 1).filter((e) => e.status === 'ok').map((e) => e.start ?? e.moment).filter(Number.isFinite);
  if (!before.length || !after.length) return null;
  const [from, to] = [Math.max(...before), Math.min(...after)];
  const M = entry.matrix;
  const shaped = (K) => K.length === M.length && K[0].length === M[0].length;
  // each candidate with the moment from which a copy of it is a stand-in
  const known = reference.inputs.filter(shaped).map((K) => ({ K, since: -Infinity }));
  for (const e of alignment) {
    if (e === entry || e.status !== 'ok' || e.layout || !shaped(e.matrix)) continue;
    const x = e.matrix.flat().find((v) => Number.isFinite(v) && !isInteger(v));
    const site = recording.sites[e.site];
    const again = site.values.findIndex((v, k) => site.moments[k] > e.moment && near(v, x));
    if (x !== undefined && again >= 0) known.push({ K: e.matrix, since: site.moments[again] });
  }
  let best = null;
  recording.sites.forEach((site, id) => {
    for (const snap of site.snapshots) {
      if (snap.moment <= from || snap.moment >= to || (best && snap.moment >= best.moment) || snap.data.every(isInteger)) continue;
      if (known.some(({ K, since }) => snap.moment > since && sameMatrix(snap.data, snap.rows, snap.cols, K))) best = { site: id, moment: snap.moment, caller: snap.caller ?? -1 };
    }
  });
  return best;
}

/**
 * The site to name for `step`: where it was built when some site matched it, else the first
 * foreign number after the last right step before it. { site, probe } or null.
 */
export function siteOf(step, alignments, recordings, references, sites = []) {
  for (const [probe, alignment] of alignments.entries()) {
    const ok = alignment.filter((e) => e.step === step && e.status === 'ok' && e.site !== null);
    // this probe has the step right throughout, and no probe is missing it
    const wrongHere = alignment.some((e) => e.step === step && e.status !== 'ok');
    const missingAnywhere = alignments.some((a) => a.some((e) => e.step === step && e.status === 'missing'));
    if (ok.length && !wrongHere && !missingAnywhere) return { site: ok.sort((a, b) => a.moment - b.moment)[0].site, probe, right: true };
  }
  for (const [probe, alignment] of alignments.entries()) {
    let index = alignment.findIndex((e) => e.step === step && e.status === 'missing');
    if (index < 0) index = alignment.findIndex((e) => e.step === step);
    if (index < 0) continue;
    const entry = alignment[index];
    // a wrong layout: the array itself (or the call that made it, in a helper used from several places)
    // (when that array is a variable, as it is returned or passed on: the last write into it before)
    // (a mask's row written wrong where the keys scored already differ: the bound or predicate that chose them)
    const chosen = entry.status === 'missing' && entry.allowed && Number.isInteger(entry.site) && skipsKeys(entry, recordings[probe], references[probe]) ? boundSite(entry, recordings[probe], references[probe], sites) : null;
    if (chosen) return { site: chosen.site, probe, final: true };
    // (a layout helper wrong on every part of the step, though every whole number passed to it is
    // one a right answer passes, a head's index or a size: the helper itself)
    const helper = entry.status === 'missing' && entry.layout && Number.isInteger(entry.site) ? helperWrong(entry, alignment, sites, recordings[probe], references[probe]) : null;
    if (helper !== null) return { site: helper, probe };
    const order = entry.status === 'missing' && entry.layout && Number.isInteger(entry.site) ? reordered(entry, sites, recordings[probe]) : null;
    if (order !== null) return { site: order, probe };
    // (a head's columns listed wrong as whole numbers, read by index: that list, heads.js)
    const listed = entry.status === 'missing' && entry.layout && Number.isInteger(entry.head) ? columnsListed(entry, sites, recordings[probe], references[probe]) : null;
    if (listed !== null) return { site: listed, probe };
    // (a layout helper wrong from each of its call sites: the helper, not a call)
    const every = entry.layout && Number.isInteger(entry.site) && wrongFromEveryCall(entry, alignment, sites, recordings[probe]);
    if (entry.status === 'missing' && entry.site !== undefined && entry.site !== null) return { site: (every ? null : callSiteAtFault(entry, sites, recordings[probe])) ?? lastWrite(entry, sites, recordings[probe]) ?? madeWith(entry.site, sites, recordings[probe]) ?? (entry.layout ? fillOrigin(entry, sites, recordings[probe]) : null) ?? rowBuilder(entry, sites, recordings[probe]) ?? (entry.layout ? rowOrigin(entry, sites, recordings[probe]) : null) ?? entry.site, probe };
    // a mask applied by bounds (no array holds it): where the bound of the keys was computed
    const bound = entry.layout && entry.allowed && entry.status !== 'ok' ? boundSite(entry, recordings[probe], references[probe], sites) : null;
    if (bound) return { site: bound.site, probe, final: true }; // the bound itself: nothing behind it to follow
    // a layout of every head's numbers (not one head's) that no array holds, its numbers written one
    // by one into an array: the write that placed them
    const placed = entry.layout && entry.head === null && entry.status === 'unknown' ? writeSite(entry, recordings[probe], sites) : null;
    if (placed !== null) return { site: placed, probe };
    // none of its numbers built, and in their place a whole matrix the code had already (an input, another step)
    const standIn = entry.status === 'missing' && !entry.partial ? standInSite(entry, index, alignment, recordings[probe], references[probe]) : null;
    if (standIn) return { site: calledFrom(standIn, sites, recordings[probe]), probe };
    // in an answer that masks by bounds: rows of an input sliced apart from the keys each query scored
    const apart = entry.status === 'missing' && !entry.layout ? slicedApart(recordings[probe], references[probe]) : null;
    if (apart) return { site: apart.site, probe };
    // from the moment the earliest right step before it began (a row-by-row answer builds each
    // row's steps in turn; a helper may build a later step's input first)
    const starts = alignment.slice(0, index).filter((e) => e.status === 'ok').map((e) => e.start ?? e.moment).filter(Number.isFinite);
    const during = alignment.slice(0, index).filter((e) => e.status === 'ok' && Number.isFinite(e.start) && Number.isFinite(e.moment)).map((e) => ({ start: e.start, done: e.moment, site: e.site }));
    const found = firstForeignSite(recordings[probe], references[probe], starts.length ? Math.min(...starts) : 0, sites, during);
    // some of the step's numbers built before any foreign number (a loop that stops short, a key
    // scored against itself): the site that first built them is where the step went wrong
    // (unless the foreign number is written into the same array: the step's other part, written wrong)
    const partial = entry.status === 'missing' ? entry.partial : null;
    // (the foreign number's own expression, or the larger one it is a part of, writes there)
    // (or passed to the same parameter of the learner's own function, which writes it: `put(t, a, …)`, `put(t, b, …)`)
    const [mine, theirs] = [sites[partial?.site], sites[outermost(found?.site, sites)]];
    // (or two values one later expression puts together: `turned.with(first, turnedFirst).with(second, turnedSecond)`)
    const together = (a, b) => Boolean(a?.declares && b?.declares && a.declares !== b.declares) && sites.some((s) => s.uses?.includes(a.declares) && s.uses?.includes(b.declares));
    const sameArray = partial && found && ((arrayOf(mine) !== null && arrayOf(mine) === arrayOf(theirs)) || sameParameter(mine, theirs) || together(mine, theirs));
    // (or when the foreign number is computed from the value that site declared: built on it)
    const upstream = partial && found && sites[partial.site]?.declares && sites[found.site]?.uses?.includes(sites[partial.site].declares);
    // (or the loop around that site, when it stops short: loops.js)
    if (partial && (!found || upstream || (partial.start < found.moment && !sameArray))) return { site: shortLoop(partial.site, sites, recordings[probe], references[probe]) ?? partial.site, probe };
    // (none of its numbers built, and a sum that stopped short in a loop that stops short: loops.js)
    const short = found && entry.status === 'missing' && !entry.layout && !entry.coverage ? stoppedShort(entry, sites, recordings[probe], references[probe], found.moment) : null;
    if (short !== null) return { site: short, probe };
    if (found) return { site: callSiteAtFault(found, sites, recordings[probe], foreignTest(references[probe])) ?? outerCallAtFault(found, sites, recordings[probe], references[probe]) ?? transposedFeed(found, sites, recordings[probe].whole ?? recordings[probe].sites, references[probe]) ?? summedFeed(found, sites, recordings[probe].whole ?? recordings[probe].sites, foundValue(found, recordings[probe]), references[probe]) ?? found.site, probe };
  }
  return null;
}
