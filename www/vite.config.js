// Vite builds the course into dist/ (all libraries, fonts and the wasm bundled: no CDN) and
// `vite preview` serves it with the Content-Security-Policy below, cross-origin isolated
// (COOP/COEP: every page may use shared memory and so threads).
import { defineConfig } from 'vite';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { lessons } from './build/lessons.js';

const HOST = '127.0.0.1';
const PORT = Number(process.env.PORT ?? 8080);

// Pages: scripts, wasm and connections from this origin only. Styles allow inline because
// CodeMirror and KaTeX set style attributes. Workers too: the lab's thread pool (the package's
// threads build) starts its workers from the package's own module file, which Vite emits as an
// asset, so worker-src needs no `blob:` (which would let any script here run a worker built from a
// string, and would not have fixed the pool's path to the glue under bundling anyway).
const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  "connect-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

// The real-model page (model.html) alone may also download from the Hugging Face hub and its CDN (the
// hub answers a model's large files with a redirect there); every other page connects only to its origin.
export const HUB_CONNECT = 'https://huggingface.co https://*.huggingface.co https://*.hf.co';
const MODEL_PAGE_CSP = PAGE_CSP.replace("connect-src 'self'", `connect-src 'self' ${HUB_CONNECT}`);

// The worker that runs learner code: it may evaluate that code, and may connect nowhere.
const WORKER_CSP = ["default-src 'none'", "script-src 'self' 'unsafe-eval'"].join('; ');

// The API reference (TypeDoc's HTML, written to dist/api-reference by `make site`) starts each page
// with one inline script (its theme switch); the pages under /api-reference/ allow exactly that
// script by its hash, and nothing else inline.
function apiReferenceCsp() {
  const index = resolve(import.meta.dirname, 'dist/api-reference/index.html');
  if (!existsSync(index)) return PAGE_CSP;
  const inline = [...readFileSync(index, 'utf8').matchAll(/<script>([\s\S]*?)<\/script>/g)]
    .map(([, body]) => `'sha256-${createHash('sha256').update(body).digest('base64')}'`);
  return PAGE_CSP.replace("script-src 'self'", `script-src 'self' ${inline.join(' ')}`);
}

function contentSecurityPolicy() {
  return {
    name: 'attention-lab-csp',
    configurePreviewServer(server) {
      const referenceCsp = apiReferenceCsp();
      server.middlewares.use((req, res, next) => {
        const worker = /\/assets\/runner\.worker[^/]*\.js/.test(req.url ?? '');
        const reference = (req.url ?? '').startsWith('/api-reference/');
        const modelPage = /^\/model\.html(\?|$)/.test(req.url ?? '');
        res.setHeader('Content-Security-Policy', worker ? WORKER_CSP : reference ? referenceCsp : modelPage ? MODEL_PAGE_CSP : PAGE_CSP);
        res.setHeader('X-Content-Type-Options', 'nosniff');
        // cross-origin isolation: shared memory, so attention-lab's threads build can start here
        res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
        res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
        res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
        res.setHeader('Referrer-Policy', 'no-referrer');
        next();
      });
    },
  };
}

export default defineConfig({
  base: './',
  plugins: [contentSecurityPolicy(), lessons({ challengesDir: resolve(import.meta.dirname, '../challenges') })],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    target: 'es2022',
    chunkSizeWarningLimit: 1200, // CodeMirror bundled on purpose (offline); KaTeX and marked run at build time
    rollupOptions: {
      input: {
        index: resolve(import.meta.dirname, 'index.html'),
        walkthrough: resolve(import.meta.dirname, 'walkthrough.html'),
        challenge: resolve(import.meta.dirname, 'challenge.html'),
        lab: resolve(import.meta.dirname, 'lab.html'),
        model: resolve(import.meta.dirname, 'model.html'),
      },
    },
  },
  worker: { format: 'es' },
  server: { host: HOST, port: PORT, fs: { allow: ['..'] } },
  preview: { host: HOST, port: PORT, strictPort: true },
});
