// The short leak check (`make fuzz` runs the 1,000,000-call one): after warm-up, 30,000 mixed valid
// and invalid calls must not grow wasm memory, the externref table or the JS heap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { measure, describe, finalization, describeFinalization, describeTraining } from '../leak/leak.mjs';

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

test('issue 21: 300 trainSteps of the lab model do not grow wasm memory or the externref table after warm-up; free() releases a model', { timeout: 300000 }, () => {
  for (const dtype of ['float32', 'float64']) {
    // in a fresh process (wasm memory only grows: after the tests above, 8 leaked models would fit in what
    // they left); warm-up 200 steps: over 1500 steps memory grew at steps 0, 1 and 89 only, flat after
    const out = spawnSync(process.execPath, [fileURLToPath(new URL('../leak/leak.mjs', import.meta.url)), '--training', dtype], { encoding: 'utf8', timeout: 240000 });
    assert.equal(out.status, 0, out.stderr);
    const f = JSON.parse(out.stdout);
    console.log(describeTraining(f));
    assert.equal(f.end.wasm, f.warm.wasm, `${dtype}: wasm memory grew during training`);
    assert.equal(f.end.slots, f.warm.slots, `${dtype}: the externref table grew during training`);
    assert.equal(f.afterRounds, f.beforeRounds, `${dtype}: models built, trained and freed grew memory`);
    // the control: kept models must show (at least half their weights, gradients and moments each)
    assert.ok(f.withKept - f.afterRounds >= f.rounds * f.modelBytes * 0.5, `${dtype}: keeping ${f.rounds} models alive did not grow memory: the check is blind`);
  }
});
