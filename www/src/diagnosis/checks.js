// The probe checks that read attention: a throw on a valid probe, the weights of each head (read
// through one-hot columns of V), the shape of a result, the heads' columns, the weighted sum.
// Each check is made from its arguments in diagnosis.json (`locate.checks`, see locate.js) and
// returns (ctx) → a finding or null; `ctx.facts` carries what one check learnt to the next.
import { closeMatrix as close, finiteMatrix, identity, isMatrix, range, transpose } from '../matrix.js';
import { callsOf, describeProbe, hasStep, outputsOf, readWeights, stepOf, trace } from './probes.js';
import { explainWeights } from './weights.js';
import { shapeOf } from './words.js';

// JavaScript's own TypeErrors (a crash, not a check)
const BUILT_IN_TYPE = /cannot read|cannot set|is not a function|is not iterable|is not defined|cannot convert|undefined|null/i;
// JavaScript's own RangeErrors (not a check the learner wrote)
const BUILT_IN_RANGE = /invalid array length|call stack|invalid count|precision|radix|invalid time|invalid string length|out of range|offset is out of bounds/i;

/** An error the learner's own argument check threw (a RangeError, or an Error with a message of theirs), not a crash. */
export function isOwnCheck(error) {
  if (!error) return false;
  if (error.name === 'RangeError') return !BUILT_IN_RANGE.test(error.message);
  if (error.name === 'TypeError') return /^options\.|expected|must be/.test(error.message) && !BUILT_IN_TYPE.test(error.message);
  return error.name === 'Error' && !/not written yet|no result/.test(error.message);
}

/**
 * A throw on a probe input. The probes are valid calls, so an error the learner's own check threw
 * is located at the check (the check rejects a valid input); any other throw is told as it is.
 */
export function thrown(ctx, probe, error, step = null) {
  if (isOwnCheck(error)) {
    return {
      step: 'check', probe, rejected: true,
      title: `Your function rejects a valid input: ${error.name}: “${error.message}”`,
      detail: `The call (${describeProbe(probe, ctx.table)}) is valid, yet your function threw. ${ctx.table.validHint ?? 'Check the condition of that throw: it must fail only on the inputs the task names.'}`,
    };
  }
  return { step, probe, title: `Your function throws on a probe input (${describeProbe(probe, ctx.table)})`, detail: `${error.name}: ${error.message}` };
}

/**
 * Identity weights on every listed readout probe (every window, and none): each output row is
 * V[p] alone, whatever the window; the weighted sum is the likelier step (a mask that ignores
 * the window entirely is told second). Records facts.ownValue for explainWeights.
 */
export function checkOwnValue(probeIds) {
  return (ctx) => {
    const read = probeIds.map((id) => {
      const probe = ctx.probe(id);
      const got = outputsOf(ctx, probe);
      const weights = got.error ? null : readWeights(probe, got.outputs);
      return weights && weights.every((Ŵ) => finiteMatrix(Ŵ)) ? weights : null;
    });
    const identityAll = read.map((weights) => weights && weights.every((Ŵ) => Ŵ.every((row, q) => row.every((w, k) => Math.abs(w - (q === k ? 1 : 0)) < 1e-12))));
    if (identityAll.every(Boolean)) ctx.facts.ownValue = true;
    // some window shows more than the query itself: the weighted sum does blend the rows of V
    else if (read.some((weights, k) => weights && !identityAll[k])) ctx.facts.blends = true;
    return null;
  };
}

/**
 * A probe whose V is square (T×T, as wide as Q and K): answered right, facts.sameWidthRight (a NaN
 * elsewhere then comes from V's width); answered weights·Vᵀ while the wider probes throw, the
 * weighted sum reads V[c][j] (V transposed), which only runs when V is square.
 */
export function checkSameWidth(probeId) {
  return (ctx) => {
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    if (got.error) return null;
    const t = trace(ctx.lab, probe);
    const [O] = got.outputs;
    if (close(O, t.output, 1e-8)) { ctx.facts.sameWidthRight = true; return null; }
    const W = stepOf(t, 'weights_0').values;
    const others = ctx.table.probes.filter((p) => p.readout && p.V[0].length !== p.T && p.causal === undefined);
    const othersThrow = others.length && others.every((p) => outputsOf(ctx, p).error);
    if (othersThrow && close(O, ctx.lab.linear(W, transpose(probe.V)), 1e-8)) {
      return { probe, head: 0, step: 'weighted-sum', expected: { label: 'output = weights·V', matrix: t.output }, actual: { label: 'your output', matrix: O }, title: 'Your weighted sum uses V transposed: weights·Vᵀ', detail: 'With a square V your output is weights·Vᵀ, and with a V of another width your function throws (reading V[c][j], a row of V that does not exist). Output row i is Σ_j w_ij · V[j]: row j of V is the value of token j.' };
    }
    return null;
  };
}

