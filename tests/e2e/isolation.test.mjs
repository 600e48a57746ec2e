// The site is served cross-origin isolated (COOP/COEP, www/vite.config.js), so its pages may use
// shared memory (attention-lab's threads build); every page still loads without errors and the
// learner's sandbox still runs code (the challenge page's reference solution passes).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSite, openPage } from './harness.mjs';

let site;
before(async () => { site = await startSite(); });
after(async () => { await site?.close(); });

for (const path of ['index.html', 'walkthrough.html', 'challenge.html?id=01-dot-product-attention']) {
  test(`${path} is cross-origin isolated and loads without errors`, async () => {
    const { page, log, context, url } = await openPage(site);
    try {
      await page.goto(url(path));
      await page.waitForLoadState('networkidle');
      assert.equal(await page.evaluate(() => globalThis.crossOriginIsolated), true);
      assert.equal(await page.evaluate(() => typeof SharedArrayBuffer), 'function');
      assert.deepEqual(log.errors, []);
    } finally {
      await context.close();
    }
  });
}
