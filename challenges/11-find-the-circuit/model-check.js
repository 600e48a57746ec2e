// Challenge 11's model check (tests.json `model.kind === 'circuits'`), as data: the learner's
// compositionScores is called (in the learner's worker) on the two layers of the lab's trained model
// (model.json) for each kind, and each answer is compared with the package's Transformer holding the
// same weights. A fourth case reads the learner's K-composition the way the lesson does: the layer-1
// head whose row is strongest is the previous-token head, and it must be the head that behaves as one
// (model.json's headScores). Then the learner's second export, nameHeads (tests.json `model.naming`), is
// called on the package's K-composition of that model (its answer: the heads by behaviour) and on
// constructed scores (their answers by construction). One implementation for the challenge page (www/src/model-check.js draws
// the cases) and the command `attention-lab check` (cli/check.mjs prints them). Plain ES module, no DOM.

const KINDS = {
  q: { name: 'Q-composition', reads: 'queries' },
  k: { name: 'K-composition', reads: 'keys' },
  v: { name: 'V-composition', reads: 'values' },
};

/**
 * The calls of the check: the learner's compositionScores once per kind, on the trained model's layers;
 * then its nameHeads (`function` names the export) on the package's K-composition of that model and on
 * the constructed cases of tests.json `model.naming`. `lab`: the package (the model's scores are its).
 */
export function circuitsCalls(tests, model, lab) {
  const scores = tests.model.kinds.map((kind) => ({ id: `circuits-${kind}`, args: [{ layers: model.layers }, { numberOfHeads: model.config.numHeads, kind }] }));
  if (!tests.model.naming) return scores;
  const { k, baseline } = packageScores(lab, model);
  const naming = [{ name: 'the lab\'s trained model', args: [k, baseline] }, ...tests.model.naming.cases];
  return [...scores, ...naming.map((c, n) => ({ id: `naming-${n}`, function: tests.model.naming.function, args: c.args }))];
}

/** The package's scores on the model's layers (float64): { q, k, v } as numberOfHeads² matrices [i][j], and the random baseline. */
export function packageScores(lab, model) {
  const { embedDim, numHeads } = model.config;
  const transformer = new lab.Transformer({ vocabSize: 2, contextLength: 2, embedDim, numHeads, numLayers: 2, dtype: 'float64' });
  try {
    transformer.setWeights({ layers: model.layers });
    const scores = transformer.compositionScores();
    const pick = (kind) => scores[kind][0].map((row) => row[1]);
    return { q: pick('q'), k: pick('k'), v: pick('v'), baseline: scores.baseline };
  } finally {
    transformer.free();
  }
}

const argmax = (xs) => xs.reduce((arg, x, i) => (x > xs[arg] ? i : arg), 0);
const sum = (xs) => xs.reduce((s, x) => s + x, 0);
const isSquare = (M, n) => Array.isArray(M) && M.length === n && M.every((row) => Array.isArray(row) && row.length === n && row.every((x) => typeof x === 'number'));
const close = (a, e, tolerance) => Number.isFinite(a) && Math.abs(a - e) <= tolerance * Math.max(1, Math.abs(e));
const matches = (M, E, tolerance) => isSquare(M, E.length) && M.every((row, i) => row.every((x, j) => close(x, E[i][j], tolerance)));

/** The heads as their behaviour names them (model.json's headScores): the previous-token head of layer 1, and layer 2's induction scores. */
export function behaviour(model) {
  const [first, second] = model.headScores;
  return { previousToken: argmax(first.map((s) => s.previousToken)), induction: argmax(second.map((s) => s.induction)), first, second };
}

/**
 * The judged cases of challenge 11's model check. `lab`: the package; `tests`: tests.json; `model`:
 * model.json; `results`: the worker's [{ id, output } | { id, error }] for circuitsCalls; `formatNumber`:
 * how a number is written (the site's, www/src/matrix.js). Each case: { id, kind: 'model', name, why,
 * verdict: { pass, reason }, model }, where `model` holds what the page draws: { kind: 'scores',
 * scoreKind, yours (matrix or null), expected, baseline, top (the colour scale's top, shared by the kinds),
 * hint: { reason: 'other-kind', kind, text } when the scores are another kind's, else null } or { kind: 'heads', yours: { row,
 * column } | null, behaviour, rowSums }.
 */
