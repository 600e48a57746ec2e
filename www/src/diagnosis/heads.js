// A head built from another head's inputs (issue 28). When the first wrong step's entry for head h
// is missing and the site that built head h′'s entry of that step built every number of it AGAIN
// after it was complete (before head h's were due), the code computed head h′'s step a second time
// in head h's place: head h read another head's columns (`dotAt(Q[i], g * d, …)` for `h * d`). The
// step at fault is then the slice that picks a head's columns, not the step whose numbers are
// missing; its line, the call that passed those columns (when the numbers were built inside a
// helper), else the site that rebuilt them.

import { follows } from './bounds.js';

const isInteger = (x) => Math.abs(x - Math.round(x)) <= 1e-12;
const near = (a, b) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

/** The first moment after `after` at which the site built a number near x: its index, or -1. */
const againAt = (site, x, after) => site.values.findIndex((v, k) => site.moments[k] > after && near(v, x));

/**
 * For the first wrong step `step` (a value step: scores, weights…): { step: 'slice', entry, site, probe }
 * when a head's entry of it is another head's built again; null otherwise. `alignments`: per probe,
 * align.js's entries; `recordings`: per probe; `sites`: the instrumented sites.
 */
export function anotherHead(step, alignments, recordings, sites) {
  for (const [probe, alignment] of alignments.entries()) {
    const missing = alignment.find((e) => e.step === step && e.status === 'missing' && e.head !== null && e.head !== undefined);
    if (!missing) continue;
    const slices = alignment.filter((e) => e.step === 'slice' && e.head === missing.head);
    if (!slices.length || slices.every((e) => e.status === 'ok')) continue;
    for (const other of alignment.filter((e) => e.step === step && e.status === 'ok' && e.head !== missing.head && Number.isInteger(e.site))) {
      const site = recordings[probe].sites[other.site];
      const numbers = other.matrix.flat().filter((x) => Number.isFinite(x) && !isInteger(x));
      const again = numbers.map((x) => againAt(site, x, other.moment));
      if (!numbers.length || again.some((k) => k < 0)) continue;
      const first = again.reduce((a, k) => (site.moments[k] < site.moments[a] ? k : a));
      const caller = site.callers?.[first] ?? -1;
      const at = caller >= 0 && sites[caller]?.fn !== sites[other.site]?.fn ? caller : other.site;
      return { step: 'slice', entry: slices.find((e) => e.status !== 'ok'), site: at, probe };
    }
  }
  return null;
}

/**
 * Heads added into the same cells (`out[c] += …` for `out[h * d + c] += …`): an entry of a value
 * step for head h (the weighted sum) that no site built, where some site built head h′'s entry plus
 * head h's, cell by cell, and no array holds those sums in head h's own columns (an accumulator not
 * reset between heads would: the sum, not the placing, is then wrong). Returns the alignment with
 * that entry ok (its numbers were built, as terms of the sums) and the layout step that places the
 * heads side by side (head null) missing at the site of the sums (or of the view they were written
 * through); the alignment unchanged otherwise.
 */
export function stackedHeads(alignment, recording, sites = []) {
  const place = alignment.findIndex((e) => e.layout && (e.head === null || e.head === undefined) && e.status !== 'ok');
  if (place < 0) return alignment;
  for (const [k, entry] of alignment.entries()) {
    if (entry.layout || entry.status !== 'missing' || entry.head === null || entry.head === undefined || k > place) continue;
    for (const other of alignment.filter((e) => e.step === entry.step && e.head !== entry.head && e.status === 'ok')) {
      const sums = entry.matrix.flatMap((row, i) => row.map((x, c) => x + other.matrix[i][c]));
      if (sums.length !== entry.matrix.flat().length || !sums.every(Number.isFinite)) continue;
      const id = recording.sites.findIndex((site) => sums.every((x) => site.values.some((v) => near(v, x))));
      if (id < 0 || heldInPlace(recording, sums, entry.matrix[0].length, entry.head)) continue;
      const moment = Math.max(...sums.map((x) => recording.sites[id].moments[recording.sites[id].values.findIndex((v) => near(v, x))]));
      const at = viewOf(id, sites) ?? id;
      return alignment.map((e, n) => (n === k ? { ...e, status: 'ok', site: other.site, moment: other.moment, stacked: other.head } : n === place ? { ...e, status: 'missing', coverage: 0, site: at, moment, caller: -1 } : e));
    }
  }
  return alignment;
}

