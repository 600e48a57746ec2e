#!/usr/bin/env node
// Assembles the npm package in `pkg/` from the three wasm-pack builds (`make package` runs it):
//
//   target/pkg-node-threads/ --target nodejs, and target/pkg-web-threads/ --target web: the threads
//                        build (`make build-threads`) → threads/: attention_lab.cjs (Node's glue, loaded
//                        by node.cjs), attention_lab.js (the web glue, loaded by web.js's init() on a
//                        cross-origin isolated page), their one .wasm and snippets
//   target/pkg-node/     --target nodejs, the default build: not shipped, but its declarations must
//                        be the threads build's (one API), and tests/js/ test it
//   target/pkg-bundler/  --target bundler  → bundler.js + attention_lab_bg.js + bundler.d.ts, and bundler.jsx (the
//                        browser condition's entry for Vite, webpack: see BUNDLER_ENTRY)
//   target/pkg-web/      --target web      → web.js    + web.d.ts     (`attention-lab/web`: `await init()`, no bundler)
//   target/pkg-bundler-attention/, target/pkg-web-attention/: the attention-only build (no `model` feature: no
//                        Transformer, repeatedTokens; the site's walkthrough and challenges load the same one)
//                        → attention/: bundler.js, bundler.jsx, attention_lab_bg.js, bundler.d.ts (`attention-lab/attention`
//                        for bundlers), web.js + web.d.ts (`attention-lab/attention/web`), their one .wasm and snippets.
//                        The light entry for pages that need attention and the layer, not the model: a
//                        .wasm of about 40% of the whole one's. Single-threaded (no threads build of it is shipped);
//                        in Node `attention-lab/attention` is the main entry (size does not matter there).
//
// wasm-bindgen 0.2.130 emits the same `attention_lab_bg.wasm` for all three targets (each glue file
// finds it by that name next to itself), so the package ships it once; the script checks that the
// three are byte-identical and stops if a future wasm-bindgen makes them differ.
//
// wasm-bindgen declares `[Symbol.dispose]()` on exported classes; a declaration file that does
// gets `/// <reference lib="esnext.disposable" />`, so it compiles for projects whose `lib` is older
// (e.g. es2022) without skipLibCheck.
//
// The command `attention-lab` (pkg.json `bin`, see cli/) ships with the course it runs:
//
//   cli/*.mjs            → cli/           the command and the worker sandbox for the learner's code
//   www/src/{cases,variants,report,matrix,script,runner.worker}.js and www/src/diagnosis/*.js
//                        → course/   the site's own modules, unchanged: the same cases, diagnosis and runner as the challenge page
//   challenges/NN-*/{README.md,starter.js,tests.json,diagnosis.json} → course/challenges/NN-*/   (no solutions)
//   challenges/NN-*/model-check.js, the modules it imports and tests.json's model.weights file
//                        → course/challenges/NN-*/   the model checks of 09 and 10, as the page runs them
//   www/node_modules/acorn → node_modules/acorn   the runner's parser, a bundled dependency (pkg.json
//                        `bundleDependencies`), so the tarball installs offline (`cd www && npm ci` first)
//
// The manifest is `pkg.json` verbatim. The script refuses to assemble when its version differs
// from Cargo.toml's, or when a path named in `exports`, `main`, `module`, `types`, `files` or
// `sideEffects` is not a file it produced.
//
// Lives in tests/package/ beside the tests of what it produces; it is build tooling, not a test.

