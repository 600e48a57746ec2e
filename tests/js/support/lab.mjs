// Loads the Node build of the package the way an npm user does (require), and also keeps the
// WebAssembly instance it creates, so tests can read `memory.buffer.byteLength` and the size of
// wasm-bindgen's externref table. The nodejs build does not export them; it instantiates with
// `new WebAssembly.Instance(...)` at require time, so that constructor is wrapped for that one call.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
export const PACKAGE = fileURLToPath(new URL('../../../target/pkg-node/attention_lab.js', import.meta.url));

let instance = null;
const Original = WebAssembly.Instance;
WebAssembly.Instance = function Instance(module, imports) {
  instance = new Original(module, imports);
  return instance;
};
let lab;
try {
  lab = require(PACKAGE);
} finally {
  WebAssembly.Instance = Original;
}
if (instance === null) {
  throw new Error(`${PACKAGE} was already loaded elsewhere in this process, so its wasm instance cannot be reached`);
}

export default lab;

/** Bytes of wasm linear memory (it only ever grows). */
export const wasmMemoryBytes = () => instance.exports.memory.buffer.byteLength;

/** Slots in wasm-bindgen's externref table (JS values the module holds on to). */
export const externrefSlots = () => instance.exports.__wbindgen_externrefs.length;
