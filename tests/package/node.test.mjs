// The packed tarball, installed into a fresh project, from Node ESM and Node CommonJS.
// Both resolve to the nodejs build (node.cjs) and compute synchronously, with no init call.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHALLENGE, assertCloseMatrix, freshProject, run } from './support.mjs';

const project = freshProject('node');

/** Runs a consumer script in the project and parses the JSON it prints. */
const consume = (script) => JSON.parse(run(process.execPath, [script], { cwd: project }));

for (const [kind, script] of [['ESM import', 'esm.mjs'], ['CommonJS require', 'cjs.cjs']]) {
  test(`Node ${kind}: the challenge's values, synchronously, from the nodejs build`, () => {
    const { output, positional, error, resolved } = consume(script);
    assertCloseMatrix(assert, output, CHALLENGE.expected, CHALLENGE.tolerance);
    assert.deepEqual(positional, output, 'the positional form gives the same bits');
    assert.match(resolved, /node_modules[\\/]attention-lab[\\/]node\.cjs$/);
    assert.equal(error.name, 'RangeError');
    assert.match(error.message, /K is 1×2 but Q is 2×2/);
  });
}

test('ESM import and CommonJS require share one module instance (no dual-package hazard)', () => {
  const code = `import { createRequire } from 'node:module';
import * as esm from 'attention-lab';
const cjs = createRequire(import.meta.url)('attention-lab');
console.log(esm.multiHeadAttention === cjs.multiHeadAttention);`;
  assert.equal(run(process.execPath, ['--input-type=module', '-e', code], { cwd: project }).trim(), 'true');
});