export function circuitsCases(lab, tests, model, results, formatNumber) {
  const byId = new Map(results.map((r) => [r.id, r]));
  const expected = packageScores(lab, model);
  const h = model.config.numHeads;
  // one colour scale for the three kinds: the largest of the package's scores
  const top = Math.max(...['q', 'k', 'v'].flatMap((kind) => expected[kind].flat()));
  const answers = {};
  const cases = tests.model.kinds.map((kind) => {
    const { name, reads } = KINDS[kind];
    const result = byId.get(`circuits-${kind}`);
    const output = result && !result.error ? result.output : null;
    const pass = output !== null && matches(output, expected[kind], tests.tolerance);
    if (isSquare(output, h) && output.flat().every(Number.isFinite)) answers[kind] = output;
    let reason = '';
    let hint = null;
    if (!result || result.error) reason = `your function threw: ${result?.error ? `${result.error.name}: ${result.error.message}` : 'no result'}`;
    else if (!isSquare(output, h)) reason = `expected a ${h}×${h} matrix (rows: the ${h} heads of layer 1, columns: the ${h} heads of layer 2)`;
    else if (!pass) {
      const wrong = output.flat().filter((x, n) => !close(x, expected[kind][Math.floor(n / h)][n % h], tests.tolerance)).length;
      reason = `${wrong} of ${h * h} scores differ from the package's`;
      const other = Object.keys(KINDS).find((k) => k !== kind && matches(output, expected[k], 1e-6));
      if (other) hint = { reason: 'other-kind', kind: other, text: `Your ${name} scores are the package's ${KINDS[other].name} scores: ${kind === 'k' || other === 'k' ? 'Q- and K-composition differ only by the transpose of W_QK (the keys read through W_QKᵀ).' : 'check which matrix of head j you multiply W_OV of head i by.'}` };
    }
    return {
      id: `circuits-${kind}`,
      kind: 'model',
      name: `the lab's trained model: ${name} of every layer-1 head with every layer-2 head`,
      why: `How much each layer-2 head's ${reads} read what each layer-1 head writes, on the weights of the lab's default run after its phase change; compared with the package's compositionScores within ${tests.tolerance}.`,
      verdict: { pass, reason },
      model: { kind: 'scores', scoreKind: kind, label: name, yours: isSquare(output, h) ? output : null, expected: expected[kind], baseline: expected.baseline, top, hint },
    };
  });
  // what the learner's K-composition says (right or not): the strongest row is the head whose output the layer-2 keys read
  const heads = behaviour(model);
  const k = answers.k ?? null;
  const rowSums = k && k.map(sum);
  const row = k && argmax(rowSums);
  const column = k && argmax(k[row]);
  const pass = k !== null && row === heads.previousToken;
  const f = (x) => formatNumber(x);
  cases.push({
    id: 'circuits-heads',
    kind: 'model',
    name: 'your K-composition names the previous-token head',
    why: 'The layer-1 head whose row of K-composition is strongest (the largest sum) is the one whose output the layer-2 heads\' keys read: it must be the head that attends to the previous token (its previous-token score, measured on the lab\'s evaluation batch).',
    verdict: {
      pass,
      reason: k === null
        ? 'your function gave no K-composition scores to read (a numberOfHeads × numberOfHeads matrix of numbers)'
        : pass ? '' : `your K-composition's strongest row is layer-1 head ${row}, but the previous-token head is head ${heads.previousToken}`,
    },
    model: {
      kind: 'heads',
      yours: k && { row, column, rowSums },
      behaviour: heads,
      note: k
        ? `${answers.k && !matches(answers.k, expected.k, tests.tolerance) ? 'Read from your K-composition scores, which are not the package\'s. ' : ''}Your K-composition's strongest row: layer-1 head ${row} (row sum ${f(rowSums[row])}; the others ${rowSums.filter((_, i) => i !== row).map(f).join(', ')}). Its strongest cell: layer-2 head ${column} (${f(k[row][column])}; the baseline is ${f(expected.baseline)}). By behaviour, the previous-token head is layer-1 head ${heads.previousToken} (previous-token score ${f(heads.first[heads.previousToken].previousToken)}) and the strongest induction head is layer-2 head ${heads.induction} (induction score ${f(heads.second[heads.induction].induction)}); layer 2's induction scores are ${heads.second.map((s) => f(s.induction)).join(', ')}.`
        : null,
    },
  });
  if (tests.model.naming) cases.push(...namingCases(tests, model, byId, expected));
  return cases;
}

