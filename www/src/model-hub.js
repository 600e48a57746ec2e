// The real-model page's files (issue 31): where a model's files are on the hub, their sizes before a
// download, the download itself (progress, cancel), and the browser's copy in Cache Storage. No DOM.
//
// The hub's layout is `<hub>/<repo>/resolve/main/<file>`. A file's size comes from a GET of its first byte
// (`Range: bytes=0-0`: 206 with `Content-Range: bytes 0-0/<size>`), as @huggingface/hub's fileDownloadInfo
// reads it; the hub answers large files with a redirect to its CDN, which fetch follows. A model is kept
// only whole: its three files are put into the cache after all three have arrived, so a failed or
// cancelled download keeps nothing.

export const DEFAULT_HUB = 'https://huggingface.co';
export const FILES = ['config.json', 'tokenizer.json', 'model.safetensors'];
export const PRESETS = [
  { repo: 'openai-community/gpt2', label: 'GPT-2 small (124M parameters, OpenAI)' },
  { repo: 'HuggingFaceTB/SmolLM2-135M', label: 'SmolLM2-135M (135M parameters, a Llama)' },
];
export const CACHE_NAME = 'attention-lab-models';
// The hosts this page's CSP lets it connect to besides its own origin (vite.config.js, model.html).
const HUB_HOSTS = /^(huggingface\.co|[a-z0-9-]+\.huggingface\.co|[a-z0-9-]+\.hf\.co)$/;

/**
 * The hub's base address from the page's `hub=` (or the default): an http(s) URL without a trailing slash.
 * Only the page's own origin and huggingface.co are allowed (the page's Content-Security-Policy lets it
 * connect nowhere else); anything else is an Error saying so.
 */
