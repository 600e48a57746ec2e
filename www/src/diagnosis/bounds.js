// Where a mask applied by bounds went wrong (issue 28). An answer that scores only the keys a query
// may see writes no −∞ anywhere: a wrong mask is the ABSENCE of a write, and no array holds it. What
// the code does hold is the bound it looped or sliced by: a first key, a last key, an end, a count
// (`const first = Math.max(0, p - w + 1)`, `return causal ? i + 1 : T`), or the keys it sliced out
// (`K.slice(first, p + 1)`). The keys the code really scored for each query are read from the
// recording (a score of key j for query i is among the numbers it built); a site whose integers are
// one of those bounds, query by query, where the reference's bound differs, or whose arrays are the
// rows of the scored keys where the reference lets other keys through, is where the bound was
// computed: the earliest such site is the line of the mask.

import { softmaxRow } from '../matrix.js';

const TOLERANCE = 1e-9;
const near = (a, b) => Math.abs(a - b) <= TOLERANCE * Math.max(1, Math.abs(b));
const isInteger = (x) => Number.isFinite(x) && Math.abs(x - Math.round(x)) <= 1e-12;
/** A key's index or a count of keys: an integer, not negative. */
const isIndex = (x) => isInteger(x) && x >= 0;

/**
 * The keys each query really scored, from the numbers of the score entries: { sets: [Set of j] per
 * row, first: per row the moment its first score was built (undefined: none) }.
 */
function scoredKeys(scoreEntries, recording) {
  const pairs = recording.sites.flatMap((s) => s.values.map((v, k) => [v, s.moments[k], s.callers?.[k] ?? -1])).filter(([v]) => Number.isFinite(v)).sort((a, b) => a[0] - b[0]);
  // the earliest [moment, caller] a number near x was built, or undefined
  const builtAt = (x) => {
    let lo = 0;
    let hi = pairs.length;
    const floor = x - TOLERANCE * Math.max(1, Math.abs(x));
    while (lo < hi) { const mid = (lo + hi) >> 1; if (pairs[mid][0] < floor) lo = mid + 1; else hi = mid; }
    let best;
    for (let k = lo; k < pairs.length && near(pairs[k][0], x); k++) if (!best || pairs[k][1] < best[0]) best = [pairs[k][1], pairs[k][2]];
    return best;
  };
  const sets = scoreEntries[0].matrix.map(() => new Set());
  const first = sets.map(() => undefined);
  const callers = sets.map(() => -1);
  for (const entry of scoreEntries) {
    entry.matrix.forEach((row, i) => row.forEach((x, j) => {
      const built = Number.isFinite(x) && !isInteger(x) ? builtAt(x) : undefined;
      if (built === undefined) return;
      sets[i].add(j);
      if (!(first[i] <= built[0])) [first[i], callers[i]] = built;
    }));
  }
  return { sets, first, callers };
}

/** The bounds of a set of keys per row: { first, last, end, count }, each an array (undefined: no key in that row). */
function boundsOf(sets) {
  const sorted = sets.map((s) => [...s].sort((a, b) => a - b));
  return {
    first: sorted.map((s) => s[0]),
    last: sorted.map((s) => s.at(-1)),
    end: sorted.map((s) => (s.length ? s.at(-1) + 1 : undefined)),
    count: sorted.map((s) => s.length),
  };
}

/**
 * Whether a site's values are `sequence` query by query (in order, each repeated r times, or the
 * whole repeated r times), each built before the first score of its query when `before` (per row:
 * that moment) is given: a bound is known before the keys it bounds are scored.
 */
export function follows(site, sequence, before = null, byQuery = false) {
  const { values, moments } = site;
  const T = sequence.length;
  if (values.length < T || values.length % T !== 0) return false;
  const r = values.length / T;
  const fits = (at) => {
    const earliest = sequence.map(() => Infinity);
    values.forEach((_, k) => { earliest[at(k)] = Math.min(earliest[at(k)], moments[k]); });
    return values.every((v, k) => sequence[at(k)] === undefined || v === sequence[at(k)]) && (!before || earliest.every((m, i) => !(before[i] < m)));
  };
  return (!byQuery && fits((k) => k % T)) || fits((k) => Math.floor(k / r));
}

