// `make bench-first-line`: the cost of the first-wrong-line diagnosis (issue 28) on one answer per
// challenge (01–09: the solution, and a slip of the corpus in tests/corpus-lines/): instrumenting the
// module, running it on the challenge's traced probes (www/src/diagnosis/instrument.js's runTraced,
// as the worker does, without the worker's start-up) and aligning the recording with the
// reference (first-line.js's alignAnswer). Prints the median and the worst of REPEAT runs per answer
// and the worst overall, against the worker's 2 s limit. A benchmark, not a test: nothing fails.
import { createRequire } from 'node:module';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { cpus } from 'node:os';
import { alignAnswer, traceCalls } from '../../www/src/diagnosis/first-line.js';
import { slips } from '../corpus-lines/slips.mjs';
import { traced } from '../js/support/diagnose.mjs';

const ROOT = new URL('../../', import.meta.url).pathname;
const lab = createRequire(import.meta.url)(join(ROOT, 'target/pkg-node/attention_lab.js'));
const REPEAT = Number(process.env.REPEAT ?? 21);
const folders = readdirSync(join(ROOT, 'challenges')).filter((f) => /^0\d-/.test(f)).sort();
const firstSlip = Object.fromEntries(slips().reverse().map((s) => [s.number, s]));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`first-wrong-line diagnosis: instrument + traced probes + alignment, ${REPEAT} runs per answer (${cpus()[0].model})`);
console.log('answer'.padEnd(44), 'median ms'.padStart(10), 'worst ms'.padStart(10));
let worst = 0;
for (const folder of folders) {
  const tests = JSON.parse(readFileSync(join(ROOT, 'challenges', folder, 'tests.json'), 'utf8'));
  const data = JSON.parse(readFileSync(join(ROOT, 'challenges', folder, 'diagnosis.json'), 'utf8'));
  const answers = [['solution.js', readFileSync(join(ROOT, 'challenges', folder, 'solution.js'), 'utf8')], [`slip ${firstSlip[folder.slice(0, 2)].index} (${firstSlip[folder.slice(0, 2)].step})`, firstSlip[folder.slice(0, 2)].source]];
  for (const [name, source] of answers) {
    const times = [];
    for (let k = 0; k < REPEAT; k++) {
      const started = performance.now();
      alignAnswer(data, traced(source, tests.function, traceCalls(data)), lab);
      times.push(performance.now() - started);
    }
    worst = Math.max(worst, ...times);
    console.log(`${folder.slice(0, 2)} ${name}`.padEnd(44), median(times).toFixed(1).padStart(10), Math.max(...times).toFixed(1).padStart(10));
  }
}
console.log(`worst overall: ${worst.toFixed(1)} ms (the worker's limit: 2000 ms)`);

// The repairs (www/src/diagnosis/repair.js): every one-edit variant of a slip, run on the page's cases
// (failing ones first), as the worker runs them after the traced run, under its own 2 s limit. One
// run per slip (its own bound is REPAIR_LIMITS.MAX_MS): the median and the worst over the slips of
// tests/corpus-lines/ (one batch per challenge), and how many reached the bound before trying them all.
const { repaired } = await import('../js/support/diagnose.mjs');
const { REPAIR_LIMITS } = await import('../../www/src/diagnosis/repair.js');
const repairTimes = [];
let cut = 0;
let mutants = 0;
for (const slip of slips()) {
  const folder = folders.find((f) => f.startsWith(slip.number));
  const tests = JSON.parse(readFileSync(join(ROOT, 'challenges', folder, 'tests.json'), 'utf8'));
  const started = performance.now();
  const r = repaired(slip.source, tests, lab, slip.line);
  repairTimes.push(performance.now() - started);
  cut += !r.complete;
  mutants += r.tried;
}
console.log(`repairs (one edit, the page's cases) over ${repairTimes.length} slips: median ${median(repairTimes).toFixed(0)} ms, worst ${Math.max(...repairTimes).toFixed(0)} ms, ${(mutants / repairTimes.length).toFixed(0)} mutants per slip, ${cut} stopped at the bound (${REPAIR_LIMITS.MAX_MS} ms)`);
