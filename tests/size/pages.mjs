// What each page of the built site (www/dist, `make site`) transfers on a first visit, as Chromium sees it:
// a static server that gzips every response (zlib level 6, as a typical server does), a fresh browser
// context (empty cache) per page, and every response's encoded body counted until the network is idle.
// Prints one table per page (the resources, largest first) and the totals; with --json, the figures as JSON.
// `--max page=KB` (repeatable) exits 1 when a page's total goes over KB (1 KB = 1000 bytes).
//
//   node tests/size/pages.mjs [--json] [--dist www/dist] [--max challenge=300 --max walkthrough=250]
import { createServer } from 'node:http';
import { readFileSync, existsSync, statSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';

const ROOT = new URL('../../', import.meta.url).pathname;
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const PAGES = {
  home: 'index.html',
  walkthrough: 'walkthrough.html',
  challenge: 'challenge.html?id=02-multi-head-attention',
  'challenge 10': 'challenge.html?id=10-induction-head',
  lab: 'lab.html',
  model: 'model.html', // the real-model page before any model (issue 31: at most 150 KB)
};
const TYPES = {
  '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json',
  '.woff2': 'font/woff2', '.woff': 'font/woff', '.svg': 'image/svg+xml', '.png': 'image/png', '.md': 'text/markdown', '.txt': 'text/plain',
};

const args = process.argv.slice(2);
const json = args.includes('--json');
const DIST = args.includes('--dist') ? normalize(args[args.indexOf('--dist') + 1]).replace(/\/$/, '') : join(ROOT, 'www/dist');
const limits = Object.fromEntries(args.flatMap((a, i) => (a === '--max' ? [args[i + 1].split('=')] : [])).map(([p, kb]) => [p, Number(kb)]));
if (!existsSync(join(DIST, 'index.html'))) {
  console.error('tests/size/pages.mjs: www/dist is missing; run `make site` first');
  process.exit(2);
}

/** Serves www/dist with gzip (the site's COOP/COEP too, so the lab's page is what it is in production). */
const server = createServer((req, res) => {
  const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).replace(/^\/+/, '') || 'index.html';
  let file = join(DIST, path);
  if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
  if (!file.startsWith(DIST) || !existsSync(file)) {
    res.writeHead(404).end();
    return;
  }
  const body = readFileSync(file);
  const type = TYPES[extname(file)] ?? 'application/octet-stream';
  const zipped = /gzip/.test(req.headers['accept-encoding'] ?? '') && !/woff2|png/.test(type);
  res.writeHead(200, {
    'Content-Type': type,
    ...(zipped ? { 'Content-Encoding': 'gzip' } : {}),
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Embedder-Policy': 'require-corp',
    'Cross-Origin-Resource-Policy': 'same-origin',
  });
  res.end(zipped ? gzipSync(body, { level: 6 }) : body);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--headless'] });
const results = {};
try {
  for (const [name, path] of Object.entries(PAGES)) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    const urls = new Map();
    const resources = [];
    cdp.on('Network.responseReceived', ({ requestId, response }) => urls.set(requestId, response.url));
    cdp.on('Network.loadingFinished', ({ requestId, encodedDataLength }) => {
      const url = urls.get(requestId);
      if (url?.startsWith(origin)) resources.push({ url: url.slice(origin.length + 1), bytes: encodedDataLength });
    });
    await page.goto(`${origin}/${path}`, { waitUntil: 'networkidle' });
    // a page may start a load after a pause (the .wasm after its lesson and tests): wait for 2 s without a new response
    for (let seen = -1; seen !== urls.size;) {
      seen = urls.size;
      await page.waitForTimeout(2000);
    }
    await context.close();
    resources.sort((a, b) => b.bytes - a.bytes);
    results[name] = { total: resources.reduce((sum, r) => sum + r.bytes, 0), resources };
  }
} finally {
  await browser.close();
  server.close();
}

const kb = (bytes) => (bytes / 1000).toFixed(1);
if (json) console.log(JSON.stringify(results, null, 2));
else {
  for (const [name, { total, resources }] of Object.entries(results)) {
    console.log(`\n${name}: ${kb(total)} KB transferred (gzip, headers included), ${resources.length} responses`);
    for (const r of resources) console.log(`  ${kb(r.bytes).padStart(7)} KB  ${r.url}`);
  }
}
let over = false;
for (const [name, max] of Object.entries(limits)) {
  if (!(name in results)) throw new Error(`--max ${name}: no such page (${Object.keys(results).join(', ')})`);
  if (results[name].total > max * 1000) {
    console.error(`${name}: ${kb(results[name].total)} KB is over ${max} KB`);
    over = true;
  }
}
process.exit(over ? 1 : 0);
