// Running out of wasm memory: layers made in a loop without free() fill wasm32's 4 GiB (C = 512: 8.4 MB
// of weights each, about 510 of them). The one that no longer fits is refused with a RangeError that says how
// much it asked for, how much is in use and that free() releases it; before, the failed allocation aborted the
// module (`RuntimeError: unreachable`) and every later call failed. After free() the module works again.
// Its own file: the test takes the module's memory to 4 GiB, and node:test runs each file in its own process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import lab, { wasmMemoryBytes } from './support/lab.mjs';

const C = 512;
const X = Array.from({ length: 3 }, (_, t) => Array.from({ length: C }, (_, c) => Math.cos(t * C + c)));

test('layers made without free() until memory runs out: a RangeError saying how much, then free() and it works again', { timeout: 300_000 }, () => {
  const seven = new lab.MultiHeadAttention({ embedDim: C, numHeads: 8, seed: 7 });
  const expected = seven.forward(X).output;
  seven.free();
  const layers = [];
  let refused;
  try {
    for (let i = 0; i < 1000 && refused === undefined; i += 1) {
      try {
        layers.push(new lab.MultiHeadAttention({ embedDim: C, numHeads: 8, seed: i }));
      } catch (error) {
        refused = error;
      }
    }
    assert.ok(refused !== undefined, `1000 layers of C = ${C} (8.4 GB) fit in wasm memory?`);
    assert.ok(refused instanceof RangeError, `${refused?.constructor?.name}: ${refused?.message}`);
    assert.match(refused.message, /^out of wasm memory: a layer with embedDim = 512 \(four 512×512 weights, and a copy of them while they are replaced\) needs up to 16\.8 MB at once, but (\d\.\d\d) GB of the module's 4\.29 GB are in use and only [\d.]+ (MB|kB|bytes) more can be allocated\. Call free\(\) on the layers, caches and models you no longer use/);
    console.log(`after ${layers.length} layers: ${refused.message}`);
    const inUse = Number(refused.message.match(/but (\d\.\d\d) GB/)[1]);
    // what is in use is what the layers hold: 4·C² + 4·C f64 each (8.4 MB), within 2%
    const held = layers.length * (4 * C * C + 4 * C) * 8;
    assert.ok(Math.abs(inUse * 1e9 - held) < 0.02 * held, `in use ${inUse} GB, the ${layers.length} layers hold ${held / 1e9} GB`);
    assert.ok(layers.length > 450, `only ${layers.length} layers fit`);
    assert.ok(wasmMemoryBytes() > 3.9e9, `memory grew to ${wasmMemoryBytes()}`);

    // the module keeps working: the live layers still compute, and a call that needs more is refused the same way
    const { output } = layers[0].forward(X);
    assert.equal(output.length, 3);
    assert.throws(() => new lab.Transformer({ vocabSize: 64, contextLength: 64, embedDim: C, numHeads: 8, numLayers: 4 }), {
      name: 'RangeError',
      message: /^out of wasm memory: a Transformer with vocabSize = 64, .* needs up to .* at once, but .* are in use/,
    });
  } finally {
    for (const layer of layers) layer.free();
  }
  // free() released it: layers fit again, in the memory the module already has (before, not one more did)
  const before = wasmMemoryBytes();
  const again = [];
  try {
    for (let i = 0; i < 50; i += 1) again.push(new lab.MultiHeadAttention({ embedDim: C, numHeads: 8, seed: i }));
    assert.deepEqual(again[7].forward(X).output, expected);
  } finally {
    for (const layer of again) layer.free();
  }
  assert.equal(wasmMemoryBytes(), before, 'memory never shrinks, and did not need to grow');
  assert.deepEqual(lab.multiHeadAttention([[1, 2], [3, 4]], [[1, 2], [3, 4]], [[5, 6], [7, 8]], 2, 1).length, 2);
});
