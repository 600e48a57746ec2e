// The bounds on the repairs' variants (repair.js), counted in work, not time: every loop turn and call
// of a variant ticks, and a variant stops past its share of ticks (or, on a very slow machine, of
// milliseconds); each is judged on the challenge's cases as the worker judges the learner's answer.
// And the order the two rounds of variants are tried in (`roundsOf`).

// (MAX_MS, 4 s in all, guards; the bounds of work end a search on a quiet machine well before it)
export const REPAIR_LIMITS = { MAX_MUTANTS: 3000, TOTAL_TICKS: 4_000_000, MIN_TICKS: 2_000, MAX_TICKS: 200_000, MAX_MS: 4000, SAFETY_MUTANT_MS: 100, MIN_MUTANT_MS: 5, RETRY_MUTANT_MS: 25, MAX_RETRIES: 16 };

/** Whether `fn` passes the judged case `c` (a throw judged as the worker reports it). */
export function passes(fn, c, judge) {
  let result;
  try {
    result = { output: fn(...structuredClone(c.args)) };
  } catch (error) {
    result = { error: { name: error?.name, message: String(error?.message ?? error) } };
  }
  try {
    return judge(c, result).pass;
  } catch {
    return false;
  }
}

/**
 * The bounds on one variant's run. `tick`, which the guards call at every loop turn and call, throws
 * past `limit` turns or `ms` milliseconds since `start()`; `all(fn, list, ms)` judges fn on the cases
 * (all of them by default) within `ms`, adding its turns to `total`; `clocked`: whether the clock,
 * not the turns, stopped the last run.
 */
export function meter(cases, judge) {
  const run = { ticks: 0, total: 0, limit: REPAIR_LIMITS.MAX_TICKS, ms: REPAIR_LIMITS.SAFETY_MUTANT_MS, started: Date.now(), clocked: false };
  run.start = () => Object.assign(run, { ticks: 0, clocked: false, started: Date.now() });
  run.tick = () => {
    // (the clock read at every tick: a variant that made an index huge does much native work per tick,
    // `row.slice()` of an array grown to `base` = 10000 entries, and a few ticks can take seconds)
    if (++run.ticks > run.limit) throw new RangeError('repair: too many loop turns');
    run.clocked = Date.now() - run.started > run.ms;
    if (run.clocked) throw new RangeError('repair: too long');
  };
  run.all = (fn, list = cases, ms = run.ms) => {
    const kept = run.ms;
    run.start();
    run.ms = ms;
    const ok = list.every((c) => passes(fn, c, judge));
    [run.total, run.ms] = [run.total + run.ticks, kept];
    return ok;
  };
  return run;
}

// (how much farther a second-round edit ranks than it is, in repair.js's `nearness` units: 3 lines)
const SECOND_ROUND = 12;

/**
 * The mutants tried in rounds, into `passed` (`tryAll(list)`: false once the bounds cut the search):
 * whether every one was tried (`bound`: the bound on variants; `mutants`: the first round's edits,
 * `second`: the second round's, none of the first's). The second round's edits, a term, a property, a
 * helper, an infinity, count only when no edit of the first repairs it; but they are not all tried after the first's:
 * where the first round alone leaves the second less than a third of the bound, each ranks as if it were
 * `SECOND_ROUND` farther than it is (3 lines), so that the bound does not leave a near term untried (`h`
 * for `h * d`, fresh12's 04.js: 3,076 first-round variants; `l` for `l * shrink`, fresh19's 09.js: 2,500 of
 * 3,000); and at most a third of the bound goes to
 * them before the first round is done, so that they do not crowd out a far first-round edit.
 */
export function roundsOf(second, mutants, distance, passed, tryAll, bound = REPAIR_LIMITS.MAX_MUTANTS) {
  // (only where the first round alone leaves the second less than a third of the bound on variants: else it is
  // tried whole first, as its edits may be slow, fresh11/07's a millisecond each, and the time guard would then stop it short)
  const mixed = mutants.length > (bound * 2) / 3;
  const ranked = [...mutants.map((m) => ({ m, rank: distance(m.line), round: 1 })), ...second.map((m) => ({ m, rank: distance(m.line) + (mixed ? SECOND_ROUND : 1e9), round: 2 }))];
  ranked.sort((a, b) => a.rank - b.rank || a.round - b.round || a.m.start - b.m.start);
  const fromSecond = new Set();
  let firstFound = false;
  // (a third of the bound at most goes to the second round before the first is done: the rest wait)
  const waiting = [];
  let early = 0;
  const one = ({ m, round }) => {
    const before = passed.length;
    if (!tryAll([m])) return false;
    if (passed.length > before && round === 1) firstFound = true;
    if (passed.length > before && round === 2) fromSecond.add(passed[before]);
    return true;
  };
  let complete = true;
  for (const entry of ranked) {
    // (once the first round has repaired it, the second's edits count no more)
    if (entry.round === 2 && firstFound) continue;
    if (entry.round === 2 && mixed && early >= bound / 3) {
      waiting.push(entry);
      continue;
    }
    if (entry.round === 2 && mixed) early++;
    if (!one(entry)) {
      complete = false;
      break;
    }
  }
  for (const entry of complete ? waiting : []) {
    if (firstFound) break;
    if (!one(entry)) {
      complete = false;
      break;
    }
  }
  // (a first-round edit found far away outranks the second round's near ones, as when each round is tried whole)
  if (firstFound) for (let k = passed.length - 1; k >= 0; k--) if (fromSecond.has(passed[k])) passed.splice(k, 1);
  return complete;
}
