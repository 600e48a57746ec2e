// The first wrong line (issue 28) on the corpus of tests/corpus-lines/: right answers in styles the
// older corpus lacks are never called wrong, and every slip of them gets a headline naming the step
// at fault and the line of the slip (data-line on the page, diagnosis.line in the terminal).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { base, slips } from '../corpus-lines/slips.mjs';
import * as fresh from '../corpus-lines/fresh/slips.mjs';
import * as fresh2 from '../corpus-lines/fresh2/slips.mjs';
import * as fresh3 from '../corpus-lines/fresh3/slips.mjs';
import * as fresh4 from '../corpus-lines/fresh4/slips.mjs';
import * as fresh5 from '../corpus-lines/fresh5/slips.mjs';
import * as fresh6 from '../corpus-lines/fresh6/slips.mjs';
import * as fresh7 from '../corpus-lines/fresh7/slips.mjs';
import * as fresh8 from '../corpus-lines/fresh8/slips.mjs';
import * as fresh9 from '../corpus-lines/fresh9/slips.mjs';
import * as fresh10 from '../corpus-lines/fresh10/slips.mjs';
import * as fresh11 from '../corpus-lines/fresh11/slips.mjs';
import * as fresh12 from '../corpus-lines/fresh12/slips.mjs';
import * as fresh13 from '../corpus-lines/fresh13/slips.mjs';
import * as fresh14 from '../corpus-lines/fresh14/slips.mjs';
import * as fresh15 from '../corpus-lines/fresh15/slips.mjs';
import * as fresh16 from '../corpus-lines/fresh16/slips.mjs';
import * as fresh17 from '../corpus-lines/fresh17/slips.mjs';
import * as fresh18 from '../corpus-lines/fresh18/slips.mjs';
import * as fresh19 from '../corpus-lines/fresh19/slips.mjs';
import * as fresh20 from '../corpus-lines/fresh20/slips.mjs';
import * as fresh21 from '../corpus-lines/fresh21/slips.mjs';
import { challengeData, diagnose, loadFunction, traced } from './support/diagnose.mjs';
import { thrownUnder } from '../../www/src/diagnosis/calls.js';
import { RECORD, createRecorder, instrument, ownError, runTraced } from '../../www/src/diagnosis/instrument.js';
import { toScript } from '../../www/src/script.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const lab = createRequire(import.meta.url)(join(ROOT, 'target/pkg-node/attention_lab.js'));
const FOLDERS = Object.fromEntries(readdirSync(join(ROOT, 'challenges')).filter((f) => /^\d\d-/.test(f)).map((f) => [f.slice(0, 2), f]));

for (const number of ['01', '02', '03', '04', '05', '06', '07', '08', '09']) {
  test(`corpus-lines ${number}.js: a right answer in another style passes and gets no diagnosis`, async () => {
    const { failing, found } = await diagnose(FOLDERS[number], base(number), lab);
    assert.deepEqual(failing, []);
    assert.equal(found, null);
  });
}

// The slips the diagnosis still misses (number/index): each is marked TODO with what it said; every
// other slip must get the step at fault and the line of the slip exactly, and a slip listed here
// that passes fails (take it off the list). The count is the measure of issue 28.
const MISSES = new Set([]);

/**
 * One slip of a corpus: a headline with a step and a line; the step and line exactly, unless it is a
 * known miss. `varies`: slips whose repairs the time guard stops before the bounds of work
 * (repair.js), so that their line depends on the machine's speed: a step and a line, right or TODO
 * (a listed miss, as elsewhere, may lack them).
 */
function checkSlip(t, slip, found, failing, misses, varies = new Set(), timed = false) {
  assert.ok(failing.length, 'the slip fails a case');
  assert.ok(found, 'a finding');
  const right = found.step === slip.step && found.line === slip.line;
  // (a slip whose repairs the time guard stopped, here or always: the line found depends on the machine's speed)
  if (varies.has(`${slip.number}/${slip.index}`) || timed) {
    if (!misses.has(`${slip.number}/${slip.index}`)) assert.ok(found.step && Number.isInteger(found.line), `a step and a line: ${found.title}`);
    if (found.line) assert.match(found.title, new RegExp(`^Line ${found.line}: `));
    return right ? undefined : t.todo(`(its repairs stopped by time) said ${found.step} at line ${found.line}: ${found.title}`);
  }
  // (a listed miss may lack a step or a line: the TODO says so; any other slip has both, and they are its own)
  if (!misses.has(`${slip.number}/${slip.index}`)) {
    assert.ok(found.step, `a step: ${found.title}`);
    assert.ok(Number.isInteger(found.line) && found.line >= 1 && found.line <= slip.source.split('\n').length, `a line: ${found.title}`);
    assert.match(found.title, new RegExp(`^Line ${found.line}: `));
    return assert.ok(right, `said ${found.step} at line ${found.line}: ${found.title}`);
  }
  if (found.line) assert.match(found.title, new RegExp(`^Line ${found.line}: `));
  assert.ok(!right, 'a known miss now passes: take it off the list');
  t.todo(`said ${found.step} at line ${found.line}: ${found.title}`);
}

for (const slip of slips()) {
  test(`corpus-lines ${slip.number} slip ${slip.index}: ${slip.step} at line ${slip.line}`, async (t) => {
    const { failing, found } = await diagnose(FOLDERS[slip.number], slip.source, lab);
    checkSlip(t, slip, found, failing, MISSES);
  });
}

// The held-out batch (tests/corpus-lines/fresh/: written before the diagnosis was run on it): its
// right answers get no diagnosis; its slips, as above, with their own list of misses. First run:
// step right 38/43, line right 19/43.
const FRESH_MISSES = new Set([
  '02/0', // `const start = h`: its values are the heads' indices, which a right answer may hold, so it is not blamed; named inside the helper that reads it
  '05/1', // the keys put first (`unshift`): every score is built, only paired with the wrong values; the weighted sum is named
  '07/1', // `angle(r, i)`: on the traced input the wrong angles are whole numbers or other rows' right ones; the first foreign number is in rotate
  '08/5', // `const w = window` (undefined): undefined is not recorded; named where the masked scores are read
]);

// The second held-out batch (tests/corpus-lines/fresh2/: written after the fixes the first led to,
// before the diagnosis was run on it). First run: step right 11/12, line right 8/12.
const FRESH2_MISSES = new Set([
  '06/0', // `Math.floor(h / ratio)` without `* d`: the K/V head's columns read by index are found at their wrong place (kv-head), named where the scores read them, not where the offset was computed
]);

