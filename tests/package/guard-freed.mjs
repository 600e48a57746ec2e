// Appends to wasm-bindgen's glue (each file given) a guard on every method and getter of the exported
// classes, so that a call on a freed object (after free() or the end of a `using` block, a second
// free() included) or on one the package never created (`new KvCache()`) is an Error that says what
// happened and what to do, instead of wasm-bindgen's "null pointer passed to rust". wasm-bindgen's
// glue checks the pointer before any of the crate's code runs, so the guard has to be JavaScript.
// Run by the Makefile after each wasm-pack build; running it twice on a file changes nothing.
// `--without Transformer` is for the site's attention-only build (no `model` feature), which has no such class.
//
//   node tests/package/guard-freed.mjs [--without Class] target/pkg-node/attention_lab.js …
import { readFileSync, writeFileSync } from 'node:fs';

const MARK = '// attention-lab: a call on a freed object';
/** Each exported class, and how a user gets a live one (for the message). */
const CLASSES = {
  MultiHeadAttention: 'create a new one with new MultiHeadAttention(…)',
  KvCache: 'create a new one with layer.createCache()',
  Transformer: 'create a new one with new Transformer(…), or keep model.getState() and setState() it into a new model',
};

const args = process.argv.slice(2);
const without = args[0] === '--without' ? args.splice(0, 2)[1] : null;
if (without !== null && !(without in CLASSES)) throw new Error(`guard-freed: --without ${without}: no such class`);
if (without !== null) delete CLASSES[without];

const guard = `
${MARK} is an Error that says so (tests/package/guard-freed.mjs)
for (const [Class, name, remedy] of [${Object.entries(CLASSES).map(([name, remedy]) => `[${name}, '${name}', ${JSON.stringify(remedy)}]`).join(', ')}]) {
  const refuse = (self) => {
    if (self.__wbg_ptr === 0) throw new Error(\`this \${name} was freed (free() or the end of a \\\`using\\\` block) and cannot be used; \${remedy}\`);
    if (typeof self.__wbg_ptr !== 'number') throw new Error(\`this \${name} was not made by attention-lab; \${remedy}\`);
  };
  for (const key of Reflect.ownKeys(Class.prototype)) {
    if (key === 'constructor' || key === '__destroy_into_raw') continue;
    const d = Object.getOwnPropertyDescriptor(Class.prototype, key);
    for (const part of ['value', 'get', 'set']) {
      const f = d[part];
      if (typeof f !== 'function') continue;
      d[part] = { [f.name || String(key)](...args) { refuse(this); return f.apply(this, args); } }[f.name || String(key)];
    }
    Object.defineProperty(Class.prototype, key, d);
  }
}
`;

for (const file of args) {
  const text = readFileSync(file, 'utf8');
  if (text.includes(MARK)) continue;
  for (const name of Object.keys(CLASSES)) {
    if (!new RegExp(`^(export )?class ${name} `, 'm').test(text)) throw new Error(`guard-freed: ${file} declares no class ${name}`);
  }
  writeFileSync(file, text + guard);
}
