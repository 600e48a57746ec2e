// The e2e harness: `vite preview` of www/dist on a free 127.0.0.1 port (with the site's CSP
// headers), Debian's Chromium through playwright-core, and a page wrapper that records console
// errors and every request (pages and workers) so tests can assert on them.
import { createRequire } from 'node:module';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = new URL('../../', import.meta.url).pathname;
export const SCREENSHOTS = join(ROOT, 'tests', 'screenshots');
export const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export const lab = createRequire(import.meta.url)(join(ROOT, 'target/pkg-node/attention_lab.js'));
export const testsOf = (id) => JSON.parse(readFileSync(join(ROOT, 'challenges', id, 'tests.json'), 'utf8'));
export const CHALLENGE_IDS = ['01-dot-product-attention', '02-multi-head-attention', '03-causal-mask', '04-learned-projections', '05-kv-cache', '06-grouped-query', '07-rope', '08-sliding-window', '09-attention-in-a-model', '10-induction-head', '11-find-the-circuit'];
/** How many result cases a challenge's model check adds (tests.json `model`): 09 one, 10 three per config. */
export const modelCaseCount = (tests) => (!tests.model ? 0 : tests.model.kind === 'weights' ? 3 * tests.model.configs.length : tests.model.kind === 'circuits' ? tests.model.kinds.length + 1 + (tests.model.naming ? tests.model.naming.cases.length + 1 : 0) : 1);

/** `vite preview` of www/dist on a free port: { origin, close() }. */
export async function startServer() {
  const { preview } = await import(pathToFileURL(join(ROOT, 'www/node_modules/vite/dist/node/index.js')));
  const server = await preview({ root: join(ROOT, 'www'), logLevel: 'silent', preview: { host: '127.0.0.1', port: 0, strictPort: false } });
  const address = server.httpServer.address();
  mkdirSync(SCREENSHOTS, { recursive: true });
  return { origin: `http://127.0.0.1:${address.port}`, close: () => new Promise((resolve) => server.httpServer.close(resolve)) };
}

/** The server and Chromium: { origin, browser, close() }. */
export async function startSite() {
  const server = await startServer();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  return {
    origin: server.origin,
    browser,
    async close() {
      await browser.close();
      await server.close();
    },
  };
}

/**
 * A fresh context (empty localStorage) and page. `log.errors` collects console errors, page
 * errors and failed requests (`log.aborted` the ones the browser aborted); `log.requests` every
 * URL requested, including by workers.
 */
export async function openPage(site, size = SIZES.desktop) {
  const context = await site.browser.newContext({ viewport: size });
  // behaviour, not speed: a loaded machine may take longer than playwright's 30 s to show a view
  context.setDefaultTimeout(90000);
  const log = { errors: [], requests: [] };
  context.on('request', (request) => log.requests.push(request.url()));
  // A request the browser aborted (a reload or a navigation the test made while a font or chunk was
  // still loading, which a loaded machine makes likely) is not the site's failure: kept apart.
  // Every other failure (refused, blocked by CSP, not found on the network) is an error.
  log.aborted = [];
  context.on('requestfailed', (request) => {
    const reason = request.failure()?.errorText ?? '';
    (/ERR_ABORTED|NS_BINDING_ABORTED/.test(reason) ? log.aborted : log.errors).push(`request failed: ${request.url()} ${reason}`);
  });
  const page = await context.newPage();
  page.on('console', (message) => { if (message.type() === 'error') log.errors.push(`console: ${message.text()}`); });
  page.on('pageerror', (error) => log.errors.push(`page error: ${error.message}`));
  page.on('worker', (worker) => worker.on('console', (message) => { if (message.type() === 'error') log.errors.push(`worker console: ${message.text()}`); }));
  return { context, page, log, url: (path) => `${site.origin}/${path}` };
}

/** Loads a challenge page with `code` already saved as the learner's code, runs the tests. */
export async function runCode(page, url, id, code) {
  await page.goto(url(`challenge.html?id=${id}`), { waitUntil: 'networkidle' }); // the lesson's fonts too: a reload would abort them
  await page.evaluate(([k, v]) => localStorage.setItem(k, v), [`attention-lab:code:${id}`, code]);
  await page.reload();
  await page.locator('.cm-content').waitFor();
  await page.click('#run-tests');
  await page.waitForFunction(() => !document.querySelector('#run-tests').disabled && document.querySelector('#run-status').textContent !== 'Running the tests…', null, { timeout: 10000 });
  return (await page.textContent('#run-status')).trim();
}

/** axe-core's serious and critical violations on the current page. */
export async function axeViolations(page) {
  const source = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(source); // evaluated through the DevTools protocol, so the page's CSP does not apply
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
}

/**
 * The elements that reach past the viewport's left or right edge (a learner would have to scroll
 * sideways to see them, in the page or in a scroll box), as "tag#id.class right-edge"; elements
 * not drawn are left out (display: none, visually hidden ones: KaTeX's MathML, .visually-hidden,
 * clipped to nothing, and the skip link, wholly left of the page until focused). Works with Playwright and Puppeteer pages.
 */
export function wideElements(page) {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const clipped = (e) => {
      for (let n = e; n && n !== document.body; n = n.parentElement) {
        const style = getComputedStyle(n);
        if (style.clipPath !== 'none' || (style.clip && style.clip !== 'auto')) return true;
      }
      return false;
    };
    return [...document.body.querySelectorAll('*')].filter((e) => {
      const r = e.getBoundingClientRect();
      // (wholly left of the page is a skip link's way of hiding until focused: not drawn either)
      return r.width > 0 && r.height > 0 && r.right > 0 && (r.right > width + 1 || r.left < -1) && !clipped(e);
    }).map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${typeof e.className === 'string' && e.className ? `.${e.className.split(' ').join('.')}` : ''} ${Math.round(e.getBoundingClientRect().left)}…${Math.round(e.getBoundingClientRect().right)}`);
  });
}
