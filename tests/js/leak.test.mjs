// The short leak check (`make fuzz` runs the 1,000,000-call one): after warm-up, 30,000 mixed valid
// and invalid calls must not grow wasm memory, the externref table or the JS heap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { measure, describe } from '../leak/leak.mjs';

test('30,000 mixed calls: wasm memory, externref table and JS heap do not grow after warm-up', { timeout: 120000 }, () => {
  const figures = measure({ calls: 30000 });
  console.log(describe(figures));
  assert.ok(figures.outcomes.value > 5000 && figures.outcomes.error > 5000, JSON.stringify(figures.outcomes));
  assert.ok(figures.ok, describe(figures));
});
