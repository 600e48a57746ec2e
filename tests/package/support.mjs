// Shared by the package tests: pack pkg/ once per test file, install the tarball into fresh
// temporary projects (offline: the one dependency, acorn, is bundled in the tarball), serve a directory on
// 127.0.0.1, and open headless Chromium (playwright-core) or Firefox (puppeteer-core).

import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sirv from 'sirv';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const PKG = join(ROOT, 'pkg');
export const FIXTURES = join(ROOT, 'tests/package/fixtures');
export const TOOLS = join(ROOT, 'tests/node_modules/.bin');

/** The challenge example: Q = K, V, numberOfHeads 2, headDimensions 1, and its known output. */
export const CHALLENGE = {
  Q: [[1, 2], [3, 4]],
  V: [[5, 6], [7, 8]],
  expected: [[6.761594, 7.964028], [6.995055, 7.999329]],
  tolerance: 1e-6,
};

/** A temporary directory removed when the process exits. */
export function temporaryDirectory(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `attention-lab-${prefix}-`));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs a command, returning stdout; on failure the error carries stdout and stderr. */
export function run(command, args, options = {}) {
  return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
}

let tarball;
/** `npm pack` of pkg/ (built by `make package`), once per process. */
export function packedTarball() {
  if (tarball) return tarball;
  if (!existsSync(join(PKG, 'package.json'))) throw new Error('pkg/ is not assembled; run `make package` first');
  const destination = temporaryDirectory('tarball');
  run('npm', ['pack', '--silent', '--pack-destination', destination], { cwd: PKG });
  const [file] = readdirSync(destination).filter((f) => f.endsWith('.tgz'));
  tarball = join(destination, file);
  return tarball;
}

/**
 * A new project that has installed the packed tarball and nothing else, with the fixture
 * directory `fixture` (under tests/package/fixtures) copied in.
 */
export function freshProject(fixture, manifest = {}) {
  const dir = temporaryDirectory(fixture);
  if (fixture) cpSync(join(FIXTURES, fixture), dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `consumer-${fixture}`, private: true, ...manifest }, null, 2));
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', packedTarball()], { cwd: dir });
  return dir;
}

/** The headers that make a page cross-origin isolated (shared memory, so threads). */
export const ISOLATION_HEADERS = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

/**
 * Serves `dir` statically on 127.0.0.1 (a free port), with `headers` on every response; `close()`
 * stops it. A request for which `hold(request)` is true is never answered (a script that never arrives).
 */
export async function serve(dir, headers = {}, { hold } = {}) {
  const setHeaders = (response) => Object.entries(headers).forEach(([name, value]) => response.setHeader(name, value));
  const files = sirv(dir, { dev: true, setHeaders });
  const server = createServer((request, response) => {
    if (hold?.(request)) return;
    files(request, response);
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    close: () => new Promise((done) => { server.close(done); server.closeAllConnections(); }),
  };
}

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];

/** Headless Chromium from /usr/bin/chromium. */
export async function launchChromium() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS, headless: true });
}

/** Headless Firefox ESR from /usr/bin/firefox-esr, over WebDriver BiDi. */
export async function launchFirefox() {
  const { default: puppeteer } = await import('puppeteer-core');
  return puppeteer.launch({ browser: 'firefox', executablePath: '/usr/bin/firefox-esr', headless: true });
}

/**
 * Opens `url` in a Playwright or Puppeteer browser, waits until the page sets
 * `window.result` (the fixtures' convention, within `timeout` ms), and returns it with any page errors;
 * with `andThen`, also what `await andThen(page)` returns (`then`), before the page closes.
 */
export async function pageResult(browser, url, { timeout = 30_000, andThen } = {}) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
  page.on('response', (response) => { if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`); });
  // not waiting for the load event: a request held on purpose (serve's `hold`) may delay it
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout });
  const done = () => window.result !== undefined;
  // Playwright's waitForFunction takes (fn, arg, options), Puppeteer's (fn, options)
  await (typeof page.context === 'function' ? page.waitForFunction(done, undefined, { timeout }) : page.waitForFunction(done, { timeout }));
  const result = await page.evaluate(() => window.result);
  const then = andThen && result.error === undefined ? await andThen(page) : undefined;
  await page.close();
  return { result, errors, then };
}

/** Entry-by-entry comparison with an explicit absolute tolerance. */
export function assertCloseMatrix(assert, actual, expected, tolerance) {
  assert.ok(Array.isArray(actual), `expected a matrix, got ${JSON.stringify(actual)}`);
  assert.equal(actual.length, expected.length, 'rows');
  actual.forEach((row, r) => {
    assert.equal(row.length, expected[r].length, `row ${r} length`);
    row.forEach((x, c) => assert.ok(Math.abs(x - expected[r][c]) <= tolerance,
      `[${r}][${c}] is ${x}, expected ${expected[r][c]} ± ${tolerance}`));
  });
}
