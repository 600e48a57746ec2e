// A cut that misses a head (issue 28). A right answer that cuts a head's columns out of an input
// into an array of their own (`const q = row.slice(h * d, h * d + d)`, `Q[t].subarray(from, to)`,
// `Array.from({ length: d }, (_, c) => k[lo + c])`) makes, at that line, every head's columns of that
// input, one after another: over a run, the site holds each head's slice whole. A site that holds
// some heads' slices of an input whole and never another's (`row.slice(g * d, …)` for `h * d`,
// `k.slice(0, headDimensions)`, `slice(from, d)`) cut the wrong columns, and every step built on its
// arrays is wrong from there: the first wrong line is the cut, not the line that reads it. Read from
// the values the site built, whatever computed its bounds: no rule on how the cut is written.
//
// A cut in a helper used from several places (`cut(Q[i], g)` beside `cut(K[j], g)`) is right in
// itself when some of its calls cut a whole set of heads: the call that passed the wrong head is at
// fault, and is named.

const isInteger = (x) => Math.abs(x - Math.round(x)) <= 1e-12;
const key = (x) => x.toPrecision(12);

/** The reference's slices, by input: Map role → [{ entry, numbers }], one per distinct head's columns. */
function slicesByRole(reference) {
  const roles = new Map();
  for (const entry of reference.steps) {
    if (!entry.layout || !entry.role || !(entry.step === 'slice' || entry.step === 'kv-head')) continue;
    const numbers = entry.matrix.flat().filter((x) => Number.isFinite(x) && !isInteger(x)).map(key);
    if (!numbers.length) continue;
    const list = roles.get(entry.role) ?? [];
    // (grouped heads read one K/V head's columns each: that head once)
    if (!list.some((s) => s.numbers.join() === numbers.join())) list.push({ entry, numbers });
    roles.set(entry.role, list);
  }
  return roles;
}

/** Per role, which of its heads' slices the values hold whole: Map role → [held, missing] entries. */
function heldSlices(values, roles) {
  const set = new Set(values.filter((x) => Number.isFinite(x) && !isInteger(x)).map(key));
  const out = new Map();
  for (const [role, list] of roles) {
    const held = list.filter((s) => s.numbers.every((x) => set.has(x)));
    out.set(role, { held, missing: list.filter((s) => !held.includes(s)) });
  }
  return out;
}

/**
 * The first site that cut arrays out of an input (it holds arrays, each a part of a variable) whose
 * values hold one or more heads' slices of a role whole and never another's: { step, entry, site },
 * `entry` the first head's slice it never held, `site` the cut (or the call that passed the wrong
 * head, for a helper whose other calls cut every head); null when every cut holds all its heads.
 * `sites`: the instrumented sites; `recording`: one traced run's; `reference`: that run's steps.
 */
export function incompleteCut(sites, recording, reference) {
  const roles = slicesByRole(reference);
  if ([...roles.values()].every((list) => list.length < 2)) return null;
  let best = null;
  sites.forEach((site, id) => {
    const r = recording.sites[id];
    if (!site.reads || site.argument || !r?.snapshots?.length || !r.values.length) return;
    if (!(site.declares || site.pattern || site.writes)) return;
    const moment = r.moments[0];
    if (best && !(moment < best.moment)) return;
    for (const [role, { held, missing }] of heldSlices(r.values, roles)) {
      if (!held.length || !missing.length) continue;
      best = { step: missing[0].entry.step, entry: missing[0].entry, site: callOfHelper(id, sites, recording, roles, role) ?? id, moment };
      break;
    }
  });
  return best;
}

/**
 * For a cut in a helper called from several call sites: the call site whose calls cut only some of
 * `role`'s heads, when another call site's calls cut a whole set; null otherwise.
 */
function callOfHelper(id, sites, recording, roles, role) {
  const r = recording.sites[id];
  const byCaller = new Map();
  r.values.forEach((v, k) => {
    const c = r.callers[k] ?? -1;
    if (c >= 0 && sites[c]?.fn !== sites[id].fn) byCaller.set(c, [...(byCaller.get(c) ?? []), v]);
  });
  if (byCaller.size < 2) return null;
  const whole = (values) => [...heldSlices(values, roles).values()].some(({ held, missing }) => held.length > 1 && !missing.length);
  const wrong = [...byCaller].filter(([, values]) => {
    const { held, missing } = heldSlices(values, roles).get(role);
    return held.length && missing.length;
  });
  return wrong.length === 1 && [...byCaller.values()].some(whole) ? wrong[0][0] : null;
}