import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
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
  webThreads: { dir: 'target/pkg-web-threads', files: [`${NAME}.js`, `${NAME}.d.ts`, `${NAME}_bg.wasm`, `${NAME}_bg.wasm.d.ts`, SNIPPETS] },
  bundler: { dir: 'target/pkg-bundler', files: [`${NAME}.js`, `${NAME}_bg.js`, `${NAME}.d.ts`, `${NAME}_bg.wasm`, `${NAME}_bg.wasm.d.ts`, SNIPPETS] },
  web: { dir: 'target/pkg-web', files: [`${NAME}.js`, `${NAME}.d.ts`, `${NAME}_bg.wasm`, `${NAME}_bg.wasm.d.ts`, SNIPPETS] },
  bundlerAttention: { dir: 'target/pkg-bundler-attention', files: [`${NAME}.js`, `${NAME}_bg.js`, `${NAME}.d.ts`, `${NAME}_bg.wasm`, `${NAME}_bg.wasm.d.ts`, SNIPPETS] },
  webAttention: { dir: 'target/pkg-web-attention', files: [`${NAME}.js`, `${NAME}.d.ts`, `${NAME}_bg.wasm`, `${NAME}_bg.wasm.d.ts`, SNIPPETS] },
};
/** The light entry's folder in pkg/ (the attention-only build). */
const LIGHT = 'attention';
const WASM_PACK_EXTRAS = ['package.json', 'README.md', 'LICENSE', '.gitignore'];

/**
 * pkg/<to> ← <build>/<from>. `selfTypes` rewrites the `@ts-self-types` header to the renamed .d.ts;
 * `declarations` marks a .d.ts (see DISPOSABLE).
 */
const COPIES = [
  { build: 'nodeThreads', from: `${NAME}.js`, to: `threads/${NAME}.cjs`, selfTypes: '../node.d.cts' },
  { build: 'webThreads', from: `${NAME}.js`, to: `threads/${NAME}.js`, selfTypes: '../web.d.ts' },
  { build: 'webThreads', from: `${NAME}_bg.wasm`, to: `threads/${NAME}_bg.wasm` },
  { build: 'node', from: `${NAME}.d.ts`, to: 'node.d.cts', declarations: true },
  { build: 'bundler', from: `${NAME}.js`, to: 'bundler.js', selfTypes: './bundler.d.ts' },
  { build: 'bundler', from: `${NAME}_bg.js`, to: `${NAME}_bg.js` },
  { build: 'bundler', from: `${NAME}.d.ts`, to: 'bundler.d.ts', declarations: true },
  { build: 'web', from: `${NAME}.js`, to: 'web-single.js', selfTypes: './web.d.ts' },
  { build: 'web', from: `${NAME}.d.ts`, to: 'web.d.ts', declarations: true },
  { build: 'web', from: `${NAME}_bg.wasm`, to: `${NAME}_bg.wasm` },
  { build: 'bundlerAttention', from: `${NAME}.js`, to: `${LIGHT}/bundler.js`, selfTypes: './bundler.d.ts' },
  { build: 'bundlerAttention', from: `${NAME}_bg.js`, to: `${LIGHT}/${NAME}_bg.js` },
  { build: 'bundlerAttention', from: `${NAME}.d.ts`, to: `${LIGHT}/bundler.d.ts`, declarations: true },
  { build: 'webAttention', from: `${NAME}.js`, to: `${LIGHT}/web.js`, selfTypes: './web.d.ts' },
  { build: 'webAttention', from: `${NAME}.d.ts`, to: `${LIGHT}/web.d.ts`, declarations: true },
  { build: 'webAttention', from: `${NAME}_bg.wasm`, to: `${LIGHT}/${NAME}_bg.wasm` },
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
if (!wasmOf('nodeThreads').equals(wasmOf('webThreads'))) fail('the two threads builds emit different .wasm files; the package can no longer share one');
for (const target of ['node', 'bundler']) {
  if (!wasmOf(target).equals(wasmOf('web'))) {
    fail(`${BUILDS[target].dir}/${NAME}_bg.wasm differs from the web build's; the package can no longer share one .wasm`);
  }
}
if (!wasmOf('bundlerAttention').equals(wasmOf('webAttention'))) fail('the two attention-only builds emit different .wasm files; attention/ can no longer share one');
if (wasmOf('webAttention').length >= wasmOf('web').length) fail('the attention-only .wasm is not smaller than the whole one: was it built without --no-default-features?');
if (/\bclass Transformer\b/.test(declarationsOf('webAttention'))) fail(`${BUILDS.webAttention.dir} declares Transformer: the light entry must be the attention-only build`);

/** Every file under `dir`, relative to it, with its bytes. */
const tree = (dir, prefix = '') => readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
  entry.isDirectory()
    ? tree(join(dir, entry.name), `${prefix}${entry.name}/`)
    : [[`${prefix}${entry.name}`, readFileSync(join(dir, entry.name)).toString('base64')]]);
