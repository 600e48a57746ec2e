// Threads (issue 15): the packed package in a fresh project, in Node, whose entry is the threads
// build. initThreadPool(n) starts n threads and every path (issue 21: also the f32 Transformer's
// trainStep) gives the same bits on 1, 2 and 3 of them, and the same bits as the default single-threaded build (target/pkg-node). Bad arguments
// are clear errors, a second call keeps the pool, and a process with a pool exits by itself.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIXTURES, ROOT, freshProject } from './support.mjs';

const project = freshProject('');
const installed = join(project, 'node_modules', 'attention-lab') + '/';
const PATHS = join(FIXTURES, 'threads', 'paths.cjs');

/** Runs `code` (CommonJS) or the paths fixture in a fresh process; it must exit by itself within a minute. */
function node(args) {
  const result = spawnSync(process.execPath, args, { cwd: project, encoding: 'utf8', timeout: 60_000 });
  assert.equal(result.signal, null, `the process did not exit by itself: ${result.stderr}`);
  assert.equal(result.status, 0, result.stderr + result.stdout);
  return JSON.parse(result.stdout.trim().split('\n').at(-1));
}

test('every path gives the same bits on 1, 2 and 3 threads, and as the single-threaded build', () => {
  const runs = [1, 2, 3].map((n) => node([PATHS, installed, String(n)]));
  runs.forEach((run, i) => {
    const n = i + 1;
    assert.equal(run.inUse, n, `initThreadPool(${n}) resolves to ${n}`);
    assert.deepEqual(run.info, { threads: n, threadsBuild: true, reason: n === 1 ? 'initThreadPool was asked for 1 thread' : null });
  });
  const single = node([PATHS, join(ROOT, 'target', 'pkg-node', 'attention_lab.js'), '2']);
  assert.equal(single.inUse, 1, "the default build's initThreadPool resolves to 1");
  assert.equal(single.info.threadsBuild, false);
  assert.match(single.info.reason, /single-threaded/);
  assert.equal(Object.keys(runs[0].hashes).length, 16);
  for (const [path, hash] of Object.entries(runs[0].hashes)) {
    assert.equal(runs[1].hashes[path], hash, `${path}: 2 threads`);
    assert.equal(runs[2].hashes[path], hash, `${path}: 3 threads`);
    assert.equal(single.hashes[path], hash, `${path}: the single-threaded build`);
  }
});

test('initThreadPool: the default, bad arguments, a second call, and threadsInfo before it', () => {
  const code = `
const lab = require(${JSON.stringify(installed)});
const caught = (f) => { try { f(); return null; } catch (e) { return [e.name, e.message]; } };
(async () => {
  const before = lab.threadsInfo();
  const errors = [caught(() => lab.initThreadPool('2')), caught(() => lab.initThreadPool(0)), caught(() => lab.initThreadPool(2.5)), caught(() => lab.initThreadPool(65))];
  const first = await lab.initThreadPool();
  const second = await lab.initThreadPool(3);
  const works = lab.multiHeadAttention([[1, 2], [3, 4]], [[1, 2], [3, 4]], [[5, 6], [7, 8]], 2, 1);
  console.log(JSON.stringify({ before, errors, first, second, after: lab.threadsInfo(), works }));
})();`;
  const got = node(['-e', code]);
  assert.deepEqual(got.before, { threads: 1, threadsBuild: true, reason: 'initThreadPool has not been called' });
  assert.deepEqual(got.errors.map(([name]) => name), ['TypeError', 'RangeError', 'RangeError', 'RangeError']);
  assert.match(got.errors[0][1], /^initThreadPool\(threads\): threads is a string; expected a number of threads from 1 to 64/);
  assert.match(got.errors[2][1], /threads is 2\.5; expected an integer from 1 to 64/);
  const cores = Math.min(availableParallelism(), 64);
  assert.equal(got.first, cores, 'the default is the core count');
  assert.equal(got.second, cores, 'the pool is started once: a second call resolves to the threads in use');
  assert.equal(got.after.threads, cores);
  assert.equal(got.works[0][0].toFixed(6), '6.761594');
});

test('a worker thread of the user gets a working module of its own', () => {
  const code = `
const { Worker } = require('node:worker_threads');
const worker = new Worker(\`const lab = require(${JSON.stringify(installed)});
require('node:worker_threads').parentPort.postMessage(lab.dotProductAttention([[1]], [[1]], [[5]]));\`, { eval: true });
worker.once('message', (m) => { console.log(JSON.stringify(m)); worker.terminate(); });`;
  assert.deepEqual(node(['-e', code]), [[5]]);
});

test('an ES module run with --input-type=module (which its workers inherit) starts the pool too', () => {
  const code = `const { default: lab } = await import(${JSON.stringify(pathToFileURL(join(installed, 'node.cjs')).href)});
console.log(JSON.stringify({ inUse: await lab.initThreadPool(2), info: lab.threadsInfo() }));`;
  assert.deepEqual(node(['--input-type=module', '-e', code]), { inUse: 2, info: { threads: 2, threadsBuild: true, reason: null } });
});

// The pool's workers compute, not only the main thread: a worker whose start failed (a trap in its first
// call into the pool, as binaryen's -O3 caused, see the Makefile's THREADS_WASM_OPT) leaves rayon one thread
// short, and every call still returns the right bits on the main thread alone, so the tests above cannot see
// it. Linux's per-thread CPU times (/proc/self/task) show which threads ran a product of 16 row blocks.
test('a worker of the pool runs part of a large product (not the main thread alone)', { skip: process.platform !== 'linux' && 'needs /proc/self/task' }, () => {
  const code = `
const { readdirSync, readFileSync } = require('node:fs');
const lab = require(${JSON.stringify(installed)});
const ticks = () => Object.fromEntries(readdirSync('/proc/self/task').map((t) => {
  const stat = readFileSync('/proc/self/task/' + t + '/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [t, Number(fields[11]) + Number(fields[12])]; // utime + stime, in clock ticks
}));
(async () => {
  await lab.initThreadPool(2);
  const [T, C, F] = [1024, 256, 1024];
  const X = { data: new Float32Array(T * C).map((_, i) => Math.sin(i)), shape: [T, C] };
  const W = { data: new Float32Array(C * F).map((_, i) => Math.cos(i)), shape: [C, F] };
  const before = ticks();
  const started = Date.now();
  // about 0.3 s of products on one thread here; a waiting worker is woken by each
  while (Date.now() - started < 1500) lab.linear(X, W);
  const after = ticks();
  const main = String(process.pid);
  const others = Object.keys(after).filter((t) => t !== main).map((t) => after[t] - (before[t] ?? 0));
  console.log(JSON.stringify({ main: after[main] - before[main], busiestOther: Math.max(...others) }));
  process.exit(0);
})();`;
  const got = node(['-e', code]);
  assert.ok(got.main > 0, `the main thread ran: ${JSON.stringify(got)}`);
  // a dead worker gets 0 ticks (seen: 1–3 ticks for Node's own threads over the same time); a live one, tens
  assert.ok(got.busiestOther >= 10, `no worker computed: the busiest other thread got ${got.busiestOther} clock ticks in 1.5 s (${JSON.stringify(got)})`);
});
