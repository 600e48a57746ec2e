// The probe checks of the projections Q = X·W_Q, K = X·W_K, V = X·W_V (projectedSelfAttention):
// probes that make the output the average row of V, or the weights themselves, or two heads of
// generic projections tried against the forms a learner may have used.
import { blockDiagonal, closeMatrix as close, columnMeans, finiteMatrix, identity, isMatrix, transpose, zeros } from '../matrix.js';
import { outputsOf, stepOf } from './probes.js';
import { thrown } from './checks.js';
import { fitScale } from './scale.js';

/**
 * W_Q = W_K = 0: every weight is 1/T, so every output row is the average row of V (W_O = I).
 * Which V does the learner's average belong to: X·W_V, X·W_Vᵀ, W_V·X, X itself, or 0 (W_Q or W_K used)?
 */
export function checkProjectionV(probeId) {
  return (ctx) => {
    const lab = ctx.lab;
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    if (got.error) return got.missing ? null : thrown(ctx, probe, got.error);
    const [O] = got.outputs;
    const { X, W_V } = probe;
    const expected = lab.projectedSelfAttention(X, { W_Q: probe.W_Q, W_K: probe.W_K, W_V, W_O: probe.W_O, numberOfHeads: 1, headDimensions: probe.C });
    if (close(O, expected, 1e-8)) return null;
    if (!isMatrix(O, probe.T, probe.C) || !finiteMatrix(O) || !O.every((row) => close([row], [O[0]], 1e-9))) return null; // the weights are not uniform: not this probe's question
    const base = { probe, expected: { label: 'every row: the average row of V = X·W_V', matrix: [expected[0]] }, actual: { label: 'your rows (all equal)', matrix: [O[0]] } };
    const candidates = [
      [lab.linear(X, transpose(W_V)), 'Your values are X·W_Vᵀ: W_V is used transposed, the way PyTorch stores nn.Linear ([out, in]). Here W_V is stored [in, out], so V = X·W_V.'],
      [lab.linear(W_V, X), 'Your values are W_V·X: the projection is on the wrong side. Each token\'s row x_t is multiplied by W_V: V = X·W_V.'],
      [X, 'Your values are X itself: V is not projected. V = X·W_V.'],
      [zeros(probe.T, probe.C), 'Your values are 0 when W_Q and W_K are 0: V is made with W_Q or W_K instead of W_V.'],
    ];
    for (const [V, why] of candidates) {
      if (close([O[0]], columnMeans(V), 1e-8)) return { ...base, step: 'project-V', title: 'Your values V are not X·W_V', detail: `With W_Q = W_K = 0 every weight is 1/T, so every output row is the average row of V. ${why}` };
    }
    return { ...base, step: 'project-V', title: 'Your values V are not X·W_V', detail: 'With W_Q = W_K = 0 every weight is 1/T, so every output row is the average row of V; yours is the average of something else. V = X·W_V: row t of V is row t of X times W_V.' };
  };
}

/**
 * X = I and W_V = W_O = I: the output is the weights themselves. Which Q and K do they come from:
 * X·W or X·Wᵀ, X itself, or the other matrix?
 */