/** Whether every row of a snapshot is a row of M: the indices of those rows, or null. */
function rowsOf(snap, M) {
  if (snap.cols !== M[0].length) return null;
  const indices = [];
  for (let r = 0; r < snap.rows; r++) {
    const row = snap.data.slice(r * snap.cols, (r + 1) * snap.cols);
    const k = M.findIndex((m) => m.every((x, c) => near(row[c], x)));
    if (k < 0 || row.every(isInteger)) return null;
    indices.push(k);
  }
  return indices;
}

const sameSet = (indices, set) => indices.length === set.size && indices.every((k) => set.has(k));

/**
 * The site that computed the bound of a mask applied by bounds, for the mask entry `entry` (with
 * `allowed`, the reference's visible keys) of one traced probe; null when the keys scored are the
 * reference's, or no site holds a bound. `sites`: the instrumented sites (a part of a larger
 * expression, `p - lo` of `p - lo + 1`, is not what the code bounds by: the larger one is).
 */
export function boundSite(entry, recording, reference, sites = []) {
  const at = reference.steps.findIndex((e) => e.step === entry.step && e.head === entry.head);
  // the entries before it that hold the scores of the visible keys (scores, scaled scores)
  const scoreEntries = reference.steps.slice(0, at).filter((e) => !e.layout && e.allowed && e.head === entry.head);
  if (!scoreEntries.length) return null;
  const { sets: actual, first, callers } = scoredKeys(scoreEntries, recording);
  const expected = entry.allowed.map((row) => new Set(row.flatMap((ok, j) => (ok ? [j] : []))));
  if (actual.every((s, i) => sameSet([...s], expected[i]))) return null;
  const [mine, theirs] = [boundsOf(actual), boundsOf(expected)];
  const keyMatrices = reference.inputs.filter((M) => M.length === entry.allowed[0].length);
  const everyScored = actual.every((set) => set.size === entry.allowed[0].length);
  let best = null;
  let byQuery = null;
  recording.sites.forEach((site, id) => {
    const moment = site.moments[0];
    if (site.values.length === 0 || (best && moment >= best.moment && byQuery && moment >= byQuery.moment) || sites[id]?.inner) return;
    // the integers of a bound, query by query: the scored keys' bound, not the reference's
    // (a site that is also a right bound of another kind counts only when its bound has a value for
    // every query: a query that scored no key has a count, no first or last key)
    // (a loop's bound, tested once per key: one value per pass, of the kind its comparison says)
    // (every query scored every key: a first key of 0 is where any sum or loop starts, no bound)
    const compared = KINDS[sites[id]?.comparison];
    const kinds = (compared ?? Object.keys(mine)).filter((kind) => kind !== 'first' || !everyScored);
    const run = compared ? passes(site) : site;
    const right = kinds.some((kind) => follows(run, theirs[kind]));
    const fits = (kind, one) => follows(run, mine[kind], first, one) && !follows(run, theirs[kind]) && (!right || !mine[kind].includes(undefined));
    const bound = site.values.every(isIndex) && kinds.some((kind) => fits(kind, false));
    // the rows of keys sliced out: each the keys some query scored, one at least not what any query may see
    const sliced = !bound && site.snapshots.length > 0 && keyMatrices.some((M) => {
      const sets = site.snapshots.map((snap) => rowsOf(snap, M));
      return sets.every((s) => s && actual.some((a) => sameSet(s, a))) && sets.some((s) => !expected.some((e) => sameSet(s, e)));
    });
    if ((bound || sliced) && (!best || moment < best.moment)) best = { site: id, moment };
    // (a bound held query by query, each query's value repeated, outweighs one whose whole sequence
    // repeats, as a head's columns do where there are as many as queries: `h * d + c`)
    if (bound && (!byQuery || moment < byQuery.moment) && kinds.some((kind) => fits(kind, true))) byQuery = { site: id, moment };
  });
  best = byQuery ?? best;
  const flagged = predicateSite(recording, actual, expected, entry.allowed[0].length);
  // (a loop over every key, `j < K.length`, bounds nothing: the predicate that skipped keys in it chose them)
  const everyKey = best && recording.sites[best.site].values.every((v) => v === entry.allowed[0].length);
  if (flagged && (!best || flagged.moment < best.moment || everyKey)) best = flagged;
  // no bound held anywhere (the keys are what a cache held when it was read): the call of the
  // learner's function the first query with the wrong keys was scored under
  const wrong = actual.map((s, i) => i).filter((i) => actual[i].size > 0 && !sameSet([...actual[i]], expected[i]) && callers[i] >= 0).sort((a, b) => first[a] - first[b]);
  // (every query scored every key, no bound held: the mask left out; the last site to hold the
  // scores it was to mask, whole: the read that passed them on, `this.rowsOf(this.scaled, …)`)
  // (or, first, where the learner's own function took the weights those scores became: the line
  // that softmaxed them unmasked, `const P = softmax(scaled)`)
  const scores = scoreEntries.at(-1).matrix;
  // (or the mask applied after every key was scored, by a bound declared one off: `const seen = causal ? i : T`)
  const moved = !best && everyScored ? movedBound(recording, theirs, sites) : null;
  if (moved) return moved;
  const skipped = !best && everyScored ? (weightsTaken(scores, recording, sites) ?? lastHolder(scores, recording)) : null;
  return best ?? skipped ?? (wrong.length ? { site: callers[wrong[0]], moment: first[wrong[0]] } : null);
}

