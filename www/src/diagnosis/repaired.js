// The line one small edit repairs, given to a finding (issue 28): which of the lines repair.js found
// (the worker's answer to { repair }) the headline takes, and its check, on the page's side: the
// repaired code run traced (the worker's answer to { trace, code }) and aligned as the learner's was.
import { REPAIR_TIME_LIMIT_MS } from '../cases.js';
import { alignAnswer, withLine } from './first-line.js';
import { STEPS } from './steps.js';

/**
 * The line one small edit repairs (repair.js: `repair`, the worker's answer), where it differs from
 * the finding's: one line repaired is that line; several, none when the finding's own is one of them,
 * else the first. { line, source } (`source`: the learner's file with that line's first repair, to run
 * traced and confirm it), or null when the finding's line stands.
 */
export function repairPick(found, repair, source = '') {
  const lines = repair?.lines ?? [];
  if (!found || !lines.length) return null;
  // (a finding with no line takes the repaired one; a line only a statement moved across lines repairs
  // gives way to the lines an edit of their own repairs: `queue.push(p)` swapped with the `if (… >= limit)
  // queue.shift()` after it, against `>=` made `>` on that line)
  const alone = (p, l) => p.lines.every((m) => m === l);
  const own = lines.filter((l) => repair.passed.some((p) => alone(p, l)));
  const among = own.length && !own.includes(found.line) ? own : lines;
  const line = among.length === 1 ? among[0] : among.includes(found.line) ? found.line : among[0];
  const edit = (among === own ? repair.passed.find((p) => alone(p, line)) : null) ?? repair.passed.find((p) => p.lines.includes(line));
  if (line === found.line || !edit) return null;
  return { line, source: source.slice(0, edit.start) + edit.to + source.slice(edit.end), stored: edit.stored === true };
}

/**
 * The finding at the repaired line, when the repaired code, run traced on the same inputs, builds
 * every step right (`check`: { data, traced, original, lab, functionName }: `traced`, the run of
 * `pick.source`; `original`, the learner's):
 * an edit that only makes up at the output for a wrong step before it (a wrong frequency divided out
 * where the angle is made) is no repair of the line at fault, and the finding stands.
 */
export function withRepair(found, pick, source = '', check = null) {
  if (!pick) return found;
  let before = null;
  if (check?.data?.probes?.length) {
    let aligned = null;
    try {
      aligned = alignAnswer(check.data, check.traced, check.lab, check.functionName);
    } catch {
      return found;
    }
    if (!aligned || aligned.wrong || aligned.crashed) return found;
    // (and every step the learner's run left missing is built in the repaired one: a wrong step the
    // rest no longer reads, `p / inverse[i]` for a wrong `inverse`, is still the line at fault)
    try {
      before = check.original ? alignAnswer(check.data, check.original, check.lab, check.functionName) : null;
    } catch {
      before = null;
    }
    // (a step no entry of which either run built any number of, nor a part, is one the answer never
    // makes, an online softmax's weights: it says nothing of the edit, unless the repaired run still
    // leaves the reference first at the finding's line, a wrong `inverse` the edit divides out later)
    const unbuilt = (st) => st.entries.every((e) => e.status === 'missing' && !e.coverage && !e.partial);
    const never = new Set(aligned.anywhere?.line === found.line ? [] : (before?.statuses ?? []).filter(unbuilt).map((st) => st.step));
    const missing = (statuses) => new Set((statuses ?? []).filter((st) => st.status === 'missing' && !(never.has(st.step) && unbuilt(st))).map((st) => st.step));
    const still = missing(aligned.statuses);
    if ([...missing(before?.statuses)].some((step) => still.has(step))) return found;
    // (nor an edit that leaves the wrong value where the learner's run built it and makes up for it at
    // the line it edits, `s / d` after a scale by √d instead of 1/√d: the learner's run put its wrong
    // step at a value declared on the finding's line, the repaired run builds that step at the edited
    // line, and the finding's line still makes the same numbers)
    const wrong = before?.wrong;
    // (nor one elsewhere, where the finding's line only renames a value, `const weights = exps`: the step
    // left out there, which no one-token edit writes back)
    if (wrong?.site?.plain && wrong.site.declares && wrong.site.line === found.line) return found;
    const made = wrong?.site?.declares && wrong.site.line === found.line;
    if (made && aligned.siteFor(wrong.step)?.line === pick.line && sameAt(found.line, check.original, check.traced)) return found;
  }
  return withLine(storedStep(found, pick, before) ?? { ...found, title: found.title.replace(/^Line \d+: /, '') }, { line: pick.line }, source);
}

/**
 * When the edit that repairs changes what a call stores or a variable is assigned (`keys.push(token.q)`), and
 * the last step before the finding's (a step of values: a layout is what is stored) that is not right, in the learner's
 * traced run (`before`), is a layout no array showed
 * (a cache kept where the recording cannot see it): the finding told as that step's. Else null.
 */
