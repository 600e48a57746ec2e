// Fixtures of the real-model page's tests (issue 31), written by script, never committed:
// - `bpeTokenizer(corpus, merges, { specialsFirst })`: a small byte-level BPE tokenizer.json in the layout
//   of GPT-2's (ByteLevel pre-tokenizer with GPT-2's regex, ByteLevel decoder, the BPE model's vocab and
//   merges), its merges learned from `corpus` (the most frequent adjacent pair first, ties by the pair's
//   text), the end-of-text token last (GPT-2) or first (SmolLM2's `<|endoftext|>` is id 0);
// - `hubFiles()`: a GPT-2 and a Llama checkpoint (tests/pretrained/checkpoint.mjs) whose vocabulary is
//   that tokenizer's, as the hub's repos `test/tiny-gpt2` and `test/tiny-llama`;
// - `hubPlugin(files)`: a Vite preview plugin that serves them in the hub's layout,
//   `/hub/<repo>/resolve/main/<file>`, on the site's own origin (so the page's CSP `connect-src 'self'`
//   allows it), answering `Range: bytes=0-0` with 206 and Content-Range (how the page reads a file's size
//   before downloading, as @huggingface/hub's fileDownloadInfo does), counting requests per file, and
//   with `?` modes the tests switch on: slow (a trickle), fail (500), cut (the body stops half way).
//
//   node tests/e2e/model-fixtures.mjs <dir>   writes <dir>/<repo>/{config.json,model.safetensors,tokenizer.json}
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gpt2Checkpoint, llamaCheckpoint } from '../pretrained/checkpoint.mjs';

/** GPT-2's map of bytes to printable characters (`bytes_to_unicode` in its encoder.py). */
export function byteToUnicode() {
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) if (!bs.includes(b)) { bs.push(b); cs.push(256 + n); n++; }
  const map = new Map();
  bs.forEach((b, i) => map.set(b, String.fromCodePoint(cs[i])));
  return { order: bs, map };
}

// GPT-2's pre-tokenizer regex (the one tokenizers' ByteLevel uses with use_regex)
const SPLIT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
const END = '<|endoftext|>';

/** A byte-level BPE tokenizer.json (an object) with `merges` merges learned from `corpus`. */
export function bpeTokenizer(corpus, merges = 64, { specialsFirst = false } = {}) {
  const { order, map } = byteToUnicode();
  const encoder = new TextEncoder();
  const counts = new Map();
  for (const word of corpus.match(SPLIT) ?? []) {
    const symbols = [...encoder.encode(word)].map((b) => map.get(b)).join('\u0000');
    counts.set(symbols, (counts.get(symbols) ?? 0) + 1);
  }
  let words = [...counts].map(([s, c]) => [s.split('\u0000'), c]);
  const learned = [];
  for (let m = 0; m < merges; m++) {
    const pairs = new Map();
    for (const [symbols, c] of words) {
      for (let i = 0; i + 1 < symbols.length; i++) {
        const key = `${symbols[i]} ${symbols[i + 1]}`;
        pairs.set(key, (pairs.get(key) ?? 0) + c);
      }
    }
    if (!pairs.size) break;
    const [best] = [...pairs].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
    learned.push(best);
    const [x, y] = best.split(' ');
    words = words.map(([symbols, c]) => {
      const out = [];
      for (let i = 0; i < symbols.length; i++) {
        if (i + 1 < symbols.length && symbols[i] === x && symbols[i + 1] === y) { out.push(x + y); i++; } else out.push(symbols[i]);
      }
      return [out, c];
    });
  }
  const vocab = {};
  let id = 0;
  const special = (i) => ({ id: i, content: END, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  const added = [];
  if (specialsFirst) { vocab[END] = id; added.push(special(id)); id++; }
  for (const b of order) vocab[map.get(b)] = id++;
  for (const merge of learned) vocab[merge.replace(' ', '')] = id++;
  if (!specialsFirst) { vocab[END] = id; added.push(special(id)); id++; }
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab, merges: learned },
  };
}

/** The vocabulary size of a tokenizer.json object (the model's vocab and the added tokens). */
export const vocabSize = (tokenizer) => Math.max(...Object.values(tokenizer.model.vocab), ...tokenizer.added_tokens.map((t) => t.id)) + 1;

