// The bounds on the repairs' variants (repair.js), counted in work, not time: every loop turn and call
// of a variant ticks, and a variant stops past its share of ticks (or, on a very slow machine, of
// milliseconds); each is judged on the challenge's cases as the worker judges the learner's answer.

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