/**
 * The earliest declaration of whole numbers, one per query, that a test or a loop's bound reads
 * (`j < seen`) and that is the reference's bound of the visible keys moved by one (`causal ? i : T`
 * for `i + 1`): where every key was scored and the mask came after, the bound it was applied by. { site, moment } or null.
 */
function movedBound(recording, theirs, sites) {
  // (the kinds of bound each name is read as: by a loop's comparison, `<` an end or a count, `<=` a last; by a test, any)
  const tested = new Map();
  sites.forEach((s, id) => {
    const kinds = KINDS[s.comparison] ?? (recording.sites[id].flags?.values.length ? ['end', 'last', 'count'] : null);
    if (kinds) for (const name of s.uses ?? []) tested.set(name, s.comparison ? kinds : tested.get(name) ?? kinds);
  });
  let best = null;
  recording.sites.forEach((site, id) => {
    const s = sites[id];
    const kinds = tested.get(s?.declares);
    if (!kinds || s.counter || !site.values.length || !site.values.every(isIndex) || (best && site.moments[0] >= best.moment)) return;
    if (kinds.some((kind) => follows(site, theirs[kind]))) return;
    if (kinds.some((kind) => [-1, 1].some((d) => follows(site, theirs[kind].map((x) => x + d))))) best = { site: id, moment: site.moments[0] };
  });
  return best;
}

/**
 * The last snapshot (or matrix an object wraps), outside every call of the learner's own functions, of the softmax of S's rows: { site, moment } or null.
 * (a call's receiver or argument is outside it: `.softmax()` of `q.mul(k.T()).softmax().mul(v)` is recorded as `.mul(v)` is entered)
 */
function weightsTaken(S, recording, sites) {
  const W = S.flatMap((row) => softmaxRow(row));
  const outside = (id, caller) => caller === -1 || (sites[caller]?.at <= sites[id]?.at && sites[id]?.end <= sites[caller]?.end);
  let best = null;
  recording.sites.forEach((site, id) => {
    for (const snap of [...(site.snapshots ?? []), ...(site.wraps ?? [])]) {
      if (!outside(id, snap.caller) || snap.rows !== S.length || snap.cols !== S[0].length || (best && snap.moment <= best.moment)) continue;
      if (W.every((x, k) => near(snap.data[k], x))) best = { site: id, moment: snap.moment };
    }
  });
  return best;
}

/** The site whose snapshot of matrix M (its every number) is the last one recorded (arguments too): { site, moment } or null. */
function lastHolder(M, recording) {
  const flat = M.flat();
  let best = null;
  (recording.whole ?? recording.sites).forEach((site, id) => {
    for (const snap of site.snapshots ?? []) {
      if (snap.rows !== M.length || snap.cols !== M[0].length || (best && snap.moment <= best.moment)) continue;
      if (flat.every((x, k) => Object.is(x, snap.data[k]) || Math.abs(x - snap.data[k]) <= 1e-12 * Math.max(1, Math.abs(x)))) best = { site: id, moment: snap.moment };
    }
  });
  return best;
}

