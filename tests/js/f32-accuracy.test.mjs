// How far the Float32Array path (f32, SIMD kernels) is from the f64 path on the same inputs, measured on the
// benchmark's inputs (tests/bench: entries in [−1, 1), and for the layer its seeded weights), and the one
// statement the docs make about it: docs/api.md and the package's .d.ts must say the same, and it must hold.
//   node tests/js/f32-accuracy.test.mjs      prints the table (the figures in docs/api.md come from it)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import lab from './support/lab.mjs';
import { seeded } from './support/mulberry32.mjs';

/** The docs' statement: "agree with the f64 path to within 1e-5 of the output's largest entry". */
const STATEMENT = /agree with the f64 path to within (\de-\d) of the (?:output's|result's) largest entry/;

const CASES = [
  { fn: 'dotProductAttention', t: 16, c: 64 },
  { fn: 'multiHeadAttention', t: 16, c: 64, h: 4 },
  { fn: 'multiHeadAttention', t: 128, c: 768, h: 12 },
  { fn: 'multiHeadAttention', t: 1024, c: 768, h: 12 },
  { fn: 'multiHeadAttention', t: 256, c: 64, h: 4, scale: 4 },
  { fn: 'layer', t: 128, c: 768, h: 12 },
  { fn: 'layer', t: 70, c: 64, h: 4, b: 2, causal: true },
];

/** Runs one case in both precisions; `{ relative, absolute }`: the largest |f32 − f64| over max |f64|, and itself. */
function measure({ fn, t, c, h, b = 1, scale = 1, causal = false }) {
  const shape = b === 1 ? [t, c] : [b, t, c];
  const [q, k, v] = [1, 2, 3].map((seed) => seeded(b * t * c, seed, { scale }));
  const as = (Array, x) => ({ data: Array.from(x), shape });
  let f32;
  let f64;
  if (fn === 'layer') {
    const layer = new lab.MultiHeadAttention({ embedDim: c, numHeads: h, seed: 5 });
    try {
      f32 = layer.forward(as(Float32Array, q), as(Float32Array, k), as(Float32Array, v), { causal }).output.data;
      f64 = layer.forward(as(Float64Array, q), as(Float64Array, k), as(Float64Array, v), { causal }).output.data;
    } finally {
      layer.free();
    }
  } else {
    const options = fn === 'dotProductAttention' ? { causal } : { numberOfHeads: h, headDimensions: c / h, causal };
    f32 = lab[fn](as(Float32Array, q), as(Float32Array, k), as(Float32Array, v), options).data;
    f64 = lab[fn](as(Float64Array, q), as(Float64Array, k), as(Float64Array, v), options).data;
  }
  let [absolute, largest] = [0, 0];
  for (let i = 0; i < f64.length; i += 1) {
    absolute = Math.max(absolute, Math.abs(f32[i] - f64[i]));
    largest = Math.max(largest, Math.abs(f64[i]));
  }
  return { relative: absolute / largest, absolute, largest };
}

const label = ({ fn, t, c, h, b = 1, scale = 1, causal }) =>
  `${fn} ${b > 1 ? `B=${b}, ` : ''}T=${t}, C=${c}${h ? `, h=${h}` : ''}${scale !== 1 ? `, inputs ×${scale}` : ''}${causal ? ', causal' : ''}`;

const statements = () => {
  const api = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const types = readFileSync(new URL('../../target/pkg-node/attention_lab.d.ts', import.meta.url), 'utf8');
  // lines joined: a sentence may wrap, in Markdown or in a doc comment (` * `)
  const joined = (text) => text.replace(/[ \t]*\n[ \t]*(\* ?)?/g, ' ');
  return { 'docs/api.md': joined(api), 'the .d.ts': joined(types) };
};

test('docs/api.md and the .d.ts make one statement about f32 accuracy, and no other', () => {
  const found = {};
  for (const [where, text] of Object.entries(statements())) {
    const all = [...text.matchAll(new RegExp(STATEMENT.source, 'g'))].map((m) => m[1]);
    assert.ok(all.length > 0, `${where} states the f32 accuracy as "${STATEMENT.source}"`);
    assert.doesNotMatch(text, /agree with the f64 path to about/, `${where} keeps an older wording`);
    found[where] = [...new Set(all)];
  }
  assert.deepEqual(found['the .d.ts'], found['docs/api.md']);
  assert.equal(found['docs/api.md'].length, 1);
});

test('the f32 path is within the stated bound of the f64 path on the benchmark\'s inputs', { timeout: 300_000 }, () => {
  const bound = Number(statements()['docs/api.md'].match(STATEMENT)[1]);
  for (const cs of CASES) {
    const { relative } = measure(cs);
    assert.ok(relative <= bound, `${label(cs)}: f32 is ${relative.toExponential(2)} of the largest entry away from f64 (the docs say within ${bound})`);
    assert.ok(relative > 0, `${label(cs)}: f32 equals f64 exactly, so it is not measuring the f32 path`);
  }
});

if (process.argv[1] === new URL(import.meta.url).pathname && !process.env.NODE_TEST_CONTEXT) {
  console.log('| case | max abs(f32 − f64) | max abs(f64) | ratio |\n| --- | --- | --- | --- |');
  for (const cs of CASES) {
    const { relative, absolute, largest } = measure(cs);
    console.log(`| ${label(cs)} | ${absolute.toExponential(2)} | ${largest.toPrecision(3)} | ${relative.toExponential(2)} |`);
  }
}
