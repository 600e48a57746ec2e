// Where a wrong value came from (issue 28): once the alignment has found the site that built a step's
// first wrong number, these rules follow it back to the line at fault — a constant, a size, a start, a
// whole number, a read of the input, a total, a rename, a step skipped — each from the site's own
// recorded values and the reference's, never from a challenge's id or its names.
import { follows } from './bounds.js';
import { firstForeignSite, foreignTest } from './foreign.js';
import { callSiteAtFault, passedRightBeside } from './calls.js';
import { returnedBehind } from './returns.js';
import { cutIterableBehind, sameMapBehind, sizeBehind, unreadTotalBehind } from './sizes.js';
import { readerBehind } from './heads.js';

// What site `id`'s wrong value of step `step` came from, in this order (each rule reads (id, sites, recording, reference, step)).
const BEHIND = [
  wholeBehind,
  constantBehind,
  dimensionBehind,
  sizeBehind,
  (id, sites, recording, reference) => unreadTotalBehind(sites, recording, reference),
  (id, sites) => cutIterableBehind(id, sites),
  (id, sites) => sameMapBehind(id, sites),
  startBehind,
  unresetBehind,
  integerBehind,
  readBehind,
  unshiftedBehind,
  shortTotalBehind,
  (id, sites, recording, reference, step) => skippedBehind(step, id, sites, recording, reference),
  renamedBehind,
  foreignBehind,
  returnedBehind,
  (id, sites, recording, reference, step) => readerBehind(step, sites, recording, reference, firstForeignSite(recording, reference, 0)?.moment),
];

/** The first of the rules above to find where site `id`'s wrong value of step `step` came from: that site's id, or null. */
export function valueBehind(step, id, sites, recording, reference) {
  for (const rule of BEHIND) {
    const k = rule(id, sites, recording, reference, step);
    if (k !== null && k !== undefined) return k;
  }
  return null;
}

/**
 * A row-by-row step's helper given a whole matrix as one flat list (`softmaxRow(masked)` for
 * `rowsOf(masked, T).flatMap(softmaxRow)`): a parameter of the function site `id` is in was bound, in
 * fewer calls than the step before has rows, to flat lists each holding numbers of more than one of its
 * rows. That argument: the line that passed the whole. Its id, or null.
 */
function wholeBehind(id, sites, recording, reference, step) {
  // (the last step of the same head before it that is no layout: the mask applied by position holds the scaled
  // scores' numbers; not a projection of every head's, `Vf` of `headKernel(Qf, Kf, Vf, …)`, a buffer read by index)
  const at = reference.steps.findIndex((e) => e.step === step);
  const before = at > 0 ? reference.steps.slice(0, at).findLast((e) => !e.layout && e.head === reference.steps[at].head) : null;
  if (!before || before.matrix.length < 2) return null;
  const rowOf = new Map();
  before.matrix.forEach((row, i) => row.forEach((x) => { if (Number.isFinite(x) && !Number.isInteger(x)) rowOf.set(x.toPrecision(12), i); }));
  const rowsIn = (data) => new Set(data.flatMap((x) => (Number.isFinite(x) && rowOf.has(x.toPrecision(12)) ? [rowOf.get(x.toPrecision(12))] : []))).size;
  const fn = sites[id].fn;
  const whole = (snaps) => snaps.length > 0 && snaps.length < before.matrix.length && snaps.some((x) => x.rows === 1 && rowsIn(x.data) > 1);
  // (an argument of a call of the function site `id` is in, whichever parameter it binds)
  const k = sites.findIndex((s, j) => Boolean(fn) && (s.callee === fn || s.home === fn) && Boolean(s.binds?.length) && whole(recording.sites[j].snapshots ?? []));
  return k >= 0 ? k : null;
}

/**
 * A step whose reference says which of its parts each head reads (`kvHead`), held right for every head, while
 * the probes find a head reading another's: the choice was made by an index. The site whose whole numbers,
 * one per head, are those parts' indices in another order than the reference's (`kv.get(h % numberOfKVHeads)`
 * for `⌊h / group⌋`), a number made before a name passed on (`c` of `mix(w, from, c)`, alike by chance). Its id, or null.
 */
