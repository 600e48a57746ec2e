// The lab's model: the package's Transformer and repeatedTokens (issue 21), loaded in the training
// Worker, never on the page's thread. Where the page is cross-origin isolated (the site is: COOP/COEP,
// vite.config.js), the threads build (www/pkg-threads, a copy of `make build-threads`' web build)
// with a pool of threads; elsewhere the site's single-threaded web build (www/pkg, as every page).
// Both are dynamic imports, so the worker fetches one .wasm, and the page's first load carries
// neither. The package gives the same bits on any number of threads, so the thread count is not a
// setting of the run: a link reproduces the same losses on any device.
// The lab (lab.js) gives the threads build 30 s to start; past that, or when it fails to load, it
// loads the single-threaded build in a new worker and says why in its thread line.
//
// The pool's workers are the package's own module file (src/wasm/threads.js: `new Worker(new
// URL('./threads.js', import.meta.url), { type: 'module' })`), which Vite bundles as a worker of
// this worker, so the site's CSP `worker-src 'self'` allows them.

/** The most threads the lab asks for by default: its model is small (batch × T rows of width 64 or so), and each thread is a Worker with its own copy of the module's code. */
export const DEFAULT_MAX_THREADS = 4;
/** What `threads=` in the address may ask for (the package's limit). */
export const MAX_THREADS = 64;

const check = (lab) => {
  if (typeof lab.Transformer !== 'function' || typeof lab.repeatedTokens !== 'function') {
    throw new Error('this build of the attention-lab package has no Transformer, so the lab cannot train (rebuild it: make build)');
  }
  return lab;
};

/**
 * Loads the package: the threads build with a pool where threads can start, else the
 * single-threaded build. `asked` is the address's `threads=` (an integer 1–64) or undefined for
 * the device's core count, at most DEFAULT_MAX_THREADS. Resolves to `{ lab, threads, build,
 * reason }`: the package's exports, the threads in use, 'threads' or 'single', and why it is one
 * thread (null when a pool runs). `onStage(text)`, when given, hears each step of the threads build's start,
 * and nothing on the single-threaded path (the lab arms its limit on the threads build at the first stage).
 */
export async function loadModel(asked, onStage) {
  const cores = globalThis.navigator?.hardwareConcurrency || 1;
  const wanted = asked ?? Math.min(cores, DEFAULT_MAX_THREADS);
  const single = asked === 1 ? 'the address asks for one thread (threads=1), so the lab uses the single-threaded build'
    : !globalThis.crossOriginIsolated || typeof SharedArrayBuffer !== 'function' ? 'this page is not cross-origin isolated (no shared memory), so the lab uses the single-threaded build'
      : typeof Worker !== 'function' ? 'this browser cannot start a worker from a worker, so the lab uses the single-threaded build'
        : wanted === 1 ? 'this device reports one core, so the lab uses the single-threaded build'
          : null;
  if (single) {
    const lab = await import('../pkg/attention_lab.js');
    await lab.default();
    return { lab: check(lab), threads: 1, build: 'single', reason: single };
  }
  onStage?.('loading the threads build');
  const lab = await import('../pkg-threads/attention_lab.js');
  await lab.default();
  onStage?.(`starting ${wanted} threads`);
  const threads = await lab.initThreadPool(wanted);
  return { lab: check(lab), threads, build: 'threads', reason: threads > 1 ? null : lab.threadsInfo().reason };
}