// The third held-out batch (tests/corpus-lines/fresh3/: written after the fixes the second led to,
// before the diagnosis was run on it; right answers 01–09 in styles none of the others has). First
// run: step right 29/39, line right 18/39.
const FRESH3_MISSES = new Set([
  '04/1', // `[W_Q, W_V, W_K]`: found as K's columns taken from V (project-K), named where the scores were built from them, not at the swap
  '05/0', // `keys.set(K[t], t)`: the cache is a flat buffer read only by index, never whole, so no array holds it moved; named at the scores
  '05/1', // `n++` left out: the line at fault is gone; named where the cache is made
  '08/3', // `new Float64Array(w)`: the extra cells are never written (0), so the keys scored are right; the first foreign number is the softmax's total
]);

// The fourth held-out batch (tests/corpus-lines/fresh4/: written after the fixes the third led to,
// committed before the diagnosis was run on it; right answers 01–09 in styles none of the others has).
// First run: step right 34/36, line right 20/36; after the incomplete cut (cuts.js, fresh9's session): 36/36, 32/36.
const FRESH4_MISSES = new Set([
  '01/2', // the `j = 0` before the normalize pass left out: the line at fault is gone and the pass never runs; named where the unnormalized weights are read
  '03/2', // `w[j] / w.length` in the normalize helper: on the traced input row 0's wrong weight is 1/4, a number the reference holds; the first foreign number is that row's weighted sum
  '05/0', // `state.cache = [{ … }]`: the cache is an array of objects, which holds no numbers; named where the scores read it
]);

// The fifth held-out batch (tests/corpus-lines/fresh5/: written after the fixes the fourth led to,
// before the diagnosis was run on it; right answers 01–09 in styles none of the others has). First
// run: step right 40/43, line right 27/43; after the rules it led to: 42/43, 37/43; after fresh7's: 42/43, 39/43;
// after the incomplete cut (cuts.js): 42/43, 40/43.
const FRESH5_MISSES = new Set([
  '05/0', // `keys.set(K[t], 0)`: the cache is a flat buffer read only by index; the keys scored are found wrong where the scores read it (bounds.js), not at the write
  '07/2', // the pairs read as (2i, 2i + 1), a two-line slip: named at its second line (b's read), whose columns are of no one role
]);

// The sixth held-out batch (tests/corpus-lines/fresh6/: written after the fixes the fifth led to,
// committed before the diagnosis was run on it; right answers 01–09 in styles none of the others has).
// First run: step right 38/43, line right 29/43; after the rules it led to: 42/43, 43/43.
const FRESH6_MISSES = new Set([
  '07/4', // `return [...second, ...first]`: every rotated number is built (matched by value), only their places are wrong, which no step of the traced run reads; the probes name the rotation, at the right line
]);

// The seventh held-out batch (tests/corpus-lines/fresh7/: written after the fixes the sixth led to,
// committed before the diagnosis was run on it; right answers 01–09 in styles none of the others has).
// First run: step right 38/43, line right 26/43; after the rules it led to: 39/43, 40/43; after fresh8's: 39/43, 41/43;
// after fresh14's own-site rule (first-line.js firstLine `own`): 40/43, 43/43 (07/1, `2 * (i + 1)`, now named at the frequency).
const FRESH7_MISSES = new Set([
  '02/0', // the memo answers undefined for every head after the first (`seen.size`): a TypeError where the scores read it; named at the throw, as the step being built
  '06/1', // `e[i]` for `e[j]`: every weight read is a right softmax number at the wrong place, so the softmax is found partly built; the line is right
  '08/4', // `[x, j]` destructured the wrong way round: V read at an exp's index throws on the probes; named as the mask, at the right line
]);

// The eighth held-out batch (tests/corpus-lines/fresh8/: written after the fixes the seventh led to,
// committed before the diagnosis was run on it; right answers 01–09 in styles none of the others has;
// each slip in half A or B, fixed before the run: rules fitted on A's misses only, B measures them).
// First run: step right 48/52, line right 34/52 (half A 23/26, 18/26; half B 25/26, 16/26); after three
// rules fitted on half A's misses: 48/52, 38/52 (half A 23/26, 22/26; half B unchanged, 25/26, 16/26); then,
// fitted on half B's misses (reported apart): 48/52, 39/52 (half B 25/26, 17/26); after the incomplete cut
// (cuts.js: a principled change, not fitted to one slip: a cut that holds some heads' columns and never another's):
// 48/52, 41/52.
const FRESH8_MISSES = new Set([
  '01/4', // (A) the groups keyed by `e.j` (columns, not rows): every exp is made right for its wrong group, so the softmax is named where the exps are made, not at the key
  '03/1', // (B) `const root = Q[0].length` without the root: the size is right, so the line that divides by it is named (a root left out there reads the same)
  '04/5', // (B) W_O left out (`return joined`): not examined in time
  '05/3', // (B) the running sum not rescaled (`l = l + p`): named at the output's update, the next line
  '05/4', // (A) `v[c]` for `v[lo + c]`: every head blends head 0's value columns, which the probes read as a slice (defensibly); the line is right
  '06/5', // (B) the head's blend written at its K/V head's columns: read as a weighted sum in the wrong place; the line is right
  '09/0', // (A) masked scores 0 for −Infinity: a whole number no step calls foreign; the first foreign number is the softmax's
  '09/2', // (A) the total of the masked logits is −Infinity, so the masked weights are −0 and the rest 0: read as a mask gone wrong, at the causal branch
]);

// The ninth held-out batch (tests/corpus-lines/fresh9/: written blind, committed before the diagnosis ran
// on it). First run (main with cuts.js): step right 58/68, line right 35/68 (the same on main before this
// session: cuts.js changed none). Then the repairs (repair.js), whose operators were widened after reading
// this batch's misses (so no longer a held-out measure): 58/68, 56/68.
const FRESH9_MISSES = new Set([
  '01/4', // (A) scores at line 6: said scale at line 6
  '02/0', // (A) slice at line 27: said slice at line 29
  '02/7', // (B) slice at line 16: said scores at line 16
  '04/1', // (B) project-Q at line 5: said project-Q at line 18
  '05/0', // (A) cache at line 26: said scores at line 32
  '05/1', // (B) slice at line 9: said slice at line 4
  '05/4', // (A) softmax at line 38: said cache at line 38
  '05/6', // (A) cache at line 3: said slice at line 4
  '06/2', // (A) slice at line 45: said kv-head at line 45
  '06/7', // (B) concat at line 46: said concat at line 20
  '07/0', // (A) rotation at line 3: said rotation at line 26
  '07/4', // (A) rotation at line 2: said rotation at line 26
  '07/6', // (A) frequency at line 26: said rotation at line 26
  '08/3', // (B) scale at line 17: said scale at line 20
  '09/3', // (B) w-o at line 31: said w-o at line 32
]);