export function chosenIndex(step, sites, recording, reference) {
  const byHead = new Map(reference.steps.filter((e) => e.step === step && Number.isInteger(e.kvHead)).map((e) => [e.head, e.kvHead]));
  const sequence = [...byHead.keys()].sort((a, b) => a - b).map((h) => byHead.get(h));
  const allowed = new Set(sequence);
  if (allowed.size < 2) return null;
  const T = sequence.length;
  // one number per head, in the heads' order or each repeated
  const perHead = (values, at) => { const m = new Map(); return values.every((v, k) => (m.has(at(k)) ? m.get(at(k)) === v : (m.set(at(k), v), true))); };
  for (const [id, site] of [...sites.entries()].sort(([, a], [, b]) => a.plain - b.plain)) {
    const { values } = recording.sites[id];
    if (site.counter || !values.length || values.length % T !== 0 || !values.every((v) => allowed.has(v)) || new Set(values).size < 2) continue;
    const r = values.length / T;
    if (!follows({ values, moments: [] }, sequence) && (perHead(values, (k) => k % T) || perHead(values, (k) => Math.floor(k / r)))) return id;
  }
  return null;
}

/**
 * The declaration of a constant that site `id` reads and whose one value is foreign to the
 * reference (`const scale = 1 / d` read by `scores[n] *= scale`): the line the wrong value comes
 * from; or of a whole number no other line reads. Its id, or null.
 */
function constantBehind(id, sites, recording, reference) {
  const known = new Set([...reference.inputs.flat(2), ...reference.steps.flatMap((s) => s.matrix.flat()), ...reference.parts].filter(Number.isFinite).map((x) => x.toPrecision(12)));
  // (or a property it reads, `.by` of `x * node.by`, made where an object is: `{ by: 1 / d }`)
  for (const name of [...(sites[id].uses ?? []), ...(sites[id].operands ?? []).filter((n) => n.startsWith('.'))]) {
    const k = sites.findIndex((s, j) => j !== id && (s.declares === name || s.property === name));
    const values = k >= 0 ? recording.sites[k].values : [];
    const one = values.length > 0 && values.every((x) => x === values[0]) ? values[0] : null;
    // (or known by chance, where the reference scales its scores and this is no factor it scales by: `1 / Math.sqrt(T)`)
    const scale = reference.scales?.length > 0 && !reference.scales.some((x) => Math.abs(x - one) <= 1e-9 * Math.abs(x));
    if (one !== null && Number.isFinite(one) && !Number.isInteger(one) && (!known.has(one.toPrecision(12)) || scale)) return k;
    // a whole number the site computes with, declared for this line alone (`const f = this.d` read only by `x / f`): its role is this line's
    // (not an array's length read as it is, `const d = Q[0].length`: a shape is right whatever line reads it)
    const only = k >= 0 && !sites[k].lengthRead && sites.every((s, j) => j === k || !s.uses?.includes(name) || s.line === sites[id].line);
    if (one !== null && Number.isInteger(one) && only && sites[id].operands?.includes(name) && sites[k].line !== sites[id].line) return k;
    // a factor of 1 declared again and again (`const shrink = 1` in a loop, for `Math.exp(best - next)`): a number
    // made once per pass is one that changes; kept at 1, the line that was to make it
    if (one === 1 && values.length > 1 && sites[k].declares === name && sites[id].operands?.includes(name) && sites[k].line !== sites[id].line) return k;
  }
  return null;
}

/**
 * The declaration of a size read as it is (`const d = Kc[0].length`) that only the line computing a
 * constant of site `id` reads (`scaleBy(1 / Math.sqrt(d))`, bound to `f` of `x * f`), when that
 * constant is no factor the reference scales by and the size is none of the sizes it scales by
 * (1/s² of a factor s): the line that read the wrong size. Its id, or null.
 */
function dimensionBehind(id, sites, recording, reference) {
  const dims = (reference.scales ?? []).map((x) => 1 / (x * x)).filter((n) => Math.abs(n - Math.round(n)) < 1e-9).map(Math.round);
  if (!dims.length) return null;
  for (const name of sites[id].operands ?? []) {
    const k = sites.findIndex((s, j) => j !== id && ((s.declares === name && s.fn === sites[id].fn) || bound(s, name, sites[id].fn)));
    const values = k >= 0 ? recording.sites[k].values : [];
    const one = values.length > 0 && values.every((x) => x === values[0]) ? values[0] : null;
    if (one === null || !Number.isFinite(one) || Number.isInteger(one) || reference.scales.some((x) => Math.abs(x - one) <= 1e-9 * Math.abs(x))) continue;
    for (const inner of sites[k].uses ?? []) {
      const j = sites.findIndex((s) => s.declares === inner && s.lengthRead);
      const n = j >= 0 ? recording.sites[j].values : [];
      const only = j >= 0 && sites.every((s, m) => m === j || !s.uses?.includes(inner) || s.line === sites[k].line);
      if (only && n.length > 0 && n.every((x) => x === n[0]) && Number.isInteger(n[0]) && !dims.includes(n[0])) return j;
    }
  }
  return null;
}