/**
 * When site `id` writes into a view of another array (`const out = row.subarray(0, d)`, then
 * `out[c] += …`), the view chose where the writes land: the site that declared it, or null.
 */
function viewOf(id, sites) {
  const target = sites[id]?.writes;
  const k = target ? sites.findIndex((s) => s.declares === target && s.fn === sites[id].fn && s.reads && s.reads !== target) : -1;
  return k >= 0 ? k : null;
}

/** Whether some recorded row holds the sums (rows of width d, by row) at columns head·d…: the sums where head `head` goes. */
function heldInPlace(recording, sums, d, head) {
  const rows = sums.length / d;
  return recording.sites.some((site) => site.snapshots.some((snap) => snap.cols >= (head + 1) * d && Array.from({ length: Math.min(rows, snap.rows) }, (_, i) => i).some((i) => sums.slice(i * d, (i + 1) * d).every((x, c) => near(snap.data[i * snap.cols + head * d + c], x)))));
}

const sameRows = (snap, M) => snap.rows === M.length && snap.cols === M[0].length && snap.data.every((x, k) => near(x, M[Math.floor(k / snap.cols)][k % snap.cols]));

/**
 * A layout step every head's entry of which some array holds, where a call passed head n another
 * head's (`attention(q, ks[h], vs[0], d)`): an argument of a call of the learner's function whose
 * n-th copy, one per head, is an entry of the step for another head and none of head n's. Its id, or
 * null. `entries`: the step's entries on one probe; `recording`: that probe's, with the arguments.
 */
export function passedOther(entries, sites, recording) {
  const heads = [...new Set(entries.map((e) => e.head))].filter((h) => Number.isInteger(h)).sort((a, b) => a - b);
  if (heads.length < 2) return null;
  const of = (h) => entries.filter((e) => e.head === h).map((e) => e.matrix);
  for (const [id, site] of recording.sites.entries()) {
    if (!sites[id]?.binds || site.snapshots.length !== heads.length) continue;
    const own = site.snapshots.map((snap, n) => of(heads[n]).some((M) => sameRows(snap, M)));
    const other = site.snapshots.map((snap) => heads.some((h) => of(h).some((M) => sameRows(snap, M))));
    if (other.every(Boolean) && own.some((ok) => !ok)) return id;
  }
  return null;
}

/**
 * A head's slice that no array holds, where the site that held another head's slice of the same
 * step held that slice AGAIN after it (or an array of its rows, not of its width), in this head's turn (`row.slice(0, d)` for `row.slice(from, from + d)`): that head
 * was given another head's columns, at that site (the same role's: Q, K or V). Returns the alignment with the entry missing there;
 * unchanged otherwise. `recording`: one probe's.
 */
export function repeatedSlice(alignment, recording) {
  return alignment.map((entry) => {
    if (!entry.layout || entry.status !== 'unknown' || !Number.isInteger(entry.head)) return entry;
    // (in this head's turn: after the role's entries of the heads before it, before those of the heads after it)
    // (its role: Q, K or V, the entry's place among its head's entries of the step)
    const role = (e) => alignment.filter((x) => x.step === e.step && x.head === e.head).indexOf(e);
    const held = alignment.filter((e) => e.step === entry.step && e.status === 'ok' && Number.isFinite(e.moment) && role(e) === role(entry));
    const from = Math.max(...held.filter((e) => e.head < entry.head).map((e) => e.moment));
    const to = Math.min(...held.filter((e) => e.head > entry.head).map((e) => e.moment));
    // (or an array of its rows but not of its width: `row.slice(from, d)`, empty past head 0)
    const [rows, cols] = [entry.matrix.length, entry.matrix[0].length];
    const narrow = (snap) => snap.rows === rows && snap.cols !== cols;
    for (const other of held) {
      if (other.head === entry.head || !Number.isInteger(other.site)) continue;
      const again = recording.sites[other.site].snapshots.find((snap) => snap.moment > other.moment && snap.moment > from && snap.moment < to && (sameRows(snap, other.matrix) || narrow(snap)));
      if (again) return { ...entry, status: 'missing', coverage: 0, site: other.site, moment: again.moment, caller: again.caller ?? -1 };
    }
    return entry;
  });
}

