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
