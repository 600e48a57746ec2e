// `npm pack` in pkg/ gives exactly the package's runtime files: no tests, no Rust sources,
// no wasm-pack leftovers; and the manifest's version is Cargo.toml's. `make package` also runs
// `npm publish --dry-run --json` in pkg/; its file list and npm's warnings are checked here.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { PKG, ROOT, run, temporaryDirectory } from './support.mjs';

/** The challenge folders: each ships its lesson, starter and tests (not its solution). */
const CHALLENGES = readdirSync(join(ROOT, 'challenges')).filter((f) => /^\d\d-/.test(f)).sort();

/** The model checks of 09, 10 and 11, as the page runs them: the module, what it imports, the trained model. */
const MODEL_CHECKS = {
  '09-attention-in-a-model': ['forward.js', 'model-check.js', 'model.json'],
  '10-induction-head': ['grade.js', 'model-check.js'],
  '11-find-the-circuit': ['model-check.js', 'model.json'],
};

const EXPECTED_FILES = [
  'LICENSE', // MIT, as pkg.json and Cargo.toml say
  'README.md',
  // attention-lab/attention and attention-lab/attention/web: the attention-only build (no Transformer), the light entry
  'attention/attention_lab_bg.js',
  'attention/attention_lab_bg.wasm', // one module, shared by its bundler and web glue
  'attention/bundler.d.ts',
  'attention/bundler.js',
  'attention/bundler.jsx',
  'attention/web.d.ts',
  'attention/web.js',
  'attention_lab_bg.js', // the bundler build's glue, imported by bundler.js
  'attention_lab_bg.wasm', // one module, shared by the three builds
  'bundler.d.ts',
  'bundler.js',
  'bundler.jsx', // the bundlers' entry: bundler.js re-exported where Vite's dev server does not pre-bundle it
  // the command `attention-lab` (pkg.json bin) and the sandbox for the learner's code
  'cli/attention-lab.mjs',
  'cli/check.mjs',
  'cli/course.mjs',
  'cli/deny-imports.mjs',
  'cli/format.mjs',
  'cli/sandbox.mjs',
  'cli/session.mjs',
  // the site's own modules (www/src/), unchanged: the command runs the same cases and diagnosis
  'course/cases.js',
  ...CHALLENGES.flatMap((id) => ['README.md', 'starter.js', 'tests.json', ...(existsSync(join(ROOT, 'challenges', id, 'diagnosis.json')) ? ['diagnosis.json'] : []), ...(MODEL_CHECKS[id] ?? [])].sort().map((file) => `course/challenges/${id}/${file}`)),
  // the diagnosis: the probe engine (locate.js and the checks it reads from each diagnosis.json), and
  // the first wrong line (the learner's code instrumented with acorn, aligned with the reference's steps)
  'course/diagnosis/align.js',
  'course/diagnosis/behind.js',
  'course/diagnosis/bounds.js',
  'course/diagnosis/calls.js',
  'course/diagnosis/checks.js',
  'course/diagnosis/composition.js',
  'course/diagnosis/cuts.js',
  'course/diagnosis/feeds.js',
  'course/diagnosis/first-line.js',
  'course/diagnosis/foreign.js',
  'course/diagnosis/forms.js',
  'course/diagnosis/heads.js',
  'course/diagnosis/instrument.js',
  'course/diagnosis/kv.js',
  'course/diagnosis/locate.js',
  'course/diagnosis/loops.js',
  'course/diagnosis/meter.js',
  'course/diagnosis/probes.js',
  'course/diagnosis/projections.js',
  'course/diagnosis/reference.js',
  'course/diagnosis/repair.js',
  'course/diagnosis/repaired.js',
  'course/diagnosis/returns.js',
  'course/diagnosis/rope.js',
  'course/diagnosis/scale.js',
  'course/diagnosis/sizes.js',
  'course/diagnosis/slice.js',
  'course/diagnosis/steps.js',
  'course/diagnosis/stores.js',
  'course/diagnosis/structure.js',
  'course/diagnosis/syntax.js',
  'course/diagnosis/twice.js',
  'course/diagnosis/weights-mask.js',
  'course/diagnosis/weights.js',
  'course/diagnosis/words.js',
  'course/matrix.js',
  'course/report.js',
  'course/runner.worker.js',
  'course/script.js',
  'course/variants.js',
  'node.cjs', // Node's entry: requires threads/attention_lab.cjs
  'node.d.cts',
  'package.json',
  'threads/attention_lab.cjs', // the threads build's Node glue (CommonJS)
  'threads/attention_lab.js', // the threads build's web glue, loaded by web.js on an isolated page
  'threads/attention_lab_bg.wasm', // the threads build (shared memory, +atomics), one for both
  'threads/package.json', // no "type": the Node glue require()s its ES-module snippets
  'web-single.js', // the single-threaded web glue, loaded by web.js elsewhere
  'web.d.ts',
  'web.js', // attention-lab/web: init() picks the build
];