// The tenth held-out batch (tests/corpus-lines/fresh10/: written blind, committed before the diagnosis ran
// on it). First run, with the repairs: step right 68/78, line right 59/78; main before this session
// (48c5e85) on the same batch: 68/78, 41/78. After fresh21's round (Intel Xeon): 70/78, 68/78.
const FRESH10_MISSES = new Set([
  '02/0', // (A) slice at line 33: said null at line 10
  '02/6', // (A) slice at line 58: said weighted-sum at line 58
  '03/2', // (A) softmax at line 22: said mask at line 22
  '04/4', // (A) weighted-sum at line 49: said project-V at line 49
  '04/5', // (B) concat at line 55: said concat at line 50
  '05/0', // (A) cache at line 13: said scores at line 22
  '06/2', // (A) slice at line 51: said kv-head at line 51
  '06/3', // (B) scale at line 28: said scale at line 29
  '06/4', // (A) softmax at line 35: said softmax at line 40
  '06/6', // (A) concat at line 54: said null at line undefined
  '07/4', // (A) pairs at line 22: said pairs at line 28
  '07/5', // (B) rotation at line 31: said rotation at line 28
  '07/6', // (A) frequency at line 25: said frequency at line 24
  '09/2', // (A) concat at line 42: said w-o at line 48
]);

// fresh11 (81 slips, written blind, tests/corpus-lines/fresh11/): measured once after the second round of
// repairs was in; first complete run step right 70/81, line right 61/81. Its RoPE answer (07) copies a row for
// every pair, so its repairs were stopped by the 1.5 s guard (about 950 of 1,050 variants tried, AMD EPYC); the
// 4 s guard since 2026-11-28 still stops some of them on a busy machine (07/4: 2,652 variants in 4.6 s at load 4, AMD EPYC):
// those slips' lines depend on the machine's speed and are checked for a step and a line only.
const FRESH11_VARIES = new Set(['07/0', '07/1', '07/2', '07/3', '07/4', '07/5', '07/6', '07/7', '07/8']);
const FRESH11_MISSES = new Set([
  '02/7', // (B) scale at line 32: said scale at line 13
  '04/5', // (B) concat at line 37: said w-o at line undefined
  '06/6', // (A) concat at line 33: said concat at line 31
  '09/1', // (B) slice at line 2: said null at line 5
]);

// fresh12 (80 slips, written blind, tests/corpus-lines/fresh12/): measured once, first sight, on main after this
// session's repairs (74 and 62); then half A's misses read and the repairs widened (an array's elements out of
// order), with the step fixes merged: 75 and 64; the next session's (the second round ranked among the first,
// a step done twice or too late: twice.js): 77 and 66; after fresh18's round (a loop's unread total), 77 and 67;
// after fresh19's (a projection left out where the calls beside it make theirs, 04/1 of half B), 77 and 68. The misses left:
const FRESH12_MISSES = new Set([
  '04/6', // (A) w-o at line 61: said w-o at line 62
  '05/1', // (B) scores at line 34: said slice at line 34
  '05/2', // (A) scale at line 35: said scale at line 39
  '05/5', // (B) cache at line 57: said cache at line 58
  '06/2', // (A) scale at line 19: said null at line 19
  '06/6', // (A) concat at line 41: said concat at line 38
  '07/1', // (B) position at line 28: said position at line 36
  '07/4', // (A) pairs at line 31: said pairs at line 37
  '07/5', // (B) frequency at line 20: said pairs at line 20
  '08/1', // (B) scale at line 53: said scale at line 13
  '08/3', // (B) scores at line 50: said scores at line 10
  '08/6', // (A) mask at line 54: said mask at line 4
  '08/8', // (A) weighted-sum at line 9: said weighted-sum at line 19
  '09/1', // (B) slice at line 10: said slice at line 21
]);

// fresh13 (80 slips, written blind this session, tests/corpus-lines/fresh13/): measured once, first sight,
// on main before this session's changes (73 steps and 67 lines right) and with them (73 and 67); then half A's
// misses read and two rules fitted on them (a helper's row index passed on is no count; a value carried
// transposed, twice.js): 74 and 68. The misses left:
const FRESH13_MISSES = new Set([
  '01/6', // (A) scores at line 36: said scores at line 41
  '01/7', // (B) weighted-sum at line 56: said softmax at line 56
  '01/8', // (A) softmax at line 53: said softmax at line 56
  '02/7', // (B) scale at line 94: said scale at line 22
  '02/8', // (A) slice at line 13: said concat at line 73
  '05/1', // (B) scores at line 13: said slice at line 13
  '05/7', // (B) cache at line 5: said cache at line 13
  '06/0', // (A) kv-head at line 23: said slice at line 34
  '06/7', // (B) kv-head at line 21: said kv-head at line 27
  '06/8', // (A) concat at line 41: said weighted-sum at line 41
  '07/7', // (B) pairs at line 6: said pairs at line 38
  '08/7', // (B) scale at line 32: said scale at line 8
  '09/1', // (B) slice at line 27: said slice at line 32
  '09/7', // (B) softmax at line 34: said softmax at line 55
]);

// fresh14 (83 slips, written blind by a helper this session, tests/corpus-lines/fresh14/, committed before any
// run): measured once, first sight, on main at b8f018b (AMD EPYC): 68 steps and 56 lines right (half A 38/31 of 44, half B
// 30/25 of 39). Then half A's misses read, and one rule fitted on challenge 05's (a cache of whole input rows,
// `keys.push(K[t])`, is no head's slice moved: align.js everyRowKnown): 71 and 60 (half A 40/34, half B 31/26);
// then the repairs' slice given control dependences (the `if (!causal)` that decides a mask's write is as near
// as the write: repair.js sliceDepths), fitted on its 03/6 of half A: 71 and 61; then a probe finding no longer
// contradicted when the expression that built its step right (some numbers by chance) is the very one the traced
// run left the reference at (first-line.js firstLine `own`), fitted on 07/0 of half A (`2 * (i + 1)`): 72 and 61
// (half A 41/35, half B 31/26; fresh7's 07/1 fixed too). After fresh21's round: 74 and 62 (half B 33/26). The misses left:
const FRESH14_MISSES = new Set([
  '02/5', // (B) concat at line 95: said w-o at line 95
  '03/3', // (B) mask at line 44: said mask at line 54
  '03/4', // (A) softmax at line 55: said mask at line 55
  '03/7', // (B) softmax at line 57: said softmax at line 60
  '03/9', // (B) scale at line 41: said scale at line 37
  '04/1', // (B) slice at line 28: said slice at line 29
  '04/3', // (B) softmax at line 52: said softmax at line 45
  '04/6', // (A) concat at line 84: said concat at line 34
  '04/8', // (A) project-Q at line 69: said scale at line 23
  '04/9', // (B) scores at line 78: said project-K at line 11
  '05/1', // (B) cache at line 29: said weighted-sum at line 59
  '05/7', // (B) cache at line 24: said cache at line 38
  '06/3', // (B) softmax at line 27: said slice at line 27
  '06/6', // (A) concat at line 43: said concat at line 35
  '06/7', // (B) scores at line 65: said softmax at line 27
  '06/8', // (A) scale at line 68: said scale at line 25
  '07/1', // (B) position at line 45: said position at line 46
  '07/2', // (A) pairs at line 21: said pairs at line 24
  '07/5', // (B) frequency at line 43: said frequency at line 7
  '07/8', // (A) rotation at line 26: said rotation at line 24
  '08/2', // (A) scores at line 23: said softmax at line 24
  '08/3', // (B) mask at line 31: said mask at line 43
  '08/6', // (A) mask at line 14: said mask at line 43
  '08/7', // (B) softmax at line 43: said mask at line 43
  '09/5', // (B) softmax at line 78: said softmax at line 51
]);