/** The learner's weights for every head of a readout probe equal the reference. */
export function checkWeights(probeId, options = {}) {
  return (ctx) => {
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    if (got.error) return got.missing ? null : thrown(ctx, probe, got.error);
    const t = trace(ctx.lab, probe);
    const weights = readWeights(probe, got.outputs);
    if (!weights) return wrongShape(ctx, probe, got.outputs[0], probe.numberOfHeads * (probe.readoutWidth ?? probe.headDimensions));
    for (let i = 0; i < probe.numberOfHeads; i++) {
      const W = stepOf(t, `weights_${i}`).values;
      if (close(weights[i], W, 1e-7)) continue;
      // V used transposed (V_hᵀ): the one-call readout then shows the weights with their columns moved
      const alt = probe.T <= (probe.readoutWidth ?? probe.headDimensions) && readWeights(probe, got.outputs, { transposedV: true });
      if (alt && close(alt[i], W, 1e-7)) {
        return { probe, head: i, step: 'weighted-sum', expected: { label: `context_${i} = weights_${i}·V_${i}`, matrix: stepOf(t, `context_${i}`).values }, actual: { label: 'your output', matrix: got.outputs[0] }, title: probe.numberOfHeads > 1 ? `Right weights, multiplied by V_${i}ᵀ instead of V_${i}` : 'Right weights, multiplied by Vᵀ instead of V', detail: 'Your weights are right (read through one-hot columns of V), but the output is weights·Vᵀ. Row i of the output is Σ_j weights[i][j] · V[j]: the rows of V are the values of the tokens.' };
      }
      const finding = explainWeights(ctx, probe, t, i, weights[i], options);
      if (finding) return finding;
    }
    ctx.facts[`weights:${probeId}`] = true;
    return null;
  };
}

/** A probe's output of the wrong shape: the step a shape points to, when it points to one. */
export function wrongShape(ctx, probe, O, C = probe.C) {
  const { T, numberOfHeads: h, headDimensions: d } = probe;
  const base = { probe, title: `Your result is ${shapeOf(O)}; expected ${T}×${C}`, actual: null };
  if (hasStep(ctx.table, 'slice') && isMatrix(O, T, C + d)) {
    return { ...base, step: 'slice', title: `Your result has ${h + 1} heads of ${d} columns; expected numberOfHeads = ${h}`, detail: `Each row is ${C + d} wide: one head too many. Loop over the heads with head < numberOfHeads (heads 0 … ${h - 1}), not ≤.` };
  }
  if (hasStep(ctx.table, 'w-o') && T > C && isMatrix(O, C, C)) {
    // W_O·concat with W_O C×C: a row-by-row product keeps C rows of concat (W_O = I) or mixes them
    const reference = trace(ctx.lab, callsOf(probe)[0]);
    const concat = stepOf(reference, 'concat').values;
    const W = probe.W_O === 'absent' ? identity(C) : probe.W_O;
    if (close(O, ctx.lab.linear(W, concat.slice(0, C)), 1e-8)) {
      return { ...base, step: 'w-o', title: `W_O is applied on the wrong side: your result is ${C}×${C} (W_O·concat), expected ${T}×${C}`, detail: `W_O (C×C) times concat (T×C) only multiplies when T = C; here T = ${T}, C = ${C}, and your product kept ${C} rows. The output projection mixes the columns of each row: concat·W_O, with W_O on the right (the identity when W_O is absent).` };
    }
  }
  if (Array.isArray(O) && O.length === d && d !== T) {
    return { ...base, step: 'slice', title: `Your heads take ${d} rows (tokens) instead of ${d} columns: the result is ${shapeOf(O)}, expected ${T}×${C}`, detail: `Head i keeps all ${T} tokens and takes columns i·headDimensions up to (i+1)·headDimensions of every row: M.map(row => row.slice(start, end)).` };
  }
  if (isMatrix(O, h * T, d) && h > 1) {
    return { ...base, step: 'concat', title: `Your head outputs are stacked on top of each other (${h * T}×${d}) instead of placed side by side`, detail: `Row r of the result is row r of head 0, then row r of head 1, and so on: ${T}×${C}, the shape of the input.` };
  }
  if (h === 1 && Array.isArray(O) && O.length === T && Array.isArray(O[0]) && O[0].length !== C) {
    return { ...base, step: 'weighted-sum', title: `Each row of your output has ${O[0].length} entries; V has ${C} columns`, detail: `weights (${T}×${T}) · V (${T}×${C}) is ${T}×${C}: the output has as many columns as V. ${O[0].length === probe.Q[0].length ? 'Yours has the width of Q and K instead: size the output with V[0].length.' : `Check which bound each loop of the weighted sum uses (here T = ${T}).`}` };
  }
  if (Array.isArray(O) && O.length === T && Array.isArray(O[0]) && O[0].length < C && O[0].length % d === 0) {
    const k = O[0].length / d;
    return { ...base, step: 'slice', title: `Your result has ${k} head${k === 1 ? '' : 's'} of ${d} columns; expected numberOfHeads = ${h}`, detail: `Loop over numberOfHeads heads (here ${h}), each taking headDimensions = ${d} columns.` };
  }
  return { ...base, step: null, detail: `On a probe with ${describeProbe(probe, ctx.table)}.` };
}