/** A·Bᵀ. */
const productT = (A, B) => A.map((a) => B.map((b) => a.reduce((s, x, c) => s + x * b[c], 0)));
/** Columns o … o + width − 1 of every row of M. */
const window = (M, o, width) => M.map((row) => row.slice(o, o + width));
const sameMatrix = (A, B) => A.length === B.length && A.every((row, i) => row.length === B[i].length && row.every((x, j) => near(x, B[i][j])));

/**
 * Columns read at the wrong place, one at a time by index (`q[kvBase + c]` for `q[h * d + c]`): the
 * first wrong step's entries, each a product A·Bᵀ of two layouts of its head before it (its query
 * and key columns), are missing, and for each some site built every number of A′·B′ᵀ instead, A′
 * and B′ each its own or as many columns at another place of the matrix it is a window of (an
 * input, or a step of every head: a projection); or B′ the same columns of another step of every
 * head's than B's (K's columns of V: that step, the projection, is at fault). The layout read at
 * the wrong place, the same for every head that shows one (one whose products are numbers of no step
 * first, then A's): { step, entry, site, probe }, or null. `foreign`: per probe, foreign.js's foreignTest.
 */
export function shiftedColumns(step, alignments, recordings, references, foreign, sites = []) {
  for (const [probe, alignment] of alignments.entries()) {
    const sorted = recordings[probe].sites.map((s) => Float64Array.from(s.values.filter(Number.isFinite)).sort());
    const whole = references[probe].steps.filter((e) => !e.layout && (e.head === null || e.head === undefined));
    const sources = [...references[probe].inputs, ...whole.map((e) => e.matrix)];
    const found = []; // per missing entry: { A, B, fits: { a: site, b: site } } (a: A read elsewhere, b: B)
    alignment.forEach((entry, k) => {
      if (entry.step !== step || entry.status !== 'missing' || entry.layout || !Number.isInteger(entry.head)) return;
      const [A, B] = alignment.slice(0, k).filter((e) => e.layout && e.head === entry.head);
      if (!A || !B || A.matrix[0].length !== B.matrix[0].length || !sameMatrix(productT(A.matrix, B.matrix), entry.matrix)) return;
      const fits = {};
      // (with a mask, only the products of the keys each query may see need exist: `for (j <= t)`)
      const seen = (M) => (entry.allowed ? M.map((row, i) => row.filter((_, j) => entry.allowed[i][j])) : M);
      for (const a of elsewhere(A.matrix, sources)) {
        for (const b of elsewhere(B.matrix, sources)) {
          if (a === A.matrix && b === B.matrix) continue;
          const product = seen(productT(a, b));
          const site = builtAt(product, sorted);
          const role = a === A.matrix ? 'b' : b === B.matrix ? 'a' : 'both';
          // (strong: numbers of no step, not another head's product built in its own turn)
          const strong = product.flat().some(foreign[probe]);
          if (site >= 0 && (fits[role] === undefined || (strong && !fits[role].strong))) fits[role] = { site, strong, product, read: role === 'b' ? b : a };
        }
      }
      // (or B's columns of another step of every head's, where B's came from one: `[W_Q, W_V, W_K]`, that step at fault)
      const own = whole.find((e) => windowOf(B.matrix, e.matrix) !== null);
      for (const other of own ? whole.filter((e) => e !== own && e.matrix.length === own.matrix.length && e.matrix[0].length === own.matrix[0].length) : []) {
        const product = seen(productT(A.matrix, window(other.matrix, windowOf(B.matrix, own.matrix), B.matrix[0].length)));
        const site = builtAt(product, sorted);
        // (unless those columns are A's own, A·Aᵀ: `q` read for `k` where the product was made, the product's own step)
        const selfRead = windowOf(A.matrix, other.matrix) !== null;
        if (site >= 0 && fits.source === undefined) [fits.source, fits.sourceEntry] = [{ site, strong: true, product }, selfRead ? entry : own];
      }
      if (Object.keys(fits).length) found.push({ head: entry.head, A, B, fits });
    });
    if (!found.length) continue;
    // one role read elsewhere for every head (or both, when no one role fits them all)
    // (built in the heads' order, each head's product after the head before it began: a product only
    // another head built, in its own turn, explains no head; a role whose fits are all strong first)
    // (in the order the code built the heads' first layouts, when it built each: `h = g + m · numberOfKVHeads`
    // walks the query heads in another order than theirs)
    const own = (h) => alignment.find((e) => e.layout && e.head === h && e.status === 'ok' && Number.isFinite(e.moment))?.moment;
    const entries = alignment.filter((e) => e.step === step && Number.isInteger(e.head)).sort((x, y) => x.head - y.head);
    if (entries.every((e) => own(e.head) !== undefined)) entries.sort((x, y) => own(x.head) - own(y.head));
    const ordered = (r) => {
      let prev = -Infinity;
      for (const e of entries) {
        const fit = e.status === 'missing' ? found.find((f) => f.head === e.head)?.fits[r] : null;
        if (e.status === 'missing' && !fit) return false;
        const start = fit ? rebuiltAfter(recordings[probe].sites[fit.site], fit.product, prev) : e.start ?? e.moment;
        if (!(start > prev)) return false;
        prev = start;
      }
      return true;
    };
    const roles = ['a', 'b', 'both', 'source'].filter((r) => found.every(({ fits }) => fits[r] !== undefined) && ordered(r));
    const role = roles.find((r) => found.every(({ fits }) => fits[r].strong)) ?? roles[0];
    if (!role) continue;
    const { A, B, fits } = found[0];
    const entry = role === 'source' ? fits.sourceEntry : role === 'b' ? B : A;
    // (heads walked in another order than theirs: the whole numbers that are the heads in that order, the index that paired them)
    const order = entries.map((e) => e.head);
    const walked = order.some((h, k) => k > 0 && h < order[k - 1]) ? recordings[probe].sites.findIndex((r) => r.values.length > 0 && r.values.every(Number.isInteger) && follows(r, order)) : -1;
    // (query and key columns both read from a start declared once per head, `const lo = h` for
    // `h * d`: that declaration; a start read right for one of them, `q[kvBase + c]`, is not at fault)
    const starts = role !== 'both' ? [null] : found.map((f) => sources.map((X) => windowOf(f.fits[role].read, X)).find((o) => o !== null) ?? null);
    const declared = !starts.includes(null) && sites.length ? sites.findIndex((site, id) => site.declares && !site.counter && recordings[probe].sites[id].values.length > 0 && recordings[probe].sites[id].values.every(Number.isInteger) && starts.every((o) => recordings[probe].sites[id].values.includes(o))) : -1;
    return { step: entry.step, entry, site: walked >= 0 ? walked : declared >= 0 ? declared : fits[role].site, probe, walked: walked >= 0 };
  }
  return null;
}

