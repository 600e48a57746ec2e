// Challenge 09's model check (tests.json `model.kind === 'forward'`), as data: the trained model of
// model.json runs both layers on the learner's attention (in the learner's worker, one round of
// calls per layer) and on the package's, and the case compares the shares of repeated tokens each
// predicts. One implementation for the challenge page (www/src/model-check.js draws the case) and
// the command `attention-lab check` (cli/check.mjs prints it). Plain ES module, no DOM.
import { forward, repeatAccuracy, readoutCalls, readWeights } from './forward.js';

/** A share as the page and the command show it: one decimal, a percent sign. */
export const percent = (x) => `${(100 * x).toFixed(1)} %`;

/** A stop of the learner's side of the model: a throw, a timeout or a reply that is not 'done'. */
class ModelStop extends Error {}

/**
 * Runs the model check. `lab`: the package; `tests`: the challenge's tests.json; `model`: its
 * model.json; `sendProbes(probes)` runs [{ id, args }] in the learner's worker and resolves with its
 * reply ({ type: 'done', results: [{ id, output } | { id, error }] }, { type: 'timeout' } or another
 * type with a message). Resolves with one judged case of kind 'model':
 * { id, kind, name, why, verdict: { pass, reason }, model } where `model` holds what the page draws:
 * { kind: 'forward', accuracy (null when the model could not run), referenceAccuracy, repeats,
 *   problem, tokens (the sequence shown), heads, scores: [{ id, label, value, text }], note,
 *   pairs: [{ layer, head, yours: { caption, pattern | null }, reference: { caption, pattern } }] }
 * (layers and heads counted from 1 and 0 as the page names them; a pattern is T×T, rows queries).
 */
export async function forwardCheck(lab, tests, model, sendProbes) {
  const spec = tests.model;
  const { tokens, repeated } = lab.repeatedTokens(spec.evaluation);
  const shown = spec.displaySequence ?? 0;
  const referencePatterns = [];
  const { logits: referenceLogits } = await forward(lab, model, tokens, (calls) => {
    referencePatterns.push(readWeights(readoutCalls(calls[shown]).map((args) => lab.multiHeadAttention(...args)), calls[shown]));
    return calls.map((args) => lab.multiHeadAttention(...args));
  });
  const learnerPatterns = [];
  let problem = null;
  let logits = null;
  try {
    ({ logits } = await forward(lab, model, tokens, async (calls, layer) => {
      const readouts = readoutCalls(calls[shown]);
      const probes = [...calls, ...readouts].map((args, i) => ({ id: `model:${layer}:${i}`, args }));
      const reply = await sendProbes(probes);
      if (reply.type === 'timeout') throw new ModelStop(`your function ran longer than 2 s on layer ${layer + 1}'s ${calls.length} sequences`);
      if (reply.type !== 'done') throw new ModelStop(reply.message ?? 'the worker stopped');
      const byId = new Map(reply.results.map((r) => [r.id, r]));
      const outputs = probes.map((p) => byId.get(p.id));
      const failed = outputs.find((r) => !r || r.error);
      if (failed) throw new ModelStop(`your function threw on layer ${layer + 1}: ${failed?.error ? `${failed.error.name}: ${failed.error.message}` : 'no result'}`);
      const values = outputs.map((r) => r.output);
      learnerPatterns.push(readWeights(values.slice(calls.length), calls[shown]));
      return values.slice(0, calls.length);
    }));
  } catch (error) {
    // a stop, a throw or a timeout in the worker, or an output the next layer cannot use
    problem = error instanceof ModelStop ? error.message : `${error.name}: ${error.message}`;
  }
  const referenceAccuracy = repeatAccuracy(referenceLogits, tokens, repeated);
  const accuracy = logits ? repeatAccuracy(logits, tokens, repeated) : null;
  const repeats = repeated.flat().filter(Boolean).length;
  const pass = accuracy !== null && Math.abs(accuracy - referenceAccuracy) < 0.5 / repeats;
  const reason = accuracy === null
    ? `the model could not run on your function: ${problem}`
    : pass ? '' : `with your attention the model predicts ${percent(accuracy)} of the repeated tokens; with the reference, ${percent(referenceAccuracy)}`;
  const sequence = tokens[shown];
  const heads = model.config.numHeads;
  const pairs = referencePatterns.flatMap((layerPatterns, l) => Array.from({ length: heads }, (_, i) => ({
    layer: l + 1,
    head: i,
    yours: { caption: `Layer ${l + 1}, head ${i}: yours`, pattern: learnerPatterns[l]?.[i] ?? null },
    reference: { caption: `Layer ${l + 1}, head ${i}: reference`, pattern: layerPatterns[i] },
  })));
  return {
    id: 'model-forward',
    kind: 'model',
    name: 'the trained model still copies with your attention',
    why: `Both layers of the trained model call your function on ${tokens.length} sequences of ${tokens[0].length} tokens; it must predict as many of the ${repeats} repeated tokens as with the reference.`,
    verdict: { pass, reason },
    model: {
      kind: 'forward',
      accuracy,
      referenceAccuracy,
      repeats,
      problem,
      tokens: sequence,
      heads,
      scores: [
        { id: 'model-accuracy-yours', label: 'Repeated tokens predicted with your attention', value: accuracy, text: accuracy === null ? 'did not run' : percent(accuracy) },
        { id: 'model-accuracy-reference', label: 'with the reference', value: referenceAccuracy, text: percent(referenceAccuracy) },
      ],
      note: `Of ${repeats} repeated tokens. The patterns below are each head's weights on the first sequence (${sequence.length} tokens: rows are queries, columns keys; light = large; white above the diagonal is masked, so a colour there is a future key leaking in).`,
      pairs,
    },
  };
}