// fresh15 (89 slips, written blind by a helper, tests/corpus-lines/fresh15/, committed before any run: c1865b2):
// first sight on main at 4ad37ad (AMD EPYC), before any rule was fitted on it: 80 steps and 58 lines right (half A
// 39/29 of 45, half B 41/29 of 44); after the rules fitted on half A (commits cf5326d, 722a7d0 with c3706f6, and b4d4f55: a mask's
// cut of the keys a map walks, an edit of a line's own over a statement moved, an online softmax's never-built
// weights no bar to a repair), 80 steps and 65 lines (half A 39/33, half B 41/32); after fresh16's readOrStored, 81 and 65
// (05/4 of half A); after fresh17's round, 81 and 66 (08/7 of half B). The misses:
const FRESH15_MISSES = new Set([
  '01/4', // (A) weighted-sum at line 28: said softmax at line 28
  '01/5', // (B) weighted-sum at line 28: said softmax at line 28
  '01/6', // (A) softmax at line 29: said softmax at line undefined
  '01/7', // (B) scale at line 13: said scale at line 22
  '01/8', // (A) softmax at line 31: said softmax at line 26
  '02/5', // (B) concat at line 23: said concat at line 9
  '02/6', // (A) w-o at line 25: said w-o at line 26
  '02/7', // (B) slice at line 19: said scores at line 7
  '03/4', // (A) softmax at line 20: said softmax at line 50
  '03/8', // (A) scale at line 18: said scale at line 68
  '04/0', // (A) project-Q at line 18: said softmax at line 15
  '04/9', // (B) project-K at line 15: said project-K at line 36
  '05/0', // (A) cache at line 25: said cache at line 26
  '05/7', // (B) cache at line 20: said cache at line 26
  '06/0', // (A) kv-head at line 24: said kv-head at line 38
  '06/7', // (B) concat at line 44: said concat at line 48
  '07/0', // (A) frequency at line 6: said rotation at line 6
  '07/1', // (B) position at line 7: said position at line 8
  '07/2', // (A) pairs at line 9: said rotation at line 34
  '07/3', // (B) rotation at line 34: said rotation at line 17
  '07/7', // (B) pairs at line 16: said pairs at line 34
  '07/8', // (A) rotation at line 11: said rotation at line 34
  '08/6', // (A) mask at line 18: said mask at line 17
  '08/8', // (A) weighted-sum at line 32: said softmax at line 32
  '09/1', // (B) slice at line 53: said slice at line 35
  '09/3', // (B) w-o at line 46: said w-o at line 35
  '09/7', // (B) concat at line 56: said w-o at line 56
  '09/8', // (A) mask at line 63: said mask at line 64
]);

// fresh16 (102 slips, written blind by a helper, tests/corpus-lines/fresh16/, committed before any run: 76f5c6e):
// first sight on main at cc0aa9d (Intel Xeon), before any rule was fitted on it: 93 steps and 76 lines right (half A
// 47/41 of 51, half B 46/35 of 51); after the rules fitted on its half A (repaired.js readOrStored, loops.js
// roundedArguments, heads.js shiftedColumns' A·Aᵀ), 95 and 79 (half A 49/44, half B 46/35; half B's 05/5 lost its
// line to readOrStored's first store until a store on the finding's own line came first); after the rules fitted on fresh17's
// half A and its own (repair.js: a statement moved past two others; align.js and calls.js: a write through the same
// parameter as a right one), 95 and 81 (half A 49/46, half B 46/35); after fresh18's round (a loop's unread total), 95 and
// 82 (half A 49/47); after fresh21's, 95 and 84 (half B 46/37). The misses:
const FRESH16_MISSES = new Set([
  '01/7', // (B) softmax at line 34: said softmax at line 40
  '02/0', // (A) slice at line 30: said slice at line 16
  '02/5', // (B) concat at line 76: said concat at line 16
  '02/11', // (B) concat at line 74: said w-o at line 88
  '03/8', // (A) weighted-sum at line 25: said scores at line 25
  '04/7', // (B) weighted-sum at line 38: said project-V at line 38
  '04/11', // (B) project-K at line 11: said project-K at line 22
  '05/9', // (B) cache at line 10: said cache at line 24
  '06/5', // (B) weighted-sum at line 38: said weighted-sum at line 25
  '06/9', // (B) softmax at line 34: said weighted-sum at line 31
  '06/11', // (B) kv-head at line 29: said slice at line 29
  '07/9', // (B) rotation at line 32: said rotation at line 28
  '07/11', // (B) position at line 31: said position at line 28
  '08/0', // (A) mask at line 18: said mask at line 10
  '08/2', // (A) mask at line 14: said mask at line 17
  '08/5', // (B) weighted-sum at line 32: said weighted-sum at line 33
  '08/6', // (A) mask at line 20: said softmax at line 10
  '08/7', // (B) mask at line 18: said mask at line 10
  '09/1', // (B) slice at line 23: said slice at line 19
  '09/5', // (B) concat at line 43: said weighted-sum at line 46
  '09/7', // (B) mask at line 28: said mask at line 31
]);

