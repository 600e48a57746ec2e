// Challenge 10's model check (tests.json `model.kind === 'weights'`), as data: the learner's function
// is called once per graded config (in the learner's worker) and returns weights; grade.js loads
// them into the package's Transformer and measures the heads and the loss. A head that fails is
// named, with a hint read from its pattern and that pattern next to the one that would pass.
// One implementation for the challenge page (www/src/model-check.js draws the cases) and the
// command `attention-lab check` (cli/check.mjs prints them). Plain ES module, no DOM.
import { basisOf, grade, headHint, idealPattern } from './grade.js';

/** The calls of challenge 10: the learner's function once per graded config, the basis as its argument. */
export function weightsCalls(tests) {
  return tests.model.configs.map((config, i) => ({ id: `config-${i}`, args: [basisOf(config)] }));
}

const HEAD_TEXT = {
  'previous-token': { name: 'previous-token head', article: 'a', score: 'previous-token score', kind: 'previous-token' },
  induction: { name: 'induction head', article: 'an', score: 'induction score', kind: 'induction' },
};

/** What to try when a head fails, from headHint's reading of its pattern ({ reason, share }); C: the model's width. */
export function hintText(id, { reason, share }, C) {
  const inPlace = `${Math.round(100 * share)} % of its rows put their largest weight in the right place`;
  if (reason === 'blurred') return `It looks in the right place (${inPlace}) but not sharply: the layer divides every score by √headDimensions = √${C} ≈ ${Math.sqrt(C).toFixed(2)}, so a match needs a score of about 10 after that division. Scale up the W_Q entries of this head.`;
  return id === 'previous-token'
    ? `Only ${inPlace}. QK: the query at position t must match the key at position t − 1: W_Q takes dim position + t to the same head column as W_K takes dim position + t − 1 (positions reach queries and keys only).`
    : `Only ${inPlace}. QK (K-composition): the query's token i must match keys whose previous token is i, which layer 1 wrote into free dims; W_K must read those dims, not the key's own token. Check layer 1's OV (W_V·W_O) writes token i there.`;
}

/**
 * The judged cases of challenge 10: per config, the two heads and the loss (or one case when the
 * function threw or the model refused its weights). `lab`: the package; `tests`: tests.json;
 * `results`: the worker's [{ id, output } | { id, error }] for weightsCalls(tests); `formatNumber`:
 * how a number is written (the site's, www/src/matrix.js). Each case: { id, kind: 'model', name,
 * why, verdict: { pass, reason }, model }, where `model` holds what the page draws:
 * { kind: 'load' } | { kind: 'loss', score } | { kind: 'head', check, layer, head, score, hint,
 * expected, yours, tokens, note }; score: { label, value, text }; hint (a failing head only):
 * { reason: 'blurred' | 'elsewhere', share, text }; yours and expected: { caption, pattern } (T×T,
 * rows queries; a null row of the expected pattern is not scored).
 */
export function weightsCases(lab, tests, results, formatNumber) {
  const byId = new Map(results.map((r) => [r.id, r]));
  return tests.model.configs.flatMap((config, n) => {
    const { vocabSize: V, contextLength: L, embedDim: C } = basisOf(config);
    const label = `V = ${V}, L = ${L}, C = ${C}`;
    const result = byId.get(`config-${n}`);
    let graded;
    if (!result || result.error) graded = { error: result?.error ?? { name: 'Error', message: 'no result' }, threw: true };
    else graded = grade(lab, config, tests.model.grading, result.output);
    if (graded.error) {
      const message = `${graded.threw ? 'your function threw' : 'the model refused your weights'}: ${graded.error.name}: ${graded.error.message}`;
      return [{ id: `weights-${n}`, kind: 'model', name: `${label}: the weights load into the model`, verdict: { pass: false, reason: message }, model: { kind: 'load' } }];
    }
    return graded.checks.map((check) => {
      if (check.id === 'loss') {
        return {
          id: `weights-${n}-loss`,
          kind: 'model',
          name: `${label}: loss on repeated tokens < ${check.bound}`,
          why: 'The mean cross-entropy of the model\'s prediction of every repeated token (the first repeat of each sequence cannot be predicted: about 2 nats there).',
          verdict: { pass: check.pass, reason: check.pass ? '' : `your model's loss on repeated tokens is ${formatNumber(check.value)}` },
          model: { kind: 'loss', score: { label: 'loss on repeated tokens', value: check.value, text: formatNumber(check.value) } },
        };
      }
      const text = HEAD_TEXT[check.id];
      const layer = check.layer + 1;
      const where = `layer ${layer}, head ${check.head}`;
      const pattern = graded.patterns[check.layer][check.head];
      const hint = check.pass ? null : headHint(text.kind, pattern, graded.tokens);
      return {
        id: `weights-${n}-${check.id}`,
        kind: 'model',
        name: `${label}: a layer-${layer} ${text.name} (${text.score} ≥ ${check.bound})`,
        why: check.id === 'previous-token'
          ? 'Its mean weight on the previous token t − 1, over every position t ≥ 1.'
          : 'At every token that occurred before, its summed weight on the positions right after the earlier copies.',
        verdict: { pass: check.pass, reason: check.pass ? '' : `the ${text.name} is not doing its job: ${where} has ${text.article} ${text.score} of ${formatNumber(check.value)}` },
        model: {
          kind: 'head',
          check: check.id,
          layer,
          head: check.head,
          score: { label: `${text.score} of ${where}`, value: check.value, text: formatNumber(check.value) },
          hint: hint && { ...hint, text: hintText(check.id, hint, C) },
          yours: { caption: `Layer ${layer}, head ${check.head}: yours`, pattern },
          expected: { caption: `Expected of ${text.article} ${text.name}`, pattern: idealPattern(text.kind, graded.tokens) },
          tokens: graded.tokens,
          note: `On the first sequence: ${graded.tokens.join(' ')}. Rows are queries, columns keys; light = large${check.id === 'induction' ? '; hatched rows are tokens with no earlier copy, not scored' : ''}.`,
        },
      };
    });
  });
}
