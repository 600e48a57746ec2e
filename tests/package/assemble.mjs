#!/usr/bin/env node
// Assembles the npm package in `pkg/` from the three wasm-pack builds (`make package` runs it):
//
//   target/pkg-node-threads/ --target nodejs, the threads build (`make build-threads`)
//                        → node/ (its glue, .wasm and snippets) + node.cjs + node.d.cts (Node: import and require, synchronous)
//   target/pkg-node/     --target nodejs, the default build: not shipped, but its declarations must
//                        be the threads build's (one API), and tests/js/ test it
//   target/pkg-bundler/  --target bundler  → bundler.js + attention_lab_bg.js + bundler.d.ts  (Vite, webpack, browser condition)
//   target/pkg-web/      --target web      → web.js    + web.d.ts     (`attention-lab/web`: `await init()`, no bundler)
//
// wasm-bindgen 0.2.130 emits the same `attention_lab_bg.wasm` for all three targets (each glue file
// finds it by that name next to itself), so the package ships it once; the script checks that the
// three are byte-identical and stops if a future wasm-bindgen makes them differ.
//
// wasm-bindgen declares `[Symbol.dispose]()` on exported classes; a declaration file that does
// gets `/// <reference lib="esnext.disposable" />`, so it compiles for projects whose `lib` is older
// (e.g. es2022) without skipLibCheck.
//
// The manifest is `pkg.json` verbatim. The script refuses to assemble when its version differs
// from Cargo.toml's, or when a path named in `exports`, `main`, `module`, `types`, `files` or
// `sideEffects` is not a file it produced.
//
// Lives in tests/package/ beside the tests of what it produces; it is build tooling, not a test.

import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const OUT = join(ROOT, 'pkg');
const NAME = 'attention_lab'; // wasm-pack --out-name
// wasm-bindgen's folder for JS snippets (the readers in src/wasm/convert.js): one ES module,
// imported by web.js and bundler.js and require()d by node.cjs (Node ≥ 20.19 loads ES modules from
// require, hence `engines` in pkg.json). The three builds emit it byte-identical; the package ships it once.
const SNIPPETS = 'snippets';

/** What each wasm-pack build must contain (besides package.json, README.md, LICENSE, .gitignore: wasm-pack copies the crate's). */
const BUILDS = {
  node: { dir: 'target/pkg-node', files: [`${NAME}.js`, `${NAME}.d.ts`, `${NAME}_bg.wasm`, `${NAME}_bg.wasm.d.ts`, SNIPPETS] },
  nodeThreads: { dir: 'target/pkg-node-threads', files: [`${NAME}.js`, `${NAME}.d.ts`, `${NAME}_bg.wasm`, `${NAME}_bg.wasm.d.ts`, SNIPPETS] },
  bundler: { dir: 'target/pkg-bundler', files: [`${NAME}.js`, `${NAME}_bg.js`, `${NAME}.d.ts`, `${NAME}_bg.wasm`, `${NAME}_bg.wasm.d.ts`, SNIPPETS] },
  web: { dir: 'target/pkg-web', files: [`${NAME}.js`, `${NAME}.d.ts`, `${NAME}_bg.wasm`, `${NAME}_bg.wasm.d.ts`, SNIPPETS] },
};
const WASM_PACK_EXTRAS = ['package.json', 'README.md', 'LICENSE', '.gitignore'];

/**
 * pkg/<to> ← <build>/<from>. `selfTypes` rewrites the `@ts-self-types` header to the renamed .d.ts;
 * `declarations` marks a .d.ts (see DISPOSABLE).
 */
const COPIES = [
  { build: 'nodeThreads', from: `${NAME}.js`, to: `node/${NAME}.js`, selfTypes: '../node.d.cts' },
  { build: 'nodeThreads', from: `${NAME}_bg.wasm`, to: `node/${NAME}_bg.wasm` },
  { build: 'node', from: `${NAME}.d.ts`, to: 'node.d.cts', declarations: true },
  { build: 'bundler', from: `${NAME}.js`, to: 'bundler.js', selfTypes: './bundler.d.ts' },
  { build: 'bundler', from: `${NAME}_bg.js`, to: `${NAME}_bg.js` },
  { build: 'bundler', from: `${NAME}.d.ts`, to: 'bundler.d.ts', declarations: true },
  { build: 'web', from: `${NAME}.js`, to: 'web.js', selfTypes: './web.d.ts' },
  { build: 'web', from: `${NAME}.d.ts`, to: 'web.d.ts', declarations: true },
  { build: 'web', from: `${NAME}_bg.wasm`, to: `${NAME}_bg.wasm` },
];

/** The lib that types `Symbol.dispose`, for declaration files that use it. */
const DISPOSABLE = '/// <reference lib="esnext.disposable" />\n';

function fail(message) {
  console.error(`assemble: ${message}`);
  process.exit(1);
}

// ---- pass 1: the manifest and the version -----------------------------------

const manifest = JSON.parse(readFileSync(join(ROOT, 'pkg.json'), 'utf8'));
const cargoToml = readFileSync(join(ROOT, 'Cargo.toml'), 'utf8');
const cargoPackage = cargoToml.split(/^\[/m).find((section) => section.startsWith('package]'));
const cargoVersion = cargoPackage?.match(/^version\s*=\s*"([^"]+)"/m)?.[1];
if (!cargoVersion) fail('no version in the [package] section of Cargo.toml');
if (manifest.version !== cargoVersion) {
  fail(`pkg.json has version ${manifest.version} but Cargo.toml has ${cargoVersion}; make them equal`);
}