/**
 * The first site whose numbers (no whole number) are all exps of the scores taken without the row's
 * maximum (`Math.exp(s)`, where `Math.exp(s - top)` was meant): the line that left it out. Its id, or null.
 */
export function unshiftedSite(recording, reference) {
  if (!reference.unshifted?.length) return null;
  const unshifted = new Set(reference.unshifted.map((x) => x.toPrecision(12)));
  let best = null;
  recording.sites.forEach((r, k) => {
    const values = r.values.filter((x) => Number.isFinite(x) && !Number.isInteger(x));
    if (values.length && values.every((x) => unshifted.has(x.toPrecision(12))) && (best === null || r.moments[0] < recording.sites[best].moments[0])) best = k;
  });
  return best;
}

/**
 * A variable site `id` computes with, accumulated in its function (`z += Math.exp(x)`) into sums of
 * exps taken without the row's maximum, where the site's result is foreign (so the other operands
 * are the exps with it: `e / z`): that accumulation, the line that left the maximum out. Its id, or null.
 */
function unshiftedBehind(id, sites, recording, reference) {
  if (!reference.unshifted?.length) return null;
  const known = new Set([...reference.inputs.flat(2), ...reference.steps.flatMap((s) => s.matrix.flat()), ...reference.parts].filter(Number.isFinite).map((x) => x.toPrecision(12)));
  const unshifted = new Set(reference.unshifted.map((x) => x.toPrecision(12)));
  for (const name of sites[id].operands ?? []) {
    const k = sites.findIndex((s, j) => j !== id && s.fn === sites[id].fn && s.operator === '+=' && s.target === name);
    const values = k >= 0 ? recording.sites[k].values.filter((x) => Number.isFinite(x) && !Number.isInteger(x)) : [];
    if (values.length && values.every((x) => unshifted.has(x.toPrecision(12)) && known.has(x.toPrecision(12)))) return k;
  }
  return null;
}

/**
 * The declaration of a total that site `id` divides by (`row[j] /= z`, `e / z`) whose every value is
 * a running sum of a row's exps that is never a row's whole total (`sum(d, (j) => row[j])` of T
 * exps): a sum that stopped short, at the line that summed. Its id, or null.
 */
function shortTotalBehind(id, sites, recording, reference) {
  const totals = new Set((reference.totals ?? []).filter(Number.isFinite).map((x) => x.toPrecision(12)));
  if (!totals.size) return null;
  const known = new Set((reference.sums ?? []).filter(Number.isFinite).map((x) => x.toPrecision(12)));
  for (const name of sites[id].operands ?? []) {
    if (sites[id].operator !== '/=' && !new RegExp(`/\\s*${name.replace(/\$/g, '\\$')}\\b`).test(sites[id].name ?? '')) continue;
    const k = sites.findIndex((s, j) => j !== id && s.declares === name && s.fn === sites[id].fn);
    const values = k >= 0 ? recording.sites[k].values.filter((x) => Number.isFinite(x) && !Number.isInteger(x)) : [];
    if (values.length && values.every((x) => known.has(x.toPrecision(12)) && !totals.has(x.toPrecision(12)))) return k;
  }
  return null;
}

/**
 * When the first foreign number of site `id` is one the softmax builds of the scores themselves
 * (`skipped`: a scale left out, `return s` for `return s / Math.sqrt(d)`), the step `step` was
 * skipped: the first site, no running sum, to hold every number of a row of the step before `step`
 * (`return s`; in a helper used from several places, its call: `S[i][j] = sum(…)`), the line the
 * scale was to be on. Its id, or null.
 */
