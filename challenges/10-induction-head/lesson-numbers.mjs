#!/usr/bin/env node
// The numbers in this challenge's README: solution.js and the one-layer counter-example, graded by
// grade.js with the package (generate.mjs stores them in tests.json and fails when the solution
// does not pass or the counter-example does). `node challenges/10-induction-head/lesson-numbers.mjs`
// prints the markdown table and the loss floor; tests/js/challenges.test.mjs checks that the README holds them.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { basisOf, dense, fixedEmbeddings, modelConfig } from './grade.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const tests = JSON.parse(readFileSync(join(HERE, 'tests.json'), 'utf8'));

export function table() {
  const { grading, reference, counterExample } = tests.model;
  const row = (what, r) => {
    const { vocabSize: V, contextLength: L, embedDim: C } = basisOf(r.config);
    return `| ${what} | ${V}, ${L}, ${C} | ${r.previousToken.toFixed(4)} | ${r.induction.toFixed(4)} | ${r.loss.toFixed(3)} | ${r.pass ? 'passes' : 'fails'} |`;
  };
  return [
    `| weights | V, L, C | previous token ≥ ${grading.previousToken} | induction ≥ ${grading.induction} | loss < ${grading.loss} | verdict |`,
    '| :--- | :--- | ---: | ---: | ---: | :--- |',
    ...reference.map((r) => row('the reference answer', r)),
    ...counterExample.map((r) => row('the best one layer', r)),
  ].join('\n');
}

/**
 * The loss floor, in a sentence: the reference's mean loss (first config) on the first repeated token of
 * each sequence (which nothing can predict) and on every other repeated token.
 */
export function floor() {
  const lab = createRequire(import.meta.url)(join(HERE, '../../target/pkg-node/attention_lab.js'));
  const { config, weights } = tests.model.reference[0];
  const model = new lab.Transformer(modelConfig(config));
  try {
    model.setWeights({ ...dense(weights), ...fixedEmbeddings(basisOf(config)) });
    const { tokens, repeated } = lab.repeatedTokens({ vocabSize: config.vocabSize, length: config.vocabSize - 1, batch: tests.model.grading.batch, seed: tests.model.grading.seed });
    const { losses } = model.forward(tokens);
    const T = tokens[0].length;
    const first = [];
    const others = [];
    tokens.forEach((_, b) => {
      for (let t = 1; t < T; t++) if (repeated[b][t]) (repeated[b][t - 1] ? others : first).push(losses.data[b * (T - 1) + t - 1]);
    });
    const mean = (xs) => xs.reduce((a, x) => a + x, 0) / xs.length;
    return `On V = ${config.vocabSize} the reference's loss is ${mean(first).toFixed(2)} nats on the first repeats and ${mean(others).toFixed(4)} on the ${others.length} others.`;
  } finally {
    model.free();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(`${table()}\n\n${floor()}`);