/** The first moment after `after` from which the site built every number of M (no whole number) again, or null. */
function rebuiltAfter(site, M, after) {
  let start = Infinity;
  for (const x of M.flat().filter((y) => !isInteger(y))) {
    const k = site.values.findIndex((v, n) => site.moments[n] > after && near(v, x));
    if (k < 0) return null;
    start = Math.min(start, site.moments[k]);
  }
  return start;
}

/** The site that built every number of M that is no whole number, or −1. `sorted`: each site's values, sorted. */
function builtAt(M, sorted) {
  const numbers = M.flat().filter((x) => !isInteger(x));
  return numbers.length ? sorted.findIndex((values) => numbers.every((x) => holdsNear(values, x))) : -1;
}

/** The first column at which M is a window of X (as many rows), or null. */
function windowOf(M, X) {
  if (X.length !== M.length || X[0].length < M[0].length) return null;
  const o = Array.from({ length: X[0].length - M[0].length + 1 }, (_, k) => k).find((k) => sameMatrix(window(X, k, M[0].length), M));
  return o ?? null;
}

/** M itself, then every window of as many columns of the matrix M is a window of, at its other places. */
function elsewhere(M, sources) {
  const width = M[0].length;
  const source = sources.find((X) => X.length === M.length && X[0].length > width && Array.from({ length: X[0].length - width + 1 }, (_, o) => o).some((o) => sameMatrix(window(X, o, width), M)));
  if (!source) return [M];
  return [M, ...Array.from({ length: source[0].length - width + 1 }, (_, o) => window(source, o, width)).filter((W) => !sameMatrix(W, M))];
}

