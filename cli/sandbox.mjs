// The learner's code runs here, in a Node worker thread started by ./session.mjs: this file gives
// the site's runner (www/src/runner.worker.js, shipped unchanged as course/runner.worker.js) what
// it expects of a Web Worker (`self`, `self.postMessage`, `self.onmessage`), then loads it. The
// runner removes fetch, WebSocket and the other network globals, as on the site.
//
// Node has more ways out than a browser worker, closed here once the runner is loaded:
//   - import() of anything (node:net, node:fs, data: URLs…) is refused by ./deny-imports.mjs;
//   - the ways out on `process` throw: getBuiltinModule, binding, _linkedBinding and dlopen (Node's
//     modules and native code), kill and abort (other processes, and the command itself),
//     loadEnvFile (a file read), and process.report is gone (a file written);
//   - the environment is empty (session.mjs starts the worker with `env: {}`).
// This is not a security boundary (docs/terminal.md, "The terminal sandbox"): it keeps honest code honest.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'node:module';

globalThis.self = globalThis;
globalThis.postMessage = (data) => parentPort.postMessage(data);
await import(workerData.runner);

register(new URL('./deny-imports.mjs', import.meta.url));
for (const name of ['getBuiltinModule', 'binding', '_linkedBinding', 'dlopen', 'kill', '_kill', 'abort', 'loadEnvFile']) {
  Object.defineProperty(process, name, {
    value: () => { throw new Error(`process.${name} is not available here`); },
    configurable: false,
    writable: false,
  });
}
Object.defineProperty(process, 'report', { value: undefined, configurable: false, writable: false });

parentPort.on('message', (data) => globalThis.onmessage?.({ data }));
parentPort.postMessage({ type: 'ready' });