function skippedBehind(step, id, sites, recording, reference) {
  const skipped = new Set((reference.skipped ?? []).map((x) => x.toPrecision(12)));
  const foreign = foreignTest(reference);
  const r = recording.sites[id];
  const k = r.values.findIndex((v) => foreign(v) && skipped.has(v.toPrecision(12)));
  if (k < 0) return null;
  const at = reference.steps.findIndex((e) => e.step === step);
  const before = at > 0 ? reference.steps[at - 1] : null;
  // (the keys the query may see, when a mask hides others; the first row of two or more: a row's
  // maximum holds one of its numbers, not every one)
  const rows = before && !before.layout ? before.matrix.map((m, i) => m.filter((x, c) => (before.allowed?.[i]?.[c] ?? true) && Number.isFinite(x) && !Number.isInteger(x))) : [];
  const row = rows.find((m) => m.length > 1) ?? rows[0] ?? [];
  if (!row.length) return null;
  let best = null;
  let renamed = null;
  recording.sites.forEach((rec, j) => {
    // (not a running sum, `s += …`: it holds each number on the way to it)
    if (j === id || sites[j].line === sites[id].line || sites[j].inner || /^[-+*/]=$/.test(sites[j].operator ?? '')) return;
    const first = row.map((x) => rec.values.findIndex((v, n) => rec.moments[n] < r.moments[k] && Math.abs(v - x) <= 1e-12 * Math.max(1, Math.abs(x))));
    if (!first.every((n) => n >= 0)) return;
    const n = first.reduce((a, b) => (rec.moments[b] > rec.moments[a] ? b : a));
    if (!best || rec.moments[n] < best.moment) best = { site: j, moment: rec.moments[n], caller: rec.callers[n] ?? -1 };
    // (a value only renamed, `const scaled = scores`, where the step was to be made: that line)
    if (sites[j].plain && sites[j].declares && (!renamed || rec.moments[n] < renamed.moment)) renamed = { site: j, moment: rec.moments[n] };
  });
  if (renamed) return renamed.site;
  // (in a helper used from several places, `sum(d, …)`: the call)
  return best ? callSiteAtFault(best, sites, recording, foreign) ?? best.site : null;
}

/**
 * A value only renamed (`const weights = exps` for `exps.map((e) => e / total)`) that site `id` reads
 * in its function, holding numbers a right answer builds (no whole number, none foreign, not an
 * input's): the step was to be made there. Its id, or null.
 */
function renamedBehind(id, sites, recording, reference) {
  const foreign = foreignTest(reference);
  const inputs = new Set(reference.inputs.flat(2).map((x) => x.toPrecision(12)));
  for (const name of sites[id].uses ?? []) {
    const k = sites.findIndex((s, j) => j !== id && s.declares === name && s.plain && s.fn === sites[id].fn);
    const values = k >= 0 ? recording.sites[k].values : [];
    if (values.length && values.every((x) => Number.isFinite(x) && !Number.isInteger(x) && !foreign(x) && !inputs.has(x.toPrecision(12)))) return k;
  }
  return null;
}

/**
 * The one declaration, among the variables site `id` computes with in its function, that builds
 * numbers foreign to the reference at all (`const z = logits.reduce(…)` of `(p / z) * v`, though its
 * first value, one score, is a step's): the line the wrong value comes from. Its id, or null.
 * (Or the one accumulation in place into such a variable, `z += band[n]` (the scores summed where
 * the exps were meant), when it is the first site off this line to build a foreign number after
 * this one did: its numbers were not made of this line's.)
 */
function foreignBehind(id, sites, recording, reference) {
  const foreign = foreignTest(reference);
  // (its operands, or the names a call passes on: `dot(weights, col)`)
  const names = [...new Set([...(sites[id].operands ?? []), ...(sites[id].args ?? [])])];
  const declared = names.map((name) => sites.findIndex((s, j) => j !== id && s.declares === name && s.fn === sites[id].fn)).filter((k) => k >= 0);
  const wrong = declared.filter((k) => recording.sites[k].values.some(foreign));
  if (wrong.length === 1) return wrong[0];
  if (wrong.length) return null;
  const accumulated = (sites[id].operands ?? []).flatMap((name) => sites.flatMap((s, j) => (j !== id && /^[-+*/]=$/.test(s.operator ?? '') && s.target === name && s.fn === sites[id].fn ? [j] : [])));
  const after = recording.sites[id].moments[recording.sites[id].values.findIndex(foreign)];
  let next = null;
  recording.sites.forEach((r, j) => {
    if (sites[j].line === sites[id].line) return;
    const k = r.values.findIndex((v, n) => r.moments[n] > after && foreign(v));
    if (k >= 0 && (!next || r.moments[k] < next.moment)) next = { id: j, moment: r.moments[k] };
  });
  return accumulated.length === 1 && next?.id === accumulated[0] ? accumulated[0] : null;
}

