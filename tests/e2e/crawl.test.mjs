// Every page the site serves, found by following links from the home page (the course pages, the
// lab and its text task, every challenge, the whole API reference), passes axe with no serious or critical violation,
// loads without console errors and requests nothing from another origin.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSite, openPage, axeViolations } from './harness.mjs';

const MAX_PAGES = 400; // a runaway guard: the site has about 80

let site;
before(async () => { site = await startSite(); });
after(async () => { await site?.close(); });

test('a crawl from the home page reaches every page; each passes axe', { timeout: 15 * 60 * 1000 }, async () => {
  const { context, page, log, url } = await openPage(site);
  const origin = new URL(url('')).origin;
  const seen = new Set();
  const queue = [url('index.html')];
  const found = [];
  const visited = [];
  while (queue.length) {
    const next = queue.shift();
    const key = next.split('#')[0];
    if (seen.has(key)) continue;
    seen.add(key);
    assert.ok(seen.size <= MAX_PAGES, `more than ${MAX_PAGES} pages: a link loop? (${key})`);
    const response = await page.goto(key, { waitUntil: 'networkidle' });
    assert.equal(response.status(), 200, `${key}: HTTP ${response.status()}`);
    visited.push(key.slice(origin.length));
    for (const v of await axeViolations(page)) found.push(`${key.slice(origin.length)}: ${v}`);
    const links = await page.$$eval('a[href]', (as) => as.map((a) => a.href));
    for (const link of links) {
      const target = new URL(link);
      if (target.origin !== origin) continue; // (no page links off the origin today; requests are checked below)
      if (!/\.html$|\/$/.test(target.pathname)) continue; // pages, not assets
      const clean = `${target.origin}${target.pathname}${target.search}`;
      if (!seen.has(clean)) queue.push(clean);
    }
  }
  // the crawl reached each kind of page
  for (const must of ['/index.html', '/walkthrough.html', '/lab.html', '/lab.html?task=text', '/challenge.html?id=08-sliding-window', '/api-reference/index.html', '/api-reference/modules.html']) {
    assert.ok(visited.includes(must), `the crawl never reached ${must} (visited ${visited.length} pages)`);
  }
  assert.ok(visited.filter((p) => p.startsWith('/api-reference/')).length >= 20, 'the crawl reached few API reference pages');
  console.log(`crawled ${visited.length} pages`);
  assert.deepEqual(found, []);
  assert.deepEqual(log.errors, []);
  for (const request of log.requests) assert.ok(request.startsWith(`${origin}/`), `request outside the origin: ${request}`);
  await context.close();
});
