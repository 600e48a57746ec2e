// What a call passed on, and how an array was filled (issue 28): when the first number foreign to the
// reference is built inside a helper that is right, the mistake is in what its caller gave it; when a
// layout helper is wrong from right arguments, in the helper; when a layout is built in the wrong
// order from an array, where that order was made. Used by align.js's siteOf.
import { follows } from './bounds.js';

const near = (a, b) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
const transpose = (M) => M[0].map((_, j) => M.map((row) => row[j]));

/** Whether `values` holds the numbers of `flat`, in order, one after another somewhere. */
function holdsRun(values, flat) {
  if (!flat.length || values.length < flat.length) return false;
  for (let k = 0; k + flat.length <= values.length; k++) {
    if (near(values[k], flat[0]) && flat.every((x, n) => near(values[k + n], x))) return true;
  }
  return false;
}

/**
 * The first foreign number (`found`: { site, moment, caller }) built inside a helper of the
 * learner's, called from a line where an expression built a step's matrix transposed (row after row
 * of Mᵀ, M no symmetric matrix) and fed it on (`softmaxRows(transpose(S))`: a softmax down each
 * column): the site of that transposition, on the caller's line. Its id, or null. `whole`: every
 * site's recorded values (arguments too).
 */
export function transposedFeed(found, sites, whole, reference) {
  const caller = found.caller;
  if (!(caller >= 0) || !sites[found.site]?.fn || sites[caller]?.fn === sites[found.site].fn) return null;
  const line = sites[caller].line;
  const matrices = reference.steps.filter((e) => !e.layout && e.matrix.length > 1 && e.matrix[0].length > 1).map((e) => e.matrix)
    .filter((M) => M.flat().every(Number.isFinite)).map(transpose).filter((T) => !(T.length === T[0].length && T.every((row, i) => row.every((x, j) => near(x, T[j][i])))));
  for (const [id, site] of sites.entries()) {
    if (site.line !== line || site.argument || !whole[id]?.values.length) continue;
    if (matrices.some((T) => holdsRun(whole[id].values, T.flat()))) return id;
  }
  // (or built inside a helper of the learner's called from that line, `.T().softmax()`: that call)
  const calls = new Set(sites.flatMap((s, id) => (s.line === line && s.call && id !== caller ? [id] : [])));
  for (const c of calls) {
    const built = whole.flatMap((w) => w.values.flatMap((v, k) => (w.callers?.[k] === c ? [[w.moments[k], v]] : []))).sort((a, b) => a[0] - b[0]).map(([, v]) => v);
    if (built.length && matrices.some((T) => holdsRun(built, T.flat()))) return c;
  }
  return null;
}

/**
 * The first foreign number (`found`) built inside a helper of the learner's that sums what it is
 * given (the number is a sum of two or more numbers in a row of an argument its calls from outside
 * it passed: `total(scores)` for the exps' total), called from one line outside it: the helper is
 * right and that line gives it the wrong numbers, a step's (the scores for the exps). The site
 * of the argument there, or null.
 */
export function summedFeed(found, sites, whole, value, reference) {
  const fn = sites[found.site]?.fn;
  if (!fn || !Number.isFinite(value)) return null;
  const args = sites.map((s, k) => k).filter((k) => sites[k].argument && sites[k].callee === fn && sites[k].fn !== fn && whole[k]?.values.length);
  if (!args.length || new Set(args.map((k) => sites[k].line)).size !== 1) return null;
  // (an argument of a step's own numbers, not an input's: what the code computed and passed on)
  const computed = reference.steps.filter((e) => !e.layout).flatMap((e) => e.matrix.flat()).filter((x) => Number.isFinite(x) && !Number.isInteger(x));
  const ofSteps = (x) => computed.some((y) => near(x, y));
  for (const k of args) {
    const xs = whole[k].values;
    if (!xs.every(ofSteps)) continue;
    for (let a = 0; a < xs.length; a++) {
      let sum = xs[a];
      for (let b = a + 1; b < xs.length && b - a < 64; b++) {
        sum += xs[b];
        if (near(sum, value)) return k;
      }
    }
  }
  return null;
}

/**
 * When every part of a layout step (each head's Q, K and V slices) is missing, all found in arrays
 * built in one helper of the learner's, and every whole number its calls pass it follows an index a
 * right answer holds (a head's index, its first or last column) or is a size of the problem, the
 * helper computes the layout wrong from right arguments: `entry`'s site, inside it. Else null.
 */
export function helperWrong(entry, alignment, sites, recording, reference) {
  const fn = sites[entry.site]?.fn;
  const parts = alignment.filter((e) => e.step === entry.step);
  if (!fn || !parts.every((e) => e.status === 'missing' && Number.isInteger(e.site) && sites[e.site]?.fn === fn)) return null;
  const integers = sites.map((s, k) => (s.argument && s.callee === fn ? (recording.whole ?? recording.sites)[k].values : null)).filter((v) => v?.length && v.every(Number.isInteger));
  const right = (values) => values.every((v) => (reference.sizes ?? []).includes(v)) || (reference.indices ?? []).some((sequence) => follows({ values, moments: [] }, sequence));
  return integers.length > 0 && integers.every(right) ? entry.site : null;
}

/**
 * A wrong layout (`entry`: its site and moment) built from an array that a call of `unshift`,
 * `reverse` or `sort` on another line put in its order before (`heads.unshift(out)`, then the
 * heads joined in that order): that call. Its id, or null.
 */
export function reordered(entry, sites, recording) {
  for (const name of sites[entry.site]?.uses ?? []) {
    const k = sites.findIndex((s, j) => s.writes === name && ['unshift', 'reverse', 'sort'].includes(s.mutator) && s.line !== sites[entry.site].line && recording.sites[j].moments.some((m) => m < entry.moment));
    if (k >= 0) return k;
  }
  return null;
}

/**
 * Whether a layout helper (`entry`'s site is inside it) is wrong from every place it is called:
 * the step's missing parts built in it came through each of its call sites outside it (`cols(Q)`,
 * `cols(K)`, `cols(V)`, each wrong for head 1), so the helper, not one call, is at fault.
 */
export function wrongFromEveryCall(entry, alignment, sites, recording) {
  const fn = sites[entry.site]?.fn;
  if (!fn) return false;
  const callers = new Set();
  sites.forEach((site, id) => { if (site.fn === fn) for (const c of recording.sites[id].callers) if (c >= 0 && sites[c].fn !== fn) callers.add(c); });
  const wrong = new Set(alignment.filter((e) => e.step === entry.step && e.status === 'missing' && Number.isInteger(e.site) && sites[e.site]?.fn === fn).map((e) => e.caller));
  // (a call none of whose parts the alignment could see, V's one-hot columns, all whole numbers, neither clears
  // nor blames the helper: the callers of its parts held right, found by the moment each was matched at)
  const right = new Set(alignment.filter((e) => e.step === entry.step && e.status === 'ok' && Number.isInteger(e.site) && sites[e.site]?.fn === fn)
    .map((e) => recording.sites[e.site].callers[recording.sites[e.site].moments.indexOf(e.moment)]));
  return callers.size > 1 && wrong.size > 1 && [...callers].every((c) => wrong.has(c) || !right.has(c));
}
