#!/usr/bin/env node
// The numbers in this challenge's README ("What a mistake does to the model"): the trained model
// of model.json run by forward.js on the evaluation sequences of model.mjs, with the package's
// multiHeadAttention and with the site's model of each catalogued mistake (www/src/variants.js).
// Also the heads' scores (headScores). `node challenges/09-attention-in-a-model/lesson-numbers.mjs`
// prints both markdown tables;
// tests/js/challenges.test.mjs checks that the README holds exactly this output.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { forward, repeatAccuracy } from './forward.js';
import { EVALUATION } from './model.mjs';
import { VARIANTS, modelFor } from '../../www/src/variants.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const lab = createRequire(import.meta.url)(join(HERE, '../../target/pkg-node/attention_lab.js'));
const model = JSON.parse(readFileSync(join(HERE, 'model.json'), 'utf8'));
const tests = JSON.parse(readFileSync(join(HERE, 'tests.json'), 'utf8'));

/** The share of repeated tokens predicted right with `attention(Q, K, V, options)` in both layers. */
export async function accuracyWith(attention) {
  const { tokens, repeated } = lab.repeatedTokens(EVALUATION);
  const { logits } = await forward(lab, model, tokens, (calls) => calls.map((args) => attention(...args)));
  return repeatAccuracy(logits, tokens, repeated);
}

const percent = (x) => `${(100 * x).toFixed(1)} %`;

export async function table() {
  const rows = [`| the package's multiHeadAttention (the reference) | ${percent(await accuracyWith(lab.multiHeadAttention))} |`];
  for (const id of tests.variants) {
    const mistake = modelFor(id, 'multiHeadAttention');
    rows.push(`| ${VARIANTS[id].title} | ${percent(await accuracyWith((...args) => mistake(args)[0]))} |`);
  }
  return ['| attention in both layers | repeated tokens predicted |', '| :--- | ---: |', ...rows].join('\n');
}

/** The model's headScores on the evaluation sequences (the package's Transformer with model.json's weights). */
export function scoresTable() {
  const transformer = new lab.Transformer(model.config);
  try {
    transformer.setWeights({ W_E: model.W_E, W_pos: model.W_pos, W_U: model.W_U, layers: model.layers });
    const scores = transformer.headScores(lab.repeatedTokens(EVALUATION).tokens);
    const rows = scores.flatMap((layer, l) => layer.map((s, i) => `| ${l + 1} | ${i} | ${s.previousToken.toFixed(2)} | ${s.induction.toFixed(2)} | ${s.firstToken.toFixed(2)} | ${s.self.toFixed(2)} |`));
    return ['| layer | head | previous token | induction | first token | self |', '| ---: | ---: | ---: | ---: | ---: | ---: |', ...rows].join('\n');
  } finally {
    transformer.free();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(`${scoresTable()}\n\n${await table()}`);