// ---- pass 2: the builds hold exactly what this script expects ---------------

for (const [target, { dir, files }] of Object.entries(BUILDS)) {
  const path = join(ROOT, dir);
  if (!existsSync(path)) fail(`${dir} is missing; run \`make package\` (it builds --target ${target})`);
  const found = readdirSync(path).filter((f) => !WASM_PACK_EXTRAS.includes(f)).sort();
  const expected = [...files].sort();
  if (found.join() !== expected.join()) {
    fail(`${dir} holds [${found.join(', ')}], expected [${expected.join(', ')}]; update tests/package/assemble.mjs`);
  }
}
const wasmOf = (target) => readFileSync(join(ROOT, BUILDS[target].dir, `${NAME}_bg.wasm`));
const declarationsOf = (target) => readFileSync(join(ROOT, BUILDS[target].dir, `${NAME}.d.ts`), 'utf8');
// the threads build declares the same API, then its own initSync (for its workers; not public)
if (!declarationsOf('nodeThreads').startsWith(declarationsOf('node'))) {
  fail(`${BUILDS.nodeThreads.dir}/${NAME}.d.ts does not start with ${BUILDS.node.dir}'s: the threads build must declare the same API`);
}
for (const target of ['node', 'bundler']) {
  if (!wasmOf(target).equals(wasmOf('web'))) {
    fail(`${BUILDS[target].dir}/${NAME}_bg.wasm differs from the web build's; the package can no longer share one .wasm`);
  }
}

/** Every file under `dir`, relative to it, with its bytes. */
const tree = (dir, prefix = '') => readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
  entry.isDirectory()
    ? tree(join(dir, entry.name), `${prefix}${entry.name}/`)
    : [[`${prefix}${entry.name}`, readFileSync(join(dir, entry.name)).toString('base64')]]);
const snippetsOf = (target) => JSON.stringify(tree(join(ROOT, BUILDS[target].dir, SNIPPETS)).sort());
for (const target of ['node', 'bundler']) {
  if (snippetsOf(target) !== snippetsOf('web')) {
    fail(`${BUILDS[target].dir}/${SNIPPETS} differs from the web build's; the package can no longer share one copy`);
  }
}

// ---- pass 3: copy into a fresh pkg/ ------------------------------------------

rmSync(OUT, { recursive: true, force: true });
mkdirSync(join(OUT, 'node'), { recursive: true });
for (const { build, from, to, selfTypes, declarations } of COPIES) {
  const source = join(ROOT, BUILDS[build].dir, from);
  if (selfTypes) {
    const header = `/* @ts-self-types="./${NAME}.d.ts" */`;
    const text = readFileSync(source, 'utf8');
    if (!text.startsWith(header)) fail(`${BUILDS[build].dir}/${from} does not start with ${header}`);
    writeFileSync(join(OUT, to), `/* @ts-self-types="${selfTypes}" */` + text.slice(header.length));
  } else if (declarations) {
    const text = readFileSync(source, 'utf8');
    writeFileSync(join(OUT, to), (text.includes('[Symbol.dispose]') ? DISPOSABLE : '') + text);
  } else {
    copyFileSync(source, join(OUT, to));
  }
}
cpSync(join(ROOT, BUILDS.web.dir, SNIPPETS), join(OUT, SNIPPETS), { recursive: true });
cpSync(join(ROOT, BUILDS.nodeThreads.dir, SNIPPETS), join(OUT, 'node', SNIPPETS), { recursive: true });
// The glue is CommonJS and its snippets ES modules, in a package whose "type" is "module": node/
// gets a package.json without "type", where Node tells the two apart by their syntax (as in the
// folder wasm-pack makes).
writeFileSync(join(OUT, 'node', 'package.json'), JSON.stringify({ private: true, description: 'the threads build of attention-lab for Node (see ../node.cjs)' }, null, 2) + '\n');
// Node's entry: the threads build's glue, which instantiates itself on the main thread only (its
// pool's workers call initSync with the shared memory); in any other thread this file does.
writeFileSync(join(OUT, 'node.cjs'), `/* @ts-self-types="./node.d.cts" */
// attention-lab for Node: the threads build (see initThreadPool). Its glue is in ./node/.
module.exports = require('./node/${NAME}.js');
module.exports.initSync();
`);
copyFileSync(join(ROOT, 'README.md'), join(OUT, 'README.md'));
copyFileSync(join(ROOT, 'LICENSE'), join(OUT, 'LICENSE'));
writeFileSync(join(OUT, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');

// ---- pass 4: every path the manifest names exists ---------------------------

/** All string leaves of an `exports` value (conditions nest). */
const leaves = (value) => (typeof value === 'string' ? [value] : Object.values(value).flatMap(leaves));
const named = [
  ...leaves(manifest.exports),
  manifest.main,
  manifest.module,
  manifest.types,
  ...manifest.files,
  ...manifest.sideEffects,
].filter(Boolean);
for (const path of new Set(named)) {
  if (!existsSync(join(OUT, path))) fail(`pkg.json names ${path}, which the package does not contain`);
}
const produced = readdirSync(OUT).filter((f) => !['package.json', 'README.md', 'LICENSE'].includes(f)).sort();
const listed = [...manifest.files].sort();
if (produced.join() !== listed.join()) {
  fail(`pkg/ holds [${produced.join(', ')}] but pkg.json "files" lists [${listed.join(', ')}]`);
}

console.log(`assemble: pkg/ holds attention-lab@${manifest.version} (${produced.length + 3} files)`);
