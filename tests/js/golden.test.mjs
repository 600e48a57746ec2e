// The golden fixtures (tests/golden): every export's results on 200 seeded cases per group, bit
// for bit, against the committed digests. See tests/golden/golden.mjs for what and how.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { compute, differences, readFixture } from '../golden/golden.mjs';

const require = createRequire(import.meta.url);
const lab = require('../../target/pkg-node/attention_lab.js');

test('every group of the golden fixtures is reproduced bit for bit', () => {
  const fixture = readFixture();
  assert.ok(Object.keys(fixture).length >= 16, 'the fixture covers every export');
  assert.deepEqual(differences(compute(lab), fixture), []);
});

test('the check sees one flipped bit and names the group and the case (self-test)', () => {
  const fixture = readFixture();
  const [name] = Object.keys(fixture);
  const table = compute(lab);
  const changed = structuredClone(table);
  const digest = changed[name].each[7];
  changed[name].each[7] = (digest[0] === '0' ? '1' : '0') + digest.slice(1);
  changed[name].sha256 = 'x'.repeat(64);
  const found = differences(changed, fixture);
  assert.equal(found.length, 1);
  assert.ok(found[0].startsWith(`${name}: SHA-256 differs; first different case 7`), found[0]);
  // and a lost group is named too
  delete changed[name];
  assert.ok(differences(changed, fixture).some((line) => line.startsWith(`${name}: not computed`)));
});
