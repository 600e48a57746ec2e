// Golden fixtures: SHA-256 digests of what every export returns on a few thousand seeded valid
// cases — outputs, every trace step, the layer's weights, gradients and grads(), and the exact
// error class and message where a case is refused — so that a refactor that must not change
// results (issue 11, "one attention engine") can prove it, and keeps proving it.
//
//   node tests/golden/golden.mjs            check the Node build against tests/golden/golden.json
//   node tests/golden/golden.mjs --write    regenerate it (only when a change is MEANT to change
//                                           results; say which groups and why in the commit)
//
// The cases come from the fuzzer's export table (tests/fuzz/exports.mjs, `valid(r)`): group g of
// that table runs CASES cases with seeds derived from its name, so appending entries to the table
// leaves the other groups alone. Changing an entry's generator changes its cases: regenerate.
// Every number is hashed by its IEEE bits (f64 for numbers and Float64Array, f32 for
// Float32Array), so the check is bit for bit in both precisions.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { FUZZ_EXPORTS } from '../fuzz/exports.mjs';
import * as G from '../fuzz/generate.mjs';

const require = createRequire(import.meta.url);
const FIXTURE = new URL('./golden.json', import.meta.url);
export const CASES = 200;

/** A stable 32-bit seed from a group name and a case index. */
function seedOf(name, i) {
  let h = 2166136261;
  for (const ch of `${name}#${i}`) h = Math.imul(h ^ ch.codePointAt(0), 16777619) >>> 0;
  return h;
}

/** Feeds a canonical encoding of `value` into `hash`: numbers by bits, typed arrays by bytes, keys sorted. */
export function feed(hash, value) {
  const tag = (t) => hash.update(t);
  if (typeof value === 'number') {
    const b = Buffer.alloc(8);
    b.writeDoubleLE(value);
    tag('n');
    hash.update(b);
  } else if (typeof value === 'string') {
    tag(`s${value.length}:`);
    hash.update(value);
  } else if (typeof value === 'boolean' || value === null || value === undefined) {
    tag(`k${String(value)};`);
  } else if (typeof value === 'bigint') {
    tag(`b${value};`);
  } else if (ArrayBuffer.isView(value)) {
    tag(`t${value.constructor.name}${value.length}:`);
    hash.update(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  } else if (Array.isArray(value)) {
    tag(`a${value.length}:`);
    for (const x of value) feed(hash, x);
  } else if (typeof value === 'object') {
    const keys = Object.keys(value).sort();
    tag(`o${keys.length}:`);
    for (const k of keys) {
      feed(hash, k);
      feed(hash, value[k]);
    }
  } else {
    tag(`?${typeof value};`);
  }
}

/** One case's digest: the result, or the error's class and message. */
function caseDigest(lab, entry, i) {
  const args = entry.valid(G.rng(seedOf(entry.name, i)));
  const hash = createHash('sha256');
  try {
    feed(hash, { ok: entry.call(lab, args) });
  } catch (e) {
    feed(hash, { error: `${e?.name}: ${e?.message}` });
  }
  return hash.digest('hex').slice(0, 16);
}

/** `{ group: { cases, sha256, each: [16-hex digest per case] } }` for the package `lab`. */
export function compute(lab, entries = FUZZ_EXPORTS) {
  const out = {};
  for (const entry of entries) {
    const each = Array.from({ length: CASES }, (_, i) => caseDigest(lab, entry, i));
    out[entry.name] = { cases: CASES, sha256: createHash('sha256').update(each.join('')).digest('hex'), each };
  }
  return out;
}

/** The differences between a computed table and the fixture, one line per group that differs. */
export function differences(actual, expected) {
  const lines = [];
  for (const [name, want] of Object.entries(expected)) {
    const got = actual[name];
    if (!got) {
      lines.push(`${name}: not computed (the export table has no such entry)`);
    } else if (got.sha256 !== want.sha256) {
      const first = want.each.findIndex((d, i) => got.each[i] !== d);
      lines.push(`${name}: SHA-256 differs; first different case ${first} (seed ${seedOf(name, first)})`);
    }
  }
  for (const name of Object.keys(actual)) if (!(name in expected)) lines.push(`${name}: no fixture yet (run --write)`);
  return lines;
}

export const readFixture = () => JSON.parse(readFileSync(FIXTURE, 'utf8'));

if (import.meta.url === `file://${process.argv[1]}`) {
  const lab = require(process.argv.find((a) => a.startsWith('--package='))?.slice(10) ?? '../../target/pkg-node/attention_lab.js');
  const started = performance.now();
  const table = compute(lab);
  const ms = (performance.now() - started).toFixed(0);
  if (process.argv.includes('--write')) {
    writeFileSync(FIXTURE, `${JSON.stringify(table, null, 1)}\n`);
    console.log(`wrote ${Object.keys(table).length} groups × ${CASES} cases in ${ms} ms`);
  } else {
    const diff = differences(table, readFixture());
    console.log(diff.length === 0 ? `golden: ${Object.keys(table).length} groups × ${CASES} cases bit for bit (${ms} ms)` : diff.join('\n'));
    process.exitCode = diff.length === 0 ? 0 : 1;
  }
}