/**
 * The declaration a sum (`row[c] += …`, `s += …`) starts from when it starts from one number other
 * than 0 (`new Array(n).fill(1)`, `let s = 1`): the line the wrong value comes from. Its id, or null.
 */
function startBehind(id, sites, recording) {
  const site = sites[id];
  if (site.operator !== '+=' || !site.target) return null;
  const k = sites.findIndex((s, j) => j !== id && s.declares === site.target);
  const values = k >= 0 ? recording.sites[k].values : [];
  return values.length > 0 && values.every((x) => x === values[0]) && values[0] !== 0 && Number.isFinite(values[0]) ? k : null;
}

/**
 * The declaration of a running sum (`let dot = 0`) that site `id`, its accumulation (`dot += …`), goes on
 * adding to after the sum was read (`scores.push(dot / …)`) with no new start between: a sum started once
 * where one per result was meant (the declaration moved out of its loop), the line that started it. Its id, or null.
 */
function unresetBehind(id, sites, recording) {
  const site = sites[id];
  // (a number accumulated, not an array's cell: `concat[i][c] += …` writes into an array made once)
  if (!/^[-+]=$/.test(site.operator ?? '') || !site.target || site.writes) return null;
  const k = sites.findIndex((s, j) => j !== id && s.declares === site.target && s.fn === site.fn);
  if (k < 0 || !recording.sites[k].values.length || !recording.sites[k].values.every(Number.isFinite)) return null;
  const starts = recording.sites[k].moments;
  const reads = sites.flatMap((s, j) => (j !== id && j !== k && s.fn === site.fn && s.line !== site.line && !/^[-+*/]=$/.test(s.operator ?? '') && s.uses?.includes(site.target) ? recording.sites[j].moments : []));
  // (an accumulation after a read, with no start between them)
  const goesOn = recording.sites[id].moments.some((a) => reads.some((r) => r < a && !starts.some((d) => r < d && d < a)));
  return goesOn ? k : null;
}

/**
 * The site that computed a constant site `id` computes with (an operand declared, or a parameter
 * bound by an argument, of one number that is no whole number throughout the run: `scale` of
 * `s * scale`, passed as `scorer(K, 1 / Math.sqrt(V[0].length))`). Its id, or null.
 */
export function constantOperand(id, sites, recording) {
  for (const name of sites[id].operands ?? []) {
    const k = sites.findIndex((s, j) => j !== id && ((s.declares === name && s.fn === sites[id].fn) || bound(s, name, sites[id].fn)));
    const values = k >= 0 ? recording.sites[k].values : [];
    if (values.length && values.every((x) => x === values[0]) && Number.isFinite(values[0]) && !Number.isInteger(values[0])) return k;
  }
  return null;
}

/**
 * When the bound at site `id` (a mask's, applied by bounds) was chosen by a condition on a parameter
 * of its function (`causal ? i + 1 : T`), and the argument that passed that parameter is one boolean
 * that none of the call's boolean options is (`!causal`, `true`): that argument. Its id, or null.
 */
export function flagBehind(id, sites, recording, reference) {
  if (!reference.flags?.length) return null;
  for (const [k, s] of sites.entries()) {
    if (s.line !== sites[id].line || !recording.sites[k].flags?.values.length) continue; // a test on the bound's line
    for (const name of s.uses) {
      const arg = sites.findIndex((a) => bound(a, name, sites[id].fn));
      const flags = arg >= 0 ? recording.sites[arg].flags.values : [];
      if (flags.length && flags.every((f) => f === flags[0]) && !reference.flags.includes(flags[0])) return arg;
    }
  }
  return null;
}

/**
 * The values of `name` among a site's: for a name of an array pattern, its element of each array
 * recorded (of arrays, `const [a, b] = [row.slice(0, h), row.slice(h)]`: its row of each snapshot).
 */
function ofName(site, recorded, name) {
  const position = site.pattern?.indexOf(name) ?? -1;
  if (position < 0) return recorded.values;
  const rows = recorded.snapshots?.filter((s) => s.rows === site.pattern.length && s.cols > 1) ?? [];
  if (rows.length) return rows.flatMap((s) => Array.from(s.data.slice(position * s.cols, (position + 1) * s.cols)));
  return recorded.values.filter((_, n) => n % site.pattern.length === position);
}