test('npm pack lists exactly the expected files', () => {
  const [report] = JSON.parse(run('npm', ['pack', '--dry-run', '--json', '--loglevel=error'], { cwd: PKG }));
  const paths = report.files.map((f) => f.path).sort();
  // wasm-bindgen names the snippet folder after the crate and a hash of it
  const snippets = paths.filter((p) => p.startsWith('snippets/'));
  // the light entry has its own copy of the readers
  assert.deepEqual(paths.filter((p) => p.startsWith('attention/snippets/')).map((p) => p.replace(/attention-lab-[0-9a-f]{16}/, 'H')), ['attention/snippets/H/src/wasm/convert.js']);
  assert.equal(snippets.length, 1, 'the readers (src/wasm/convert.js) are packed as the one snippet');
  for (const path of snippets) assert.match(path, /^snippets\/attention-lab-[0-9a-f]{16}\/src\/wasm\/convert\.js$/);
  // the threads build has its own copy of the readers, and the workers' starter
  const threadSnippets = paths.filter((p) => p.startsWith('threads/snippets/'));
  assert.deepEqual(threadSnippets.map((p) => p.replace(/attention-lab-[0-9a-f]{16}/, 'H')), ['threads/snippets/H/src/wasm/convert.js', 'threads/snippets/H/src/wasm/threads.js']);
  // acorn (the runner's parser) is bundled: its own files, whatever its version ships
  const bundled = paths.filter((p) => p.startsWith('node_modules/'));
  assert.deepEqual(report.bundled, ['acorn']);
  for (const file of ['node_modules/acorn/package.json', 'node_modules/acorn/LICENSE', 'node_modules/acorn/dist/acorn.mjs']) assert.ok(bundled.includes(file), file);
  assert.deepEqual(bundled.filter((p) => !p.startsWith('node_modules/acorn/')), []);
  assert.deepEqual(paths.filter((p) => !p.includes('snippets/') && !p.startsWith('node_modules/')), EXPECTED_FILES);
  // the bin is executable in the tarball
  assert.equal(report.files.find((f) => f.path === 'cli/attention-lab.mjs').mode & 0o111, 0o111);
  assert.equal(report.name, 'attention-lab');
});

test('the packed manifest is pkg.json, with Cargo.toml\'s version', () => {
  const packed = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'));
  assert.deepEqual(packed, JSON.parse(readFileSync(join(ROOT, 'pkg.json'), 'utf8')));
  const cargoVersion = readFileSync(join(ROOT, 'Cargo.toml'), 'utf8').match(/^version = "([^"]+)"/m)[1];
  assert.equal(packed.version, cargoVersion);
});