const snippetsOfTarget = (target) => JSON.stringify(tree(join(ROOT, BUILDS[target].dir, SNIPPETS)).sort());
if (snippetsOfTarget('nodeThreads') !== snippetsOfTarget('webThreads')) fail('the two threads builds emit different snippets; the package can no longer share one copy');
for (const target of ['node', 'bundler']) {
  if (snippetsOfTarget(target) !== snippetsOfTarget('web')) {
    fail(`${BUILDS[target].dir}/${SNIPPETS} differs from the web build's; the package can no longer share one copy`);
  }
}
if (snippetsOfTarget('bundlerAttention') !== snippetsOfTarget('webAttention')) fail('the two attention-only builds emit different snippets; attention/ can no longer share one copy');

/**
 * web.js: the exports of the single-threaded web glue (web-single.js) as live bindings, which
 * `init()` rebinds to the threads build's glue (threads/attention_lab.js) where threads can start:
 * a cross-origin isolated page or worker (SharedArrayBuffer and Worker present) and no
 * `module_or_path` of the caller's (which names the single-threaded .wasm). `initSync` is the
 * single-threaded build's (the threads build starts asynchronously anyway).
 */
function webEntry(glue) {
  const names = [...glue.matchAll(/^export (?:function|class) (\w+)/gm)].map((m) => m[1]);
  if (names.length < 10) fail('web glue: fewer than 10 exports found; update webEntry in tests/package/assemble.mjs');
  return `/* @ts-self-types="./web.d.ts" */
// attention-lab/web. \`await init()\` loads the threads build (./threads/) where threads can start
// (a cross-origin isolated page or worker), else the single-threaded one (./web-single.js); the
// exports below are bound to the one it loaded. See initThreadPool and threadsInfo.
import * as single from './web-single.js';

export let ${names.map((n) => `${n} = single.${n}`).join(',\n  ')};

function bind(glue) {
  ({ ${names.join(', ')} } = glue);
}

/** Whether shared memory and workers are available here (COOP/COEP on a page). */
const threadsCanStart = () => globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function' && typeof Worker === 'function';

export function initSync(module) {
  bind(single);
  return single.initSync(module);
}

export default async function init(module_or_path) {
  if (module_or_path === undefined && threadsCanStart()) {
    const threads = await import('./threads/${NAME}.js');
    const output = await threads.default();
    bind(threads);
    return output;
  }
  bind(single);
  return single.default(module_or_path);
}
`;
}

/**
 * bundler.jsx: the bundlers' entry, plain JavaScript (no JSX) that re-exports bundler.js. Why the name: `vite`'s
 * dev server pre-bundles every dependency whose entry ends in .js, .mjs, .cjs, .ts, .mts or .cts (its
 * `isOptimizable`), and a pre-bundled bundler.js breaks: the chunk holds its own copy of attention_lab_bg.js,
 * while the .wasm's imports load the package's file, so the instance calls into a module whose `wasm` was never
 * set (`Cannot read properties of undefined (reading '__wbindgen_externrefs')`). Vite serves a .jsx entry
 * unbundled, as it does with `optimizeDeps.exclude`, and every bundler reads it as JavaScript (webpack, Vite's
 * build, esbuild, Rollup and Parcel take .jsx as a module; nothing in it is JSX). tests/package/dev-server.test.mjs.
 */
