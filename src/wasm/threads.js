// The threads build's workers (src/wasm/threads.rs): `threads − 1` of them, each instantiating
// this module's code on its shared memory and running one of rayon's threads.
//
// Node: worker_threads, unref'd so that they never keep a process alive. Each requires this
// build's glue (four folders up from this file: <glue dir>/snippets/<crate>/src/wasm/threads.js)
// and calls its `initSync({ module, memory })`, which the glue runs by itself only on the main thread.

async function coreCount() {
  if (globalThis.process?.versions?.node) {
    const os = await import('node:os');
    return os.availableParallelism ? os.availableParallelism() : os.cpus().length;
  }
  return globalThis.navigator?.hardwareConcurrency || 1;
}

// A worker: instantiate, say so, block (Atomics.wait, no timeout) until the main thread is about
// to build the pool, then take one of its threads (a short spin in threads.rs) and run it.
const WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
const glue = require(workerData.glue);
glue.initSync({ module: workerData.module, memory: workerData.memory });
parentPort.postMessage('ready');
Atomics.wait(workerData.go, 0, 0);
glue.__attentionLabThreadsWorker();
`;

export async function startWorkers(module, memory, requested, builder) {
  const threads = requested || Math.min(await coreCount(), 64);
  if (threads === 1) {
    builder.decline('initThreadPool was asked for 1 thread');
    return 1;
  }
  if (!globalThis.process?.versions?.node) {
    builder.decline('the threads build runs in Node only; browsers load the single-threaded build');
    return 1;
  }
  const { Worker } = await import('node:worker_threads');
  const { fileURLToPath } = await import('node:url');
  const glue = fileURLToPath(new URL('../../../../attention_lab.js', import.meta.url));
  const go = new Int32Array(new SharedArrayBuffer(4));
  await Promise.all(Array.from({ length: threads - 1 }, () => new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { eval: true, workerData: { glue, module, memory, go } });
    worker.unref();
    worker.once('message', () => resolve(worker));
    worker.once('error', reject);
  })));
  Atomics.store(go, 0, 1);
  Atomics.notify(go, 0);
  return builder.build(threads);
}