function storedStep(found, pick, before) {
  const k = before?.statuses?.findIndex((st) => st.step === found.step && !st.entries.some((e) => e.layout)) ?? -1;
  // (the nearest step before it that is not right: the steps right between are built on other inputs, Q's slice)
  const layout = pick.stored && k > 0 ? before.statuses.slice(0, k).findLast((st) => st.status !== 'ok') : null;
  if (!layout || layout.status !== 'unknown' || !layout.entries.every((e) => e.layout && e.status === 'unknown')) return null;
  const label = STEPS[layout.step]?.label ?? layout.step;
  return {
    ...found,
    step: layout.step,
    stepLabel: label,
    title: 'your code stores the wrong values here',
    detail: `No value your code builds shows this step directly, but what is built on it (${found.stepLabel ?? found.step}) is wrong, and one edit of what this line stores makes every step right.`,
    foundBy: 'running your code on a traced input, and one edit of each line in turn until every case passes',
    expected: null,
    actual: null,
  };
}

/**
 * Whether every number the sites of `line` built, on the first traced input, is the same in two runs
 * (`a`, `b`: the worker's traced answers; a site matched by its column and name), and some of them
 * are values (not integers: a size or an index read there says nothing of a value left wrong).
 */
function sameAt(line, a, b) {
  const values = (run) => {
    const recording = run?.results?.find((r) => r.recording)?.recording;
    const out = new Map();
    (run?.sites ?? []).forEach((site, id) => {
      if (site.line === line && recording?.sites[id]?.values.length) out.set(`${site.column}:${site.name}`, recording.sites[id].values);
    });
    return out;
  };
  const [x, y] = [values(a), values(b)];
  return [...x.values()].some((v) => v.some((n) => Number.isFinite(n) && !Number.isInteger(n))) && x.size === y.size && [...x].every(([key, v]) => y.get(key)?.length === v.length && y.get(key).every((n, k) => Object.is(n, v[k])));
}

/**
 * The judged cases as the repairs run them: the challenge's fixed and error cases (not the random
 * ones, drawn anew each run: the same answer gets the same line on every run, on the page and in the
 * terminal), the failing ones first (most edits fail them at once).
 */
export function repairCases(judged) {
  const plainCase = ({ id, kind, args, expected, tolerance, throws }) => ({ id, kind, args, expected, tolerance, throws });
  return [...judged.filter((c) => !c.verdict.pass), ...judged.filter((c) => c.verdict.pass)].filter((c) => c.kind === 'fixed' || c.kind === 'error').map(plainCase);
}

/**
 * The page's and the terminal's last step of the diagnosis: `found` (firstLine's finding) given the
 * line one edit repairs, asked of the worker that runs the learner's code: `send({ repair }, limitMs)`, then
 * `send({ trace, code })` for the check. `original`: the learner's traced run; `trace`: its calls.
 * A timeout or an unreadable answer leaves the finding as it was.
 */
export async function repairFinding(found, { send, judged, source, data, trace, original, lab, functionName }) {
  if (!found) return found;
  const repair = await send({ repair: { cases: repairCases(judged), near: found.line ? [found.line] : [] } }, REPAIR_TIME_LIMIT_MS);
  const pick = repair.type === 'done' ? repairPick(found, repair.repair, source) : null;
  if (!pick) return readOrStored(found, repair.repair, source);
  const checked = await send({ trace, code: pick.source });
  if (checked.type !== 'done') return readOrStored(found, repair.repair, source);
  return readOrStored(withRepair(found, pick, source, { data, traced: checked.traced, original, lab, functionName }), repair.repair, source);
}

/**
 * A finding that reads the same from outside as a weighted sum's mistake (`readInstead`: the cache's
 * values are rows of K, or the weighted sum reads K where the cache's values are), by the edits that
 * repair (stores.js's `stored`): one that changes what a call stores or a variable is assigned
 * (`values.push(K[t])`, `keys = [K[t]]`) keeps the finding, at its line (the finding's, when one is there); else one at the finding's line
 * that changes what an expression reads (`keys[j]` for `values[j]`, `values[t]` for `values[j]`, an
 * operand of arithmetic) gives it to the weighted sum. As it was when no edit repairs.
 */
export function readOrStored(found, repair, source) {
  const { readInstead: sum, ...rest } = found ?? {};
  if (!sum) return found;
  const passed = repair?.passed ?? [];
  const store = passed.find((p) => p.stored === true && p.lines.includes(rest.line)) ?? passed.find((p) => p.stored === true);
  const untitled = (f) => ({ ...f, title: f.title.replace(/^Line \d+: /, '') });
  if (store) return store.lines.includes(rest.line) ? rest : withLine(untitled(rest), { line: store.lines[0] }, source);
  const read = rest.line ? passed.find((p) => p.lines.includes(rest.line) && p.stored === false) : null;
  return read ? withLine(sum, { line: rest.line, column: rest.column, name: rest.name }, source) : rest;
}
