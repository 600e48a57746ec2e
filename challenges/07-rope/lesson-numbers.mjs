#!/usr/bin/env node
// The numbers in this challenge's README ("Only the distance counts"), computed by the package:
// q and k rotated with rotaryEmbedding at positions m and n (one head, headDimensions = 4,
// base 10000, offset = the position), then their dot product. Prints the markdown table.
// `node challenges/07-rope/lesson-numbers.mjs` (needs target/pkg-node, made by `make build`);
// tests/js/challenges.test.mjs checks that the README holds exactly this output.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const lab = createRequire(import.meta.url)(join(dirname(fileURLToPath(import.meta.url)), '../../target/pkg-node/attention_lab.js'));
const q = [1, 2, -1, 0.5];
const k = [0.5, -1, 2, 1];
const HEAD = { numberOfHeads: 1, headDimensions: 4 };
const at = (x, position) => lab.rotaryEmbedding([x], { ...HEAD, offset: position })[0];
const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);

export const PAIRS = [[0, 0], [5, 5], [1000, 1000], [3, 1], [10, 8], [1002, 1000], [1, 3], [8, 10]];

export function table() {
  const rows = PAIRS.map(([m, n]) => `| ${m} | ${n} | ${m - n} | ${dot(at(q, m), at(k, n)).toFixed(6)} |`);
  return ['| m (query) | n (key) | m − n | score q_m · k_n |', '| ---: | ---: | ---: | ---: |', ...rows].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(table());
