// Lines behind a wrong value that the rules of first-line.js do not reach: a size read at the wrong
// place (`const dk = Q.length` for `Q[0].length`) read only by the line that scales by it; a total
// of exps never read (`return e` after `const z = …`); a `for…of` over a cut of an array
// (`for (const { k, v } of cache.slice(1))`) whose items the wrong value is made of; a `.map` over the
// same array as the `.map` around it (`Q.map((q) => Q.map((k) => …))`).

/**
 * The declaration of a size read as it is (`const d = Q.length`), in the function of site `id`, that
 * site `id` reads directly and no other line reads, when the size is none of the sizes the reference
 * scales by (1/s² of a factor s). Its id, or null.
 */
export function sizeBehind(id, sites, recording, reference) {
  const dims = (reference.scales ?? []).map((x) => 1 / (x * x)).filter((n) => Math.abs(n - Math.round(n)) < 1e-9).map(Math.round);
  if (!dims.length) return null;
  for (const name of sites[id].uses ?? []) {
    const k = sites.findIndex((s, j) => j !== id && s.declares === name && s.lengthRead && s.fn === sites[id].fn);
    if (k < 0) continue;
    const n = recording.sites[k].values;
    // (no other line of its function reads it, but the expressions that enclose site `id`: `Q.map((q) => { … })`)
    const encloses = (s) => s.at <= sites[id].at && sites[id].end <= s.end;
    const only = sites.every((s, m) => m === k || s.fn !== sites[k].fn || !s.uses?.includes(name) || s.line === sites[id].line || encloses(s));
    if (only && n.length > 0 && n.every((x) => x === n[0]) && Number.isInteger(n[0]) && !dims.includes(n[0])) return k;
  }
  return null;
}

/**
 * A row's total of exps declared and never read (`const z = e.reduce(…)` and then `return e`): the
 * softmax never divided by it, so the first line after it that reads the array it summed passed the
 * exps on as the weights. That line's site id, or null.
 * (or summed into a name by a loop, `z += w[j]`, each run of its partial sums ending at a total: the
 * first line after it that reads the array it summed; `for (const e of exps) total += e`, a name its
 * function declared before it)
 */
export function unreadTotalBehind(sites, recording, reference) {
  const totals = new Set((reference.totals ?? []).filter(Number.isFinite).map((x) => x.toPrecision(12)));
  if (!totals.size) return null;
  for (const [k, s] of sites.entries()) {
    const values = recording.sites[k].values;
    const summing = !s.declares && s.operator === '+=' && !s.writes && s.target;
    const name = s.declares ?? (summing ? s.target : null);
    if (!name || !values.length || !values.every(Number.isFinite)) continue;
    const keys = values.map((x) => x.toPrecision(12));
    // (a loop's partial sums grow along a row of exps: each run's last, where the next is not larger, a total)
    const ends = summing ? keys.filter((_, n) => n === values.length - 1 || values[n + 1] <= values[n]) : keys;
    if (!ends.every((x) => totals.has(x))) continue;
    const encloses = (t) => t.at <= s.at && s.end <= t.end;
    const own = (t) => t.declares === name || (t.operator && t.target === name);
    if (sites.some((t, j) => j !== k && t.fn === s.fn && t.uses?.includes(name) && !encloses(t) && !(summing && own(t)))) continue;
    const read = (s.uses ?? []).filter((n) => n !== name && sites.some((t) => t.declares === n && t.fn === s.fn));
    const before = sites.filter((t) => t.fn === s.fn && t.at < s.at && t.declares && t.declares !== name).map((t) => t.declares);
    const summed = summing && !read.length ? before : read;
    const next = sites.findIndex((t) => t.fn === s.fn && t.at > s.end && summed.some((n) => t.uses?.includes(n)));
    if (next >= 0) return next;
  }
  return null;
}

/**
 * A `for…of` over a cut of an array (`cache.slice(1)`, `.filter(…)`) binding a name the value of
 * site `id` is made of (read directly, or through declarations of its function: `key` of
 * `const key = k.slice(…)`): the items it left out are where the step went wrong. That iterable's id, or null.
 */
export function cutIterableBehind(id, sites) {
  const names = new Set(sites[id].uses ?? []);
  for (let depth = 0; depth < 3; depth++) {
    for (const s of sites) if (s.declares && names.has(s.declares) && s.fn === sites[id].fn) for (const n of s.uses ?? []) names.add(n);
  }
  const k = sites.findIndex((s) => s.fn === sites[id].fn && s.iterates?.some((n) => names.has(n)) && /\.(slice|filter)\(/.test(s.name ?? ''));
  return k >= 0 ? k : null;
}

/**
 * A `.map` over the same array as a `.map` that encloses it (`Q.map((q) => Q.map((k) => …))`),
 * both enclosing site `id`: every pair the wrong value is made of is that array's against itself,
 * chosen by the inner map. Its id, or null.
 */
export function sameMapBehind(id, sites) {
  const around = sites.filter((s) => s.mapsOver && !/[(\[]/.test(s.mapsOver) && s.at <= sites[id].at && sites[id].end <= s.end);
  const inner = around.find((s) => around.some((t) => t !== s && t.mapsOver === s.mapsOver && t.at < s.at && s.end <= t.end));
  return inner ? sites.indexOf(inner) : null;
}

/**
 * The mask's keys chosen by a cut (`const visible = keys.slice(0, last + 1)`) that a `.map` enclosing
 * site `id` walks (`visible.map((kj) => q.dot(kj))`), declared in the same function: the keys it
 * left out, or let through, are the mask's. That declaration's id, or null (another step, or no cut).
 */
export function cutMappedBehind(step, id, sites) {
  if (step !== 'mask') return null;
  const site = sites[id];
  const walked = new Set(sites.filter((s) => s.fn === site.fn && s.mapsOver && s.at <= site.at && site.end <= s.end).map((s) => s.mapsOver));
  const k = sites.findIndex((s) => s.fn === site.fn && s.call && s.reads && walked.has(s.declares) && sites.some((a) => a.argument && ['slice', 'filter'].includes(a.callee) && s.at <= a.at && a.end <= s.end));
  return k >= 0 ? k : null;
}
