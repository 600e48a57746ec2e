// The threads build's workers (src/wasm/threads.rs): `threads − 1` of them, each instantiating
// this module's code on its shared memory and running one of rayon's threads. Each loads this
// build's glue, four folders up from this file (<glue dir>/snippets/<crate>/src/wasm/threads.js),
// and calls its `initSync({ module, memory })`.
//
// Node: worker_threads, unref'd so that they never keep a process alive (the glue instantiates
// itself on the main thread only). Browsers: module Workers, which need a cross-origin isolated
// page (COOP/COEP) for the shared memory; the glue is then the web one.
//
// A browser worker is this very file, started as a module worker by
// `new Worker(new URL('./threads.js', import.meta.url), { type: 'module' })`, and it imports the
// glue by a literal relative path, `import('../../../../attention_lab.js')`. Both are what bundlers
// see and rewrite: Vite and webpack emit this file as the worker's entry and bundle the glue into
// it, so the pool starts in a bundled app too. And the worker is a same-origin script, which a
// Content-Security-Policy `worker-src 'self'` allows (a `blob:` worker, as before, needs `blob:`
// in worker-src, and a bundler breaks the glue's path in it).

/** The browser workers' name: how this module knows it is one of them (below). */
const THREAD_NAME = 'attention-lab thread';

// In one of the pool's browser workers: on the main thread's one message, instantiate the glue
// on the shared memory, say so, and run one of the pool's threads (as WORKER does in Node).
if (typeof WorkerGlobalScope === 'function' && globalThis instanceof WorkerGlobalScope && globalThis.name === THREAD_NAME) {
  globalThis.onmessage = async ({ data }) => {
    let glue;
    try {
      glue = await import('../../../../attention_lab.js');
      glue.initSync({ module: data.module, memory: data.memory });
    } catch (error) {
      postMessage({ error: `${error?.name ?? 'Error'}: ${error?.message ?? error}` });
      return;
    }
    postMessage('ready');
    Atomics.wait(data.go, 0, 0);
    glue.__attentionLabThreadsWorker();
  };
}

async function coreCount() {
  if (globalThis.process?.versions?.node) {
    const os = process.getBuiltinModule('node:os');
    return os.availableParallelism ? os.availableParallelism() : os.cpus().length;
  }
  return globalThis.navigator?.hardwareConcurrency || 1;
}

// A worker: instantiate, say so, block (Atomics.wait, no timeout) until the main thread is about
// to build the pool, then take one of its threads (a short spin in threads.rs) and run it.
// Written to run as CommonJS or as an ES module (a worker inherits --input-type=module, for one).
const WORKER = `
const { workerData, parentPort } = process.getBuiltinModule('node:worker_threads');
const glue = process.getBuiltinModule('node:module').createRequire(workerData.glue)(workerData.glue);
glue.initSync({ module: workerData.module, memory: workerData.memory });
parentPort.postMessage('ready');
Atomics.wait(workerData.go, 0, 0);
glue.__attentionLabThreadsWorker();
`;

/**
 * How long a browser worker may take to report in (load its module and the glue, instantiate)
 * before the pool is given up: a worker whose script never arrives, or that never answers,
 * otherwise leaves initThreadPool pending for ever (seen in Firefox). Started on its own, a
 * worker reports in well under a second; a loaded machine may take a few.
 */
const WORKER_START_MS = 20_000;

function startBrowserWorkers(module, memory, count, go) {
  const workers = [];
  const started = Promise.all(Array.from({ length: count }, () => new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./threads.js', import.meta.url), { type: 'module', name: THREAD_NAME });
    workers.push(worker);
    worker.onmessage = ({ data }) => (data === 'ready' ? resolve(worker) : reject(new Error(data?.error ?? String(data))));
    // a script that does not load (a CSP that refuses it, a 404) gives an error event without a message
    worker.onerror = (event) => reject(new Error(`a thread's worker failed to start: ${event.message || 'its module did not load (refused by a Content-Security-Policy, or not served)'}`));
    worker.postMessage({ module, memory, go });
  })));
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`a thread's worker did not report in within ${WORKER_START_MS / 1000} s (its module was not served, or did not run)`)), WORKER_START_MS);
  });
  return Promise.race([started, late]).then(
    (ready) => { clearTimeout(timer); return ready; },
    (error) => { clearTimeout(timer); workers.forEach((w) => w.terminate()); throw error; },
  );
}

export async function startWorkers(module, memory, requested, builder) {
  try {
    return await start(module, memory, requested, builder);
  } catch (error) {
    // in Node, workers that did start wait on `go` forever (unref'd); in a browser they are
    // terminated; the calls stay on 1 thread
    builder.decline(`the workers did not start: ${error?.message ?? error}`);
    return 1;
  }
}

async function start(module, memory, requested, builder) {
  const threads = requested || Math.min(await coreCount(), 64);
  if (threads === 1) {
    builder.decline('initThreadPool was asked for 1 thread');
    return 1;
  }
  if (typeof SharedArrayBuffer !== 'function') {
    builder.decline('shared memory is not available here: a page needs cross-origin isolation (COOP/COEP headers)');
    return 1;
  }
  const go = new Int32Array(new SharedArrayBuffer(4));
  if (!globalThis.process?.versions?.node) {
    if (typeof Worker !== 'function') {
      builder.decline('this runtime has no Worker');
      return 1;
    }
    await startBrowserWorkers(module, memory, threads - 1, go);
    Atomics.store(go, 0, 1);
    Atomics.notify(go, 0);
    return builder.build(threads);
  }
  // Node's modules through process.getBuiltinModule (Node ≥ 20.16), not import('node:…'), and the
  // glue's path built with node:path, not new URL(`…${ext}`, import.meta.url): a bundler of the
  // web glue would otherwise stub those modules with a warning, and emit every file that template matches
  const { Worker: NodeWorker } = process.getBuiltinModule('node:worker_threads');
  const { fileURLToPath } = process.getBuiltinModule('node:url');
  const { existsSync } = process.getBuiltinModule('node:fs');
  const { dirname, join } = process.getBuiltinModule('node:path');
  // the package ships the Node glue as attention_lab.cjs beside the web one; wasm-pack's folder has only it, as .js
  const root = join(dirname(fileURLToPath(import.meta.url)), '../../../..');
  const [cjs, js] = ['cjs', 'js'].map((ext) => join(root, `attention_lab.${ext}`));
  const glue = existsSync(cjs) ? cjs : js;
  await Promise.all(Array.from({ length: threads - 1 }, () => new Promise((resolve, reject) => {
    const worker = new NodeWorker(WORKER, { eval: true, workerData: { glue, module, memory, go } });
    worker.unref();
    worker.once('message', () => resolve(worker));
    worker.once('error', reject);
  })));
  Atomics.store(go, 0, 1);
  Atomics.notify(go, 0);
  return builder.build(threads);
}
