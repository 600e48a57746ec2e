// Threads in browsers (issue 15): `attention-lab/web` on a plain page in a fresh project, served
// with and without cross-origin isolation (COOP/COEP), in Chromium and Firefox. Isolated: init()
// loads the threads build, initThreadPool(2) starts a worker and resolves to 2, and the paths give
// the same bits before and after. Not isolated: the single-threaded build, initThreadPool resolves
// to 1 and threadsInfo says why. Both give the bytes Node gives on 2 threads (SHA-256).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIXTURES, ISOLATION_HEADERS, freshProject, launchChromium, launchFirefox, pageResult, serve } from './support.mjs';

let project, isolated, plain, inNode;
before(async () => {
  project = freshProject('threads-page');
  isolated = await serve(project, ISOLATION_HEADERS);
  plain = await serve(project);
  // the same paths in Node, with the installed package's threads build on 2 threads
  const code = `import { paths } from ${JSON.stringify(pathToFileURL(join(FIXTURES, 'threads-page', 'paths.js')).href)};
const { default: lab } = await import(${JSON.stringify(pathToFileURL(join(project, 'node_modules', 'attention-lab', 'node.cjs')).href)});
const inUse = await lab.initThreadPool(2);
console.log(JSON.stringify({ inUse, hashes: await paths(lab) }));`;
  inNode = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: project, encoding: 'utf8', timeout: 60_000 }));
});
after(async () => {
  await isolated?.close();
  await plain?.close();
});

for (const [name, launch] of [['Chromium', launchChromium], ['Firefox', launchFirefox]]) {
  test(`${name}: on a cross-origin isolated page, initThreadPool(2) starts 2 threads with the same bits`, async () => {
    const browser = await launch();
    try {
      const { result, errors } = await pageResult(browser, isolated.url);
      assert.deepEqual(errors, []);
      assert.equal(result.error, undefined, result.error);
      assert.equal(result.isolated, true);
      assert.deepEqual(result.before, { threads: 1, threadsBuild: true, reason: 'initThreadPool has not been called' });
      assert.equal(result.inUse, 2);
      assert.deepEqual(result.after, { threads: 2, threadsBuild: true, reason: null });
      assert.deepEqual(result.two, result.one);
      assert.equal(inNode.inUse, 2);
      assert.deepEqual(result.two, inNode.hashes, 'the same bytes as Node on 2 threads');
    } finally {
      await browser.close();
    }
  });

  test(`${name}: without isolation, the single-threaded build, initThreadPool resolves to 1 and threadsInfo says why`, async () => {
    const browser = await launch();
    try {
      const { result, errors } = await pageResult(browser, plain.url);
      assert.deepEqual(errors, []);
      assert.equal(result.error, undefined, result.error);
      assert.equal(result.isolated, false);
      assert.equal(result.inUse, 1);
      assert.equal(result.after.threads, 1);
      assert.equal(result.after.threadsBuild, false);
      assert.match(result.after.reason, /single-threaded/);
      assert.deepEqual(result.two, result.one);
    } finally {
      await browser.close();
    }
  });
}
