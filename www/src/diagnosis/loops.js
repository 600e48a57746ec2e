// A loop that stops short (issue 28). When a step is only partly built and nothing foreign stands in
// for the rest, the site that built the part it reached is not where the mistake is: the loop around
// it ran too few times. A `for` loop's bound is recorded (instrument.js: the right side of its test);
// among the loops enclosing that site, the innermost whose bound is one number throughout the run and
// none of the sizes of the problem (the rows and columns of the inputs and of the reference's steps,
// the whole numbers of the call's options: 2 or more) is the loop that stops short (`h < 1` for
// `h < numberOfHeads`, `c < d - 1`).

/** The sizes of a traced call: its matrices' rows and columns, the reference steps', its options' whole numbers (2 or more). */
export function sizesOf(args, steps) {
  const sizes = new Set();
  const shape = (M) => { if (Array.isArray(M) && Array.isArray(M[0])) sizes.add(M.length).add(M[0].length); };
  for (const a of args) {
    shape(a);
    if (a && typeof a === 'object' && !Array.isArray(a)) for (const v of Object.values(a)) { if (Number.isInteger(v)) sizes.add(v); shape(v); }
  }
  for (const e of steps) shape(e.matrix);
  return [...sizes].filter((n) => n >= 2);
}

/** The bound site of the innermost loop around site `id` that stops short (see above), or null. */
export function shortLoop(id, sites, recording, reference) {
  const at = sites[id]?.at;
  if (at === undefined || !reference.sizes) return null;
  let best = null;
  sites.forEach((site, k) => {
    if (!site.loop || !(site.loop[0] <= at && at < site.loop[1])) return;
    const values = recording.sites[k].values;
    const one = values.length > 0 && values.every((v) => v === values[0]) ? values[0] : null;
    if (!Number.isInteger(one) || reference.sizes.includes(one)) return;
    if (!best || site.loop[0] > sites[best].loop[0]) best = k;
  });
  return best;
}

/**
 * For a step none of whose numbers was built (`entry`), a sum that stopped short: an accumulation
 * (`s += …`) all of whose numbers before the first foreign one (`before`) are running sums a right
 * answer builds on the way (`reference.parts`), none of them any step's, inside a loop that stops
 * short up to that moment (shortLoop, `k < r.length - 1`): that loop's bound. Its id, or null.
 */
export function stoppedShort(entry, sites, recording, reference, before = Infinity) {
  const key = (x) => x.toPrecision(12);
  const parts = new Set((reference.parts ?? []).filter(Number.isFinite).map(key));
  // (no step's number: a sum that reached its end builds one, the scores' for a right dot product)
  const step = new Set([entry, ...(reference.steps ?? [])].filter((e) => !e.layout).flatMap((e) => e.matrix.flat()).filter(Number.isFinite).map(key));
  for (const [id, site] of sites.entries()) {
    const values = (recording.sites[id]?.values ?? []).filter((_, k) => recording.sites[id].moments[k] < before);
    if (site.operator !== '+=' || !values.length || !values.every((v) => Number.isFinite(v) && parts.has(key(v)) && !step.has(key(v)))) continue;
    // (its loop's bound read up to that moment too: a helper may run on other sizes afterwards)
    const loop = shortLoop(id, sites, { sites: recording.sites.map((r) => ({ values: r.values.filter((_, k) => r.moments[k] < before) })) }, reference);
    if (loop !== null) return loop;
  }
  return null;
}

/**
 * The sites that are the whole argument of a rounding, `n / T` of `Math.floor(n / T)`: index
 * arithmetic, whose fraction is rounded away before anything reads it (a flat index split into a row
 * and a column), never a number of a step. A Set of ids.
 */
export function roundedArguments(sites) {
  const rounding = sites.filter((o) => /^Math\.(floor|ceil|trunc|round)\(/.test(o.name ?? '') && Number.isInteger(o.at));
  const out = new Set();
  sites.forEach((s, id) => {
    const open = (o) => o.at + o.name.indexOf('(') + 1;
    if (Number.isInteger(s.at) && rounding.some((o) => open(o) === s.at && o.end === s.end + 1)) out.add(id);
  });
  return out;
}