/** The layer-2 induction score above which the lesson calls a head an induction head (all four of the lab's model: 0.72–0.95). */
export const INDUCTION_SCORE = 0.5;

/** The heads as the lesson's table names them, by behaviour (headScores): what nameHeads must return on the trained model. */
export function namesByBehaviour(model) {
  const heads = behaviour(model);
  return { previousToken: [0, heads.previousToken], induction: heads.second.flatMap((s, j) => (s.induction > INDUCTION_SCORE ? [[1, j]] : [])) };
}

/** A [layer, head] pair, or a list of them, as the findings write it. */
const pairs = (x) => (Array.isArray(x) ? `[${x.map(pairs).join(', ')}]` : JSON.stringify(x) ?? 'undefined');
const isPair = (x) => Array.isArray(x) && x.length === 2 && x.every(Number.isInteger);

/** Why nameHeads' `output` is not `expected`, or '' when it is. */
function namingReason(output, expected) {
  if (!output || typeof output !== 'object' || Array.isArray(output) || output.unexpected) return `expected an object { previousToken: [0, i], induction: [[1, j], …] }, got ${output?.unexpected ?? pairs(output)}`;
  const { previousToken, induction } = output;
  if (!isPair(previousToken)) return `previousToken must be one [layer, head] pair, like [0, 2]; got ${pairs(previousToken)}`;
  if (!Array.isArray(induction) || !induction.every(isPair)) return `induction must be a list of [layer, head] pairs, like [[1, 0], [1, 3]]; got ${pairs(induction)}`;
  const wrong = [];
  if (pairs(previousToken) !== pairs(expected.previousToken)) wrong.push(`previousToken is ${pairs(previousToken)}, expected ${pairs(expected.previousToken)}`);
  if (pairs(induction) !== pairs(expected.induction)) wrong.push(`induction is ${pairs(induction)}, expected ${pairs(expected.induction)}`);
  return wrong.join('; ');
}

/**
 * The cases of nameHeads: on the package's K-composition of the trained model (the answer: the heads by
 * behaviour), then on tests.json's constructed scores (the answer: each case's `expected`, by construction).
 * `model` of each: { kind: 'naming', index, kComposition, baseline, yours (the output, or null), expected }.
 */
function namingCases(tests, model, byId, expected) {
  const { function: name, cases: constructed } = tests.model.naming;
  const all = [
    {
      name: `your ${name} on the trained model's K-composition names the previous-token head and the induction heads`,
      why: `Called with the package's K-composition of the lab's trained model and its baseline. The answer is what the heads do (the lesson's table, measured on the lab's evaluation batch): the previous-token head is the layer-1 head with the highest previous-token score, the induction heads the layer-2 heads with an induction score above ${INDUCTION_SCORE}.`,
      args: [expected.k, expected.baseline],
      expected: namesByBehaviour(model),
    },
    ...constructed,
  ];
  return all.map((c, n) => {
    const result = byId.get(`naming-${n}`);
    const output = result && !result.error ? result.output : null;
    const reason = !result || result.error ? `your ${name} threw: ${result?.error ? `${result.error.name}: ${result.error.message}` : 'no result'}` : namingReason(output, c.expected);
    return {
      id: `naming-${n}`,
      kind: 'model',
      function: name, // a case of another export: not the probed function's failure (www/src/report.js)
      name: n === 0 ? c.name : `${name}: ${c.name}`,
      why: c.why,
      verdict: { pass: reason === '', reason },
      model: { kind: 'naming', index: n, kComposition: c.args[0], baseline: c.args[1], yours: output && !output.unexpected && isPair(output.previousToken) ? output : null, expected: c.expected },
    };
  });
}
