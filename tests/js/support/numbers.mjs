// Float comparisons for the JS tests: an explicit absolute tolerance, entry by entry.
import assert from 'node:assert/strict';

/** Every entry of `actual` (any nesting) within `tolerance` of the same entry of `expected`. */
export function assertClose(actual, expected, tolerance, what = 'value') {
  const a = actual.flat(Infinity);
  const e = expected.flat(Infinity);
  assert.equal(a.length, e.length, `${what}: ${a.length} entries, expected ${e.length}`);
  a.forEach((x, i) => assert.ok(Math.abs(x - e[i]) <= tolerance, `${what}[${i}] is ${x}, expected ${e[i]} ± ${tolerance}`));
}
