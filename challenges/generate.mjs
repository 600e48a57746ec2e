#!/usr/bin/env node
// Writes challenges/*/tests.json from challenges/*/cases.mjs, with every expected value and
// error message computed by the reference: the Node build of the wasm package
// (target/pkg-node, made by `make build`). Expected values are never typed by hand.
//
//   node challenges/generate.mjs           write the files
//   node challenges/generate.mjs --check   fail if a file is missing or out of date
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { callReference as callPackage } from '../www/src/cases.js';

const SCHEMA = 'attention-lab/challenge-tests/1';
const HERE = dirname(fileURLToPath(import.meta.url));
const PACKAGE = join(HERE, '..', 'target', 'pkg-node', 'attention_lab.js');

const reference = createRequire(import.meta.url)(PACKAGE);

/** Calls the reference for `spec` (its `function`, or its `reference`) with `args`; returns { output } or { error }. */
function callReference(spec, args) {
  let output;
  try {
    output = callPackage(reference, spec, args);
  } catch (error) {
    if (/^the package has no export/.test(error.message)) throw error;
    return { error };
  }
  return { output };
}

/** A rounded copy of the numbers a check measured (tests.json stays readable; the tests recompute them). */
const measured = (x) => Number(x.toPrecision(6));

/**
 * The model part of a tests.json (challenges 09, 10 and 11, see README.md): `forward` trains the model of
 * model.mjs into model.json (checked like tests.json) and scores it with the package's attention;
 * `weights` grades solution.js (the reference) and one-layer.js (the counter-example) with grade.js;
 * `circuits` trains the lab's model of model.mjs into model.json and runs the check on solution.js.
 */
async function buildModel(spec, folder) {
  const here = (file) => pathToFileURL(join(HERE, folder, file));
  if (spec.model.kind === 'forward') {
    const { train } = await import(here('model.mjs'));
    const { forward, repeatAccuracy } = await import(here('forward.js'));
    const model = train(reference);
    const { tokens, repeated } = reference.repeatedTokens(spec.model.evaluation);
    const { logits } = await forward(reference, model, tokens, (calls) => calls.map((args) => reference.multiHeadAttention(...args)));
    const repeats = repeated.flat().filter(Boolean).length;
    return {
      files: { [spec.model.weights]: JSON.stringify(model) + '\n' },
      model: { ...spec.model, reference: { accuracy: repeatAccuracy(logits, tokens, repeated), repeatedTokens: repeats } },
    };
  }
  if (spec.model.kind === 'weights') {
    const { grade, basisOf, sparse } = await import(here('grade.js'));
    const { [spec.function]: solution } = await import(here('solution.js'));
    const { oneLayerWeights } = await import(here('one-layer.js'));
    const run = (config, weights) => {
      const graded = grade(reference, config, spec.model.grading, weights);
      if (graded.error) throw new Error(`${folder}: the model refuses the weights: ${graded.error.message}`);
      const [previousToken, induction, loss] = graded.checks.map((c) => measured(c.value));
      return { config, pass: graded.pass, previousToken, induction, loss, weights: sparse(weights) };
    };
    const solved = spec.model.configs.map((config) => run(config, solution(basisOf(config))));
    const counter = spec.model.configs.map((config) => run({ ...config, numLayers: 1 }, oneLayerWeights(basisOf(config))));
    if (!solved.every((r) => r.pass)) throw new Error(`${folder}: solution.js fails its own grading: ${JSON.stringify(solved.map(({ weights, ...r }) => r))}`);
    if (counter.some((r) => r.pass)) throw new Error(`${folder}: the one-layer counter-example passes the grading`);
    return { files: {}, model: { ...spec.model, reference: solved, counterExample: counter } };
  }
  if (spec.model.kind === 'circuits') {
    const { train } = await import(here('model.mjs'));
    const { circuitsCalls, circuitsCases } = await import(here('model-check.js'));
    const solution = await import(here('solution.js'));
    const model = train(reference);
    const tests = { tolerance: spec.tolerance, model: spec.model };
    // a call may name another export of the solution (`function`: 11's nameHeads)
    const results = circuitsCalls(tests, model, reference).map(({ id, args, function: name }) => ({ id, output: solution[name ?? spec.function](...args) }));
    const cases = circuitsCases(reference, tests, model, results, String);
    if (!cases.every((c) => c.verdict.pass)) throw new Error(`${folder}: solution.js fails its own model check: ${cases.filter((c) => !c.verdict.pass).map((c) => c.verdict.reason).join('; ')}`);
    const heads = cases.find((c) => c.model.kind === 'heads').model;
    return {
      files: { [spec.model.weights]: JSON.stringify(model) + '\n' },
      model: { ...spec.model, reference: { baseline: measured(cases[0].model.baseline), previousToken: heads.behaviour.previousToken, induction: heads.behaviour.induction, strongestK: heads.yours } },
    };
  }
  throw new Error(`${folder}: unknown model kind ${spec.model.kind}`);
}

