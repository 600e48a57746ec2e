// The threads build's workers (src/wasm/threads.rs): `threads − 1` of them, each instantiating
// this module's code on its shared memory and running one of rayon's threads. Each loads this
// build's glue, four folders up from this file (<glue dir>/snippets/<crate>/src/wasm/threads.js),
// and calls its `initSync({ module, memory })`.
//
// Node: worker_threads, unref'd so that they never keep a process alive (the glue instantiates
// itself on the main thread only). Browsers: module Workers, which need a cross-origin isolated
// page (COOP/COEP) for the shared memory; the glue is then the web one.

async function coreCount() {
  if (globalThis.process?.versions?.node) {
    const os = await import('node:os');
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

// The browser worker, as a module script: the glue's URL is filled in.
const BROWSER_WORKER = (glue) => `
import { initSync, __attentionLabThreadsWorker } from ${JSON.stringify(glue)};
self.onmessage = ({ data }) => {
  initSync({ module: data.module, memory: data.memory });
  postMessage('ready');
  Atomics.wait(data.go, 0, 0);
  __attentionLabThreadsWorker();
};
`;

function startBrowserWorkers(module, memory, count, go) {
  const glue = new URL('../../../../attention_lab.js', import.meta.url).href;
  const url = URL.createObjectURL(new Blob([BROWSER_WORKER(glue)], { type: 'text/javascript' }));
  return Promise.all(Array.from({ length: count }, () => new Promise((resolve, reject) => {
    const worker = new Worker(url, { type: 'module', name: 'attention-lab thread' });
    worker.onmessage = () => resolve(worker);
    worker.onerror = (event) => reject(new Error(`a thread's worker failed to start: ${event.message ?? 'unknown error'}`));
    worker.postMessage({ module, memory, go });
  }))).finally(() => URL.revokeObjectURL(url));
}

export async function startWorkers(module, memory, requested, builder) {
  try {
    return await start(module, memory, requested, builder);
  } catch (error) {
    // workers that did start wait on `go` forever (unref'd in Node); the calls stay on 1 thread
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
  const { Worker: NodeWorker } = await import('node:worker_threads');
  const { fileURLToPath } = await import('node:url');
  const { existsSync } = await import('node:fs');
  // the package ships the Node glue as attention_lab.cjs beside the web one; wasm-pack's folder has only it, as .js
  const [cjs, js] = ['cjs', 'js'].map((ext) => fileURLToPath(new URL(`../../../../attention_lab.${ext}`, import.meta.url)));
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