const BUNDLER_ENTRY = `/* @ts-self-types="./bundler.d.ts" */
// attention-lab for bundlers: bundler.js, re-exported from a .jsx file so that Vite's dev server does not pre-bundle
// it (pre-bundling splits the wasm-bindgen glue in two); there is no JSX here.
export * from './bundler.js';
`;

/** The site's modules the command imports (www/src/), copied unchanged into course/: every module of the diagnosis folder. */
const COURSE_MODULES = ['cases.js', 'variants.js', 'report.js', 'matrix.js', 'script.js', 'runner.worker.js',
  ...readdirSync(join(ROOT, 'www/src/diagnosis')).filter((f) => f.endsWith('.js')).sort().map((f) => `diagnosis/${f}`)];
/** What each challenge folder contributes to course/challenges/: the lesson, the starter and the tests. */
const CHALLENGE_FILES = ['README.md', 'starter.js', 'tests.json'];
/**
 * A challenge folder's model check: model-check.js and the modules of the folder it imports (each
 * import must be `./<file>.js`), and the model file tests.json names (model.weights); [] without one.
 */
function modelCheckFiles(id) {
  const folder = join(ROOT, 'challenges', id);
  if (!existsSync(join(folder, 'model-check.js'))) return [];
  const files = [];
  const visit = (file) => {
    if (files.includes(file)) return;
    files.push(file);
    const text = readFileSync(join(folder, file), 'utf8');
    for (const [, specifier] of text.matchAll(/^(?:import|export) .* from '([^']+)';$/gm)) {
      if (!/^\.\/[\w-]+\.js$/.test(specifier)) fail(`challenges/${id}/${file} imports ${specifier}; a model check may import only modules of its own folder (./<file>.js), which the package ships`);
      visit(specifier.slice(2));
    }
  };
  visit('model-check.js');
  const weights = JSON.parse(readFileSync(join(folder, 'tests.json'), 'utf8')).model?.weights;
  if (weights) files.push(weights);
  return files;
}
/** The runner's one dependency, bundled into the tarball. */
const ACORN = join(ROOT, 'www/node_modules/acorn');