// the bounds a loop's comparison makes of its right side (`j < p`: the end; `j <= p`: the last key)
const KINDS = { '<': ['end', 'count'], '<=': ['last'] };

/** A loop bound's values, one per pass of the loop (a run of one value: the test of each key). */
function passes(site) {
  const keep = site.values.map((v, k) => k === 0 || v !== site.values[k - 1]);
  return { values: site.values.filter((_, k) => keep[k]), moments: site.moments.filter((_, k) => keep[k]) };
}

/**
 * A mask decided by a predicate (`if (!inBand(p, j)) continue`, `j > i ? -Infinity : x`): the
 * earliest site whose booleans, query by query and key by key (row by row or column by column, or
 * their negation), are which keys were scored, where the reference lets other keys through.
 * { site, moment } or null. `actual`, `expected`: per query the Set of keys; `S`: the number of keys.
 */
function predicateSite(recording, actual, expected, S) {
  const T = actual.length;
  const grid = (sets, byColumn) => Array.from({ length: T * S }, (_, k) => (byColumn ? sets[k % T].has(Math.floor(k / T)) : sets[Math.floor(k / S)].has(k % S)));
  // (or row by row over only the keys a loop reached before it stopped, `if (j > p) break`: keys 0 … p, or 0 … p + 1)
  const reached = (sets, more) => Array.from({ length: T }, (_, p) => Array.from({ length: Math.min(p + more, S) }, (_, j) => sets[p].has(j))).flat();
  const patterns = [[grid(actual, false), grid(expected, false)], [grid(actual, true), grid(expected, true)], [reached(actual, 1), reached(expected, 1)], [reached(actual, 2), reached(expected, 2)]];
  const same = (flags, pattern, negate) => flags.every((f, k) => f !== negate === pattern[k % pattern.length]);
  let best = null;
  recording.sites.forEach((site, id) => {
    const flags = site.flags?.values ?? [];
    if (!flags.length || (best && site.flags.moments[0] >= best.moment)) return;
    const fits = patterns.some(([mine, right]) => flags.length % mine.length === 0 && [false, true].some((negate) => same(flags, mine, negate) && !same(flags, right, negate)));
    if (fits || breaksAt(flags, actual, expected, S)) best = { site: id, moment: site.flags.moments[0] };
  });
  return best;
}

/**
 * Whether a loop's `break` test (`if (j >= p) break`) chose the keys' end: its booleans, query by
 * query, are false until the key it stopped at (true), or all S keys; that key is, for every query,
 * one past the last key scored (or no later than its first visible key, when it scored none), and
 * for some query not one past the last key it may see.
 */
function breaksAt(flags, actual, expected, S) {
  const ends = [];
  let run = 0;
  for (const f of flags) {
    if (f) { ends.push(run); run = 0; } else if (++run === S) { ends.push(S); run = 0; }
  }
  if (run !== 0 || ends.length === 0 || ends.length % actual.length !== 0) return false;
  const T = actual.length;
  const last = (set) => (set.size ? Math.max(...set) + 1 : null);
  const mine = ends.every((e, k) => { const a = actual[k % T]; return last(a) === null ? e <= Math.min(...expected[k % T]) : e === last(a); });
  return mine && ends.some((e, k) => e !== last(expected[k % T]));
}

/** The visible keys of a mask entry: [Set of j] per row. */
const visible = (entry) => entry.allowed.map((row) => new Set(row.flatMap((ok, j) => (ok ? [j] : []))));

/** The keys each query scored, for the mask entry `entry` (null when nothing scores them). */
function scoredFor(entry, recording, reference) {
  const at = reference.steps.findIndex((e) => e.step === entry.step && e.head === entry.head);
  const scoreEntries = reference.steps.slice(0, at).filter((e) => !e.layout && e.allowed && e.head === entry.head);
  return scoreEntries.length ? scoredKeys(scoreEntries, recording).sets : null;
}