test('assembling refuses a pkg.json whose version is not Cargo.toml\'s', () => {
  // A copy of the script in a scratch tree whose pkg.json is one patch version ahead.
  const scratch = temporaryDirectory('version');
  mkdirSync(join(scratch, 'tests/package'), { recursive: true });
  copyFileSync(join(ROOT, 'tests/package/assemble.mjs'), join(scratch, 'tests/package/assemble.mjs'));
  copyFileSync(join(ROOT, 'Cargo.toml'), join(scratch, 'Cargo.toml'));
  const manifest = JSON.parse(readFileSync(join(ROOT, 'pkg.json'), 'utf8'));
  const [major, minor, patch] = manifest.version.split('.').map(Number);
  const ahead = `${major}.${minor}.${patch + 1}`;
  writeFileSync(join(scratch, 'pkg.json'), JSON.stringify({ ...manifest, version: ahead }));
  assert.throws(() => run(process.execPath, [join(scratch, 'tests/package/assemble.mjs')]),
    (error) => error.status === 1 && error.stderr.includes(`pkg.json has version ${ahead} but Cargo.toml has ${manifest.version}`));
  assert.ok(!existsSync(join(scratch, 'pkg')), 'no pkg/ was written');
});

const PUBLISH_JSON = join(ROOT, 'target/npm-publish-dry-run.json');
const PUBLISH_LOG = join(ROOT, 'target/npm-publish-dry-run.log');

/** What `make package`'s `npm publish --dry-run --json` reported: { files, log, report }. */
function publishDryRun() {
  assert.ok(existsSync(PUBLISH_JSON), 'target/npm-publish-dry-run.json is missing; run `make package`');
  const report = JSON.parse(readFileSync(PUBLISH_JSON, 'utf8'))['attention-lab'];
  return { report, files: report.files.map((f) => f.path).sort(), log: readFileSync(PUBLISH_LOG, 'utf8') };
}

test('npm publish --dry-run (make package) uploads this pkg/: the same tarball as npm pack, the expected files', () => {
  const { report, files } = publishDryRun();
  const [packed] = JSON.parse(run('npm', ['pack', '--dry-run', '--json', '--loglevel=error'], { cwd: PKG }));
  assert.equal(report.integrity, packed.integrity, 'the dry run is stale (pkg/ changed since); run `make package`');
  assert.equal(report.id, `attention-lab@${JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8')).version}`);
  assert.deepEqual(files.filter((p) => !p.includes('snippets/') && !p.startsWith('node_modules/acorn/')), EXPECTED_FILES);
});

test('npm publish --dry-run: no test files, no source maps whose sources are missing, nothing npm had to correct', () => {
  const { files, log } = publishDryRun();
  const tests = files.filter((p) => /(^|\/)(tests?|__tests__|fixtures|spec)(\/|$)|\.(test|spec)\.[cm]?[jt]s$/.test(p));
  assert.deepEqual(tests, [], 'test files in the package');
  const packed = new Set(files);
  // every source map, and every sourceMappingURL comment in a packed script, must resolve inside the package
  const maps = files.filter((p) => p.endsWith('.map'));
  for (const script of files.filter((p) => /\.(c|m)?js$/.test(p))) {
    const url = readFileSync(join(PKG, script), 'utf8').match(/\/\/# sourceMappingURL=(\S+)\s*$/)?.[1];
    if (!url) continue;
    assert.ok(!url.startsWith('data:') || url.includes('base64'), `${script}: unreadable inline source map`);
    if (!url.startsWith('data:')) {
      const map = normalize(join(dirname(script), url));
      assert.ok(packed.has(map), `${script} points to ${url}, which is not packed`);
    }
  }
  for (const map of maps) {
    const { sources = [], sourceRoot = '', sourcesContent } = JSON.parse(readFileSync(join(PKG, map), 'utf8'));
    sources.forEach((source, i) => {
      if (sourcesContent?.[i] != null) return; // carried inside the map
      const path = normalize(join(dirname(map), sourceRoot, source));
      assert.ok(packed.has(path), `${map} names ${source}, which is neither packed nor embedded`);
    });
  }
  assert.doesNotMatch(log, /auto-corrected|errors corrected|npm pkg fix/, `npm rewrote pkg.json on publish:\n${log}`);
  assert.doesNotMatch(log, /npm (ERR|error)/, log);
});