// fresh17 (107 slips, written blind by a helper, tests/corpus-lines/fresh17/, committed before any run: ebe3ada):
// first sight on main at 5f38619 (Intel Xeon), before any rule was fitted on it: 99 steps and 80 lines right (half A
// 49/42 of 54, half B 50/38 of 53); after the rules fitted on its half A and fresh16's (repair.js: an exp's maximum left
// out, a helper every other element of a list is made by; first-line.js chosenIndex: a number made before a name
// passed on), 99 and 83 (half A 49/45, half B 50/38); then (a counter started one off, the result's reached return, a
// step not confirmed by an expression that holds the first foreign number) 100 and 85 (half A 50/47, half B 50/38); after
// fresh18's round (a loop's unread total, an exp's maximum in the first round), 100 and 87 (half A 50/49); after
// fresh19's (a projection left out: `const Q = x`), 100 and 88 (half A 50/50); after fresh21's, 100 and 89 (half B 50/39). The misses:
const FRESH17_MISSES = new Set([
  '01/0', // (A) scores at line 55: said scores at line 20
  '01/1', // (B) scale at line 57: said scale at line 29
  '01/7', // (B) weighted-sum at line 59: said weighted-sum at line 60
  '02/8', // (A) slice at line 51: said w-o at line 51
  '02/11', // (B) scale at line 53: said scale at line 52
  '03/3', // (B) mask at line 35: said mask at line 54
  '03/7', // (B) softmax at line 58: said softmax at line 69
  '03/8', // (A) weighted-sum at line 66: said scores at line 66
  '04/3', // (B) slice at line 43: said slice at line 46
  '04/6', // (A) softmax at line 57: said softmax at line 61
  '04/8', // (A) concat at line 63: said w-o at line 27
  '05/5', // (B) cache at line 37: said cache at line 13
  '05/11', // (B) cache at line 34: said cache at line 38
  '06/3', // (B) scores at line 26: said softmax at line 26
  '06/5', // (B) weighted-sum at line 30: said slice at line 21
  '06/10', // (A) weighted-sum at line 30: said softmax at line 30
  '07/1', // (B) position at line 63: said position at line 40
  '08/6', // (A) mask at line 35: said mask at line 24
  '08/7', // (B) mask at line 18: said mask at line 24
  '08/9', // (B) scale at line 28: said scale at line 30
  '09/3', // (B) mask at line 36: said mask at line 49
  '09/5', // (B) concat at line 45: said w-o at line 51
]);

// fresh18 (107 slips, written blind by a helper, tests/corpus-lines/fresh18/, committed before any run: 711c59f):
// first sight on main at 1eebe7c (Intel Xeon), before any rule was fitted on it: 95 steps and 72 lines right (half A
// 50/36 of 54, half B 45/36 of 53); after the rules fitted on its half A (a property followed to where it is made, a
// loop's unread total, an object's two values swapped, a helper around a call argument, an exp's maximum in the first
// round, a number kept on `this` as a term, a throwing answer's bound of work), 95 and 78 (half A 50/41, half B 45/37);
// after fresh19's round (a projection left out, an object that only tags a value, a query's keys cut short taken for no
// head's slice), 96 and 80 (half A 51/43, half B 45/37). The misses:
const FRESH18_MISSES = new Set([
  '01/9', // (B) weighted-sum at line 31: said null at line 25
  '01/10', // (A) scores at line 12: said scores at line 21
  '02/6', // (A) w-o at line 23: said w-o at line 24
  '02/8', // (A) scale at line 18: said scale at line 40
  '02/9', // (B) slice at line 16: said concat at line 40
  '03/5', // (B) mask at line 20: said mask at line 46
  '03/6', // (A) softmax at line 38: said softmax at line 43
  '03/7', // (B) scores at line 23: said softmax at line 23
  '03/8', // (A) weighted-sum at line 43: said weighted-sum at line 44
  '03/9', // (B) scale at line 23: said scale at line 31
  '04/7', // (B) weighted-sum at line 25: said scores at line 25
  '04/9', // (B) w-o at line 27: said w-o at line 29
  '05/0', // (A) cache at line 17: said null at line 28
  '05/1', // (B) slice at line 23: said cache at line 21
  '05/7', // (B) scores at line 28: said cache at line 28
  '05/9', // (B) cache at line 17: said cache at line 21
  '05/10', // (A) slice at line 28: said slice at line 39
  '05/11', // (B) weighted-sum at line 39: said null at line 39
  '06/1', // (B) slice at line 51: said scores at line 61
  '06/10', // (A) slice at line 50: said scores at line 61
  '06/11', // (B) scores at line 61: said scores at line 62
  '07/2', // (A) pairs at line 35: said pairs at line 23
  '07/7', // (B) position at line 21: said position at line 18
  '07/9', // (B) pairs at line 32: said pairs at line 23
  '08/2', // (A) mask at line 18: said mask at line 24
  '08/10', // (A) scores at line 21: said softmax at line 21
  '09/3', // (B) softmax at line 21: said softmax at line 22
  '09/7', // (B) mask at line 18: said mask at line 33
  '09/9', // (B) w-o at line 28: said w-o at line 33
]);

// fresh19 (105 slips, written blind by a helper, tests/corpus-lines/fresh19/, committed before any run: 48bd8e7 on its
// branch, 1882e66 on main): first sight on main at e11c39d (Intel Xeon), before any rule was fitted on it: 88 steps and 79
// lines right (half A 48/42 of 54, half B 40/37 of 51); after the rules fitted on its half A (a projection left out where
// its siblings make theirs from the same value, a number kept on `this` given a term, a module kept on `this` not
// applied, a layout helper wrong from every call it could be seen from, the two rounds mixed sooner), 88 and 83 (half A
// 48/46, half B 40/37); after fresh20's round (a rescaling that built a right step passed over, a loop cut short inside
// the weighted sum, polar RoPE's numbers on the way, a cache kept where the recording cannot see it), 91 and 87 (half A
// 51/49, half B 40/38; 08/5 of half B lost its step to a first version of the loop rule and got it back once a NaN was
// taken for no cut); after fresh21's round, 91 and 88 (half B 40/39). The misses:
const FRESH19_MISSES = new Set([
  '01/1', // (B) scale at line 17: said scale at line 14
  '02/1', // (B) slice at line 19: said scores at line 19
  '02/5', // (B) weighted-sum at line 31: said slice at line 31
  '02/6', // (A) concat at line 55: said concat at line 33
  '02/11', // (B) slice at line 44: said scores at line 23
  '03/1', // (B) mask at line 16: said softmax at line 16
  '03/5', // (B) softmax at line 37: said softmax at line 45
  '03/7', // (B) mask at line 15: said mask at line 50
  '03/9', // (B) softmax at line 29: said softmax at line 34
  '04/5', // (B) softmax at line 48: said softmax at line 50
  '05/1', // (B) cache at line 12: said cache at line 27
  '05/3', // (B) scores at line 19: said slice at line 19
  '05/6', // (A) weighted-sum at line 27: said slice at line 27
  '05/8', // (A) cache at line 44: said cache at line 14
  '05/11', // (B) weighted-sum at line 25: said cache at line 25
  '06/1', // (B) slice at line 23: said scale at line 23
  '06/4', // (A) scale at line 43: said null at line 43
  '06/8', // (A) concat at line 33: said concat at line 36
  '07/7', // (B) rotation at line 36: said frequency at line 36
  '07/9', // (B) rotation at line 38: said rotation at line 37
  '07/10', // (A) rotation at line 34: said pairs at line 34
  '08/5', // (B) softmax at line 33: said softmax at line 40
  '08/7', // (B) mask at line 18: said mask at line 30
  '08/11', // (B) softmax at line 34: said mask at line 34
  '09/1', // (B) slice at line 24: said slice at line 27
  '09/2', // (A) scale at line 25: said scale at line 26
  '09/5', // (B) weighted-sum at line 30: said softmax at line 28
  '09/6', // (A) softmax at line 31: said softmax at line 41
  '09/11', // (B) weighted-sum at line 30: said softmax at line 30
]);