/**
 * Whether site `s` is an argument that binds parameter `name` of the learner's function `fn` and
 * computes it there (`[x[2 * i], x[2 * i + 1]]` for `[a, b]`; not a name passed on as it is).
 */
const bound = (s, name, fn) => Boolean(fn) && (s.callee === fn || s.home === fn) && !s.plain && Boolean(s.binds?.includes(name));

/**
 * The declaration of a whole number that site `id` computes with (an operand of its arithmetic, not
 * an index, not a loop's counter) and that changes from call to call (`const p = r + offset` of
 * `p * inverse[i]`, `const z = e.length` of `e[j] / z`), and is none of the indices a right answer
 * holds (a head, its K/V head, its first and last column, a row's position): a count or a position
 * the wrong value is made of. A call's own arguments count as its operands (`q.columns(start, end)`).
 * When the site's own give none, the arguments of the call of the learner's function its first
 * wrong number was built under (`dotAt(q, h * d, k, g * d, d)`), not each row's index in turn (`rule(i, j)`). Its id, or null.
 */
export function integerBehind(id, sites, recording, reference) {
  const every = (values) => new Set(values).size === Math.max(...values) + 1 && Math.min(...values) === 0 && reference.inputs.some((M) => M.length === new Set(values).size || M[0]?.length === new Set(values).size);
  const foreign = foreignTest(reference);
  const behind = (names, fn, passed = false, computed = false) => {
    for (const name of (names ?? []).filter((n) => !passedRightBeside(id, n, sites, recording, foreign))) {
      // (not an argument of a recursive call, `h + 1` of `heads(…, h + 1)`: the first call's value is not among its values)
      const declared = (s, j) => j !== id && (s.declares === name || s.property === name || s.pattern?.includes(name) || (bound(s, name, fn) && s.fn !== fn)) && !s.counter;
      const k = sites.findIndex((s, j) => declared(s, j) && s.fn === fn);
      const at = k >= 0 ? k : sites.findIndex(declared);
      const values = at < 0 ? [] : ofName(sites[at], recording.sites[at], name);
      const index = [...(reference.indices ?? []), ...(computed && reference.pairIndices ? [reference.pairIndices] : [])].some((sequence) => follows({ values, moments: [] }, sequence));
      if (values.length > 1 && values.every(Number.isInteger) && new Set(values).size > 1 && !index && !(passed && every(values))) return at;
    }
    return null;
  };
  const own = behind(sites[id].operands, sites[id].fn, false, true) ?? behind(sites[id].args, sites[id].fn);
  if (own !== null) return own;
  const k = recording.sites[id].values.findIndex(foreign);
  const caller = k >= 0 ? recording.sites[id].callers?.[k] ?? -1 : -1;
  return caller >= 0 && caller !== id ? behind(sites[caller].args, sites[caller].fn, true) : null;
}

/**
 * The declaration of a number read from the input (`const x2 = row[h * d + i + 1]`) that site `id`
 * computes with, when the reference says which columns a right answer reads in each role
 * (`reads`: the first and the second of each pair) and the columns it read are none of them. Its id, or null.
 */
function readBehind(id, sites, recording, reference) {
  if (!reference.reads) return null;
  const X = reference.inputs[0];
  const inColumns = (columns) => new Set(X.flatMap((row) => columns.map((c) => row[c])));
  const roles = reference.reads.map(inColumns);
  const all = inColumns(X[0].map((_, c) => c));
  // (its operands, or an array it reads from, `b[i]`, named by an array pattern: `const [a, b] = [evens, odds]`)
  const patterned = (sites[id].uses ?? []).filter((name) => sites.some((s) => s.pattern?.includes(name) && s.fn === sites[id].fn));
  for (const name of new Set([...(sites[id].operands ?? []), ...patterned])) {
    // (declared alone, or by position in an array pattern: `const [a, b] = [x[2 * i], x[2 * i + 1]]`)
    const at = sites.findIndex((s, j) => j !== id && (((s.declares === name || s.pattern?.includes(name)) && s.fn === sites[id].fn) || bound(s, name, sites[id].fn)));
    const values = at >= 0 ? ofName(sites[at], recording.sites[at], name) : [];
    if (!values.length || values.every(Number.isInteger) || !values.every((v) => all.has(v))) continue;
    // input numbers, not all of them from the columns of one role
    if (!roles.some((role) => values.every((v) => role.has(v)))) return at;
  }
  return null;
}