/**
 * Whether a mask no array holds was applied right by bounds: each query scored exactly the keys
 * it may see (and some query may not see every key).
 */
export function scoredRight(entry, recording, reference) {
  const expected = visible(entry);
  const actual = scoredFor(entry, recording, reference);
  return Boolean(actual) && expected.some((s) => s.size < entry.allowed[0].length) && actual.every((s, i) => sameSet([...s], expected[i]));
}

/**
 * Rows of an input sliced out for a query (`V.slice(0, p + 1)`) that are not the keys any query
 * scored, in an answer that masks by bounds and scored the right keys: where the values left the
 * keys they go with. The
 * earliest such site { site, moment }, or null.
 */
export function slicedApart(recording, reference) {
  const entry = reference.steps.find((e) => e.layout && e.allowed);
  if (!entry || !scoredRight(entry, recording, reference)) return null;
  const actual = scoredFor(entry, recording, reference);
  const matrices = reference.inputs.filter((M) => M.length === entry.allowed[0].length);
  let best = null;
  recording.sites.forEach((site, id) => {
    if (!site.snapshots.length || (best && site.snapshots[0].moment >= best.moment)) return;
    for (const M of matrices) {
      const sets = site.snapshots.map((snap) => rowsOf(snap, M));
      // contiguous ranges of rows, some of more than one row (one row alone may be any row read)
      // (and one at least fewer than all the rows: a copy of the whole matrix is no slice)
      const ranges = sets.every((s) => s && s.every((k, n) => n === 0 || k === s[n - 1] + 1)) && sets.some((s) => s.length > 1) && sets.some((s) => s.length < M.length);
      if (ranges && sets.some((s) => !actual.some((a) => sameSet(s, a)))) {
        best = { site: id, moment: site.snapshots[0].moment };
        return;
      }
    }
  });
  return best;
}

/**
 * Keys left out of the scoring (`for (let j = lo; j < p; j++)`): the score entries before a mask
 * entry (`allowed`) missing only because some visible keys were never scored. When, on this traced
 * input, each query scored only keys it may see (some query fewer), and the site that built the
 * first of those scores built no number foreign to the reference and no score twice (a key scored
 * in another's place, `K[p]` for `K[j]`, builds the same one again), the scores are right and the
 * mask is wrong: returns the alignment with those entries ok at that site and the mask entry
 * missing (its line: boundSite, or the loop). `foreign`: foreign.js's foreignTest. Else unchanged.
 */
export function droppedKeys(alignment, recording, reference, foreign) {
  const at = alignment.findIndex((e) => e.layout && e.allowed && e.status !== 'ok');
  if (at < 0) return alignment;
  const scores = alignment.slice(0, at).filter((e) => !e.layout && e.allowed && e.head === alignment[at].head);
  const missing = scores.filter((e) => e.status === 'missing');
  if (!missing.length || !missing.every((e) => e.partial) || scores.some((e) => e.status === 'unknown')) return alignment;
  const { sets: actual } = scoredKeys(scores, recording);
  const expected = visible(alignment[at]);
  const within = actual.every((s, i) => [...s].every((j) => expected[i].has(j)));
  if (!within || actual.every((s, i) => s.size === expected[i].size) || actual.every((s) => s.size === 0)) return alignment;
  const site = recording.sites[missing[0].partial.site];
  const numbers = site.values.filter((v) => Number.isFinite(v) && !isInteger(v));
  const twice = numbers.some((v, k) => numbers.findIndex((w) => near(w, v)) !== k);
  if (!numbers.length || twice || numbers.some(foreign)) return alignment;
  const partial = missing[0].partial;
  return alignment.map((e, k) => {
    if (missing.includes(e)) return { ...e, status: 'ok', site: e.partial.site, moment: e.partial.start, start: e.partial.start, dropped: true };
    return k === at ? { ...e, status: 'missing', coverage: 0, site: null, partial, dropped: true } : e;
  });
}

/** Whether some query scored fewer than all the keys (the answer bounds or skips keys: it masks by choosing them). */
export function skipsKeys(entry, recording, reference) {
  const actual = scoredFor(entry, recording, reference);
  return Boolean(actual) && actual.some((s) => s.size < entry.allowed[0].length);
}
