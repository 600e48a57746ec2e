// A step done twice (issue 28): the softmax taken of weights already right (`.softmax().softmax()`,
// a program that lists the step twice). The traced run matches that step, so the first wrong step
// looks like the next one (the weighted sum); but a later site built the step's own operation applied
// once more to its right value: that site is where the step went wrong.
import { builtOn } from './align.js';
import { softmaxRow, transpose } from '../matrix.js';

const TOLERANCE = 1e-9;
const near = (a, b) => Math.abs(a - b) <= TOLERANCE * Math.max(1, Math.abs(b));
const isInteger = (x) => Math.abs(x - Math.round(x)) <= 1e-12;

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

/** Whether an array of the traced run (on the entry's probe) holds the step entry's matrix as it is. */
function heldAsIs(entry, recordings) {
  const M = entry.matrix;
  const same = (snap) => snap.rows === M.length && snap.cols === M[0].length && snap.data.every((x, n) => near(x, M[Math.floor(n / snap.cols)][n % snap.cols]));
  return (recordings[entry.probe]?.sites ?? []).some((site) => site.snapshots?.some(same));
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
 * - or `first`'s operation applied to the transpose of the step before it (square), a value carried
 *   transposed through steps whose numbers, matched as a set, cannot show it: the first of those steps;
 * - or `first`'s operation applied to the value of the step before that one (a step done too late,
 *   `softmax` then `scale`: the step skipped, at that site).
 * { step, entries, site, how } (`how`: 'twice', 'transposed', 'read' or null, for `saying`), as firstLine's findings are, or null. `recordings`: the traced probes'
 * recordings; `sites`: the instrumented sites.
 */
export function doneTwice(first, statuses, recordings, sites) {
  const k = first ? statuses.indexOf(first) : -1;
  const before = k > 0 ? statuses[k - 1] : null;
  if (!before || before.status !== 'ok' || !builtOn(before.step).has(first.step)) return null;
  const at = (entry, id, how = null) => (id === null || !sites[id] ? null : { step: entry.step, entries: [{ ...entry, status: 'missing' }], site: { ...sites[id], probe: entry.probe }, how });
  for (const entry of before.entries) {
    if (entry.status !== 'ok' || !recordings[entry.probe] || !AGAIN[before.step]) continue;
    const found = at(entry, builtAfter(entry, AGAIN[before.step](entry), recordings[entry.probe]), 'twice');
    if (found) return found;
  }
  // (the step's operation on the transpose of the value before it, square: the matrix was carried
  // transposed through steps whose numbers, matched as a set, cannot show it: the first of them)
  const square = (e) => e.matrix.length > 1 && e.matrix.length === e.matrix[0].length;
  for (const entry of AGAIN[first.step] && !before.entries.some((e) => e.layout) ? before.entries : []) {
    // (not when an array holds it as it is: then it was read transposed after, by `first`'s own step)
    if (entry.status !== 'ok' || !square(entry) || !recordings[entry.probe] || heldAsIs(entry, recordings)) continue;
    const transposed = { ...entry, matrix: transpose(entry.matrix) };
    const id = builtAfter(entry, AGAIN[first.step](transposed), recordings[entry.probe]);
    if (id === null) continue;
    // (an array that holds a column of it where `first` takes a row, `Array.from(…, (_, j) => S.get(`${j},${i}`))`:
    // read transposed there, by `first`'s own step)
    const read = columnRead(entry, recordings[entry.probe]);
    const mine = first.entries.find((e) => e.probe === entry.probe && e.head === entry.head);
    if (read !== null && mine) return at(mine, read, 'read');
    let from = k - 1;
    while (from > 0 && statuses[from - 1].status === 'ok' && statuses[from - 1].entries.every((e) => !e.layout && square(e) && !heldAsIs(e, recordings)) && builtOn(statuses[from - 1].step).has(statuses[from].step)) from--;
    const origin = statuses[from].entries.find((e) => e.probe === entry.probe && e.head === entry.head) ?? entry;
    return at(origin, id, 'transposed');
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

/** The site whose array, after `entry` was built, first held a column of its matrix that is not also its row: its id, or null. */
function columnRead(entry, recording) {
  const M = entry.matrix;
  const columns = M[0].map((_, c) => M.map((row) => row[c])).filter((col, c) => !col.every((x, r) => near(x, M[c][r])));
  const same = (snap, col) => snap.rows === 1 && snap.cols === col.length && snap.data.every((x, n) => near(x, col[n]));
  let best = null;
  recording.sites.forEach((site, id) => {
    for (const snap of site.snapshots ?? []) {
      if (snap.moment > entry.moment && (!best || snap.moment < best.moment) && columns.some((col) => same(snap, col))) best = { id, moment: snap.moment };
    }
  });
  return best?.id ?? null;
}

/** The headline and detail of a finding `doneTwice` made (`how`), for the step `what`; null for another. */
export function saying(how, what) {
  if (how === 'twice') return { title: `your code computes ${what} twice`, detail: `On the traced input your code builds ${what} as the reference does, then applies it again to its own result, and everything after is built on that.` };
  if (how === 'read') return { title: `your code takes ${what} down the columns of its input, not along its rows`, detail: `On the traced input this line holds column i of what ${what} is taken of, where row i is meant: that matrix is read transposed here, and everything after is built on it.` };
  if (how === 'transposed') return { title: `your code computes ${what} transposed`, detail: `On the traced input the steps after ${what} are built on its transpose: row i holds what the reference has in column i. Their numbers are the reference's, in other places, so the first step that mixes a row shows it.` };
  return null;
}