// fresh20 (108 slips, written blind by a helper, tests/corpus-lines/fresh20/, committed before any run: 2c10c31 on its
// branch, 992dc98 on main): first sight on main at 2ef2f2e (Intel Xeon), before any rule was fitted on it: 102 steps and 87
// lines right (half A 52/42 of 54, half B 50/45 of 54); after the rules fitted on its half A (and fresh19's), 104 and 96
// (half A 54/50, half B 50/46); after fresh21's round, 104 and 97 (half A 54/51). The misses:
const FRESH20_MISSES = new Set([
  '01/0', // (A) scores at line 9: said scores at line 6
  '01/1', // (B) scale at line 43: said scale at line 11
  '01/8', // (A) softmax at line 16: said softmax at line 17
  '02/7', // (B) w-o at line 47: said w-o at line 49
  '04/7', // (B) weighted-sum at line 62: said project-V at line 23
  '04/11', // (B) scale at line 52: said scale at line 56
  '05/3', // (B) scores at line 24: said cache at line 24
  '05/11', // (B) weighted-sum at line 32: said slice at line 33
  '06/1', // (B) kv-head at line 37: said kv-head at line 7
  '06/3', // (B) slice at line 42: said kv-head at line 42
  '08/9', // (B) scale at line 25: said scale at line 23
  '09/10', // (A) slice at line 25: said slice at line 4
  '09/11', // (B) softmax at line 23: said softmax at line 8
]);

// fresh21 (108 slips, written blind by a helper, tests/corpus-lines/fresh21/, committed before any run: 4610edb on its
// branch, f2c3e1a on main): first sight on main at c79ec98 (Intel Xeon), before any rule was fitted on it: 99 steps and 86
// lines right (half A 49/39 of 54, half B 50/47 of 54); after the rules fitted on its half A, 99 and 93 (half A 49/46,
// half B 50/47). The misses:
const FRESH21_MISSES = new Set([
  '01/9', // (B) scale at line 73: said scale at line 20
  '03/10', // (A) softmax at line 24: said softmax at line 7
  '04/10', // (A) weighted-sum at line 88: said project-V at line 17
  '05/1', // (B) cache at line 37: said cache at line 24
  '05/2', // (A) slice at line 13: said scores at line 13
  '05/3', // (B) scale at line 14: said scale at line 18
  '05/6', // (A) cache at line 11: said cache at line 38
  '05/8', // (A) slice at line 15: said cache at line 15
  '06/1', // (B) scale at line 12: said null at line 12
  '06/2', // (A) slice at line 7: said slice at line 43
  '07/4', // (A) pairs at line 16: said pairs at line 29
  '07/5', // (B) frequency at line 20: said rotation at line 20
  '07/8', // (A) rotation at line 31: said pairs at line 31
  '08/3', // (B) weighted-sum at line 28: said softmax at line 28
  '08/5', // (B) softmax at line 27: said softmax at line 28
  '08/7', // (B) mask at line 22: said mask at line 25
  '08/8', // (A) softmax at line 29: said softmax at line undefined
  '08/9', // (B) weighted-sum at line 28: said softmax at line 28
  '09/3', // (B) slice at line 41: said slice at line 45
  '09/4', // (A) scores at line 27: said scores at line 45
  '09/5', // (B) softmax at line 49: said softmax at line 52
  '09/8', // (A) concat at line 59: said w-o at line 67
]);

for (const [name, batch, misses, varies] of [['fresh', fresh, FRESH_MISSES], ['fresh2', fresh2, FRESH2_MISSES], ['fresh3', fresh3, FRESH3_MISSES], ['fresh4', fresh4, FRESH4_MISSES], ['fresh5', fresh5, FRESH5_MISSES], ['fresh6', fresh6, FRESH6_MISSES], ['fresh7', fresh7, FRESH7_MISSES], ['fresh8', fresh8, FRESH8_MISSES], ['fresh9', fresh9, FRESH9_MISSES], ['fresh10', fresh10, FRESH10_MISSES], ['fresh11', fresh11, FRESH11_MISSES, FRESH11_VARIES], ['fresh12', fresh12, FRESH12_MISSES], ['fresh13', fresh13, FRESH13_MISSES], ['fresh14', fresh14, FRESH14_MISSES], ['fresh15', fresh15, FRESH15_MISSES], ['fresh16', fresh16, FRESH16_MISSES], ['fresh17', fresh17, FRESH17_MISSES], ['fresh18', fresh18, FRESH18_MISSES], ['fresh19', fresh19, FRESH19_MISSES], ['fresh20', fresh20, FRESH20_MISSES], ['fresh21', fresh21, FRESH21_MISSES]]) {
  for (const number of Object.keys(batch.SLIPS)) {
    test(`corpus-lines/${name} ${number}.js: a right answer in another style passes and gets no diagnosis`, async () => {
      const { failing, found } = await diagnose(FOLDERS[number], batch.base(number), lab);
      assert.deepEqual(failing, []);
      assert.equal(found, null);
    });
  }
  for (const slip of batch.slips()) {
    test(`corpus-lines/${name} ${slip.number} slip ${slip.index}: ${slip.step} at line ${slip.line}`, async (t) => {
      const { failing, found, timed } = await diagnose(FOLDERS[slip.number], slip.source, lab);
      checkSlip(t, slip, found, failing, misses, varies, timed);
    });
  }
}

// the older corpus (tests/corpus/NN/*.js, `// expect: <step>`): every answer keeps the step its
// headline names, now with a line in the learner's file
for (const number of readdirSync(join(ROOT, 'tests/corpus')).sort()) {
  for (const file of readdirSync(join(ROOT, 'tests/corpus', number)).filter((f) => f.endsWith('.js')).sort()) {
    const source = readFileSync(join(ROOT, 'tests/corpus', number, file), 'utf8');
    const expect = source.match(/^\/\/ expect: ([\w-]+)/)[1];
    test(`corpus ${number}/${file}: ${expect === 'none' ? 'right' : `${expect}, with its line`}`, async () => {
      const { found } = await diagnose(FOLDERS[number], source, lab);
      if (expect === 'none') return assert.equal(found, null);
      assert.ok(found, 'a finding');
      assert.equal(found.step, expect, found.title);
      assert.ok(Number.isInteger(found.line) && found.line >= 1 && found.line <= source.split('\n').length, `a line: ${found.title}`);
      assert.match(found.title, new RegExp(`^Line ${found.line}: `));
    });
  }
}