export function hubBase(param, pageOrigin) {
  if (param == null || param === '') return DEFAULT_HUB;
  let url;
  try { url = new URL(param, pageOrigin); } catch { throw new TypeError(`hub=${param} is not an address`); }
  if (!/^https?:$/.test(url.protocol)) throw new TypeError(`hub=${param} is not an http(s) address`);
  if (url.origin !== pageOrigin && !(url.protocol === 'https:' && HUB_HOSTS.test(url.hostname))) {
    throw new Error(`hub=${param}: this page may only download from huggingface.co or from its own origin (${pageOrigin}); its Content-Security-Policy blocks other hosts`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

/** A repo id `owner/name` (letters, digits, `-`, `_`, `.`), or a TypeError naming it. */
export function checkRepo(repo) {
  if (typeof repo !== 'string' || !/^[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*$/.test(repo) || repo.includes('..')) {
    throw new TypeError(`model=${repo}: a model is a hub repo id such as openai-community/gpt2 (owner/name)`);
  }
  return repo;
}

export const fileUrl = (hub, repo, file) => `${hub}/${repo}/resolve/main/${file}`;

async function failure(response, hub, repo, file) {
  if (response.status === 404) return new Error(`${hub} has no ${file} in ${repo} (HTTP 404): check the repo id; the page needs config.json, tokenizer.json and model.safetensors`);
  if (response.status === 401 || response.status === 403) return new Error(`${hub} refused ${repo}/${file} (HTTP ${response.status}): the repo is private or gated, so this page cannot download it; download the files yourself and open them as local files`);
  return new Error(`${hub} answered HTTP ${response.status} for ${repo}/${file}; try again later, or open the files as local files`);
}

/** The size in bytes of each file, `{ [file]: bytes }`, from the hub (no body downloaded). */
export async function fileSizes(hub, repo, { signal } = {}) {
  const sizes = {};
  for (const file of FILES) {
    let response;
    try {
      response = await fetch(fileUrl(hub, repo, file), { headers: { Range: 'bytes=0-0' }, signal, cache: 'no-store' });
    } catch (error) {
      if (error.name === 'AbortError') throw error;
      throw new Error(`could not reach ${hub} for ${repo}/${file} (${error.message}): are you offline?`);
    }
    if (!response.ok) throw await failure(response, hub, repo, file);
    // 206: the total after the slash of Content-Range (or the hub's X-Linked-Size); a server that ignores
    // the Range answers 200 with the whole file, whose Content-Length is the size
    const range = response.headers.get('Content-Range');
    const size = response.status === 206
      ? Number(range?.split('/')[1] ?? response.headers.get('X-Linked-Size') ?? NaN)
      : Number(response.headers.get('Content-Length') ?? NaN);
    await response.body?.cancel();
    if (!Number.isFinite(size) || size <= 0) throw new Error(`${hub} did not say the size of ${repo}/${file}`);
    sizes[file] = size;
  }
  return sizes;
}

/** The kept copy of a model's three files, `{ [file]: ArrayBuffer }`, or null when any is missing. */
export async function cachedModel(hub, repo) {
  if (!globalThis.caches) return null;
  const cache = await caches.open(CACHE_NAME);
  const files = {};
  for (const file of FILES) {
    const response = await cache.match(fileUrl(hub, repo, file));
    if (!response) return null;
    files[file] = await response.arrayBuffer();
  }
  return files;
}

/**
 * Downloads the three files (sizes from fileSizes), calling onProgress({ loaded, total, file }) as bytes
 * arrive; `signal` cancels. Resolves to `{ [file]: ArrayBuffer }` once all have arrived whole (each body's
 * length is checked against its size) and have been put into Cache Storage; a failure or a cancel keeps
 * nothing.
 */
export async function download(hub, repo, sizes, { signal, onProgress } = {}) {
  const total = FILES.reduce((a, f) => a + sizes[f], 0);
  let loaded = 0;
  const files = {};
  for (const file of FILES) {
    let response;
    try {
      response = await fetch(fileUrl(hub, repo, file), { signal, cache: 'no-store' });
    } catch (error) {
      if (error.name === 'AbortError') throw error;
      throw new Error(`the download of ${repo}/${file} failed (${error.message}); nothing was kept: try again`);
    }
    if (!response.ok) throw await failure(response, hub, repo, file);
    const bytes = new Uint8Array(sizes[file]);
    const reader = response.body.getReader();
    let at = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (at + value.length > bytes.length) throw new Error(`${repo}/${file} is larger than the hub said (${bytes.length} bytes); nothing was kept: try again`);
        bytes.set(value, at);
        at += value.length;
        loaded += value.length;
        onProgress?.({ loaded, total, file });
      }
    } catch (error) {
      if (error.name === 'AbortError') throw error;
      throw new Error(`the download of ${repo}/${file} stopped after ${at} of ${bytes.length} bytes (${error.message}); nothing was kept: try again`);
    }
    if (at !== bytes.length) throw new Error(`the download of ${repo}/${file} stopped after ${at} of ${bytes.length} bytes; nothing was kept: try again`);
    files[file] = bytes.buffer;
  }
  if (globalThis.caches) {
    const cache = await caches.open(CACHE_NAME);
    try {
      for (const file of FILES) {
        await cache.put(fileUrl(hub, repo, file), new Response(files[file].slice(0), { headers: { 'Content-Type': 'application/octet-stream', 'X-Size': String(files[file].byteLength) } }));
      }
    } catch (error) {
      for (const file of FILES) await cache.delete(fileUrl(hub, repo, file));
      throw new Error(`the browser would not keep ${repo} (${error.message}): the model runs now but will be downloaded again next time`, { cause: files });
    }
  }
  return files;
}

/** What the page keeps: [{ hub, repo, bytes, complete }], one per model (from the cache's URLs). */
export async function keptModels() {
  if (!globalThis.caches) return [];
  const cache = await caches.open(CACHE_NAME);
  const models = new Map();
  for (const request of await cache.keys()) {
    const match = /^(.*)\/([^/]+\/[^/]+)\/resolve\/main\/([^/]+)$/.exec(request.url);
    if (!match) continue;
    const key = `${match[1]} ${match[2]}`;
    const entry = models.get(key) ?? { hub: match[1], repo: match[2], bytes: 0, files: [] };
    const response = await cache.match(request);
    entry.bytes += Number(response?.headers.get('X-Size') ?? 0);
    entry.files.push(match[3]);
    models.set(key, entry);
  }
  return [...models.values()].map((m) => ({ ...m, complete: FILES.every((f) => m.files.includes(f)) }));
}

/** Deletes a kept model's files. */
export async function deleteModel(hub, repo) {
  if (!globalThis.caches) return;
  const cache = await caches.open(CACHE_NAME);
  for (const file of FILES) await cache.delete(fileUrl(hub, repo, file));
}

/** "12.3 MB" (1 MB = 10⁶ bytes). */
export const megabytes = (bytes) => `${(bytes / 1e6).toFixed(bytes < 1e7 ? 2 : 1)} MB`;
