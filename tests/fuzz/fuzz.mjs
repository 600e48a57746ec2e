#!/usr/bin/env node
// The JS boundary fuzzer, run long: `node tests/fuzz/fuzz.mjs --cases 1000000 --seconds 900 [--seed N]`.
// Replay one case: `node tests/fuzz/fuzz.mjs --seed N --case I` (prints the arguments and the verdict).
//
// The cases run in a worker thread; this thread is a watchdog that stops the run if the worker
// reports no progress for HANG_SECONDS (a hang in the package), and bounds the whole run in time.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { parseArgs, inspect } from 'node:util';

const HANG_SECONDS = 10;

/** The long run's table: every export of the 10,000-case test, and issue 30's fromPretrained (its own test in tests/js/fuzz.test.mjs). */
async function longRunTable() {
  const { FUZZ_EXPORTS } = await import('./exports.mjs');
  const { PRETRAINED_EXPORTS } = await import('./pretrained.mjs');
  return [...FUZZ_EXPORTS, ...PRETRAINED_EXPORTS];
}
const REPORT_EVERY = 500;

if (isMainThread) {
  const { values } = parseArgs({
    options: {
      cases: { type: 'string', default: '1000000' },
      seconds: { type: 'string', default: '900' },
      seed: { type: 'string', default: String(Date.now() % 2 ** 31) },
      case: { type: 'string' },
    },
  });
  const seed = Number(values.seed);
  if (values.case !== undefined) {
    const { default: lab } = await import('../js/support/lab.mjs');
    const { makeCase, runCase, knownGood } = await import('./cases.mjs');
    const table = await longRunTable();
    const index = Number(values.case);
    const { spec, args } = makeCase(seed, index, table);
    console.log(spec.name, inspect(args, { depth: 4, maxArrayLength: 8, showProxy: true }));
    console.log(runCase(lab, seed, index, knownGood(lab), table));
    process.exit(0);
  }
  const total = Number(values.cases);
  const deadline = Date.now() + Number(values.seconds) * 1000;
  console.log(`fuzzing the JS boundary: up to ${total} cases, at most ${values.seconds} s, seed ${seed}`);
  const worker = new Worker(new URL(import.meta.url), { workerData: { seed, total, deadline } });
  let last = { done: 0, at: Date.now() };
  const watchdog = setInterval(() => {
    if (Date.now() - last.at > HANG_SECONDS * 1000) {
      console.error(`HANG: no progress for ${HANG_SECONDS} s after case ${last.done} (seed ${seed}); replay cases ${last.done}..${last.done + REPORT_EVERY} with --case`);
      worker.terminate();
      process.exit(1);
    }
  }, 1000);
  worker.on('message', (m) => {
    last = { done: m.done, at: Date.now() };
    if (m.final) {
      clearInterval(watchdog);
      const rate = (m.done / m.seconds).toFixed(0);
      console.log(`${m.done} cases in ${m.seconds.toFixed(1)} s (${rate}/s); outcomes ${JSON.stringify(m.outcomes)}`);
      for (const [name, counts] of Object.entries(m.perExport)) console.log(`  ${name}: ${JSON.stringify(counts)}`);
      console.log(`wasm memory ${m.memory.after} bytes (after warm-up ${m.memory.warm}); externref slots ${m.slots.after} (after warm-up ${m.slots.warm})`);
      for (const f of m.failures) console.error(`FAIL ${f}`);
      console.log(`${m.done - m.failures.length} passed, ${m.failures.length} failed`);
      process.exit(m.failures.length === 0 && m.leakFree ? 0 : 1);
    }
  });
  worker.on('error', (e) => {
    console.error('the fuzz worker died:', e);
    process.exit(1);
  });
} else {
  const { default: lab, wasmMemoryBytes, externrefSlots } = await import('../js/support/lab.mjs');
  const { runCase, knownGood } = await import('./cases.mjs');
  const table = await longRunTable();
  const { seed, total, deadline } = workerData;
  const good = knownGood(lab);
  const outcomes = {};
  const perExport = {};
  const failures = [];
  const started = performance.now();
  let warm = null;
  let done = 0;
  for (; done < total && Date.now() < deadline && failures.length < 20; done += 1) {
    const result = runCase(lab, seed, done, good, table);
    if (result.failure) failures.push(result.failure);
    else {
      outcomes[result.outcome] = (outcomes[result.outcome] ?? 0) + 1;
      (perExport[result.export] ??= {})[result.outcome] = (perExport[result.export][result.outcome] ?? 0) + 1;
    }
    if (done === 10000) warm = { memory: wasmMemoryBytes(), slots: externrefSlots() };
    if (done % REPORT_EVERY === 0) parentPort.postMessage({ done });
  }
  warm ??= { memory: wasmMemoryBytes(), slots: externrefSlots() };
  const memory = { warm: warm.memory, after: wasmMemoryBytes() };
  const slots = { warm: warm.slots, after: externrefSlots() };
  // after warm-up nothing may accumulate: externref slots are freed per call; memory may only have grown for the largest case
  const leakFree = slots.after <= slots.warm + 64;
  if (!leakFree) failures.push(`externref slots grew from ${slots.warm} to ${slots.after}`);
  parentPort.postMessage({ final: true, done, seconds: (performance.now() - started) / 1000, outcomes, perExport, failures, memory, slots, leakFree });
}