test('a throw inside a helper of the learner\'s leaves that call open in the recording: the line that passed the helper its operands', () => {
  const source = [
    'function matmul(A, B) {',
    '  if (A[0].length !== B.length) throw new RangeError(`matmul: ${A[0].length} by ${B.length}`);',
    '  return A.map((row) => B[0].map((_, j) => row.reduce((s, x, k) => s + x * B[k][j], 0)));',
    '}',
    'export function f(Q, K) {',
    '  const S = matmul(Q, K);',
    '  return matmul(S, K);',
    '}',
  ].join('\n');
  const run = traced(source, 'f', [{ id: 'throws', args: [[[1, 2]], [[1], [2]]] }, { id: 'returns', args: [[[2]], [[3]]] }]);
  const [threw, returned] = run.results;
  assert.equal(threw.error?.line, 2);
  assert.deepEqual(threw.recording.open.map((id) => run.sites[id].line), [7]); // (the first call, line 6, returned)
  assert.deepEqual(returned.recording.open, []);
  assert.equal(thrownUnder(run).line, 7);
});

test('an answer that throws is told as a throw, at the line it threw from; one that returns nothing, as such', async () => {
  const folder = FOLDERS['02'];
  const right = base('02');
  // a throw inside the computation, on every input
  const throwing = right.replace('const z = e.reduce((a, b) => a + b, 0);', 'const z = e.reduce((a, b) => a + b, 0); if (z > 0) throw new Error(`not written yet`);');
  const thrown = (await diagnose(folder, throwing, lab)).found;
  assert.ok(thrown, 'a finding');
  assert.match(thrown.title, /throws/);
  assert.equal(thrown.line, right.split('\n').findIndex((l) => l.includes('const z = e.reduce')) + 1);
  assert.match(thrown.title, new RegExp(`^Line ${thrown.line}: `));
  // nothing returned
  const silent = right.replace('return W_O ? concat.times(new Matrix(W_O)).rows : concat.rows;', 'W_O ? concat.times(new Matrix(W_O)).rows : concat.rows;');
  const none = (await diagnose(folder, silent, lab)).found;
  assert.ok(none, 'a finding');
  assert.match(`${none.title} ${none.detail}`, /undefined|nothing|returns/i);
});

/** The learner's function, instrumented, with a fresh recorder per call (as runTraced). */
function instrumentedFunction(source, functionName) {
  const { code, sites } = instrument(source);
  let recorder = createRecorder(sites.length, sites, { readObjects: true });
  const record = (id, value) => recorder.record(id, value);
  record.enter = (id) => recorder.record.enter(id);
  const fn = (0, eval)(toScript(code, [RECORD]))(record)[functionName];
  const plain = loadFunction(source, functionName);
  // (an error whose message names the recorder is told as the learner's own code throws it: runTraced's ownError)
  return (...args) => {
    recorder = createRecorder(sites.length, sites, { readObjects: true });
    const copy = structuredClone(args);
    try {
      return fn(...args);
    } catch (error) {
      throw ownError(error, () => plain(...copy));
    }
  };
}

// styles neither corpus has: a generator, a closure that keeps state, optional chaining, a class with
// a static method and getters, destructuring with defaults, labelled loops, comma expressions
const ODD_STYLES = [
  `function* rows(M) { for (const row of M) yield row; }
export function dotProductAttention(Q, K, V) {
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(\`K is \${K.length}×\${K[0].length} but Q is \${Q.length}×\${Q[0].length}\`);
  if (V.length !== Q.length) throw new RangeError(\`V is \${V.length}×\${V[0].length} but Q is \${Q.length}×\${Q[0].length}\`);
  const out = [];
  let i = 0, s;
  outer: for (const q of rows(Q)) {
    const w = K.map((k) => (s = 0, k.forEach((x, c) => { s += x * q[c]; }), s / Math.sqrt(q.length)));
    const m = Math.max(...w);
    const e = w.map((x) => Math.exp(x - m));
    const z = e.reduce((a, b) => a + b, 0);
    out[i++] = V[0].map((_, c) => e.reduce((acc, x, j) => acc + (x / z) * V[j]?.[c], 0));
    if (i > Q.length) break outer;
  }
  return out;
}`,
  `const counter = (() => { let calls = 0; return () => ++calls; })();
class Ops {
  static dot(a, b) { return a.reduce((s, x, k) => s + x * b[k], 0); }
  get name() { return 'ops'; }
}
export const dotProductAttention = (Q, K, V, { scaleBy = 1 / Math.sqrt(Q[0].length) } = {}) => {
  counter();
  if (K.length !== Q.length || K[0].length !== Q[0].length) throw new RangeError(\`K is \${K.length}×\${K[0].length} but Q is \${Q.length}×\${Q[0].length}\`);
  if (V.length !== Q.length) throw new RangeError(\`V is \${V.length}×\${V[0].length} but Q is \${Q.length}×\${Q[0].length}\`);
  return Q.map((q) => {
    const [first, ...rest] = K.map((k) => Ops.dot(q, k) * scaleBy);
    const all = [first, ...rest];
    const top = Math.max(...all);
    const e = Float64Array.from(all, (x) => Math.exp(x - top));
    const z = e.reduce((a, b) => a + b, 0);
    return V[0].map((_, c) => all.reduce((acc, _x, j) => acc + (Math.exp(all[j] - top) / z) * V[j][c], 0));
  });
};`,
];

test('instrumenting never changes what the code computes: every answer of both corpora and odd styles, bit for bit, throws alike', () => {
  const sources = [];
  for (const number of readdirSync(join(ROOT, 'tests/corpus')).sort()) {
    for (const file of readdirSync(join(ROOT, 'tests/corpus', number)).filter((f) => f.endsWith('.js'))) sources.push([number, readFileSync(join(ROOT, 'tests/corpus', number, file), 'utf8')]);
  }
  for (const number of ['01', '02', '03', '04', '05', '06', '07', '08', '09']) sources.push([number, base(number)]);
  for (const slip of [...slips(), ...fresh.slips(), ...fresh2.slips(), ...fresh3.slips(), ...fresh4.slips(), ...fresh5.slips(), ...fresh6.slips(), ...fresh7.slips(), ...fresh8.slips(), ...fresh9.slips(), ...fresh10.slips(), ...fresh11.slips(), ...fresh12.slips(), ...fresh13.slips(), ...fresh14.slips(), ...fresh15.slips(), ...fresh16.slips(), ...fresh17.slips(), ...fresh18.slips(), ...fresh19.slips(), ...fresh20.slips(), ...fresh21.slips()]) sources.push([slip.number, slip.source]);
  for (const batch of [fresh, fresh2, fresh3, fresh4, fresh5, fresh6, fresh7, fresh8, fresh9, fresh10, fresh11, fresh12, fresh13, fresh14, fresh15, fresh16, fresh17, fresh18, fresh19, fresh20, fresh21]) for (const number of Object.keys(batch.SLIPS)) sources.push([number, batch.base(number)]);
  for (const source of ODD_STYLES) sources.push(['01', source]);
  let calls = 0;
  for (const [number, source] of sources) {
    const { tests } = challengeData(FOLDERS[number]);
    const plain = loadFunction(source, tests.function);
    const traced = instrumentedFunction(source, tests.function);
    for (const c of [...tests.fixed, ...tests.errors]) {
      const outcome = (fn) => { try { return { output: fn(...structuredClone(c.args)) }; } catch (error) { return { error: `${error.name}: ${error.message}` }; } };
      assert.deepEqual(outcome(traced), outcome(plain), `${number}: ${source.split('\n')[0]} on “${c.name}”`);
      calls++;
    }
  }
  assert.ok(calls > 2000, `${calls} calls compared`);
});