function buildTests(spec) {
  const fixed = spec.fixed.map((c) => {
    const { output, error } = callReference(spec, c.args);
    if (error) throw new Error(`${spec.challenge}: fixed case "${c.name}" throws in the reference: ${error}`);
    if (!output.flat().every(Number.isFinite)) throw new Error(`${spec.challenge}: "${c.name}" has a non-finite expected value`);
    return { name: c.name, why: c.why, args: c.args, expected: output };
  });
  const errors = spec.errors.map((c) => {
    const { error } = callReference(spec, c.args);
    if (!error) throw new Error(`${spec.challenge}: error case "${c.name}" does not throw in the reference`);
    if (error.name !== c.throws.name || !error.message.startsWith(c.throws.messageStartsWith)) {
      throw new Error(`${spec.challenge}: error case "${c.name}" throws ${error.name}: ${error.message}; the case expects ${c.throws.name}: ${c.throws.messageStartsWith}…`);
    }
    return { name: c.name, args: c.args, throws: { ...c.throws, referenceMessage: error.message } };
  });
  return {
    schema: SCHEMA,
    challenge: spec.challenge,
    title: spec.title,
    summary: spec.summary,
    function: spec.function,
    ...(spec.kind ? { kind: spec.kind } : {}),
    ...(spec.reference ? { reference: spec.reference } : {}),
    ...(spec.transformer ? { transformer: spec.transformer } : {}),
    tolerance: spec.tolerance,
    variants: spec.variants,
    fixed,
    errors,
    random: spec.random,
  };
}

/** JSON with short arrays (rows, small matrices) kept on one line, so a diff reads like the data. */
function format(value, indent = '') {
  const inline = JSON.stringify(value);
  if (value === null || typeof value !== 'object' || inline.length <= 100 - indent.length) return inline;
  const next = indent + '  ';
  if (Array.isArray(value)) return `[\n${value.map((v) => next + format(v, next)).join(',\n')}\n${indent}]`;
  const entries = Object.entries(value).map(([k, v]) => `${next}${JSON.stringify(k)}: ${format(v, next)}`);
  return `{\n${entries.join(',\n')}\n${indent}}`;
}

const check = process.argv.includes('--check');
const stale = [];
const folders = readdirSync(HERE, { withFileTypes: true })
  .filter((d) => d.isDirectory() && /^\d\d-/.test(d.name))
  .map((d) => d.name)
  .sort();
for (const folder of folders) {
  const spec = (await import(pathToFileURL(join(HERE, folder, 'cases.mjs')))).default;
  if (spec.challenge !== folder) throw new Error(`${folder}/cases.mjs says it is ${spec.challenge}`);
  const tests = buildTests(spec);
  const files = {};
  if (spec.model) {
    const built = await buildModel(spec, folder);
    tests.model = built.model;
    Object.assign(files, built.files);
  }
  files['tests.json'] = format(tests) + '\n';
  for (const [name, text] of Object.entries(files)) {
    const file = join(HERE, folder, name);
    const current = existsSync(file) ? readFileSync(file, 'utf8') : null;
    if (current === text) continue;
    if (check) stale.push(`${folder}/${name}`);
    else {
      writeFileSync(file, text);
      console.log(`wrote ${folder}/${name}`);
    }
  }
}
if (stale.length) {
  console.error(`out of date: ${stale.join(', ')}; run node challenges/generate.mjs`);
  process.exit(1);
}
console.log(`${folders.length} challenges ${check ? 'checked' : 'generated'}`);