// English the merges are learned from (the page's example is in it, so its tokens are words, not bytes)
const CORPUS = `Mr and Mrs Dursley, of number four, Privet Drive, were proud to say that they were perfectly normal,
thank you very much. They were the last people you'd expect to be involved in anything strange or mysterious.
When Mary and John went to the store, John gave a drink to Mary. The cat sat on the mat, and the dog sat on the log.
Alice was beginning to get very tired of sitting by her sister on the bank, and of having nothing to do.`;

/** The hub's repos of the tests: repo → { 'config.json': bytes, 'model.safetensors': bytes, 'tokenizer.json': bytes }. */
export function hubFiles() {
  const gpt2Tokenizer = bpeTokenizer(CORPUS, 96);
  const llamaTokenizer = bpeTokenizer(CORPUS, 96, { specialsFirst: true });
  const gpt2 = gpt2Checkpoint({ vocab: vocabSize(gpt2Tokenizer), positions: 128, embd: 32, layers: 3, heads: 4, seed: 31 });
  const llama = llamaCheckpoint({ vocab: vocabSize(llamaTokenizer), hidden: 32, intermediate: 48, layers: 2, heads: 4, kvHeads: 2, positions: 128, tied: true, seed: 32 });
  const text = (o) => new TextEncoder().encode(JSON.stringify(o));
  return {
    'test/tiny-gpt2': { 'config.json': text(gpt2.config), 'model.safetensors': gpt2.weights, 'tokenizer.json': text(gpt2Tokenizer) },
    'test/tiny-llama': { 'config.json': text(llama.config), 'model.safetensors': llama.weights, 'tokenizer.json': text(llamaTokenizer) },
  };
}

/**
 * A Vite plugin serving `files` (hubFiles()) at /hub/<repo>/resolve/main/<file>. `state.requests` lists
 * every hub request as "METHOD path [range]"; `state.mode` ('ok', 'slow', 'fail', 'cut') applies to
 * model.safetensors GETs without a Range.
 */
export function hubPlugin(files, state = { requests: [], mode: 'ok' }) {
  return {
    name: 'attention-lab-test-hub',
    configurePreviewServer(server) {
      server.middlewares.use((req, res, next) => {
        const match = /^\/hub\/([^/]+\/[^/]+)\/resolve\/main\/([^?]+)/.exec(req.url ?? '');
        if (!match) { next(); return; }
        const range = req.headers.range;
        state.requests.push(`${req.method} ${match[1]}/${match[2]}${range ? ` ${range}` : ''}`);
        const body = files[match[1]]?.[match[2]];
        if (!body) {
          res.writeHead(404, { 'Content-Type': 'text/plain', 'X-Error-Code': files[match[1]] ? 'EntryNotFound' : 'RepositoryNotFound' });
          res.end('Entry not found');
          return;
        }
        const headers = { 'Content-Type': 'application/octet-stream', 'Accept-Ranges': 'bytes', ETag: `"${match[1]}/${match[2]}/${body.length}"` };
        if (range === 'bytes=0-0') {
          res.writeHead(206, { ...headers, 'Content-Range': `bytes 0-0/${body.length}`, 'Content-Length': '1' });
          res.end(Buffer.from(body.subarray(0, 1)));
          return;
        }
        const mode = match[2] === 'model.safetensors' ? state.mode : 'ok';
        if (mode === 'fail') {
          res.writeHead(500, { 'Content-Type': 'text/plain' });
          res.end('Internal Error');
          return;
        }
        res.writeHead(200, { ...headers, 'Content-Length': String(body.length) });
        if (mode === 'ok') { res.end(Buffer.from(body)); return; }
        if (mode === 'cut') {
          res.write(Buffer.from(body.subarray(0, body.length >> 1)));
          setTimeout(() => res.destroy(), 50);
          return;
        }
        // slow: 2 KB every 100 ms until the client goes away
        let at = 0;
        const timer = setInterval(() => {
          if (res.destroyed || at >= body.length) { clearInterval(timer); if (!res.destroyed) res.end(); return; }
          res.write(Buffer.from(body.subarray(at, at + 2048)));
          at += 2048;
        }, 100);
        req.on('close', () => clearInterval(timer));
      });
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = process.argv[2];
  if (!dir) { console.error('usage: node tests/e2e/model-fixtures.mjs <dir>'); process.exit(2); }
  for (const [repo, repoFiles] of Object.entries(hubFiles())) {
    mkdirSync(join(dir, repo), { recursive: true });
    for (const [name, bytes] of Object.entries(repoFiles)) writeFileSync(join(dir, repo, name), bytes);
    console.log(`${repo}: ${Object.entries(repoFiles).map(([n, b]) => `${n} ${b.length} B`).join(', ')}`);
  }
}