export function checkProjectionQK(probeId) {
  return (ctx) => {
    const lab = ctx.lab;
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    if (got.error) return got.missing ? null : thrown(ctx, probe, got.error);
    const [O] = got.outputs;
    const { W_Q, W_K } = probe;
    const t = lab.traceMultiHeadAttention(W_Q, W_K, identity(probe.C), { numberOfHeads: 1, headDimensions: probe.C, W_O: identity(probe.C) });
    const W = stepOf(t, 'weights_0').values;
    if (close(O, W, 1e-7)) { ctx.facts.projections = true; return null; }
    if (!isMatrix(O, probe.T, probe.T) || !finiteMatrix(O)) return null;
    const TRANSPOSED = 'PyTorch\'s nn.Linear stores W as [out, in] and computes X·Wᵀ; here every W is stored [in, out], so a projection is X·W.';
    const options = (M, other, name, otherName) => [
      [M, null],
      [transpose(M), `${name} is used transposed (X·${name}ᵀ)`, TRANSPOSED],
      [identity(probe.C), `${name} is not applied (the ${name === 'W_Q' ? 'queries' : 'keys'} are X itself)`, 'Q = X·W_Q and K = X·W_K: the projections let each head compare tokens by learned features.'],
      [other, `the ${name === 'W_Q' ? 'queries' : 'keys'} are made with ${otherName} instead of ${name}`, 'Q = X·W_Q and K = X·W_K.'],
    ];
    for (const [Qc, whyQ, explainQ] of options(W_Q, W_K, 'W_Q', 'W_K')) {
      for (const [Kc, whyK, explainK] of options(W_K, W_Q, 'W_K', 'W_Q')) {
        if (!whyQ && !whyK) continue;
        const fitted = fitScale(O, lab.linear(Qc, transpose(Kc)), null);
        if (fitted === null) continue;
        const step = whyQ ? 'project-Q' : 'project-K';
        return {
          probe, step, expected: { label: 'weights_0 (X = I, W_V = I: the output is the weights)', matrix: W }, actual: { label: 'your output', matrix: O },
          title: step === 'project-Q' ? 'Your queries Q are not X·W_Q' : 'Your keys K are not X·W_K',
          detail: `With X = I and W_V = W_O = I the output is the attention weights, and yours fit scores in which ${[whyQ, whyK].filter(Boolean).join(' and ')}. ${[...new Set([explainQ, explainK].filter(Boolean))].join(' ')}`,
        };
      }
    }
    return null; // right projections and another mistake, or none that these candidates explain: the attention probes go on
  };
}


/**
 * Two heads, generic X and W: which Q, K and V did the learner attend with? Each is tried as X·W
 * (right), X·Wᵀ, X itself, or X·(W's diagonal blocks) (projected after the split into heads); the
 * output of multi-head attention with each combination is compared with the learner's.
 */
export function checkProjectionHeads(probeId) {
  return (ctx) => {
    const lab = ctx.lab;
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    if (got.error) return got.missing ? null : thrown(ctx, probe, got.error);
    const [O] = got.outputs;
    const { X, W_Q, W_K, W_V, W_O, numberOfHeads: h, headDimensions: d } = probe;
    const expected = lab.projectedSelfAttention(X, { W_Q, W_K, W_V, W_O, numberOfHeads: h, headDimensions: d });
    if (close(O, expected, 1e-8) || !isMatrix(O, probe.T, probe.C) || !finiteMatrix(O)) return null;
    const forms = (W, name) => [
      [lab.linear(X, W), null],
      [lab.linear(X, blockDiagonal(W, d)), `${name} is applied after the split into heads: each head's ${d} columns of X times its own ${d}×${d} block of ${name}. Project first, with all of ${name} (Q = X·W_Q is T×C), then take each head's columns.`],
      [lab.linear(X, transpose(W)), `${name} is used transposed (X·${name}ᵀ). Here every W is stored [in, out], so a projection is X·W.`],
      [X, `${name} is not applied.`],
    ];
    const steps = [['project-Q', 'queries Q', 'X·W_Q', forms(W_Q, 'W_Q')], ['project-K', 'keys K', 'X·W_K', forms(W_K, 'W_K')], ['project-V', 'values V', 'X·W_V', forms(W_V, 'W_V')]];
    for (const [Qc, whyQ] of steps[0][3]) {
      for (const [Kc, whyK] of steps[1][3]) {
        for (const [Vc, whyV] of steps[2][3]) {
          if (!whyQ && !whyK && !whyV) continue;
          if (!close(O, lab.multiHeadAttention(Qc, Kc, Vc, { numberOfHeads: h, headDimensions: d, W_O }), 1e-8)) continue;
          const k = [whyQ, whyK, whyV].findIndex(Boolean);
          const [step, what, right] = steps[k];
          return { probe, step, expected: { label: 'output', matrix: expected }, actual: { label: 'your output', matrix: O }, title: `Your ${what} are not ${right}`, detail: `With ${h} heads of ${d} columns your output is multi-head attention of other projections: ${[whyQ, whyK, whyV].filter(Boolean).join(' ')}` };
        }
      }
    }
    return null;
  };
}
