#!/usr/bin/env node
// The numbers in this challenge's README, computed with the package from model.json (the lab's
// default run, seed 1, step 300): the three composition tables of the shipped weights and what each
// head does (model.json's headScores). `node challenges/11-find-the-circuit/lesson-numbers.mjs`
// prints the markdown; tests/js/challenges.test.mjs checks that the README holds it.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageScores } from './model-check.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const lab = createRequire(import.meta.url)(join(HERE, '../../target/pkg-node/attention_lab.js'));
const model = JSON.parse(readFileSync(join(HERE, 'model.json'), 'utf8'));

/** The scores of one kind as a markdown table: rows layer-1 heads, columns layer-2 heads, each cell "score (excess)". */
function kindTable(name, M, baseline) {
  const signed = (x) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;
  return [
    `| ${name} | ${M[0].map((_, j) => `L2 h${j}`).join(' | ')} |`,
    `| :--- | ${M[0].map(() => '---:').join(' | ')} |`,
    ...M.map((row, i) => `| L1 h${i} | ${row.map((x) => `${x.toFixed(3)} (${signed(x - baseline)})`).join(' | ')} |`),
  ].join('\n');
}

/** The K, Q and V tables of the shipped model, and its baseline. */
export function scoresTables() {
  const s = packageScores(lab, model);
  return [`Random baseline: ${s.baseline.toFixed(3)}.`, kindTable('K', s.k, s.baseline), kindTable('Q', s.q, s.baseline), kindTable('V', s.v, s.baseline)].join('\n\n');
}

/** What each head does on the lab's evaluation batch. */
export function headsTable() {
  const [first, second] = model.headScores;
  return [
    '| head | previous-token score | induction score |',
    '| :--- | ---: | ---: |',
    ...first.map((s, i) => `| L1 h${i} | ${s.previousToken.toFixed(3)} | ${s.induction.toFixed(3)} |`),
    ...second.map((s, i) => `| L2 h${i} | ${s.previousToken.toFixed(3)} | ${s.induction.toFixed(3)} |`),
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(`${headsTable()}\n\n${scoresTables()}`);
