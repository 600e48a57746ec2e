// Probe inputs, their calls and their outputs. A probe is data (diagnosis.json's `locate.probes`):
// { id, note, T, C, numberOfHeads, headDimensions, and the form's inputs (Q, K, V, W_O — a matrix
// or 'absent' —, causal, window, numberOfKVHeads; X, W_Q, W_K, W_V; options) }, and how it is read:
//   - `readout: 'weights'`: V is replaced by one-hot columns, in ceil(T / width) calls, so that the
//     output columns are the weights of every head (width: `readoutWidth`, else headDimensions);
//   - `readout: 'per-key'`: call k has 1 in every column of row k of V, so output column j is
//     column k of the weights of whichever head wrote column j;
//   - `basis: true`: one call per column c with X = e_c on every row (a map that is linear in X).
import { identity, isMatrix, oneHot, range } from '../matrix.js';
import { shapeOf } from './words.js';
import { FORMS } from './forms.js';

/** The key a one-call readout puts in column c of a head (a cycle, so that V and Vᵀ differ). */
export const cycle = (t, T) => (t + 1) % T;

/**
 * V for readout call k. 'weights': with T ≤ width one call, V[t][i·w + c] = 1 when c = cycle(t);
 * otherwise call k selects keys k·w … k·w + w − 1. 'per-key': call k has 1 in every column of row k.
 */
function readoutV(probe, k) {
  const { T, numberOfHeads: h } = probe;
  const w = probe.readoutWidth ?? probe.headDimensions;
  if (probe.readout === 'per-key') return range(T).map((t) => range(h * w).map(() => (t === k ? 1 : 0)));
  if (T <= w) return range(T).map((t) => range(h * w).map((col) => (col % w === cycle(t, T) ? 1 : 0)));
  return range(T).map((t) => range(h * w).map((col) => (t === k * w + (col % w) ? 1 : 0)));
}

/** The calls of one probe: one, or one per readout part (or per basis column). */
export function callsOf(probe) {
  if (probe.basis) return range(probe.C).map((c) => ({ ...probe, X: range(probe.T).map(() => oneHot(probe.C, c)), part: c }));
  if (!probe.readout) return [probe];
  const width = probe.readoutWidth ?? probe.headDimensions;
  const count = probe.readout === 'per-key' ? probe.T : Math.ceil(probe.T / width);
  return range(count).map((k) => ({ ...probe, V: readoutV(probe, k), part: k }));
}

/** The form of a challenge's diagnosis data (its `reference`), or null. */
export function formOf(data) {
  if (typeof data === 'string') throw new TypeError(`the diagnosis takes a challenge's diagnosis.json data, not its id (${data})`);
  const form = FORMS[data?.reference];
  if (data?.locate && !form) throw new Error(`diagnosis.json: unknown reference form ${data.reference} (known: ${Object.keys(FORMS).join(', ')})`);
  return form ?? null;
}

/** The probe calls of a challenge's diagnosis data: [{ id, args }], to run like test cases (same worker, same time limit). */
export function probeCalls(data) {
  if (!formOf(data) || !data.locate) return [];
  const form = formOf(data);
  return data.locate.probes.flatMap((probe) => callsOf(probe).map((call, k) => ({ id: `probe:${probe.id}:${k}`, args: form.args(call) })));
}

/** A step of a trace by name. */
export const stepOf = (t, name) => t.steps.find((s) => s.name === name);

/**
 * The package's trace of a probe: multi-head attention, or one causal head over a window of keys
 * (a probe with `window`); a V wider or narrower than Q (a readout) gets the weights from the trace
 * and the output from the weights.
 */
export function trace(lab, p) {
  if (p.window !== undefined) {
    const d = p.Q[0].length;
    const t = lab.traceGroupedQueryAttention(p.Q, p.K, p.Q, { numberOfHeads: 1, numberOfKVHeads: 1, headDimensions: d, causal: true, window: p.window });
    const output = lab.linear(stepOf(t, 'weights_0').values, p.V);
    return { output, steps: t.steps.map((step) => (step.name === 'context_0' ? { ...step, values: output } : step)) };
  }
  const W_O = p.W_O === 'absent' ? identity(p.C) : p.W_O;
  const options = { numberOfHeads: p.numberOfHeads, headDimensions: p.headDimensions, W_O, causal: p.causal === true };
  if (p.V[0].length === p.Q[0].length) return lab.traceMultiHeadAttention(p.Q, p.K, p.V, options);
  const t = lab.traceMultiHeadAttention(p.Q, p.K, p.Q, options);
  const output = lab.dotProductAttention(p.Q, p.K, p.V, { causal: p.causal === true });
  return { output, steps: t.steps.map((step) => (step.name === 'context_0' ? { ...step, values: output } : step)) };
}

/** The learner's outputs for a probe: { outputs: [matrix per call] } or { error } (a throw, or a missing result). */
export function outputsOf(ctx, probe) {
  const outputs = [];
  for (let k = 0; k < callsOf(probe).length; k++) {
    const r = ctx.results.get(`probe:${probe.id}:${k}`);
    if (!r) return { error: { name: 'Error', message: 'no result (the probes were stopped)' }, missing: true };
    if (r.error) return { error: r.error };
    outputs.push(r.output);
  }
  return { outputs };
}

/**
 * The learner's weights per head, read from a readout probe: head i's weights column k·w + c is
 * output column i·d + c of call k. null when an output does not have the expected T×C shape.
 * `transposedV`: read them as if the learner multiplied by Vᵀ (one-call readouts only).
 */
export function readWeights(probe, outputs, { transposedV = false } = {}) {
  const { T, numberOfHeads: h, headDimensions: d } = probe;
  const width = probe.readoutWidth ?? d;
  const cols = h * width;
  if (!outputs.every((O) => isMatrix(O, T, cols))) return null;
  if (T <= width) {
    const inverse = range(T).map((key) => range(T).find((c) => cycle(c, T) === key));
    return range(h).map((i) => range(T).map((q) => range(T).map((key) => outputs[0][q][i * width + (transposedV ? inverse[key] : cycle(key, T))])));
  }
  return range(h).map((i) => range(T).map((q) => range(T).map((key) => outputs[Math.floor(key / width)][q][i * width + (key % width)])));
}

/** The probe in words: its sizes, its options (the form's words), its note. */
export function describeProbe(p, table) {
  if (table?.form?.describe) return [table.form.describe(p), p.note].filter(Boolean).join(', ');
  const parts = [`T = ${p.T}`];
  if (p.X) parts.push(`X ${shapeOf(p.X)}`);
  if (table?.dim === 'd') parts.push(`d = ${p.headDimensions}`);
  else if (table?.dim === 'd_k') parts.push(`d_k = ${p.headDimensions}`, ...(p.V[0].length !== p.headDimensions && !p.readout ? [`d_v = ${p.V[0].length}`] : []));
  else parts.push(`numberOfHeads = ${p.numberOfHeads}`, `headDimensions = ${p.headDimensions}`);
  parts.push(table?.form?.options(p) ?? null);
  if (p.note) parts.push(p.note);
  parts.push(table?.form?.note?.(p) ?? null);
  return parts.filter(Boolean).join(', ');
}

/** Whether the challenge has `step`: a reading that names a step is made only where the step exists. */
export const hasStep = (table, step) => table.steps.includes(step);
