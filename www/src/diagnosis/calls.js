// Which call of a helper is at fault for a wrong number built inside it (align.js): the helper's
// call site when it is used from several places and right from the others, the helper itself when
// it builds wrong numbers in every call; a number built in a callback the helper passes on counts
// as the helper's own call's. And the call a throw left open (a helper checking its operands).
/**
 * When the first foreign number was built inside a helper the code calls from more than one place
 * (matMul, transpose: a tool used for several steps), the step is what the call passes it: the call
 * site's id; else null (a helper called from one place is the step itself). `sites`: the
 * instrumented sites (each with `fn`, its function).
 */
export function callSiteAtFault(found, sites, recording, foreign = null) {
  const fn = sites[found.site]?.fn;
  if (!fn || found.caller < 0) return null;
  found = liftedCallback(found, fn, sites, recording);
  const callers = new Set();
  // the call sites outside the helper (a call inside it, whose arguments it evaluates, is not one)
  sites.forEach((site, id) => { if (site.fn === fn) for (const c of recording.sites[id].callers) if (c >= 0 && sites[c].fn !== fn) callers.add(c); });
  if (!(callers.size > 1 && sites[found.caller]?.fn !== fn)) return null;
  return foreign && wrongInEveryCall(found, fn, sites, recording, foreign) && !rightElsewhere(found, fn, sites, recording, foreign) ? null : found.caller;
}

/**
 * A number built in a callback the helper passes to a call of its own (`sum(C, (i) => A[t][i] * W[i][o])`
 * inside `project`): it was built under that call, in the helper; the helper's own call is the one
 * above it (`project(Q, W_V)`). `found` as that call's, or as it is.
 */
function liftedCallback(found, fn, sites, recording) {
  if (sites[found.caller]?.fn !== fn || !sites[found.caller].call) return found;
  const r = recording.sites[found.caller];
  const k = r.moments.findIndex((m) => m > found.moment);
  const caller = k >= 0 ? r.callers[k] : -1;
  return caller >= 0 && sites[caller]?.fn !== fn ? { site: found.caller, moment: r.moments[k], caller } : found;
}

/**
 * Whether the calls of helper `fn` that built foreign numbers all came from the call site of
 * `found`, and a call of it from another site built numbers, none foreign (`matmul(q, k)` wrong in
 * every call from its line, `matmul(weights, v)` not): the helper is right, that line passes it
 * the wrong arguments.
 */
function rightElsewhere(found, fn, sites, recording, foreign) {
  const built = new Map(); // call site → [numbers built, foreign ones]
  sites.forEach((site, id) => {
    if (site.fn !== fn) return;
    recording.sites[id].values.forEach((v, k) => {
      const c = recording.sites[id].callers[k];
      // (a NaN built for the call at fault is a wrong number too, `zip(weights, row)` of a row shorter
      // than the weights; elsewhere it may be that call's NaN passed on)
      const nan = Number.isNaN(v) && c === found.caller;
      if (c < 0 || sites[c]?.fn === fn || !(Number.isFinite(v) || nan)) return;
      const [n, f] = built.get(c) ?? [0, 0];
      built.set(c, [n + 1, f + (foreign(v) || nan ? 1 : 0)]);
    });
  });
  const wrong = [...built].filter(([, [, f]]) => f > 0).map(([c]) => c);
  return wrong.length === 1 && wrong[0] === found.caller && [...built].some(([c, [n, f]]) => c !== found.caller && n > 0 && f === 0);
}

/**
 * Whether a helper builds wrong numbers on its own: the next call of it also builds a foreign
 * number, and nothing outside it built one in between but the first call's own result (so the
 * second call's wrong numbers are not made of the first's: `project(X, W_Q)`, `project(X, W_K)`
 * with a projection that reads W transposed).
 */
function wrongInEveryCall(found, fn, sites, recording, foreign) {
  const events = [];
  recording.sites.forEach((site, id) => site.values.forEach((v, k) => { if (site.moments[k] > found.moment && foreign(v)) events.push({ id, moment: site.moments[k], caller: site.callers[k] }); }));
  events.sort((a, b) => a.moment - b.moment);
  for (const e of events) {
    const inside = sites[e.id].fn === fn;
    if (inside && e.caller >= 0) e.caller = liftedCallback({ site: e.id, moment: e.moment, caller: e.caller }, fn, sites, recording).caller; // (a callback's: its helper's call)
    // the next call, wrong too (from another call site, or from the same one after the first call returned)
    const returned = recording.sites[found.caller]?.moments.some((m) => m > found.moment && m < e.moment);
    if (inside && e.caller >= 0 && (e.caller !== found.caller || returned)) return true;
    if (!inside && e.id !== found.caller) return false; // something built on the wrong result first
  }
  return false;
}

/** The innermost call of the learner's own function a traced input threw under (its site), or null. */
export function thrownUnder(traced) {
  const open = traced?.results?.find((r) => r.error && r.recording?.open?.length)?.recording.open;
  return open ? traced.sites[open[open.length - 1]] ?? null : null;
}

/**
 * Whether `name` is read by another site passed to the same parameter of the learner's function as
 * site `id` is, whose numbers are all the reference's (`put(t, a, at(t, a) * cos - at(t, b) * sin)`
 * beside `put(t, b, at(t, b) * sin + at(t, a) * cos)`): the integers both read are right, and the fault
 * is in what `id` makes of them. `foreign`: foreign.js's foreignTest of the reference.
 */
export function passedRightBeside(id, name, sites, recording, foreign) {
  const right = (j) => recording.sites[j].values.length > 0 && !recording.sites[j].values.some((v) => Number.isInteger(v) || foreign(v));
  return sites.some((s, j) => j !== id && sameParameter(s, sites[id]) && Boolean(s.uses?.includes(name)) && right(j));
}

/** Whether two sites are arguments passed to the same parameter of the same function of the learner's (`put(t, a, …)`, `put(t, b, …)`). */
export const sameParameter = (a, b) => Boolean(a?.callee) && a.callee === b?.callee && String(a.binds) === String(b.binds);