test('a traced run that throws where V8 writes the expression it names (a destructuring of undefined) keeps the learner\'s own message and line', () => {
  const source = 'export function f(kv, h) {\n  const { k, v } = kv[h % 2];\n  return k + v;\n}\n';
  const [run] = traced(source, 'f', [{ id: 'x', args: [{}, 3] }]).results;
  assert.equal(run.error.name, 'TypeError');
  assert.equal(run.error.message, "Cannot destructure property 'k' of 'kv[(h % 2)]' as it is undefined.");
  assert.equal(run.error.line, 2);
  // (any other error is the instrumented run's own, the learner's function not run again)
  let again = 0;
  const thrown = new RangeError('x is 3');
  assert.equal(ownError(thrown, () => { again++; }), thrown);
  assert.equal(again, 0);
});

test('the odd styles are right answers: no diagnosis', async () => {
  for (const source of ODD_STYLES) assert.equal((await diagnose(FOLDERS['01'], source, lab)).found, null);
});

test('an object that wraps a matrix, `new Matrix(rows)`, is kept apart in wraps, read from its data fields: no getter runs, no Proxy is read', () => {
  let getterRuns = 0;
  let trapRuns = 0;
  const source = `class Matrix {
  constructor(rows) { this.rows = rows; this.label = 'm'; }
  get size() { return this.rows.length; }
  soft() { return new Matrix(this.rows.map((r) => r.map((x) => x / 2))); }
}
export function f(rows) {
  const kept = new Matrix(rows).soft();
  const both = { a: rows, b: rows };
  return kept.rows;
}
`;
  const traced = runTraced(source, 'f', [{ id: 'x', args: [[[2, 4], [6, 8]]] }], { load: (script) => (0, eval)(script), toScript, lineOf: () => ({}) });
  const { sites } = traced.results[0].recording;
  const line = (n) => traced.sites.map((s, id) => ({ ...s, id })).filter((s) => s.line === n).map((s) => sites[s.id]);
  // (the call's result, a Matrix: its rows, halved; an object of two arrays wraps no one matrix)
  assert.ok(line(7).some((s) => s.wraps.some((w) => w.rows === 2 && w.cols === 2 && w.data.join() === '1,2,3,4')), 'the wrapped rows of line 7');
  assert.ok(line(8).every((s) => s.wraps.length === 0), 'two arrays: no wrapped matrix');
  // (the wrapped numbers are not values: no value of line 7 was kept)
  assert.ok(line(7).every((s) => s.values.length === 0), 'no values from a wrapped matrix');
  // a getter is never run by the recorder
  const withGetter = { rows: [[1]], get other() { getterRuns++; return [[2]]; } };
  const recorder = createRecorder(1, [{}], { readObjects: true });
  recorder.record(0, withGetter);
  assert.equal(getterRuns, 0);
  assert.equal(recorder.take().sites[0].wraps.length, 1);
  // code that makes a Proxy: objects are not read at all (reading would run its traps)
  const proxied = source.replace('const kept = new Matrix(rows).soft();', 'const kept = new Proxy(new Matrix(rows).soft(), {});');
  const noRead = runTraced(proxied, 'f', [{ id: 'x', args: [[[2, 4], [6, 8]]] }], { load: (script) => (0, eval)(script), toScript, lineOf: () => ({}) });
  assert.ok(noRead.results[0].recording.sites.every((s) => s.wraps.length === 0));
  const trapped = new Proxy({ rows: [[1]] }, { ownKeys(target) { trapRuns++; return Reflect.ownKeys(target); } });
  createRecorder(1, [{}]).record(0, trapped);
  assert.equal(trapRuns, 0, 'without readObjects an object is not read');
});

test('what is recorded is bounded: a loop that builds millions of numbers keeps at most LIMITS of them', async () => {
  const { LIMITS } = await import('../../www/src/diagnosis/instrument.js');
  const source = 'export function f(n) { let s = 0; for (let i = 0; i < n; i++) s += i * 0.5; const big = new Array(5000).fill(0).map((_, k) => k / 3); return s + big.length; }';
  const { code, sites } = instrument(source);
  const recorder = createRecorder(sites.length, sites);
  const record = (id, value) => recorder.record(id, value);
  record.enter = (id) => recorder.record.enter(id);
  const f = (0, eval)(toScript(code, [RECORD]))(record).f;
  assert.equal(f(2_000_000), loadFunction(source, 'f')(2_000_000));
  const { sites: kept, kept: total, dropped } = recorder.take();
  assert.ok(total <= LIMITS.MAX_TOTAL, `${total} kept`);
  assert.ok(kept.every((s) => s.values.length <= LIMITS.MAX_PER_SITE && s.snapshots.length <= LIMITS.MAX_SNAPSHOTS_PER_SITE));
  assert.ok(dropped > 1_000_000, `${dropped} counted, not kept`);
});

test('a step done twice, or done after the step it should come before: that step, at the line that repeats or misplaces it', async () => {
  const solution = readFileSync(join(ROOT, 'challenges/01-dot-product-attention/solution.js'), 'utf8');
  const folder = FOLDERS['01'];
  // the softmax taken of weights already right
  const twice = solution.replace('const weights = scaled.map(softmax);', 'const weights = scaled.map(softmax).map(softmax);');
  const line = (source, text) => source.split('\n').findIndex((l) => l.includes(text)) + 1;
  const again = (await diagnose(folder, twice, lab)).found;
  assert.equal(again?.step, 'softmax');
  assert.equal(again.line, line(twice, '.map(softmax).map(softmax)'));
  assert.match(again.title, /twice/);
  // the scale applied to the weights, after the softmax of the unscaled scores
  const late = solution
    .replace('const scaled = scores.map((row) => row.map((x) => x * scale)); // (T, T)', 'const weights0 = scores.map(softmax);')
    .replace('const weights = scaled.map(softmax);                           // (T, T), every row sums to 1', 'const weights = weights0.map((row) => row.map((x) => x * scale));');
  const found = (await diagnose(folder, late, lab)).found;
  assert.equal(found?.step, 'scale');
  // (the right answer, unchanged, is not called wrong)
  assert.equal((await diagnose(folder, solution, lab)).found, null);
});
