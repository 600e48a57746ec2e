// One sandboxed worker thread for the learner's code, as the challenge page's learnerWorker():
// send(message, limitMs) resolves with the runner's reply, or with { type: 'timeout' } after limitMs (TIME_LIMIT_MS by default)
// (the worker is then terminated). The clock starts when the worker is ready (Node takes some
// tens of milliseconds to start one), so the learner's code gets the site's full 2 s.
import { Worker } from 'node:worker_threads';
import { TIME_LIMIT_MS } from './course.mjs';

/** How long a worker may take to start before the command gives up (a very busy machine). */
const START_LIMIT_MS = 30_000;
/** How long close() waits for the worker's console output to arrive before ending it. */
const OUTPUT_GRACE_MS = 50;
/** The worker's heap: far more than any challenge needs, far less than the machine has. */
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 512, maxYoungGenerationSizeMb: 64 };

/**
 * Starts the sandbox (./sandbox.mjs) running `runner` (the URL of the site's runner.worker.js).
 * What the learner's code prints goes to `output` (a writable stream; stderr by default), never
 * to stdout, which `--json` keeps for the report. Returns { send(message), close() }.
 */
export function learnerWorker(runner, output = process.stderr) {
  const worker = new Worker(new URL('./sandbox.mjs', import.meta.url), {
    name: 'learner-code',
    workerData: { runner: String(runner) },
    env: {},
    stdout: true,
    stderr: true,
    resourceLimits: RESOURCE_LIMITS,
  });
  worker.stdout.pipe(output, { end: false });
  worker.stderr.pipe(output, { end: false });
  let answer = null;
  let ended = null;
  worker.on('message', (data) => answer?.(data));
  worker.on('error', (error) => {
    ended = { type: 'load-error', name: error?.name ?? 'Error', message: String(error?.message ?? error) };
    answer?.(ended);
  });
  worker.on('exit', () => {
    ended ??= { type: 'load-error', name: 'Error', message: 'your code ended the worker it ran in (process.exit?)' };
    answer?.(ended);
  });
  const ready = new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ type: 'load-error', name: 'Error', message: 'the worker for your code did not start' }), START_LIMIT_MS);
    answer = (data) => { clearTimeout(timer); answer = null; resolve(data.type === 'ready' ? null : data); };
  });
  return {
    async send(message, limitMs = TIME_LIMIT_MS) {
      const failed = (await ready) ?? ended;
      if (failed) return failed;
      return new Promise((resolve) => {
        const timer = setTimeout(() => { answer = null; ended = { type: 'timeout' }; worker.terminate(); resolve(ended); }, limitMs);
        answer = (data) => { clearTimeout(timer); answer = null; resolve(data); };
        worker.postMessage(message);
      });
    },
    /** Ends the worker, once what the learner's code printed has come through (a few milliseconds). */
    async close() {
      await new Promise((resolve) => setTimeout(resolve, OUTPUT_GRACE_MS));
      await worker.terminate();
    },
  };
}
