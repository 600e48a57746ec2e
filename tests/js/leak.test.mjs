// The short leak check (`make fuzz` runs the 1,000,000-call one): after warm-up, 30,000 mixed valid
// and invalid calls must not grow wasm memory, the externref table or the JS heap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { measure, describe, finalization, describeFinalization } from '../leak/leak.mjs';

test('30,000 mixed calls: wasm memory, externref table and JS heap do not grow after warm-up', { timeout: 120000 }, () => {
  const figures = measure({ calls: 30000 });
  console.log(describe(figures));
  assert.ok(figures.outcomes.value > 5000 && figures.outcomes.error > 5000, JSON.stringify(figures.outcomes));
  assert.ok(figures.ok, describe(figures));
});

test('layers dropped without free() are freed by the FinalizationRegistry: wasm memory stays flat', { timeout: 120000 }, async () => {
  const figures = await finalization({ rounds: 6, perRound: 200, embedDim: 64 });
  console.log(describeFinalization(figures));
  assert.ok(figures.collected >= figures.dropped, `only ${figures.collected} of ${figures.dropped} dropped layers were finalized`);
  assert.equal(figures.last, figures.first, 'wasm memory grew although every dropped layer was finalized');
  // the control shows the measure sees live layers: two rounds kept alive grow memory by at least half a round
  assert.ok(figures.withKept - figures.last >= figures.perRound * figures.layerBytes * 0.5, 'keeping two rounds alive did not grow memory: the check is blind');
});