/** Whether a sorted array holds a number near x. */
function holdsNear(sorted, x) {
  let lo = 0;
  let hi = sorted.length;
  const floor = x - 1e-9 * Math.max(1, Math.abs(x));
  while (lo < hi) { const mid = (lo + hi) >> 1; if (sorted[mid] < floor) lo = mid + 1; else hi = mid; }
  return lo < sorted.length && near(sorted[lo], x);
}

/**
 * A head's columns listed as whole numbers (`cols = [...Array(d).keys()].map((c) => h + c)`), one
 * list per head, for a layout `entry` missing: the site whose arrays are each a run of as many
 * consecutive columns as the head is wide, one per head in turn, whose first columns are not each
 * head's first (h·width). Its id, or null.
 */
export function columnsListed(entry, sites, recording, reference) {
  const width = entry.matrix[0]?.length;
  const heads = [...new Set(reference.steps.filter((e) => e.step === entry.step && Number.isInteger(e.head)).map((e) => e.head))].sort((a, b) => a - b);
  if (!(width > 1) || heads.length < 2) return null;
  const firsts = heads.map((h) => h * width);
  const last = Math.max(...firsts) + width;
  for (const [id, r] of recording.sites.entries()) {
    const snaps = r.snapshots ?? [];
    if (!snaps.length || snaps.length % heads.length !== 0 || sites[id]?.argument) continue;
    const runs = snaps.every((s) => s.rows === 1 && s.cols === width && s.data.every((x, k) => Number.isInteger(x) && x === s.data[0] + k && x >= 0 && x < last));
    if (!runs) continue;
    const starts = snaps.map((s) => s.data[0]);
    if (!follows({ values: starts, moments: starts.map(() => 0) }, firsts)) return id;
  }
  return null;
}

/**
 * A layout no array holds, each head's columns read one number at a time through a reader of the
 * learner's (`const at = (M, t, c) => M[t][c * numberOfHeads + h]`): the reader's expression, when
 * before moment `before` (the first foreign number, in the first head's turn) it returned numbers of
 * the step's layouts that are not all the first head's (another head's columns). Its id, or null.
 */
export function readerBehind(step, sites, recording, reference, before) {
  const entries = reference.steps.filter((e) => e.step === step && e.layout && Number.isInteger(e.head));
  if (!entries.length || !Number.isFinite(before)) return null;
  const first = Math.min(...entries.map((e) => e.head));
  const key = (x) => x.toPrecision(12);
  const numbers = (list) => new Set(list.flatMap((e) => e.matrix.flat()).filter((x) => Number.isFinite(x) && !Number.isInteger(x)).map(key));
  const [own, all] = [numbers(entries.filter((e) => e.head === first)), numbers(entries)];
  for (const [id, site] of sites.entries()) {
    // (a read by an index it computes, returned as it is, `M[t][c * n + h]`: not a sum, a call, `row[c]`)
    if (!site.returns || !site.fn || !/^[\w$.]+(\[[^\]]+\])+$/.test(site.name ?? '') || !/\[[^\]]*[-+*/%][^\]]*\]/.test(site.name)) continue;
    const r = recording.sites[id];
    const values = r.values.filter((v, n) => r.moments[n] < before && Number.isFinite(v) && !Number.isInteger(v));
    if (values.length && values.every((v) => all.has(key(v))) && values.some((v) => !own.has(key(v)))) return id;
  }
  return null;
}