for (const module of COURSE_MODULES) {
  const text = readFileSync(join(ROOT, 'www/src', module), 'utf8');
  const imports = [...text.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
  // an import relative to the module's own folder (diagnosis/x.js imports ../matrix.js)
  const unexpected = imports.filter((specifier) => specifier !== 'acorn' && !COURSE_MODULES.includes(posix.normalize(posix.join(posix.dirname(module), specifier))));
  if (unexpected.length) fail(`www/src/${module} imports ${unexpected.join(', ')}, which the package does not ship; update COURSE_MODULES in tests/package/assemble.mjs`);
}
if (!existsSync(join(ACORN, 'package.json'))) fail('www/node_modules/acorn is missing; run `cd www && npm ci`');
const acornVersion = JSON.parse(readFileSync(join(ACORN, 'package.json'), 'utf8')).version;
const wantedAcorn = manifest.dependencies?.acorn?.match(/^\^(\d+)\.(\d+)\.(\d+)$/)?.slice(1).map(Number);
const [aMajor, aMinor, aPatch] = acornVersion.split('.').map(Number);
if (!wantedAcorn || !manifest.bundleDependencies?.includes('acorn')) fail('pkg.json must depend on acorn as ^x.y.z and bundle it');
if (aMajor !== wantedAcorn[0] || aMinor < wantedAcorn[1] || (aMinor === wantedAcorn[1] && aPatch < wantedAcorn[2])) {
  fail(`www/node_modules/acorn is ${acornVersion}, which pkg.json's ${manifest.dependencies.acorn} does not allow`);
}

// ---- pass 3: copy into a fresh pkg/ ------------------------------------------

rmSync(OUT, { recursive: true, force: true });
mkdirSync(join(OUT, 'threads'), { recursive: true });
mkdirSync(join(OUT, LIGHT), { recursive: true });
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
cpSync(join(ROOT, BUILDS.webThreads.dir, SNIPPETS), join(OUT, 'threads', SNIPPETS), { recursive: true });
cpSync(join(ROOT, BUILDS.webAttention.dir, SNIPPETS), join(OUT, LIGHT, SNIPPETS), { recursive: true });
// The snippets are ES modules that the Node glue require()s, in a package whose "type" is
// "module": threads/ gets a package.json without "type", where Node tells CommonJS and ES modules
// apart by their syntax (as in the folder wasm-pack makes).
writeFileSync(join(OUT, 'threads', 'package.json'), JSON.stringify({ private: true, description: 'the threads build of attention-lab (see ../node.cjs and ../web.js)' }, null, 2) + '\n');
// Node's entry: the threads build's glue, which instantiates itself on the main thread only (its
// pool's workers call initSync with the shared memory); in any other thread this file does.
writeFileSync(join(OUT, 'node.cjs'), `/* @ts-self-types="./node.d.cts" */
// attention-lab for Node: the threads build (see initThreadPool); its glue is threads/attention_lab.cjs.
module.exports = require('./threads/${NAME}.cjs');
module.exports.initSync();
`);
// The web entry: init() picks the build (see WEB_ENTRY).
writeFileSync(join(OUT, 'web.js'), webEntry(readFileSync(join(ROOT, BUILDS.web.dir, `${NAME}.js`), 'utf8')));
// The bundlers' entry (the `browser` and `default` conditions): bundler.js re-exported from a file Vite's
// dependency optimizer leaves alone (see BUNDLER_ENTRY).
writeFileSync(join(OUT, 'bundler.jsx'), BUNDLER_ENTRY);
writeFileSync(join(OUT, LIGHT, 'bundler.jsx'), BUNDLER_ENTRY);
// the command, the site's modules, the challenges and the runner's parser
cpSync(join(ROOT, 'cli'), join(OUT, 'cli'), { recursive: true, filter: (path) => !/\.test\.mjs$/.test(path) });
mkdirSync(join(OUT, 'course/challenges'), { recursive: true });
mkdirSync(join(OUT, 'course/diagnosis'), { recursive: true });
for (const module of COURSE_MODULES) copyFileSync(join(ROOT, 'www/src', module), join(OUT, 'course', module));
for (const id of readdirSync(join(ROOT, 'challenges')).filter((f) => /^\d\d-/.test(f)).sort()) {
  mkdirSync(join(OUT, 'course/challenges', id));
  const traced = existsSync(join(ROOT, 'challenges', id, 'diagnosis.json')) ? ['diagnosis.json'] : []; // the probes and the traced probes (not 10)
  for (const file of [...CHALLENGE_FILES, ...traced, ...modelCheckFiles(id)]) copyFileSync(join(ROOT, 'challenges', id, file), join(OUT, 'course/challenges', id, file));
}
cpSync(ACORN, join(OUT, 'node_modules/acorn'), { recursive: true });
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
  ...Object.values(manifest.bin ?? {}),
  ...manifest.sideEffects,
].filter(Boolean);
for (const path of new Set(named)) {
  if (!existsSync(join(OUT, path))) fail(`pkg.json names ${path}, which the package does not contain`);
}
const produced = readdirSync(OUT).filter((f) => !['package.json', 'README.md', 'LICENSE', 'node_modules'].includes(f)).sort();
const listed = [...manifest.files].sort();
if (produced.join() !== listed.join()) {
  fail(`pkg/ holds [${produced.join(', ')}] but pkg.json "files" lists [${listed.join(', ')}]`);
}

console.log(`assemble: pkg/ holds attention-lab@${manifest.version} (${produced.length + 3} entries, and acorn ${acornVersion} bundled)`);