/**
 * 'per-key' readout with several heads: output column j, over the T calls, is the weights of the
 * head that wrote column j. Columns that share weights were computed by one head; the groups and
 * the columns of V they came from (facts.source, from the Q = 0 probe) say how the heads were sliced.
 */
export function checkHeads(probeId) {
  return (ctx) => {
    if (!ctx.facts['weights:one-head']) return null; // one head's attention must be right to read the heads' weights
    if (ctx.facts.concatWrong) return null; // the columns are not where the heads put them: the structure probes said so
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    if (got.error) return got.missing ? null : thrown(ctx, probe, got.error);
    const { T, C, numberOfHeads: h, headDimensions: d } = probe;
    if (!got.outputs.every((O) => isMatrix(O, T, C) && finiteMatrix(O))) return got.outputs.every((O) => isMatrix(O, T, C)) ? null : wrongShape(ctx, probe, got.outputs[0]);
    const t = trace(ctx.lab, probe);
    const weightsOf = (j) => range(T).map((q) => range(T).map((k) => got.outputs[k][q][j]));
    const perColumn = range(C).map(weightsOf);
    const source = ctx.facts.source ?? range(C); // output column j holds V's column source[j]
    // the learner's heads: groups of output columns with the same weights
    const groups = [];
    for (let j = 0; j < C; j++) {
      const g = groups.find((grp) => close(perColumn[j], perColumn[grp[0]], 1e-9));
      if (g) g.push(j); else groups.push([j]);
    }
    const vColumns = groups.map((g) => g.map((j) => source[j]).sort((a, b) => a - b));
    const isBlock = (cols) => cols.length === d && cols.every((c, k) => c === cols[0] + k) && cols[0] % d === 0;
    if (groups.length === h && vColumns.every(isBlock)) {
      for (const cols of vColumns) {
        const i = cols[0] / d;
        const j = source.indexOf(cols[0]);
        const finding = explainWeights(ctx, probe, t, i, perColumn[j]);
        if (finding) return finding;
      }
      return null;
    }
    // Which columns of Q and K did each group attend with? Try the group's own V columns.
    const described = vColumns.map((cols) => `{${cols.join(', ')}}`).join(', ');
    const stride = vColumns.every((cols) => cols.length === d && cols.every((c, k) => k === 0 || c - cols[k - 1] === h));
    return {
      probe, step: 'slice',
      title: stride ? `Head i takes every ${h}th column (i, i+${h}, …) instead of a block of ${d} columns` : 'Your heads are not blocks of headDimensions columns',
      detail: `Columns that share one set of weights belong to one head. Your heads are the column groups ${described}; expected ${range(h).map((i) => `{${range(d).map((c) => i * d + c).join(', ')}}`).join(', ')}.`
        + (stride ? ' This is a reshape of each row into [headDimensions, numberOfHeads] instead of [numberOfHeads, headDimensions].' : '') + ` Head i takes columns i·${d} up to (i+1)·${d}.`,
      expected: null, actual: null,
    };
  };
}

/** With weights known right (from `weightsProbeId`, same Q and K), the output is weights·V. */
export function checkWeightedSum(probeId, weightsProbeId) {
  return (ctx) => {
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    if (!ctx.facts[`weights:${weightsProbeId}`]) return null; // an earlier step already differs
    const t = trace(ctx.lab, probe);
    if (got.error) {
      if (got.missing) return null;
      return { probe, head: 0, step: 'weighted-sum', title: `Right weights, but the weighted sum throws when T (${probe.T}) and the width of V (${probe.V[0].length}) differ`, detail: `${got.error.name}: ${got.error.message}. weights (T×T) · V (T×d_v) is T×d_v: check that each loop of the weighted sum runs over the right length.` };
    }
    const [O] = got.outputs;
    if (close(O, t.output, 1e-8)) return null;
    const W = stepOf(t, 'weights_0').values;
    const expected = stepOf(t, 'context_0').values;
    const base = { probe, head: 0, expected: { label: 'context_0 = weights_0·V_0', matrix: expected }, actual: { label: 'your output', matrix: O } };
    let why = `Your weights are right (read from another probe), yet the output is not weights·V (${probe.T} tokens, ${probe.V[0].length} value columns). Row i of the output is Σ_j weights[i][j] · V[j]: check which dimension each loop runs over.`;
    if (isMatrix(O, probe.T, probe.V[0].length) && close(O, ctx.lab.linear(transpose(W), probe.V), 1e-8)) why = 'Your output is weightsᵀ·V: row i must use row i of the weights (query i), not column i.';
    else if (!isMatrix(O, probe.T, probe.V[0].length)) why = `Your output is ${shapeOf(O)}; weights (T×T) times V (T×d_v) is ${probe.T}×${probe.V[0].length}. ${probe.V[0].length !== probe.Q[0].length ? 'Here V is wider than Q: its width is V[0].length, not Q[0].length.' : ''}`;
    return { ...base, step: 'weighted-sum', title: 'Right weights, wrong weighted sum with V', detail: why };
  };
}
