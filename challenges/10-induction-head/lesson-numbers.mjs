#!/usr/bin/env node
// The numbers in this challenge's README: solution.js and the one-layer counter-example, graded by
// grade.js with the package (generate.mjs stores them in tests.json and fails when the solution
// does not pass or the counter-example does). `node challenges/10-induction-head/lesson-numbers.mjs`
// prints the markdown table; tests/js/challenges.test.mjs checks that the README holds it.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { basisOf } from './grade.js';

const tests = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'tests.json'), 'utf8'));

export function table() {
  const { grading, reference, counterExample } = tests.model;
  const row = (what, r) => {
    const { vocabSize: V, contextLength: L, embedDim: C } = basisOf(r.config);
    return `| ${what} | ${V}, ${L}, ${C} | ${r.previousToken.toFixed(4)} | ${r.induction.toFixed(4)} | ${r.loss.toFixed(3)} | ${r.pass ? 'passes' : 'fails'} |`;
  };
  return [
    `| weights | V, L, C | previous token ≥ ${grading.previousToken} | induction ≥ ${grading.induction} | loss < ${grading.loss} | verdict |`,
    '| :--- | :--- | ---: | ---: | ---: | :--- |',
    ...reference.map((r) => row('solution.js', r)),
    ...counterExample.map((r) => row('one-layer.js', r)),
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(table());
