// The state errors as docs/api.md lists them ("State errors"): the table is read from the docs, each
// situation is made to happen, and the error must be of the documented class with the documented
// message word for word; the object and the module keep working afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import lab from './support/lab.mjs';

const { MultiHeadAttention, KvCache, Transformer } = lab;
// the light entry attention-lab/attention: make build's attention-only build (no Cargo feature `training`)
const light = createRequire(import.meta.url)(new URL('../../target/pkg-node-attention/attention_lab.js', import.meta.url).pathname);

/** The rows of the table under "### State errors": { situation, className, message }. */
function documented() {
  const text = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const section = text.split(/^### State errors$/m)[1]?.split(/^#/m)[0];
  assert.ok(section, 'docs/api.md has a "### State errors" section');
  const code = (cell) => cell.trim().replace(/^(`+) ?([\s\S]*?) ?\1$/, '$2');
  return section.split('\n').filter((line) => line.startsWith('| ') && !/^\| (situation|---)/.test(line)).map((line) => {
    const cells = line.slice(2, -2).split(' | ');
    assert.equal(cells.length, 3, `a row of three cells: ${line}`);
    return { situation: cells[0], className: code(cells[1]), message: code(cells[2]) };
  });
}

const layer = () => new MultiHeadAttention({ embedDim: 4, numHeads: 2, seed: 3 });
const model = (extra = {}) => new Transformer({ vocabSize: 5, contextLength: 4, embedDim: 4, numHeads: 2, numLayers: 1, ...extra });
const X = [[1, 0, 2, 1], [0, 1, 1, 3]];
const freed = (make) => { const o = make(); o.free(); return o; };

/** How to make each documented situation happen, by the start of its cell; each returns the call that must throw. */
const SITUATIONS = [
  ['a method or getter of a freed `MultiHeadAttention`', () => { const l = freed(layer); return [() => l.embedDim, () => l.forward(X), () => l.free()]; }],
  ['the same on a freed `KvCache`', () => { const c = freed(() => layer().createCache()); return [() => c.length, () => c.free()]; }],
  ['the same on a freed `Transformer`', () => { const m = freed(model); return [() => m.step, () => m.getState(), () => m.free()]; }],
  ['a method or getter of a `MultiHeadAttention` not made by attention-lab', () => { const l = Object.create(MultiHeadAttention.prototype); return [() => l.embedDim, () => l.forward(X)]; }],
  ['the same on a `KvCache` not made by attention-lab', () => { const c = new KvCache(); return [() => c.length]; }],
  ['the same on a `Transformer` not made by attention-lab', () => { const m = Object.create(Transformer.prototype); return [() => m.step, () => m.forward([[0, 1]])]; }],
  ['`forward` with `options.cache` made by another layer', () => { const cache = layer().createCache(); const l = layer(); return [() => l.forward(X, undefined, undefined, { cache, causal: true })]; }],
  ['`forward` with a freed `options.cache`', () => { const l = layer(); const cache = l.createCache(); cache.free(); return [() => l.forward(X, undefined, undefined, { cache, causal: true })]; }],
  ['`backward` before any `forward`, or after `setWeights`', () => {
    const fresh = layer();
    const reset = layer();
    reset.forward(X);
    reset.setWeights({ b_O: [0, 0, 0, 0] });
    return [() => fresh.backward(X), () => reset.backward(X)];
  }],
  ['`backward` after a `Float32Array` forward in evaluation mode', () => {
    const l = layer();
    const x = { data: new Float32Array(X.flat()), shape: [2, 4] };
    l.forward(x);
    return [() => l.backward(x)];
  }],
  ['`backward` after a forward with `options.cache`', () => {
    const l = layer();
    l.forward(X, undefined, undefined, { cache: l.createCache(), causal: true });
    return [() => l.backward(X)];
  }],
  ['`grads()` before any `backward`', () => { const l = layer(); l.forward(X); return [() => l.grads()]; }],
  ['`backward` in the light entry', () => {
    const l = new light.MultiHeadAttention({ embedDim: 4, numHeads: 2, seed: 3, dropout: 0.5 });
    const x = { data: new Float32Array(X.flat()), shape: [2, 4] };
    l.forward(X, undefined, undefined, { training: true });
    const f32 = new light.MultiHeadAttention({ embedDim: 4, numHeads: 2 });
    f32.forward(x, undefined, undefined, { training: true });
    const fresh = new light.MultiHeadAttention({ embedDim: 4, numHeads: 2 });
    return [() => l.backward(X), () => f32.backward(x), () => fresh.backward(X)];
  }],
  ['`grads()` in the light entry', () => {
    const l = new light.MultiHeadAttention({ embedDim: 4, numHeads: 2 });
    l.forward(X, undefined, undefined, { training: true });
    return [() => l.grads(), () => l.grads({ dtype: 'float32' })];
  }],
  ['`circuits` on a model with `tiedEmbeddings: true`', () => {
    const [tied, both] = [model({ tiedEmbeddings: true }), model({ tiedEmbeddings: true, numKVHeads: 1 })];
    return [() => tied.circuits({ layer: 0, head: 0 }), () => both.circuits({ layer: 0, head: 0 })];
  }],
  ['`circuits` on a model whose query heads share K/V heads', () => { const m = model({ numKVHeads: 1 }); return [() => m.circuits({ layer: 0, head: 0 })]; }],
  ['`compositionScores` on a model with `tiedEmbeddings: true`', () => { const m = model({ tiedEmbeddings: true }); return [() => m.compositionScores()]; }],
  ['`compositionScores` on a model whose query heads share K/V heads', () => { const m = model({ numKVHeads: 1 }); return [() => m.compositionScores()]; }],
];

test('docs/api.md lists every state error the suite makes happen, and nothing else', () => {
  const rows = documented();
  assert.equal(rows.length, SITUATIONS.length, `the table has ${rows.length} rows; this test makes ${SITUATIONS.length} situations happen`);
  for (const [start] of SITUATIONS) {
    assert.equal(rows.filter((row) => row.situation.startsWith(start)).length, 1, `one row of docs/api.md's table starts with ${start}`);
  }
});

for (const [start, make] of SITUATIONS) {
  test(`state error: ${start}`, () => {
    const row = documented().find((r) => r.situation.startsWith(start));
    assert.ok(row, `docs/api.md documents: ${start}`);
    for (const call of make()) {
      assert.throws(call, (e) => {
        assert.equal(e.constructor.name, row.className, `${call}: the class`);
        assert.equal(e.message, row.message, `${call}: the message`);
        return true;
      }, String(call));
    }
    // the modules keep working
    for (const l of [layer(), new light.MultiHeadAttention({ embedDim: 4, numHeads: 2, seed: 3 })]) {
      assert.equal(l.forward(X).output.length, 2);
      l.free();
    }
  });
}
