// Locating the first wrong step of a learner's answer, without a catalogue of mistakes.
//
// The learner writes one function; its intermediate steps are not visible. So the diagnosis calls
// that function on PROBE INPUTS chosen so that one step at a time shows in the output:
//   - numberOfHeads = 1 (and W_O = I) leaves only one head's attention: slicing and
//     concatenation have nothing to do;
//   - V made of one-hot columns turns the output into the attention weights themselves, so the
//     learner's weights can be read (rows sum to 1? which scale do their log-ratios imply?);
//   - Q = 0 makes every weight 1/T whatever the scale or softmax, which isolates the slicing of V,
//     the concatenation and W_O; V's entries encode their column, so a misplaced column is named;
//   - a permutation W_O shows on which side, and which way round, W_O was applied;
//   - large scores show a softmax that overflows;
//   - V = 0 (W_V = 0 in challenge 04) checks the assumption under all of the above: the output is
//     a weighted average of V's rows. When it is not 0, the fault lies after the weights (a
//     residual, a bias, values from K or Q), and that finding wins over the weight readings;
//   - shapes are distinct (T, d_k, d_v, numberOfHeads, numberOfKVHeads), so that a constant read
//     back names one thing (1/√d_v is not 1/√T);
//   - challenge 05 reads which keys each token had in its cache from the same one-hot readout;
//   - challenge 07 has no attention: X = e_c on every row reads the learner's rotation of each
//     column at every position (pairs, angle per pair, position, direction of the turn).
// A throw on a valid probe from the learner's own check is located at the check ('check'); when
// nothing is located and an error case fails (passed in by the caller), the headline names that
// case: accepted, another error, or another message.
// Each challenge declares its steps, probes and checks in one table (TABLES, at the end): a future
// challenge adds its own row. The probes are ordinary calls run in the same sandboxed worker as the
// tests; every expected value comes from the package (`lab`: traceMultiHeadAttention, linear,
// projectedSelfAttention), never from numbers written here.
//
// Plain ES module, no DOM: used by the challenge page and by the Node tests.
import { identity, range, scaleBy, softmaxRow, transpose, zeros } from './matrix.js';
import { STEPS } from './diagnosis/steps.js';

export { STEPS };

// ---- the course's vocabulary: ./diagnosis/steps.js (STEPS, in order) ------------------------

const STEP_ORDER = Object.keys(STEPS);

// ---- small matrix helpers (probe inputs only; expected values come from the package) -----------
// range, zeros, identity, transpose, scaleBy, softmaxRow: ./matrix.js; these are the diagnosis's own.

const oneHot = (n, c) => range(n).map((k) => (k === c ? 1 : 0));
const columns = (M, cols) => M.map((row) => cols.map((c) => row[c]));
const isMatrix = (M, rows, cols) => Array.isArray(M) && M.length === rows && M.every((row) => Array.isArray(row) && row.length === cols);
const finiteMatrix = (M) => M.every((row) => row.every((x) => typeof x === 'number' && Number.isFinite(x)));
/** A permutation matrix: row i has its 1 in column perm[i]. */
const permutationMatrix = (perm) => perm.map((p) => perm.map((_, j) => (j === p ? 1 : 0)));
const fmt = (x) => (typeof x !== 'number' ? String(x) : Number.isInteger(x) ? String(x) : Math.abs(x) >= 1e4 || Math.abs(x) < 1e-3 ? x.toExponential(3) : String(Number(x.toFixed(4))));

/** Equal within `tolerance` (relative to max(1, |expected|)); NaN and ±Infinity never match a finite number. */
function close(actual, expected, tolerance = 1e-8) {
  if (!isMatrix(actual, expected.length, expected[0].length)) return false;
  return actual.every((row, r) => row.every((x, c) => typeof x === 'number' && Number.isFinite(x) && Math.abs(x - expected[r][c]) <= tolerance * Math.max(1, Math.abs(expected[r][c]))));
}
const shapeOf = (M) => (Array.isArray(M) && M.length && Array.isArray(M[0]) ? `${M.length}×${M[0].length}` : Array.isArray(M) ? `an array of ${M.length}` : M === undefined ? 'undefined' : typeof M);

// ---- probe inputs ----------------------------------------------------------------------------

/**
 * A probe: an attention input { Q, K, V, numberOfHeads, headDimensions, W_O, causal }.
 * W_O: a matrix, or 'absent' (the key left out; challenge 02 must then use the identity).
 * causal: true/false, or undefined (no options object for dotProductAttention).
 * `readout: true` replaces V by one-hot columns, in ceil(T / headDimensions) calls, so that the
 * output columns are the weights of every head (see readWeights).
 */
function spec(s) {
  const T = s.Q.length;
  const C = s.numberOfHeads * s.headDimensions;
  // W_O = I where T = C (so that W_O·concat, on the wrong side, is still right here); left out
  // elsewhere, where a W_O on the wrong side could not even be multiplied.
  return { W_O: T === C ? identity(C) : 'absent', ...s, T, C };
}

/** The key a one-call readout puts in column c of a head (a cycle, so that V and Vᵀ differ). */
const cycle = (t, T) => (t + 1) % T;

/**
 * V for readout call k. 'weights': with T ≤ width one call, V[t][i·w + c] = 1 when c = cycle(t);
 * otherwise call k selects keys k·w … k·w + w − 1. 'per-key': call k has 1 in every column of row k,
 * so output column j is column k of the weights of whichever head wrote column j.
 */
function readoutV(probe, k) {
  const { T, numberOfHeads: h } = probe;
  const w = probe.readoutWidth ?? probe.headDimensions;
  if (probe.readout === 'per-key') return range(T).map((t) => range(h * w).map(() => (t === k ? 1 : 0)));
  if (T <= w) return range(T).map((t) => range(h * w).map((col) => (col % w === cycle(t, T) ? 1 : 0)));
  return range(T).map((t) => range(h * w).map((col) => (t === k * w + (col % w) ? 1 : 0)));
}

/** V whose entries encode their place: V[t][c] = (c + 1) + (t + 1) / 100, so an average of one column's entries names the column. */
const codedV = (T, C) => range(T).map((t) => range(C).map((c) => c + 1 + (t + 1) / 100));

// Probe matrices: small integers, scores with distinct differences, neither symmetric nor
// unchanged by a transpose, so that the alternatives a learner might compute differ.
const Q3 = [[1, 0, 2], [0, 1, -1], [2, 1, 0]];
const K3 = [[0, 1, 1], [1, -1, 0], [2, 0, 1]];
// five tokens of two columns: T ≠ d and T ≠ d², so 1/√T, 1/d and 1/√d all differ
const Q5x2 = [[1, 0], [0, 1], [1, -1], [-1, 2], [0.5, 0.5]];
const K5x2 = [[0, 1], [1, 1], [-1, 0], [2, -1], [1, -0.5]];
const V5x2 = [[1, -2], [3, 0.5], [-1, 2], [0, 4], [2, 1]];
// two heads of 3: the heads' scores differ from each other and from strided column sets
const Q2h = [[1, 0, 2, 0, -1, 1], [0, 1, -1, 2, 0, 1], [2, 1, 0, -1, 1, 0]];
const K2h = [[0, 1, 1, 1, 0, -1], [1, -1, 0, 0, 2, 1], [2, 0, 1, 1, 1, 0]];
const K6 = [[1, 0, 2, 0, 1, 1], [0, 1, 0, 1, -1, 0], [2, -1, 1, 0, 0, 1], [-1, 1, 0, 2, 1, 0], [0, 0, 1, 1, 2, -1], [1, 2, 0, -1, 0, 1]];
const Q4x4 = [[1, 0, 2, 0], [0, 1, -1, 2], [2, 1, 0, -1], [0, -1, 1, 1]];
const K4x4 = [[0, 1, 1, 1], [1, -1, 0, 0], [2, 0, 1, 1], [-1, 2, 0, 1]];
const P4 = permutationMatrix([1, 3, 0, 2]); // not symmetric: P·x, x·P and x·Pᵀ all differ
const WO4 = [[0, 2, 0, 0], [0, 0, 0, 1], [3, 0, 0, 0], [0, 0, -1, 0.5]]; // P4 with row sums 2, 1, 3, −0.5

// ---- running probes ---------------------------------------------------------------------------

/** The calls of one probe: one, or ceil(T/d) when its weights are read out. */
function callsOf(probe) {
  if (probe.basis) return range(probe.C).map((c) => ({ ...probe, X: range(probe.T).map(() => oneHot(probe.C, c)), part: c }));
  if (!probe.readout) return [probe];
  const width = probe.readoutWidth ?? probe.headDimensions;
  const count = probe.readout === 'per-key' ? probe.T : Math.ceil(probe.T / width);
  return range(count).map((k) => ({ ...probe, V: readoutV(probe, k), part: k }));
}

// How each challenge's function is called with a probe.
const ADAPTERS = {
  dotProductAttention: (p) => (p.causal === undefined ? [p.Q, p.K, p.V] : [p.Q, p.K, p.V, { causal: p.causal }]),
  multiHeadAttention: (p) => [p.Q, p.K, p.V, { numberOfHeads: p.numberOfHeads, headDimensions: p.headDimensions, ...(p.W_O === 'absent' ? {} : { W_O: p.W_O }), ...(p.causal === undefined ? {} : { causal: p.causal }) }],
  slidingWindowAttention: (p) => [p.Q, p.K, p.V, { window: p.window }],
  // challenge 05: no options but the heads; the reference is causal multi-head attention
  decode: (p) => [p.Q, p.K, p.V, { numberOfHeads: p.numberOfHeads, headDimensions: p.headDimensions }],
  rotaryEmbedding: (p) => [p.X, { ...p.options }],
  // numberOfKVHeads = numberOfHeads unless the probe says otherwise: then it is multi-head attention with W_O = I
  groupedQueryAttention: (p) => [p.Q, p.K, p.V, { numberOfHeads: p.numberOfHeads, numberOfKVHeads: p.numberOfKVHeads ?? p.numberOfHeads, headDimensions: p.headDimensions }],
  // X = [I_T | 0] and W = [M; 0], so X·W_Q = Q, X·W_K = K, X·W_V = V exactly (needs T ≤ C);
  // projection probes give X and the four W themselves.
  projectedSelfAttention: (p) => {
    if (p.X) return [p.X, { W_Q: p.W_Q, W_K: p.W_K, W_V: p.W_V, W_O: p.W_O, numberOfHeads: p.numberOfHeads, headDimensions: p.headDimensions }];
    const pad = (M) => [...M, ...zeros(p.C - p.T, p.C)];
    const X = range(p.T).map((t) => range(p.C).map((c) => (c === t ? 1 : 0)));
    const W_O = p.W_O === 'absent' ? identity(p.C) : p.W_O;
    return [X, { W_Q: pad(p.Q), W_K: pad(p.K), W_V: pad(p.V), W_O, numberOfHeads: p.numberOfHeads, headDimensions: p.headDimensions }];
  },
};

/** The probe calls of a challenge: [{ id, args }], to run like test cases (same worker, same time limit). */
export function probeCalls(challengeId) {
  const table = tableFor(challengeId);
  if (!table) return [];
  return table.probes.flatMap((probe) => callsOf(probe).map((call, k) => ({ id: `probe:${probe.id}:${k}`, args: ADAPTERS[table.function](call) })));
}

// ---- the reference ------------------------------------------------------------------------

function trace(lab, p) {
  if (p.window !== undefined) {
    // challenge 08: one causal head over a window of keys; V may be wider than Q (a readout)
    const d = p.Q[0].length;
    const t = lab.traceGroupedQueryAttention(p.Q, p.K, p.Q, { numberOfHeads: 1, numberOfKVHeads: 1, headDimensions: d, causal: true, window: p.window });
    const output = lab.linear(stepOf(t, 'weights_0').values, p.V);
    return { output, steps: t.steps.map((step) => (step.name === 'context_0' ? { ...step, values: output } : step)) };
  }
  const options = { numberOfHeads: p.numberOfHeads, headDimensions: p.headDimensions, W_O: p.W_O === 'absent' ? identity(p.C) : p.W_O, causal: p.causal === true };
  if (p.V[0].length === p.Q[0].length) return lab.traceMultiHeadAttention(p.Q, p.K, p.V, options);
  // V wider or narrower than Q (challenges 01 and 03): the weights from a trace, the output from dotProductAttention
  const t = lab.traceMultiHeadAttention(p.Q, p.K, p.Q, options);
  const output = lab.dotProductAttention(p.Q, p.K, p.V, { causal: p.causal === true });
  return { output, steps: t.steps.map((step) => (step.name === 'context_0' ? { ...step, values: output } : step)) };
}
const stepOf = (t, name) => t.steps.find((s) => s.name === name);

// ---- reading the learner's results --------------------------------------------------------

/** The learner's outputs for a probe: { outputs: [matrix per call] } or { error } (a throw, or a missing result). */
function outputsOf(ctx, probe) {
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
function readWeights(probe, outputs, { transposedV = false } = {}) {
  const { T, numberOfHeads: h, headDimensions: d } = probe;
  const width = probe.readoutWidth ?? d;
  const cols = h * width;
  if (!outputs.every((O) => isMatrix(O, T, cols))) return null;
  if (T <= width) {
    // one call: column i·w + cycle(key) holds key `key`; with V used transposed, column i·w + c holds key cycle(c)
    const inverse = range(T).map((key) => range(T).find((c) => cycle(c, T) === key));
    return range(h).map((i) => range(T).map((q) => range(T).map((key) => outputs[0][q][i * width + (transposedV ? inverse[key] : cycle(key, T))])));
  }
  return range(h).map((i) => range(T).map((q) => range(T).map((key) => outputs[Math.floor(key / width)][q][i * width + (key % width)])));
}

// ---- what the weights say -------------------------------------------------------------------

const headName = (probe, i) => (probe.numberOfHeads > 1 ? `head ${i}` : 'the head');
const weightsName = (probe, i) => (probe.numberOfHeads > 1 ? `your weights for head ${i}` : 'your weights');

/**
 * Fits log(w_ij / w_ik) = s·(S_ij − S_ik) over the allowed entries of every row: the scale s the
 * learner's weights imply for scores S, or null when no single s explains them.
 */
function fitScale(W, S, allowed) {
  let sxy = 0;
  let sxx = 0;
  const pairs = [];
  W.forEach((row, i) => {
    const keys = range(row.length).filter((j) => (!allowed || allowed[i][j]) && row[j] > 1e-300);
    if (keys.length < (allowed ? allowed[i].filter(Boolean).length : row.length)) return; // an allowed weight of 0: not a softmax of finite scores
    for (const j of keys.slice(1)) {
      const x = S[i][j] - S[i][keys[0]];
      const y = Math.log(row[j]) - Math.log(row[keys[0]]);
      pairs.push([x, y]);
      sxy += x * y;
      sxx += x * x;
    }
  });
  if (!pairs.length || sxx < 1e-12) return null;
  const s = sxy / sxx;
  const worst = Math.max(...pairs.map(([x, y]) => Math.abs(y - s * x)));
  const spread = Math.max(1, ...pairs.map(([, y]) => Math.abs(y)));
  return worst <= 1e-6 * spread ? s : null;
}

/** Names a scale s in the course's terms, for a head of width d (called `dim`) in C columns, T tokens. */
function nameScale(s, d, C, T, dim = 'headDimensions', dv = d) {
  const all = [
    ...(dv !== d && dv !== T ? [[1 / Math.sqrt(dv), `1/√d_v = 1/√${dv} (the width of V; the scale uses ${dim}, the width of Q and K)`]] : []),
    [1 / Math.sqrt(d), `1/√${dim} = 1/√${d}`],
    [1, '1 (no scaling)'],
    [1 / d, `1/${dim} = 1/${d}`],
    [Math.sqrt(d), `√${dim} = √${d} (multiplied instead of divided)`],
    [d, `${dim} = ${d}`],
    [1 / Math.sqrt(C), `1/√C = 1/√${C}`],
    [1 / C, `1/C = 1/${C}`],
    [Math.sqrt(C), `√C = √${C}`],
    [1 / Math.sqrt(T), `1/√T = 1/√${T} (T, the number of tokens)`],
  ];
  const candidates = all.filter(([, name]) => (C !== d || !name.includes('C')) && (T !== d || !name.includes('T')));
  const names = [...new Set(candidates.filter(([v]) => Math.abs(v - s) <= 1e-6 * Math.max(1, v)).map(([, name]) => name))];
  if (names[0] === '1 (no scaling)') return names.join(', or ');
  return names.length ? `${fmt(s)} = ${names.join(', or ')}` : fmt(s);
}

/**
 * Checks one head's weights Ŵ against the reference weights W (from the trace) and, when they
 * differ, finds the first step that explains it. Returns a finding or null.
 */
function explainWeights(ctx, probe, t, i, Ŵ, { large = false } = {}) {
  const lab = ctx.lab;
  const W = stepOf(t, `weights_${i}`).values;
  const allowed = stepOf(t, `weights_${i}`).allowed ?? null;
  if (close(Ŵ, W, 1e-7)) return null;
  const d = probe.headDimensions;
  const C = probe.C;
  const dim = ctx.table.dim ?? 'headDimensions';
  const dv = probe.readout ? (probe.readoutWidth ?? d) : probe.V[0].length / probe.numberOfHeads;
  const scaleName = (x) => nameScale(x, d, C, W.length, dim, dv);
  const windowed = ctx.table.function === 'slidingWindowAttention';
  const who = weightsName(probe, i);
  const base = { probe, head: i, expected: { label: `weights_${i}`, matrix: W }, actual: { label: `your weights_${i}`, matrix: Ŵ } };
  const T = W.length;

  if (large && finiteMatrix(Ŵ)) {
    // near one-hot weights say little about the scale; only a softmax that breaks on large scores is told here
    if (!ctx.facts['weights:one-head']) return null;
    return { ...base, step: 'softmax', title: `${capital(who)} are wrong when the scores are large`, detail: `With scaled scores near ${fmt(Math.max(...stepOf(t, `scaled_${i}`).values.flat()))} your weights differ from the softmax, although they are right on small scores. Subtract each row's maximum, then exp(), then divide by the row's sum.` };
  }
  if (windowed && !large && !finiteMatrix(Ŵ)) {
    const nanRows = range(T).filter((q) => Ŵ[q].every(Number.isNaN));
    if (nanRows.length && range(T).every((q) => nanRows.includes(q) || Ŵ[q].every(Number.isFinite))) {
      const rows = `row${nanRows.length > 1 ? 's' : ''} ${nanRows.join(', ')}`;
      const w = probe.window;
      const base8 = { ...base, step: 'mask', cells: (a, b) => allowed[a][b] };
      if (w === undefined && nanRows.length === T) {
        return { ...base8, title: 'With no window given, every row of your weights is NaN: every key is masked', detail: 'Without options.window there is no window: query p sees every key j ≤ p (the window is Infinity). A comparison with undefined, such as p − undefined < j, is always false, so every score became −Infinity, and the softmax of a row of −Infinity is NaN. Default it: const w = window ?? Infinity.' };
      }
      const finite = range(T).filter((q) => !nanRows.includes(q));
      const seenKeys = finite.flatMap((q) => range(T).filter((k) => Ŵ[q][k] > 1e-12));
      if (w !== undefined && nanRows.every((q, k) => q === k) && seenKeys.every((k) => k >= T - w)) {
        return { ...base8, title: `Quer${nanRows.length > 1 ? 'ies' : 'y'} ${nanRows.join(', ')} see${nanRows.length > 1 ? '' : 's'} no key (NaN): your window is the last ${w} keys of the sequence, not of each query`, detail: `The window is counted back from each query p: it sees the keys p − window < j ≤ p. Yours keeps keys ${T - w} … ${T - 1} (the end of the sequence) for every query, so an early query has no key left, and a row of −Infinity scores gives NaN.` };
      }
      return { ...base8, title: `${capital(rows)} of your weights ${nanRows.length > 1 ? 'are' : 'is'} NaN: every key of ${nanRows.length > 1 ? 'those rows' : 'that row'} is masked`, detail: `A row of −Infinity scores has no finite maximum, and −∞ − (−∞) is NaN. Query p always sees itself and the window − 1 keys before it: p − window < j ≤ p${w === undefined ? ', every key j ≤ p when no window is given' : ''}.` };
    }
  }
  if (!finiteMatrix(Ŵ) && allowed && !large && ctx.facts['weights:one-head']) {
    const bad = range(T).filter((q) => Ŵ[q].some((x) => !Number.isFinite(x)));
    return {
      ...base, step: 'mask',
      title: `With causal: true ${who} contain NaN (row${bad.length > 1 ? 's' : ''} ${bad.join(', ')})`,
      detail: bad.length === 1 && bad[0] === 0
        ? 'Only the first row breaks: its only allowed key is key 0, the query itself. If the diagonal is masked too (j ≥ i instead of j > i), every score of row 0 is −Infinity and −∞ − (−∞) is NaN. Query i may look at keys j ≤ i.'
        : 'Without the mask your weights are right, so the mask brings the NaN: set masked scores to −Infinity (not +Infinity or NaN), so that e^(−∞ − max) is exactly 0, and keep the diagonal unmasked.',
    };
  }
  if (!finiteMatrix(Ŵ) && !large && probe.T !== d && ctx.facts['weights:one-head']) {
    return {
      ...base, step: 'scores',
      title: `${capital(who)} contain NaN when T (${probe.T}) and ${dim} (${d}) differ`,
      detail: `With as many tokens as columns your weights are right; here they are not numbers. A loop that runs to T where it should run to ${dim} (or the other way round) reads past the end of a row, and undefined turns into NaN. score[i][j] sums ${dim} products q_i[c] · k_j[c].`,
    };
  }
  if (!finiteMatrix(Ŵ) && !large && ctx.facts.sameWidthRight && dv !== d) {
    return {
      ...base, step: 'scores',
      title: `${capital(who)} contain NaN when V (${dv} columns) is wider or narrower than Q and K (${d})`,
      detail: `With V as wide as Q and K your answer is right; here it is not a number. A loop of the scores that runs over V's width (d_v) instead of ${dim} reads past the end of a row of Q or K, and undefined turns into NaN. score[i][j] sums ${dim} products q_i[c] · k_j[c]; the weighted sum runs over d_v.`,
    };
  }
  if (!finiteMatrix(Ŵ)) {
    return {
      ...base, step: 'softmax',
      title: large ? `${capital(who)} turn into NaN or Infinity when the scores are large` : `${capital(who)} contain NaN or Infinity`,
      detail: large
        ? `With scaled scores near ${fmt(Math.max(...stepOf(t, `scaled_${i}`).values.flat()))}, e^score overflows to Infinity and Infinity / Infinity is NaN. Subtract each row's maximum before exp(): the weights do not change, and nothing overflows.`
        : 'Look for exp() of a large number, a division by zero, or an index past the end of a row (undefined becomes NaN).',
    };
  }
  // the identity where the reference is not: output row i is V[i], token i's own value
  const isIdentity = Ŵ.every((row, q) => row.every((w, k) => Math.abs(w - (q === k ? 1 : 0)) < 1e-12));
  if (isIdentity && (!allowed || ctx.facts.ownValue) && !close(W, identity(T), 1e-7)) {
    ctx.facts.ownValue = true;
    return { ...base, step: 'weighted-sum', title: `Each output row is token i's own value ${probe.numberOfHeads > 1 ? `V_${i}[i]` : 'V[i]'}, not a blend of all rows of V`, detail: `Read through one-hot columns of V, ${who} are the identity: output row i is V[i] whatever the scores${allowed ? ' and whatever the mask' : ''}. Row i of the output is Σ_j w_ij · V[j], every row of V weighted by query i's weights (a loop over j that reads V[i] instead of V[j] gives this). If your weights themselves put all of query i's attention on key i, look next at ${allowed ? 'the mask (does it let query i see only itself?) and ' : ''}the scores: score[i][j] = q_i · k_j.` };
  }
  // the right weights plus the identity: output = weights·V + V (V added after the weighted sum)
  if (close(Ŵ.map((row, q) => row.map((w, k) => w - (q === k ? 1 : 0))), W, 1e-7)) {
    return { ...base, step: 'residual', title: 'Your output is weights·V + V: V is added after the weighted sum', detail: `Read through one-hot columns of V, ${who} are the right weights plus 1 on the diagonal: each output row is Σ_j w_ij · V[j] plus V[i]. A sum that starts from V[i] instead of 0 does this. Start every output row at 0.` };
  }
  // challenge 08: each query sees a band of keys ending at itself; how wide is it?
  if (windowed && allowed) {
    const seen = Ŵ.map((row) => range(T).filter((k) => row[k] > 1e-12));
    const band = seen.every((sq, q) => sq.length && sq.at(-1) === q && sq.every((x, k) => k === 0 || x === sq[k - 1] + 1));
    const a = Math.max(...seen.map((sq) => sq.length));
    const w = probe.window ?? Infinity;
    if (band && seen.every((sq, q) => sq.length === Math.min(q + 1, a)) && Math.min(a, T) !== Math.min(w, T)) {
      const q = seen.findIndex((sq, k) => sq.length !== Math.min(k + 1, w));
      const sees = (sq) => (sq.length === 1 ? 'only itself' : `keys ${sq[0]} … ${sq.at(-1)}`);
      const want = range(q + 1).slice(Math.max(0, q - w + 1));
      const title = w === Infinity
        ? `With no window, query ${q} sees ${sees(seen[q])}; it must see every key up to itself`
        : a >= T
          ? `The window is not applied: query ${q} sees ${sees(seen[q])}; with window = ${w} it sees ${sees(want)}`
          : `The window is ${Math.abs(w - a)} key${Math.abs(w - a) > 1 ? 's' : ''} too ${a < w ? 'short' : 'wide'}: query ${q} sees ${sees(seen[q])}; with window = ${w} it sees ${sees(want)}`;
      const alone = a === 1 && !ctx.facts.blends ? ' If your window test is right, look next at the weighted sum: output row p = V[p] alone also looks like this; it must be Σ_j w_pj · V[j].' : '';
      return { ...base, step: 'mask', title, detail: `Query p sees the keys p − window < j ≤ p: itself and the window − 1 keys before it (window 1: the token alone; no window: every key j ≤ p). Yours sees ${a >= T ? 'every earlier key' : `${a} key${a > 1 ? 's' : ''}`}${w === Infinity ? '' : ` where the window is ${w}`}: check the bounds of your window test (< or ≤, p − window or p − window + 1).${alone}`, cells: (x, y) => allowed[x][y] };
    }
    // a window in the wrong place: which keys each query sees, against p − window < j ≤ p
    if (w !== Infinity && seen.some((sq, k) => sq.length !== Math.min(k + 1, w) || sq.at(-1) !== k)) {
      const same = (x, y) => x.length === y.length && x.every((k, n) => k === y[n]);
      const span = (lo, hi) => range(T).filter((k) => k >= lo && k <= hi);
      const want = (q) => span(q - w + 1, q);
      const fitsAll = (f) => seen.every((sq, q) => same(sq, f(q)));
      const q = Math.max(0, seen.findIndex((sq, k) => !same(sq, want(k))));
      const sees = (sq) => (sq.length === 0 ? 'no key' : sq.length === 1 ? `only key ${sq[0]}${sq[0] === q ? ' (itself)' : ''}` : `keys ${sq[0]} … ${sq.at(-1)}`);
      const told = `query ${q} sees ${sees(seen[q])}; with window = ${w} it sees ${sees(want(q))}`;
      const rule = 'Query p sees the keys p − window < j ≤ p: itself and the window − 1 keys before it, never a later key.';
      const cells = (x, y) => allowed[x][y];
      if (fitsAll((k) => span(k - w + 1, k + w - 1))) {
        return { ...base, step: 'mask', cells, title: `Your window is not causal: ${told}`, detail: `${rule} Yours keeps |p − j| < window, ${w - 1} key${w > 2 ? 's' : ''} on each side, so query ${q} also sees the later key${seen[q].filter((k) => k > q).length > 1 ? 's' : ''} ${seen[q].filter((k) => k > q).join(', ')}. Keep the causal bound j ≤ p as well as p − window < j.` };
      }
      if (fitsAll((k) => span(k, k + w - 1))) {
        return { ...base, step: 'mask', cells, title: `Your window looks forward from the query: ${told}`, detail: `${rule} Yours keeps p ≤ j < p + window: the window is measured from the key (query p inside key j's last window positions) instead of back from the query. Count back from the query: p − window < j ≤ p.` };
      }
      if (fitsAll((k) => (k === 0 ? [0] : span(k - w, k - 1))) || fitsAll((k) => span(k - w, k - 1))) {
        return { ...base, step: 'mask', cells, title: `Your window leaves out the query itself: ${told}`, detail: `${rule} Yours keeps p − window ≤ j < p: the window is shifted one key back, so query p gives weight to key p − window, outside the window, and none to itself. Use p − window < j ≤ p.` };
      }
    }
  }
  const rowSums = Ŵ.map((row) => row.reduce((a, b) => a + b, 0));
  const colSums = range(T).map((j) => Ŵ.reduce((a, row) => a + row[j], 0));
  const rowsOk = rowSums.every((x) => Math.abs(x - 1) < 1e-7);
  const colsOk = colSums.every((x) => Math.abs(x - 1) < 1e-7);

  // the causal mask: keys after the query must get exactly 0
  if (allowed) {
    const leaks = [];
    Ŵ.forEach((row, q) => row.forEach((w, k) => { if (!allowed[q][k] && Math.abs(w) > 1e-12) leaks.push([q, k]); }));
    const blockedPast = Ŵ.some((row, q) => row.some((w, k) => allowed[q][k] && k < q && Math.abs(w) <= 1e-300 && W[q][k] > 1e-12));
    // a window (challenge 08): a key inside the window, the query itself included, given exactly 0
    const hidden = [];
    Ŵ.forEach((row, q) => row.forEach((w, k) => { if (allowed[q][k] && Math.abs(w) <= 1e-300 && W[q][k] > 1e-12) hidden.push([q, k]); }));
    if (hidden.length && !leaks.length && !blockedPast) {
      const [q, k] = hidden[0];
      return { ...base, step: 'mask', title: `${capital(who)} hide keys the mask must let through`, detail: `Query ${q} may see key ${k}${q === k ? ' (itself)' : ''} but gives it weight 0. Query p sees the keys p − window < j ≤ p: itself and the window − 1 before it.`, cells: (a, b) => allowed[a][b] };
    }
    if (leaks.length || blockedPast) {
      const S = stepOf(t, `scaled_${i}`).values;
      let why = '';
      if (blockedPast && !leaks.length) why = 'Earlier keys (j < i) get weight 0 and later keys do not: the mask is the wrong way round. Query i may look at keys j ≤ i; mask the keys with j > i.';
      else if (leaks.length && rowsOk) {
        // which score did a masked key behave like? log(ŵ_qk / ŵ_qq) + S_qq, the learner's effective scaled score
        const [q, k] = leaks.find(([a]) => Ŵ[a][a] > 0) ?? leaks[0];
        const effective = Math.log(Ŵ[q][k] / Ŵ[q][q]) + S[q][q];
        const unmasked = Ŵ.every((row, a) => row.every((w, b) => Math.abs(w - softmaxRow(S[a])[b]) < 1e-7));
        why = unmasked
          ? `Your weights equal the weights without any mask: the mask is not applied. Set every scaled score ${windowed ? 'outside p − window < j ≤ p' : 'with key j > query i'} to −Infinity before the softmax.`
          : Math.abs(effective) < 1e-6
            ? `The masked keys still get weight: they behave like a score of 0 (for query ${q}, key ${k}), and e⁰ = 1. Use −Infinity, so that e^(−∞) = 0.`
            : windowed
              ? `For query ${q}, key ${k} (${k > q ? 'a later key; a sliding window is causal' : 'before the window'}: query p sees only p − window < j ≤ p${probe.window === undefined ? ', every key j ≤ p when no window is given' : ''}) gets weight ${fmt(Ŵ[q][k])}; with −Infinity before the softmax it gets exactly 0.`
              : `For query ${q}, key ${k} > ${q} gets weight ${fmt(Ŵ[q][k])}; with −Infinity before the softmax it gets exactly 0.`;
      } else if (windowed) why = `Keys outside the window get weight (for example query ${leaks[0][0]}, key ${leaks[0][1]}: ${fmt(Ŵ[leaks[0][0]][leaks[0][1]])}). Query p sees only p − window < j ≤ p: set every other scaled score to −Infinity before the softmax.`;
      else why = `Keys after the query get weight (for example query ${leaks[0][0]}, key ${leaks[0][1]}: ${fmt(Ŵ[leaks[0][0]][leaks[0][1]])}). Mask the scaled scores with key j > query i (−Infinity) before the softmax.`;
      return { ...base, step: 'mask', title: `${capital(who)} give weight to keys the mask must hide`, detail: why, cells: (q, k) => !allowed[q][k] };
    }
    if (!rowsOk) {
      const S = stepOf(t, `scaled_${i}`).values;
      const unmaskedThenZeroed = S.map((row, q) => softmaxRow(row).map((w, k) => (allowed[q][k] ? w : 0)));
      if (close(Ŵ, unmaskedThenZeroed, 1e-7)) {
        return {
          ...base, step: 'mask',
          title: `${capital(who)} do not sum to 1 along each row: the mask comes after the softmax`,
          detail: `Row sums: ${rowSums.map(fmt).join(', ')}. Zeroing the later keys after the softmax throws away weight the softmax already gave them. Mask the scaled scores (−Infinity) before the softmax, so the allowed keys share all the weight.`,
        };
      }
    }
  }

  if (!rowsOk && colsOk && T > 1 && close(Ŵ, transpose(W), 1e-7)) {
    return { ...base, step: 'weighted-sum', title: 'Right weights, used transposed in the weighted sum', detail: 'Your output is weightsᵀ·V: output row i must be Σ_j weights[i][j] · V[j], the weights of query i (row i), not column i. (The same numbers come out of scores transposed, K·Qᵀ, with the softmax down the columns.)' };
  }
  if (!rowsOk && colsOk && T > 1) {
    return { ...base, step: 'softmax', title: `${capital(who)} sum to 1 down each column instead of along each row`, detail: 'The softmax runs over the wrong axis. Each query (a row of the scores) spreads its attention over the keys: apply softmax to every row.' };
  }
  const k = rowSums[0];
  if (!rowsOk && k > 0 && rowSums.every((x) => Math.abs(x - k) < 1e-7 * Math.max(1, k))) {
    const s = fitScale(Ŵ.map((row) => row.map((x) => x / k)), stepOf(t, `scores_${i}`).values, allowed);
    if (s !== null) {
      return { ...base, step: 'scale', title: `Your scores are not scaled before the softmax: every row of ${who} sums to ${fmt(k)}${Math.abs(k - 1 / Math.sqrt(d)) < 1e-9 ? ` = 1/√${d}` : ''}`, detail: `Your weights are softmax(scores × ${scaleName(s)}) multiplied by ${fmt(k)} afterwards. Scale the scores by 1/√${dim} first; the softmax then makes each row sum to 1.` };
    }
  }
  if (!rowsOk) {
    const total = rowSums.reduce((a, b) => a + b, 0);
    const S = stepOf(t, `scaled_${i}`).values;
    const expOnly = S.map((row) => row.map(Math.exp));
    let why = 'A softmax divides each e^score by the sum of its own row.';
    if (Math.abs(total - 1) < 1e-7) why = 'They sum to 1 over the whole matrix: divide by the sum of each row, not of all the scores.';
    else if (close(Ŵ, expOnly, 1e-7)) why = 'They equal e^score: the division by the row sum is missing.';
    return { ...base, step: 'softmax', title: `${capital(who)} do not sum to 1 along each row`, detail: `Row sums: ${rowSums.map(fmt).join(', ')} (each should be 1). ${why}` };
  }

  // zeros where the reference gives weight: a mask where there should be none
  if (!allowed && ctx.table.steps.includes('mask')) {
    const zeroed = [];
    Ŵ.forEach((row, q) => row.forEach((w, k) => { if (Math.abs(w) <= 1e-300 && W[q][k] > 1e-12) zeroed.push([q, k]); }));
    if (zeroed.length) {
      const future = zeroed.every(([q, k]) => k > q);
      return {
        ...base, step: 'mask',
        title: `${capital(who)} are masked although ${probe.causal === false ? 'causal is false' : 'no options are given'}`,
        detail: `${future ? 'Keys after the query get weight 0' : `Some keys get weight 0 (query ${zeroed[0][0]}, key ${zeroed[0][1]})`}. Without { causal: true } this is plain attention: every query sees every key. Use the mask only when options.causal is true (and default it to false).`,
      };
    }
  }

  // rows sum to 1: which scores, at which scale?
  const S = stepOf(t, `scores_${i}`).values;
  const s = fitScale(Ŵ, S, allowed);
  const expectedScale = stepOf(t, `scaled_${i}`).scalar;
  if (s !== null && Math.abs(s) < 1e-9 && ctx.table.steps.includes('cache')) {
    return { ...base, step: 'scores', title: `${capital(who)} are the same for every cached key: token t's scores do not change from key to key`, detail: `Each token spreads its weight evenly over the keys in its cache, so all of its scores are the same number. Token t's score against cached key j is q_t · k_j, its own query against each key in the cache: a score q_t · k_t (its own key, for every cached key) does this, and so would a scale of 0.` };
  }
  if (s !== null && Math.abs(s) < 1e-9) {
    return { ...base, step: 'scores', title: `${capital(who)} are the same for every key: your scores do not change along a row`, detail: `Each query spreads its weight evenly over the keys it may see, so every score of row i is the same number. score[i][j] = q_i · k_j must use key j: a score q_i · k_i (key i for the whole row) does this, and so would a scale of 0.` };
  }
  if (s !== null && Math.abs(s - expectedScale) > 1e-6 * expectedScale) {
    return {
      ...base, step: 'scale',
      title: `Your scores are multiplied by ${scaleName(s)}; expected 1/√${dim} = 1/√${d} ≈ ${fmt(expectedScale)}`,
      detail: `Read from the ratios of ${who}: log(w_ij / w_ik) = scale · (score_ij − score_ik) fits scale = ${fmt(s)} in every row.${Math.abs(s - 1 / Math.sqrt(C)) < 1e-9 && probe.numberOfHeads > 1 ? ' Inside a head the dot products run over headDimensions columns only, so divide by √headDimensions, not √C.' : ` A score is a sum of ${dim} products, so divide it by √${dim}.`}`,
    };
  }
  // a scale that changes from row to row (the number of keys a row sees, for example)
  if (s === null) {
    const rowScales = range(T).map((q) => fitScale([Ŵ[q]], [S[q]], allowed ? [allowed[q]] : null));
    const known = rowScales.filter((x) => x !== null);
    // a row whose allowed scores are all equal says nothing about a scale
    const silent = (q) => new Set(range(T).filter((k) => !allowed || allowed[q][k]).map((k) => S[q][k])).size < 2;
    if (known.length >= 2 && rowScales.every((x, q) => x !== null || silent(q)) && Math.max(...known) - Math.min(...known) > 1e-6) {
      const perKeys = rowScales.every((x, q) => x === null || Math.abs(x - 1 / Math.sqrt(allowed ? allowed[q].filter(Boolean).length : T)) < 1e-6);
      const shown = rowScales.map((x, q) => (x === null ? null : `row ${q}: ${fmt(x)}`)).filter(Boolean).slice(0, 3).join(', ');
      return { ...base, step: 'scale', title: `Your scale changes from row to row (${shown}); expected 1/√${dim} = ${fmt(expectedScale)} in every row`, detail: `Read from the ratios of ${who}, each row fits its own scale.${perKeys ? ' Row t is scaled by 1/√(number of keys it sees): that is the length of the cache or of the row, not the width of a key.' : ''} The scale is 1/√${dim} = 1/√${d}, the same for every query.` };
    }
  }
  // other score matrices the learner may have built
  const [Qh, Kh] = [stepOf(t, `Q_${i}`).values, stepOf(t, `K_${i}`).values];
  const candidates = [];
  const [qn, kn] = ctx.table.dim === 'd_k' ? ['Q', 'K'] : ['Q_h', 'K_h'];
  if (Qh[0].length === Kh.length) candidates.push(['scores', lab.linear(Qh, Kh), `Your weights fit the scores ${qn}·${kn} (K not transposed). Transpose K so that score[i][j] = q_i · k_j.`]);
  candidates.push(['scores', transpose(S), `Your weights fit the scores ${kn}·${qn}ᵀ, the transpose of ${qn}·${kn}ᵀ: row i must belong to query i, column j to key j.`]);
  candidates.push(['scores', lab.linear(Qh, transpose(Qh)), 'Your weights fit the scores Q·Qᵀ: the keys are not used. score[i][j] = q_i · k_j, a query against a key.']);
  candidates.push(['scores', lab.linear(Kh, transpose(Kh)), 'Your weights fit the scores K·Kᵀ: the queries are not used. score[i][j] = q_i · k_j, a query against a key.']);
  candidates.push(['scores', range(T).map(() => range(T).map((j) => Qh[j].reduce((sum, x, c) => sum + x * Kh[j][c], 0))), 'Your weights fit the scores q_j · k_j: row i does not use query i. score[i][j] = q_i · k_j.']);
  const { Q, K } = probe;
  const h = probe.numberOfHeads;
  if (h > 1) {
    for (let other = 0; other < h; other++) {
      if (other === i) continue;
      const cols = range(d).map((c) => other * d + c);
      candidates.push(['slice', lab.linear(columns(Q, cols), transpose(columns(K, cols))), `Head ${i}'s weights fit the scores of columns ${cols[0]}–${cols.at(-1)}, which belong to head ${other}. Head i takes columns i·headDimensions up to (i+1)·headDimensions.`]);
      candidates.push(['slice', lab.linear(Qh, transpose(columns(K, cols))), `Head ${i}'s queries are its own, but its keys are columns ${cols[0]}–${cols.at(-1)} of K, head ${other}'s. Slice the keys with the same columns as the queries: i·headDimensions up to (i+1)·headDimensions.`]);
    }
    const strided = range(d).map((c) => c * h + i);
    candidates.push(['slice', lab.linear(columns(Q, strided), transpose(columns(K, strided))), `Head ${i}'s weights fit the scores of columns ${strided.join(', ')} (every ${h}th column): a reshape of each row into [headDimensions, numberOfHeads] instead of [numberOfHeads, headDimensions]. Head i takes the block of columns i·headDimensions up to (i+1)·headDimensions.`]);
    candidates.push(['slice', lab.linear(Q, transpose(K)), `Head ${i}'s weights fit the scores of all C columns: the heads are not sliced. Head i takes only columns i·headDimensions up to (i+1)·headDimensions.`]);
  }
  for (const [step, scores, why] of candidates) {
    const fitted = fitScale(Ŵ, scores, allowed);
    if (fitted !== null) {
      return { ...base, step, title: step === 'slice' ? `${capital(headName(probe, i))} computes its scores from the wrong columns` : `${capital(who)} come from the wrong scores`, detail: `${why} (The scale your weights imply is ${scaleName(fitted)}.)` };
    }
  }
  if (s !== null && close(Ŵ, W, 1e-6)) return null; // right scores and scale, weights differ only by rounding
  return {
    ...base, step: 'scores',
    title: `${capital(who)} sum to 1 but are not a softmax of ${qn}·${kn}ᵀ at any scale`,
    detail: `Each row is positive and sums to 1, so the softmax step works; the scores going into it are not q_i · k_j. Check the loops of ${qn}·${kn}ᵀ: score[i][j] is the dot product of query row i with key row j, over ${dim} columns.`,
  };
}

const capital = (s) => s[0].toUpperCase() + s.slice(1);

// ---- checks: each reads some probes and returns a finding or null ----------------------------

// JavaScript's own TypeErrors (a crash, not a check)
const BUILT_IN_TYPE = /cannot read|cannot set|is not a function|is not iterable|is not defined|cannot convert|undefined|null/i;
// JavaScript's own RangeErrors (not a check the learner wrote)
const BUILT_IN_RANGE = /invalid array length|call stack|invalid count|precision|radix|invalid time|invalid string length|out of range|offset is out of bounds/i;

/** An error the learner's own argument check threw (a RangeError, or an Error with a message of theirs), not a crash. */
function isOwnCheck(error) {
  if (!error) return false;
  if (error.name === 'RangeError') return !BUILT_IN_RANGE.test(error.message);
  if (error.name === 'TypeError') return /^options\.|expected|must be/.test(error.message) && !BUILT_IN_TYPE.test(error.message);
  return error.name === 'Error' && !/not written yet|no result/.test(error.message);
}

/**
 * A throw on a probe input. The probes are valid calls, so an error the learner's own check threw
 * is located at the check (the check rejects a valid input); any other throw is told as it is.
 */
function thrown(ctx, probe, error, step = null) {
  if (isOwnCheck(error)) {
    return {
      step: 'check', probe,
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
function checkOwnValue(probeIds) {
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
function checkSameWidth(probeId) {
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
function checkWeights(probeId, options = {}) {
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
function wrongShape(ctx, probe, O, C = probe.C) {
  const { T, numberOfHeads: h, headDimensions: d } = probe;
  const base = { probe, title: `Your result is ${shapeOf(O)}; expected ${T}×${C}`, actual: null };
  if (ctx.table.steps.includes('slice') && isMatrix(O, T, C + d)) {
    return { ...base, step: 'slice', title: `Your result has ${h + 1} heads of ${d} columns; expected numberOfHeads = ${h}`, detail: `Each row is ${C + d} wide: one head too many. Loop over the heads with head < numberOfHeads (heads 0 … ${h - 1}), not ≤.` };
  }
  if (ctx.table.steps.includes('w-o') && T > C && isMatrix(O, C, C)) {
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
function checkHeads(probeId) {
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
function checkWeightedSum(probeId, weightsProbeId) {
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

/**
 * Q = 0: every weight is 1/T, so output column j is the average of the V column the learner
 * put there. With V[t][c] = (c + 1) + (t + 1)/100 the average names the column.
 * Records facts.source (output column → the V column it holds) and facts.concatRight.
 */
function checkStructure(probeId) {
  const inner = structureOf(probeId);
  return (ctx) => {
    const finding = inner(ctx);
    if (finding?.step === 'concat') ctx.facts.concatWrong = true; // the heads' weights can no longer be read by column
    return finding;
  };
}

function structureOf(probeId) {
  return (ctx) => {
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    if (got.error) return got.missing ? null : thrown(ctx, probe, got.error);
    const [O] = got.outputs;
    const { T, C, numberOfHeads: h, headDimensions: d } = probe;
    const t = trace(ctx.lab, probe);
    const concat = stepOf(t, 'concat').values;
    const base = { probe, expected: { label: 'concat (every weight is 1/T)', matrix: concat }, actual: { label: 'your output', matrix: O } };
    if (close(O, concat, 1e-8)) {
      if (!ctx.facts.source) { ctx.facts.source = range(C); ctx.facts.concatRight = true; }
      return null;
    }
    if (!isMatrix(O, T, C)) return { ...wrongShape(ctx, probe, O), expected: base.expected, actual: isMatrix(O, O.length, O[0]?.length) ? base.actual : null };
    if (!finiteMatrix(O)) return null; // not readable here; other probes say more
    // the head outputs [h, T, d] reshaped to T×C without moving the head axis: rows mix tokens
    const flat = range(h).flatMap((i) => stepOf(t, `context_${i}`).values.flat());
    const reshaped = range(T).map((r) => flat.slice(r * C, (r + 1) * C));
    if (h > 1 && close(O, reshaped, 1e-8)) {
      return { ...base, step: 'concat', title: `Your heads are reshaped to ${T}×${C} without the transpose: row r of your result mixes several tokens`, detail: `The head outputs, numberOfHeads × T × headDimensions (${h} × ${T} × ${d}), were read row after row into a ${T}×${C} matrix, so row 0 holds tokens 0 … ${C / d - 1} of head 0. Row r must be row r of head 0, then row r of head 1, …: move the head axis next to headDimensions first ([T, numberOfHeads, headDimensions]), or concatenate row by row.` };
    }
    // decode: which V column, averaged over all T tokens, sits in each output column?
    // the last row averages every key (with or without a causal mask); each row r is compared with concat's row r
    const mean = (T + 1) / 2 / 100;
    const source = range(C).map((j) => {
      const c = Math.round(O[T - 1][j] - mean) - 1;
      return c >= 0 && c < C && O.every((row, r) => Math.abs(row[j] - concat[r][c]) < 1e-8) ? c : -1;
    });
    const empty = range(C).filter((j) => O.every((row) => row[j] === 0));
    if (empty.length && empty.every((j) => source[j] === -1) && source.every((c, j) => c === j || empty.includes(j))) {
      const missing = range(h).filter((i) => range(d).every((c) => empty.includes(i * d + c)));
      return {
        ...base, step: 'slice',
        title: missing.length ? `Your result has nothing from head${missing.length > 1 ? 's' : ''} ${missing.join(', ')}: ${h - missing.length} of numberOfHeads = ${h} heads are computed` : `Columns ${empty.join(', ')} of your result are 0: no head wrote them`,
        detail: `Loop over all numberOfHeads = ${h} heads, each taking headDimensions = ${d} columns (C = ${C}).`,
      };
    }
    if (source.includes(-1)) return null;
    const isPermutation = new Set(source).size === C;
    const matches = (f) => range(C).every((j) => source[j] === f(j));
    const interleaved = (j) => (j % h) * d + Math.floor(j / h);
    const strided = (j) => (j % d) * h + Math.floor(j / d);
    const reversed = (j) => (h - 1 - Math.floor(j / d)) * d + (j % d);
    const where = range(C).filter((j) => source[j] !== j).slice(0, 3).map((j) => `column ${j} holds V's column ${source[j]} (head ${Math.floor(source[j] / d)})`).join('; ');
    if (!ctx.facts.source) ctx.facts.source = source;
    if (matches(interleaved)) {
      return { ...base, step: 'concat', title: 'The head outputs are interleaved column by column instead of placed side by side', detail: `Column j of your result holds column ⌊j/${h}⌋ of head j mod ${h} (${where}). Row r must be row r of head 0 (all ${d} columns), then row r of head 1, and so on.` };
    }
    if (matches(strided)) {
      return { ...base, step: 'slice', title: `Head i takes every ${h}th column (i, i+${h}, …) instead of a block of ${d} columns`, detail: `A reshape of each row into [headDimensions, numberOfHeads] instead of [numberOfHeads, headDimensions] (${where}). Head i takes columns i·${d} up to (i+1)·${d}.` };
    }
    if (matches(reversed)) {
      return { ...base, step: 'concat', title: 'The heads are placed in reverse order', detail: `Head 0's columns come last (${where}). Row r is row r of head 0, then head 1, …` };
    }
    if (!isPermutation) {
      const heads = range(h).map((i) => source.slice(i * d, (i + 1) * d));
      const blockOf = (cols) => (cols.every((c, k) => c === cols[0] + k) && cols[0] % d === 0 ? cols[0] / d : -1);
      if (ctx.table.steps.includes('kv-head') && heads.every((cols) => blockOf(cols) >= 0)) {
        // challenge 06 with numberOfKVHeads = numberOfHeads (group 1): each query head reads a whole K/V head, the wrong one
        const read = heads.map(blockOf);
        const i = read.findIndex((k, q) => k !== q);
        const byKV = read.every((k, q) => k === Math.floor(q / h));
        ctx.facts.concatRight = true; // the heads are whole blocks, placed in order: the probe with fewer K/V heads can be read
        return { ...base, step: 'kv-head', weak: true, title: `Query head ${i} reads K/V head ${read[i]}; expected ⌊${i} / 1⌋ = ${i}`, detail: `Here numberOfKVHeads = numberOfHeads = ${h}, so group = numberOfHeads / numberOfKVHeads = 1 and query head i reads K/V head i; yours read ${read.join(', ')}.${byKV ? ' Dividing by numberOfKVHeads (⌊i / numberOfKVHeads⌋) gives 0 for every head: divide by the group size numberOfHeads / numberOfKVHeads.' : ''}` };
      }
      return { ...base, step: 'slice', title: 'Your heads read the wrong columns of V', detail: heads.map((cols, i) => `head ${i} reads columns ${cols.join(', ')} (expected ${range(d).map((c) => i * d + c).join(', ')})`).join('; ') + '.' };
    }
    return { ...base, step: 'concat', title: 'The head outputs are put together in the wrong order', detail: `${where}. Row r of the result is row r of head 0, then row r of head 1, and so on.` };
  };
}

/**
 * Challenge 02: every probe without W_O answers 0 (and one with W_O does not): the missing W_O is
 * not the identity. Those probes cannot be read as weights, so this finding wins (`assumption`).
 */
function checkAbsentZero(probeWithId) {
  return (ctx) => {
    const absent = ctx.table.probes.filter((p) => p.W_O === 'absent' && p.id !== 'zero-v');
    const allZero = absent.every((probe) => {
      const got = outputsOf(ctx, probe);
      return !got.error && got.outputs.every((O) => Array.isArray(O) && O.every((row) => Array.isArray(row) && row.every((x) => x === 0)));
    });
    const given = outputsOf(ctx, ctx.probe(probeWithId));
    if (!absent.length || !allZero || given.error || given.outputs[0].flat().every((x) => x === 0)) return null;
    const probe = absent.find((p) => p.id === 'w-o-absent') ?? absent[0];
    return { probe, assumption: true, step: 'w-o', expected: { label: 'output (W_O absent: the identity)', matrix: trace(ctx.lab, callsOf(probe)[0]).output }, actual: { label: 'your output', matrix: outputsOf(ctx, probe).outputs[0] }, title: 'Without W_O your output is all 0', detail: 'When the options give no W_O, the output projection is the C×C identity, so the output is the heads side by side. Yours is 0 on every probe without W_O (and not with one): use W_O ?? identity(C), not a matrix of zeros.' };
  };
}

/** With the concatenation known right: output = concat·W_O (a permutation W_O, and W_O absent). */
function checkOutputProjection(probeId, absentProbeId) {
  return (ctx) => {
    if (!ctx.facts.concatRight) return null; // the concatenation is not right yet
    const lab = ctx.lab;
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    if (got.error) return got.missing ? null : thrown(ctx, probe, got.error, 'w-o');
    const [O] = got.outputs;
    const t = trace(lab, probe);
    const concat = stepOf(t, 'concat').values;
    const base = { probe, expected: { label: 'output = concat·W_O', matrix: t.output }, actual: { label: 'your output', matrix: O } };
    if (!close(O, t.output, 1e-8)) {
      const W = probe.W_O;
      let why = 'The concatenated heads are right (other probes show it), so the difference comes from W_O: the result is concat·W_O, a (T×C)·(C×C) product.';
      let title = 'The concatenated heads are right, the product with W_O is not';
      if (close(O, concat, 1e-8)) { title = 'W_O is not applied'; why = `Your output equals the concatenated heads. Multiply them by W_O${ctx.table.function === 'multiHeadAttention' ? ' (the identity only when W_O is absent)' : ''}.`; }
      else if (close(O, lab.linear(concat, transpose(W)), 1e-8)) { title = 'W_O is applied transposed: concat·W_Oᵀ'; why = 'W_O is stored [in, out]: row i belongs to column i of the concatenated heads. Multiply by W_O itself.'; }
      else if (probe.T === probe.C && close(O, lab.linear(W, concat), 1e-8)) { title = 'W_O is applied on the wrong side: W_O·concat'; why = 'The output projection mixes the columns of each row: concat·W_O, with W_O on the right.'; }
      return { ...base, step: 'w-o', title, detail: why };
    }
    if (absentProbeId) {
      const absent = ctx.probe(absentProbeId);
      const res = outputsOf(ctx, absent);
      if (res.error) return res.missing ? null : { probe: absent, step: 'w-o', title: 'Your function throws when W_O is absent', detail: `${res.error.name}: ${res.error.message}. Without W_O the output projection is the C×C identity: W_O ?? identity(C).` };
      const ta = trace(lab, absent);
      if (!close(res.outputs[0], ta.output, 1e-8)) return { probe: absent, step: 'w-o', expected: { label: 'output (W_O absent: the identity)', matrix: ta.output }, actual: { label: 'your output', matrix: res.outputs[0] }, title: 'Without W_O your output is not the concatenated heads', detail: 'When the options give no W_O, use the C×C identity, so the output is the heads side by side.' };
    }
    return null;
  };
}

function describeProbe(p, table) {
  const parts = [`T = ${p.T}`];
  if (p.X) parts.push(`X ${shapeOf(p.X)}`);
  if (table?.dim === 'd') parts.push(`d = ${p.headDimensions}`);
  else if (table?.dim === 'd_k') parts.push(`d_k = ${p.headDimensions}`, ...(p.V[0].length !== p.headDimensions && !p.readout ? [`d_v = ${p.V[0].length}`] : []));
  else parts.push(`numberOfHeads = ${p.numberOfHeads}`, `headDimensions = ${p.headDimensions}`);
  // decode takes no causal option (it is causal by construction), slidingWindowAttention only { window }
  if (table?.function !== 'decode' && table?.function !== 'slidingWindowAttention') parts.push(p.causal === undefined ? (table?.function === 'dotProductAttention' ? 'no options' : null) : `{ causal: ${p.causal} }`);
  if (p.note) parts.push(p.note);
  if (table?.function === 'projectedSelfAttention' && !p.X) parts.push('X = [I | 0] and W_Q, W_K, W_V holding Q, K, V, so that X·W_Q = Q');
  return parts.filter(Boolean).join(', ');
}

// ---- checks before reading weights: is the output a weighted average of V's rows at all? --------

/** The reference output of a probe (the table's own function, through the package). */
function referenceOutput(ctx, probe) {
  if (ctx.table.function === 'groupedQueryAttention') {
    return ctx.lab.groupedQueryAttention(probe.Q, probe.K, probe.V, { numberOfHeads: probe.numberOfHeads, numberOfKVHeads: probe.numberOfKVHeads ?? probe.numberOfHeads, headDimensions: probe.headDimensions });
  }
  if (probe.X) return ctx.lab.projectedSelfAttention(probe.X, { W_Q: probe.W_Q, W_K: probe.W_K, W_V: probe.W_V, W_O: probe.W_O, numberOfHeads: probe.numberOfHeads, headDimensions: probe.headDimensions });
  return trace(ctx.lab, probe).output;
}

/**
 * V = 0 (W_V = 0 in challenge 04): every output row is a weighted average of V's rows, so the
 * output must be 0, whatever the weights. When it is not, something after the weights adds to the
 * output (a residual, a bias, values taken from Q or K), and every probe that reads the output as
 * weights would read it wrong: this finding then wins over theirs (`assumption`).
 */
function checkAverage(probeId) {
  return (ctx) => {
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    if (got.error) return null; // other probes say why it throws
    const [O] = got.outputs;
    const expected = referenceOutput(ctx, probe);
    if (close(O, expected, 1e-9)) return null;
    if (!isMatrix(O, expected.length, expected[0].length) || !finiteMatrix(O)) return null;
    const base = { probe, assumption: true, expected: { label: probe.X ? 'output (W_V = 0, so V = 0)' : 'output (V = 0)', matrix: expected }, actual: { label: 'your output', matrix: O } };
    const what = probe.X ? 'With W_V = 0 every value row is 0' : 'With V = 0';
    const lead = `${what}, every output row is a weighted average of zero rows, whatever the weights, so the output must be 0.`;
    const alike = (M) => M && isMatrix(M, O.length, O[0].length) && close(O, M, 1e-9);
    const { lab } = ctx;
    if (probe.X && alike(probe.X)) {
      return { ...base, step: 'residual', title: 'Your output is X + attention: a residual connection is added', detail: `${lead} Yours is X itself. This function returns the attention output, concat·W_O, alone; adding X (the residual) is the job of the layer around it.` };
    }
    if (probe.X && !O.every((row) => close([row], [O[0]], 1e-9))) {
      // challenge 04: values that are not 0 although W_V = 0 are not X·W_V; the probes with X = I
      // locate the other projections (this finding is one of theirs, not an assumption)
      const { X, W_Q, W_K, W_O } = probe;
      const project = (W) => lab.projectedSelfAttention(X, { W_Q, W_K, W_V: W, W_O, numberOfHeads: probe.numberOfHeads, headDimensions: probe.headDimensions });
      const tried = [[identity(probe.C), 'X itself: V is not projected'], [W_K, 'X·W_K: V is made with W_K'], [W_Q, 'X·W_Q: V is made with W_Q']];
      const named = tried.find(([W]) => alike(project(W)));
      return { ...base, assumption: false, step: 'project-V', title: 'Your values V are not X·W_V', detail: `${lead} Yours is not, so your values are not X·W_V = 0${named ? `: they are ${named[1]}` : ''}. V = X·W_V: row t of V is row t of X times W_V.` };
    }
    if (!probe.X && alike(probe.Q)) {
      return { ...base, step: 'residual', title: 'Your output is Q + attention: the queries are added to the result', detail: `${lead} Yours is Q itself. Return the weighted sum of V alone: output row i is Σ_j w_ij · V[j]${ctx.table.steps.includes('w-o') ? ', then the heads side by side and W_O' : ''}, with nothing added.` };
    }
    if (ctx.table.steps.includes('cache') && isMatrix(probe.K, probe.V.length, probe.V[0].length)) {
      let swapped = null;
      try { swapped = referenceOutput(ctx, { ...probe, K: probe.V, V: probe.K }); } catch { /* shapes */ }
      if (alike(swapped)) {
        return { ...base, step: 'cache', title: 'Your cache holds the values as keys and the keys as values', detail: `${lead} Yours is attention with K and V swapped: scores against rows of V, a weighted sum of rows of K. Append row t of K to cache.keys and row t of V to cache.values.` };
      }
    }
    for (const [name, M] of probe.X ? [] : [['K', probe.K], ['Q', probe.Q]]) {
      if (!isMatrix(M, probe.V.length, probe.V[0].length)) continue;
      let withM;
      try { withM = referenceOutput(ctx, { ...probe, V: M }); } catch { continue; }
      if (alike(withM)) {
        return { ...base, step: ctx.table.steps.includes('cache') ? 'cache' : 'weighted-sum', title: ctx.table.steps.includes('cache') ? `Your cache's values are rows of ${name}: token t's weighted sum uses ${name}, not V` : `Your weighted sum takes the rows of ${name}, not of V`, detail: `${lead} Yours is weights·${name}: the values ${ctx.table.steps.includes('cache') ? 'in the cache are the keys' : `are ${name}'s rows`}. Output row i is Σ_j w_ij · V[j].` };
      }
    }
    if (O.every((row) => close([row], [O[0]], 1e-9))) {
      return { ...base, step: 'residual', title: 'A constant row is added to every output row', detail: `${lead} Every row of yours is [${O[0].map(fmt).join(', ')}]: a bias, or a sum that does not start at 0. Output row i is Σ_j w_ij · V[j], with nothing added.` };
    }
    return { ...base, step: 'weighted-sum', title: `${probe.X ? 'With W_V = 0' : 'With V = 0'} your output is not 0: it is not a weighted average of V's rows`, detail: `${lead} So something other than V reaches your output after the weights (a residual, a bias, Q or K in place of V). Output row i is Σ_j w_ij · V[j]${ctx.table.steps.includes('w-o') ? ', then the heads side by side and W_O' : ''}.` };
  };
}

// ---- the tables -----------------------------------------------------------------------------

const MULTI_HEAD = {
  steps: ['slice', 'scores', 'scale', 'softmax', 'weighted-sum', 'concat', 'w-o'],
  probes: [
    spec({ id: 'one-head', note: 'one head, V = one-hot columns (the output is the weights)', Q: Q3, K: K3, V: Q3, numberOfHeads: 1, headDimensions: 3, readout: 'weights' }),
    spec({ id: 'one-head-5x2', note: 'one head, 5 tokens of 2 columns, V = one-hot columns', Q: Q5x2, K: K5x2, V: V5x2, numberOfHeads: 1, headDimensions: 2, readout: 'weights' }),
    spec({ id: 'large', note: 'one head, scores near 1000', Q: scaleBy(Q3, 30), K: scaleBy(K3, 30), V: Q3, numberOfHeads: 1, headDimensions: 3, readout: 'weights' }),
    spec({ id: 'sum', note: 'one head, 5 tokens of 2 columns', Q: Q5x2, K: K5x2, V: V5x2, numberOfHeads: 1, headDimensions: 2 }),
    spec({ id: 'structure', note: 'Q = 0, so every weight is 1/T', Q: zeros(6, 6), K: K6, V: codedV(6, 6), numberOfHeads: 2, headDimensions: 3 }),
    spec({ id: 'structure-3', note: 'Q = 0, three heads of two', Q: zeros(6, 6), K: K6, V: codedV(6, 6), numberOfHeads: 3, headDimensions: 2 }),
    spec({ id: 'heads', note: 'two heads, V = one token at a time', Q: Q2h, K: K2h, V: Q2h, numberOfHeads: 2, headDimensions: 3, readout: 'per-key' }),
    // Q = 0 (every weight 1/T, whatever the scale), so the rows of concat are equal; W_O's rows have
    // different sums, so W_O·concat (W_O on the left) differs from concat, concat·W_O and concat·W_Oᵀ
    spec({ id: 'w-o', note: 'Q = 0, W_O with rows of different sums', Q: zeros(4, 4), K: K4x4, V: codedV(4, 4), numberOfHeads: 2, headDimensions: 2, W_O: WO4 }),
    spec({ id: 'w-o-absent', note: 'no W_O in the options', Q: Q4x4, K: K4x4, V: codedV(4, 4), numberOfHeads: 2, headDimensions: 2, W_O: 'absent' }),
    spec({ id: 'zero-v', note: 'V = 0: every output row is an average of zero rows', Q: Q4x4.slice(0, 3), K: K4x4.slice(0, 3), V: zeros(3, 4), numberOfHeads: 2, headDimensions: 2 }),
  ],
  checks: [
    checkAverage('zero-v'),
    checkAbsentZero('w-o'),
    checkWeights('one-head'),
    checkWeights('one-head-5x2'),
    checkWeights('large', { large: true }),
    checkWeightedSum('sum', 'one-head-5x2'),
    checkStructure('structure'),
    checkStructure('structure-3'),
    checkHeads('heads'),
    checkOutputProjection('w-o', 'w-o-absent'),
  ],
};

// Challenges 01 and 03: dotProductAttention(Q, K, V[, { causal }]). V may be as wide as it likes,
// so one call reads a whole T×T weights matrix (readoutWidth = T).
const Qm = [[1, 0], [0, 1], [1, 1], [2, -1]];
const Km = [[0, 1], [1, 0], [-1, 1], [3, 3]]; // key 3 would dominate every query if it leaked
const V5x3 = [[1, -2, 0.5], [3, 0.5, -1], [-1, 2, 2], [0, 4, 1], [1, 1, -2]];
// the readout V is T + 2 wide: d_v differs from T and from d_k, so 1/√d_v, 1/√T and 1/√d_k name different scales
const single = (s) => spec({ numberOfHeads: 1, headDimensions: s.Q[0].length, readoutWidth: s.Q.length + 2, ...s });

const DOT_PRODUCT = {
  steps: ['scores', 'scale', 'softmax', 'weighted-sum'],
  probes: [
    single({ id: 'one-head', note: 'V = one-hot columns (the output is the weights)', Q: Q3, K: K3, V: Q3, readout: 'weights' }),
    single({ id: 'one-head-5x2', note: '5 tokens, d_k = 2, V = one-hot columns', Q: Q5x2, K: K5x2, V: Q5x2, readout: 'weights' }),
    single({ id: 'large', note: 'scores near 1000', Q: scaleBy(Q3, 30), K: scaleBy(K3, 30), V: Q3, readout: 'weights' }),
    single({ id: 'sum', note: 'V wider than Q and K', Q: Q5x2, K: K5x2, V: V5x3 }),
    single({ id: 'zero-v', note: 'V = 0: every output row is an average of zero rows', Q: Q5x2, K: K5x2, V: zeros(5, 3) }),
    single({ id: 'same-width', note: 'V as wide as Q and K', Q: Q3, K: K3, V: codedV(3, 3) }),
  ],
  checks: [
    checkAverage('zero-v'),
    checkSameWidth('same-width'),
    checkWeights('one-head'),
    checkWeights('one-head-5x2'),
    checkWeights('large', { large: true }),
    checkWeightedSum('sum', 'one-head-5x2'),
  ],
};

const CAUSAL = {
  steps: ['scores', 'scale', 'mask', 'softmax', 'weighted-sum'],
  probes: [
    ...DOT_PRODUCT.probes,
    single({ id: 'causal-false', note: 'V = one-hot columns', Q: Qm, K: Km, V: Qm, causal: false, readout: 'weights' }),
    single({ id: 'mask', note: 'a loud last key, V = one-hot columns', Q: Qm, K: Km, V: Qm, causal: true, readout: 'weights' }),
    single({ id: 'large-causal', note: 'scores near 1000', Q: scaleBy(Q3, 30), K: scaleBy(K3, 30), V: Q3, causal: true, readout: 'weights' }),
  ],
  checks: [
    ...DOT_PRODUCT.checks,
    checkWeights('causal-false'),
    checkWeights('mask'),
    checkWeights('large-causal', { large: true }),
  ],
};

// ---- challenge 04: the projections X·W_Q, X·W_K, X·W_V, then challenge 02 ----------------------

const A3 = [[1, 2, 0], [0, 1, -1], [1, 0, 1]]; // not symmetric
const B3 = [[0, 1, 1], [2, 0, -1], [1, 1, 0]];
const X3 = [[1, 0, 2], [0, 1, 1], [-1, 2, 0]];
const projection = (s) => ({ numberOfHeads: 1, headDimensions: 3, T: 3, C: 3, W_O: identity(3), Q: s.X, K: s.X, V: s.X, ...s });
const columnMeans = (M) => [M[0].map((_, c) => M.reduce((sum, row) => sum + row[c], 0) / M.length)];

/**
 * W_Q = W_K = 0: every weight is 1/T, so every output row is the average row of V (W_O = I).
 * Which V does the learner's average belong to: X·W_V, X·W_Vᵀ, W_V·X, X itself, or 0 (W_Q or W_K used)?
 */
function checkProjectionV(probeId) {
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
function checkProjectionQK(probeId) {
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

/** W with every entry outside the heads' diagonal blocks set to 0: X·blockDiagonal(W) projects each head's columns of X alone. */
const blockDiagonal = (W, d) => W.map((row, r) => row.map((x, c) => (Math.floor(r / d) === Math.floor(c / d) ? x : 0)));

/**
 * Two heads, generic X and W: which Q, K and V did the learner attend with? Each is tried as X·W
 * (right), X·Wᵀ, X itself, or X·(W's diagonal blocks) (projected after the split into heads); the
 * output of multi-head attention with each combination is compared with the learner's.
 */
function checkProjectionHeads(probeId) {
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

const A4 = [[1, 2, 0, -1], [0, 1, -1, 2], [1, 0, 1, 0], [-1, 1, 2, 1]];
const B4 = [[0, 1, 1, 2], [2, 0, -1, 1], [1, 1, 0, -1], [1, -2, 1, 0]];
const X4 = [[1, 0, 2, -1], [0, 1, 1, 2], [-1, 2, 0, 1], [2, 1, -1, 0]];

const PROJECTED = {
  steps: ['project-Q', 'project-K', 'project-V', ...MULTI_HEAD.steps],
  probes: [
    projection({ id: 'proj-qk', note: 'X = I, W_V = W_O = I: the output is the weights', X: identity(3), W_Q: A3, W_K: B3, W_V: identity(3) }),
    projection({ id: 'proj-v', note: 'W_Q = W_K = 0: every weight is 1/T', X: X3, W_Q: zeros(3, 3), W_K: zeros(3, 3), W_V: A3 }),
    projection({ id: 'zero-v', note: 'W_V = 0: every value row is 0', X: X3, W_Q: A3, W_K: B3, W_V: zeros(3, 3) }),
    projection({ id: 'proj-heads', note: 'two heads of 2 columns, 4 tokens', T: 4, C: 4, numberOfHeads: 2, headDimensions: 2, X: X4, W_Q: scaleBy(A4, 0.5), W_K: scaleBy(B4, 0.5), W_V: B4, W_O: P4 }),
    // challenge 02's probes where T ≤ C, through X = [I | 0] (so that X·W_Q = Q exactly)
    ...MULTI_HEAD.probes.filter((p) => p.T <= p.C && p.id !== 'w-o-absent' && p.id !== 'zero-v'),
    // two tokens, one head of 3: T ≠ headDimensions, so 1/√T and 1/√headDimensions differ (X = [I | 0] needs T ≤ C)
    spec({ id: 'one-head-2x3', note: 'one head, 2 tokens of 3 columns, V = one-hot columns', Q: Q3.slice(0, 2), K: K3.slice(0, 2), V: Q3.slice(0, 2), numberOfHeads: 1, headDimensions: 3, readout: 'weights' }),
  ],
  checks: [
    checkAverage('zero-v'),
    checkProjectionQK('proj-qk'),
    checkProjectionHeads('proj-heads'),
    checkProjectionV('proj-v'),
    checkWeights('one-head'),
    checkWeights('one-head-2x3'),
    checkWeights('large', { large: true }),
    checkStructure('structure'),
    checkStructure('structure-3'),
    checkHeads('heads'),
    checkOutputProjection('w-o'),
  ],
};

// ---- challenge 06: grouped-query attention ----------------------------------------------------

/**
 * Q = 0 with numberOfHeads = 6, numberOfKVHeads = 3, headDimensions = 1: every weight is 1/T, so
 * output column i is the average of the V column of the key/value head that query head i reads.
 * ⌊i / group⌋ gives heads 0, 0, 1, 1, 2, 2; i mod numberOfKVHeads 0, 1, 2, 0, 1, 2; ⌊i / numberOfKVHeads⌋
 * 0, 0, 0, 1, 1, 1. Runs after the
 * structure checks and only when they found the slicing and concatenation right.
 */
function checkKVHead(probeId) {
  return (ctx) => {
    if (!ctx.facts.concatRight) return null; // slicing or concatenation wrong: the structure probes name it
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    const { numberOfHeads: h, numberOfKVHeads: kv, headDimensions: d } = probe;
    const group = h / kv;
    const want = range(h).map((i) => Math.floor(i / group));
    // right with numberOfKVHeads = numberOfHeads (the structure probes), broken here: a K/V head index past the end
    const pastTheEnd = `With numberOfKVHeads = numberOfHeads your heads are right (other probes show it); with numberOfHeads = ${h} and numberOfKVHeads = ${kv}, K and V have only ${kv} heads. Query head i reads K/V head ⌊i / group⌋ with group = ${group}: heads ${range(h).join(', ')} read ${want.join(', ')}. A K/V head index ≥ numberOfKVHeads (the query head's own index, for example) reads past the end of K and V.`;
    // i / group not rounded down: slice() truncates its bounds, so head i reads columns ⌊i·d/group⌋ … ⌊(i/group + 1)·d⌋ − 1
    // (right when headDimensions = 1: only a probe with headDimensions > 1 shows it)
    const sliceOf = (i) => range(probe.K[0].length).filter((c) => c >= Math.trunc((i / group) * d) && c < Math.trunc((i / group + 1) * d));
    const split = d > 1 ? range(h).find((i) => (i / group) % 1 !== 0) : undefined;
    const notFloored = (lead) => ({
      title: `Query head ${split} reads K/V head ${split} / ${group} = ${split / group}, not rounded down; expected ⌊${split} / ${group}⌋ = ${want[split]}`,
      detail: `${lead}With headDimensions = ${d}, a K/V head index of ${split / group} slices columns ${Math.trunc((split / group) * d)} … ${Math.trunc((split / group + 1) * d) - 1} of K and V, across two K/V heads instead of the ${d} columns of one; a fractional index near the end slices past the last column. (slice() rounds its bounds down, so with headDimensions = 1 the index still lands on a whole head: your answer is right there.) Query head i reads K/V head Math.floor(i / group), group = numberOfHeads / numberOfKVHeads = ${group}: heads ${range(h).join(', ')} read ${want.join(', ')}.`,
    });
    const rightWithOneColumn = ctx.facts['kv:kv-head'];
    if (got.error) {
      if (got.missing || isOwnCheck(got.error)) return got.missing ? null : thrown(ctx, probe, got.error);
      // right with K/V heads one column wide, a crash with two: the index is not a whole number
      if (split !== undefined && rightWithOneColumn) return { probe, step: 'kv-head', ...notFloored(`Your function throws here (${got.error.name}: ${got.error.message}) and is right with headDimensions = 1. `) };
      return { probe, step: 'kv-head', title: `Your function throws when numberOfKVHeads (${kv}) is less than numberOfHeads (${h})`, detail: `${got.error.name}: ${got.error.message}. ${pastTheEnd}` };
    }
    const [O] = got.outputs;
    const expected = ctx.lab.groupedQueryAttention(probe.Q, probe.K, probe.V, { numberOfHeads: h, numberOfKVHeads: kv, headDimensions: d });
    if (close(O, expected, 1e-8)) { ctx.facts[`kv:${probeId}`] = true; return null; }
    const meanOf = (c) => probe.V.reduce((sum, row) => sum + row[c], 0) / probe.V.length;
    const unfloored = probe.Q.map(() => range(h).flatMap((i) => sliceOf(i).map(meanOf)));
    if (split !== undefined && isMatrix(O, unfloored.length, unfloored[0].length) && close(O, unfloored, 1e-8)) {
      return { probe, step: 'kv-head', expected: { label: 'output (every weight 1/T: head i averages V of K/V head ⌊i / group⌋)', matrix: expected }, actual: { label: 'your output', matrix: O }, ...notFloored('') };
    }
    if (!isMatrix(O, probe.T, h * d)) {
      return { probe, step: 'kv-head', expected: { label: 'output', matrix: expected }, actual: null, title: `With numberOfKVHeads = ${kv} < numberOfHeads = ${h} your result is ${shapeOf(O)}; expected ${probe.T}×${h * d}`, detail: pastTheEnd };
    }
    const means = columnMeans(probe.V)[0];
    const read = range(h).map((i) => range(kv).find((k) => range(d).every((c) => O.every((row) => Math.abs(row[i * d + c] - means[k * d + c]) < 1e-8))));
    const base = { probe, expected: { label: 'output (every weight 1/T: head i averages V of K/V head ⌊i / group⌋)', matrix: expected }, actual: { label: 'your output', matrix: O } };
    const unread = range(h).filter((i) => read[i] === undefined);
    if (unread.length) {
      // columns past the K/V heads: K and V sliced with the query head's own index
      const beyond = unread.every((i) => i >= kv && range(d).every((c) => O.every((row) => !Number.isFinite(row[i * d + c]) || row[i * d + c] === 0)));
      if (!beyond) return null; // not a plain choice of head: other checks say more
      return { ...base, step: 'kv-head', title: `Query head ${unread[0]} reads K/V head ${unread[0]}, which does not exist; expected ⌊${unread[0]} / ${group}⌋ = ${want[unread[0]]}`, detail: `With numberOfHeads = ${h} and numberOfKVHeads = ${kv}, K and V have only ${kv} heads (${kv * d} columns). Query head i reads K/V head ⌊i / group⌋ with group = numberOfHeads / numberOfKVHeads = ${group}: heads ${range(h).join(', ')} read ${want.join(', ')}. Yours slices K and V with the query head's own index, so heads ${unread.join(', ')} read past the end.` };
    }
    const first = read.findIndex((k, i) => k !== want[i]);
    const formulas = [
      [(i) => i % kv, `i mod numberOfKVHeads: it spreads neighbouring query heads over different K/V heads, where each group of ${group} neighbours must share one. Use ⌊i / group⌋`],
      [(i) => Math.floor(i / kv), `⌊i / numberOfKVHeads⌋: it divides by the number of K/V heads (${kv}); divide by the group size numberOfHeads / numberOfKVHeads = ${group}`],
      [(i) => kv - 1 - Math.floor(i / group), `numberOfKVHeads − 1 − ⌊i / group⌋: the groups are taken in reverse order`],
    ];
    const named = formulas.find(([f, why]) => why && range(h).every((i) => read[i] === f(i)));
    return {
      ...base, step: 'kv-head',
      title: `Query head ${first} reads K/V head ${read[first]}; expected ⌊${first} / ${group}⌋ = ${want[first]}`,
      detail: `With numberOfHeads = ${h} and numberOfKVHeads = ${kv}, group = numberOfHeads / numberOfKVHeads = ${group}: query heads ${range(h).join(', ')} must read K/V heads ${want.join(', ')} (each group of ${group} neighbouring query heads shares one); yours read ${read.join(', ')}.${named ? ` Yours is ${named[1]}.` : ''}`,
    };
  };
}

const K4x3 = [[1, 0, 2], [0, 1, -1], [2, -1, 0], [-1, 2, 1]];
const GROUPED = {
  validHint: 'Here numberOfKVHeads divides numberOfHeads (6 = 2 · 3), and K and V are numberOfKVHeads · headDimensions wide, not numberOfHeads · headDimensions: throw only when numberOfHeads % numberOfKVHeads !== 0, or when a width does not match its own heads.',
  steps: ['slice', 'kv-head', 'scores', 'scale', 'softmax', 'weighted-sum', 'concat'],
  probes: [
    // challenge 02's probes with numberOfKVHeads = numberOfHeads and no W_O (the identity)
    ...MULTI_HEAD.probes.filter((p) => p.id !== 'w-o' && p.id !== 'w-o-absent'),
    // six query heads, three K/V heads (group 2), four tokens: ⌊i / group⌋, ⌊i / numberOfKVHeads⌋ and i mod numberOfKVHeads all differ
    { ...spec({ id: 'kv-head', note: 'numberOfKVHeads = 3, Q = 0, so every weight is 1/T', Q: zeros(4, 6), K: K4x3, V: codedV(4, 3), numberOfHeads: 6, headDimensions: 1 }), numberOfKVHeads: 3 },
    // K/V heads two columns wide: a head index i / group that is not rounded down slices across two heads
    { ...spec({ id: 'kv-head-2', note: 'numberOfKVHeads = 2, Q = 0, so every weight is 1/T', Q: zeros(4, 8), K: K4x4, V: codedV(4, 4), numberOfHeads: 4, headDimensions: 2 }), numberOfKVHeads: 2 },
  ],
  checks: [
    checkAverage('zero-v'),
    checkWeights('one-head'),
    checkWeights('one-head-5x2'),
    checkWeights('large', { large: true }),
    checkWeightedSum('sum', 'one-head-5x2'),
    checkStructure('structure'),
    checkStructure('structure-3'),
    checkHeads('heads'),
    checkKVHead('kv-head'),
    checkKVHead('kv-head-2'),
  ],
};

// ---- challenge 08: sliding-window attention (causal, the last `window` keys) ------------------

const Q6x2 = [[1, 0], [0, 1], [1, -1], [-1, 2], [0.5, 0.5], [2, 1]];
const K6x2 = [[0, 1], [1, 1], [-1, 0], [2, -1], [1, -0.5], [3, 3]]; // a loud last key
// V must be as wide as Q here, so the weights are read d keys per call (ceil(T/d) calls)
const windowed = (s) => spec({ numberOfHeads: 1, headDimensions: s.Q[0].length, ...s });
const SLIDING = {
  steps: ['scores', 'scale', 'mask', 'softmax', 'weighted-sum'],
  probes: [
    windowed({ id: 'window-2', note: '{ window: 2 }, V = one-hot columns (the output is the weights)', Q: Q6x2, K: K6x2, V: Q6x2, window: 2, readout: 'weights' }),
    windowed({ id: 'window-3', note: '{ window: 3 }, V = one-hot columns', Q: Q6x2, K: K6x2, V: Q6x2, window: 3, readout: 'weights' }),
    windowed({ id: 'window-none', note: 'no window (causal), V = one-hot columns', Q: Q5x2, K: K5x2, V: Q5x2, causal: true, readout: 'weights' }),
    windowed({ id: 'large', note: '{ window: 2 }, scores near 1000', Q: scaleBy(Q3, 30), K: scaleBy(K3, 30), V: Q3, window: 2, readout: 'weights' }),
    windowed({ id: 'sum', note: '{ window: 2 }, V of 5 tokens', Q: Q5x2, K: K5x2, V: V5x2, window: 2 }),
    windowed({ id: 'one-head-5x2', note: '{ window: 2 }, V = one-hot columns', Q: Q5x2, K: K5x2, V: Q5x2, window: 2, readout: 'weights' }),
    windowed({ id: 'zero-v', note: '{ window: 2 }, V = 0: every output row is an average of zero rows', Q: Q5x2, K: K5x2, V: zeros(5, 2), window: 2 }),
  ],
  checks: [
    checkAverage('zero-v'),
    checkOwnValue(['window-2', 'window-3', 'window-none']),
    checkWeights('window-2'),
    checkWeights('window-3'),
    checkWeights('window-none'),
    checkWeights('one-head-5x2'),
    checkWeights('large', { large: true }),
    checkWeightedSum('sum', 'one-head-5x2'),
  ],
};

// ---- challenge 05: the KV cache (decode one token at a time) -----------------------------------

/**
 * Which keys token t had in its cache when it attended: the keys its weights (read through one-hot
 * V) give weight to. Right: keys 0 … t (its own key is appended first). Named patterns: all T keys
 * (the cache bypassed), only t (overwritten), 0 … t − 1 (appended after attending), 0 … t + 1.
 */
function checkCache(probeId) {
  return (ctx) => {
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    if (got.error) return got.missing ? null : thrown(ctx, probe, got.error);
    const weights = readWeights(probe, got.outputs);
    if (!weights) return null; // checkWeights tells the shape
    const t = trace(ctx.lab, probe);
    const { T } = probe;
    const same = (a, b) => a.length === b.length && a.every((x, k) => x === b[k]);
    for (let i = 0; i < probe.numberOfHeads; i++) {
      const Ŵ = weights[i];
      // a row that is all NaN (softmax of no scores) or all 0 (a sum over an empty cache) saw no key
      const seen = Ŵ.map((row) => (row.every(Number.isFinite) ? range(T).filter((k) => Math.abs(row[k]) > 1e-12) : row.every(Number.isNaN) ? [] : null));
      if (seen.some((s) => s === null)) continue; // some NaN: the softmax, not the cache (checkWeights)
      const want = range(T).map((q) => range(q + 1));
      const W = stepOf(t, `weights_${i}`).values;
      if (seen.every((s, q) => same(s, want[q]))) {
        // the right keys carry weight, but each row sums to less than 1: the softmax ran over all T keys
        const S = stepOf(t, `scaled_${i}`).values;
        const overAll = S.map((row, q) => softmaxRow(row).map((w, k) => (k <= q ? w : 0)));
        if (!close(Ŵ, W, 1e-7) && close(Ŵ, overAll, 1e-7)) {
          return { probe, head: i, step: 'cache', expected: { label: `weights_${i} (keys 0 … t)`, matrix: W }, actual: { label: `your weights_${i}`, matrix: Ŵ }, title: 'Your scores use every key of K, not the keys in the cache', detail: `Token t's softmax ran over all ${T} keys, the later tokens' too, and the weighted sum then used only the cached values, so each row sums to less than 1. Compute the scores against the cached keys only: they are the keys of tokens 0 … t.` };
        }
        // the right keys, but some weighed a whole number of times over: a key in the cache more than once
        const copies = Ŵ.map((row, q) => row.slice(0, q + 1).map((w, k) => (w / W[q][k]) / (row[q] / W[q][q])));
        const whole = copies.every((row) => row.every((m) => Number.isFinite(m) && m > 0.5 && Math.abs(m - Math.round(m)) < 1e-6));
        const q = copies.findIndex((row) => row.some((m) => Math.round(m) > 1));
        if (whole && q >= 0 && Ŵ.every((row) => Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-7)) {
          const k = copies[q].findIndex((m) => Math.round(m) > 1);
          const m = Math.round(copies[q][k]);
          const twiceEach = copies.every((row, t2) => row.every((x, j) => Math.round(x) === (j < t2 ? 2 : 1)));
          return { probe, head: i, step: 'cache', expected: { label: `weights_${i} (keys 0 … t, each once)`, matrix: W }, actual: { label: `your weights_${i}`, matrix: Ŵ }, title: `When token ${q} attends, key ${k} is in your cache ${m === 2 ? 'twice' : `${m} times`}`, detail: `Token ${q} gives key ${k} ${m === 2 ? 'twice' : `${m} times`} the weight its score earns: a softmax over a cache that holds key ${k} ${m === 2 ? 'twice' : `${m} times`} (and its value as often).${twiceEach ? ' Every earlier key is there twice, the newest once: the token\'s key and value are appended before it attends and again after.' : ''} Append row t of K and V once, before token t attends.` };
        }
        continue;
      }
      const pattern = (f) => seen.every((s, q) => same(s, f(q)));
      const base = { probe, head: i, expected: { label: `weights_${i} (keys 0 … t)`, matrix: W }, actual: { label: `your weights_${i}`, matrix: Ŵ } };
      const q = seen.findIndex((s, k) => !same(s, want[k]));
      const keys = (s) => (s.length ? (s.length > 2 && s.every((x, k) => k === 0 || x === s[k - 1] + 1) ? `keys ${s[0]} … ${s.at(-1)}` : `key${s.length > 1 ? 's' : ''} ${s.join(', ')}`) : 'no key');
      if (pattern(() => [])) {
        return { ...base, step: 'cache', title: 'Your cache stays empty: no token had a key to attend to', detail: 'Every output row is 0, the sum over an empty cache. Append row t of K and row t of V to the cache, then let token t attend over it.' };
      }
      if (pattern((k) => range(k))) {
        return { ...base, step: 'cache', title: 'The new token\'s key was not in the cache when it attended', detail: `Token t attended only the tokens before it (token ${q}: ${keys(seen[q])}${q === 0 ? ', an empty cache' : ''}). Append row t of K and V to the cache first, then attend: token t may see itself.` };
      }
      if (pattern(() => range(T))) {
        return { ...base, step: 'cache', title: `Token 0 attended all ${T} keys: the cache is bypassed`, detail: `Your weights give weight to keys after the token (token 0 to keys 1 … ${T - 1}). When token t is decoded the later tokens do not exist yet: read K and V only through the cache, which holds tokens 0 … t.` };
      }
      if (pattern((k) => [k])) {
        return { ...base, step: 'cache', title: 'Each token attended only its own key: the cache holds just the newest token', detail: `Token ${q} attended ${keys(seen[q])}; it must see keys 0 … ${q}. Append (push) row t of K and V to the cache and keep the earlier rows; do not replace them. (The same output comes from a weighted sum that uses V[t] alone: output row t is Σ_j w_tj · V[j] over the whole cache.)` };
      }
      if (pattern((k) => range(Math.min(k + 2, T)))) {
        return { ...base, step: 'cache', title: `Token ${q} attended key ${q + 1}, which is not in the cache yet`, detail: `Token t attended keys 0 … t + 1: the cache is one token ahead (row t + 1 appended before token t attends). Append row t, then attend.` };
      }
      return { ...base, step: 'cache', title: `Token ${q} attended ${keys(seen[q])}; its cache holds keys 0 … ${q}`, detail: 'When token t attends, the cache holds the keys and values of tokens 0 … t: every earlier token and itself, nothing later.' };
    }
    return null;
  };
}

// ---- challenge 07: rotary position embedding (no attention: a rotation of each pair) -----------

// The output is linear in X, so X = e_c on every row (one call per column c) reads the learner's
// whole map at every position: row r of call c is what column c becomes at position offset + r.
// Pair i of a head is columns i and i + d/2 (rotate-half); the angle is (offset + r)·base^(−2i/d).
// base = 100 keeps every probe angle below π, so an angle read back with atan2 is the angle itself.
const ropeProbe = (s) => ({ numberOfHeads: 1, ...s, C: s.numberOfHeads * s.headDimensions, options: { numberOfHeads: s.numberOfHeads, headDimensions: s.headDimensions, ...s.options } });
const ropeOptionsText = (o) => Object.entries(o).map(([k, v]) => `${k}: ${v}`).join(', ');

/** The partner of column c in rotate-half: the other column of its pair, inside its own head. */
const halfPartner = (c, d) => { const start = c - (c % d); const i = c % d; return start + (i < d / 2 ? i + d / 2 : i - d / 2); };

/** Reads the learner's map from a basis probe: map[r][c] = the row column c becomes at row r, or null. */
function ropeMap(probe, outputs) {
  const { T, C } = probe;
  if (outputs.length !== C || !outputs.every((O) => isMatrix(O, T, C))) return null;
  return range(T).map((r) => range(C).map((c) => outputs[c][r]));
}

/** The angle the learner turns pair (a, b) by at row r, read from the images of e_a and e_b, or null when it is not a rotation. */
function readRotation(map, r, a, b) {
  const [ca, sa] = [map[r][a][a], map[r][a][b]]; // e_a → cos θ at a, sin θ at b
  const [sb, cb] = [-map[r][b][a], map[r][b][b]]; // e_b → −sin θ at a, cos θ at b
  if (![ca, sa, sb, cb].every(Number.isFinite)) return null;
  const rotation = Math.abs(ca - cb) < 1e-9 && Math.abs(sa - sb) < 1e-9 && Math.abs(ca * ca + sa * sa - 1) < 1e-9;
  return rotation ? Math.atan2(sa, ca) : null;
}
const sameAngle = (x, y) => Math.abs(Math.cos(x) - Math.cos(y)) < 1e-8 && Math.abs(Math.sin(x) - Math.sin(y)) < 1e-8;

function checkRope(probeId) {
  return (ctx) => {
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    if (got.error) return got.missing ? null : thrown(ctx, probe, got.error);
    const { T, C, numberOfHeads: h, headDimensions: d } = probe;
    const { base = 10000, offset = 0 } = probe.options;
    const expected = callsOf(probe).map((call) => ctx.lab.rotaryEmbedding(call.X, probe.options));
    if (got.outputs.every((O, k) => close(O, expected[k], 1e-9))) { ctx.facts[`rope:${probeId}`] = true; return null; }
    const map = ropeMap(probe, got.outputs);
    const bad = got.outputs.findIndex((O, k) => !close(O, expected[k], 1e-9));
    const base0 = { probe, column: bad, expected: { label: `output for X = 1 in column ${bad}`, matrix: expected[bad] }, actual: { label: 'your output', matrix: got.outputs[bad] } };
    const longer = got.outputs.find((O) => isMatrix(O, T, O?.[0]?.length) && O[0].length > C);
    if (!map && longer) {
      return { ...base0, actual: { label: 'your output', matrix: longer }, step: 'pairs', title: `Your rows come out ${longer[0].length} wide, not C = ${C}: a pair's second column lies past the end of the row`, detail: `Writing out[ib] with ib ≥ ${C} makes the row longer. Each head is rotated on its own: in head k, pair i is columns k·d + i and k·d + i + d/2, with d = headDimensions = ${d} (not half of the whole row).` };
    }
    if (!map) {
      const O = got.outputs[bad];
      return { ...base0, step: null, actual: isMatrix(O, O?.length, O?.[0]?.length) ? base0.actual : null, title: `Your result is ${shapeOf(O)}; expected ${T}×${C}, the shape of X`, detail: 'Each row of X is turned on its own: the result has as many rows and columns as X.' };
    }
    const positions = range(T).map((r) => offset + r);
    const omega = (i) => base ** ((-2 * i) / d);
    const at = (r, c) => map[r][c];
    // non-finite entries: an index outside the head (undefined → NaN) when pairing columns
    const nonFinite = range(T).flatMap((r) => range(C).filter((c) => !at(r, c).every(Number.isFinite)).map((c) => [r, c]));
    if (nonFinite.length) {
      const [r, c] = nonFinite[0];
      return { ...base0, step: 'pairs', title: `NaN in your output: column ${c} at position ${positions[r]} turns with a column that does not exist`, detail: `Column ${c} belongs to head ${Math.floor(c / d)}; its partner is column ${halfPartner(c, d)} (pair i of a head is columns i and i + d/2, here d = headDimensions = ${d}). An index past the end of the row reads undefined, and undefined turns into NaN.` };
    }
    // 1. which columns turn together: read at a row where every angle is far from 0 and π
    // the learner's own positions may differ from ours: a column's partners over every row
    const r1 = range(T).find((r) => range(C).some((c) => range(C).some((k) => k !== c && Math.abs(at(r, c)[k]) > 1e-9))) ?? -1;
    if (r1 >= 0) {
      const partners = range(C).map((c) => range(C).filter((k) => k !== c && range(T).some((r) => Math.abs(at(r, c)[k]) > 1e-9)));
      const want = range(C).map((c) => [halfPartner(c, d)]);
      if (partners.some((ks, c) => ks.length !== 1 || ks[0] !== want[c][0])) {
        const still = range(h).filter((head) => range(d).every((i) => partners[head * d + i].length === 0 && range(T).every((r) => Math.abs(at(r, head * d + i)[head * d + i] - 1) < 1e-12)));
        if (still.length && still.length < h) {
          return { ...base0, step: 'pairs', title: `Head${still.length > 1 ? 's' : ''} ${still.join(', ')} ${still.length > 1 ? 'are' : 'is'} not rotated: only ${h - still.length} of numberOfHeads = ${h} heads turn`, detail: `Every head's ${d} columns are rotated on their own, with the same angles: loop over the ${h} heads, head k starting at column k·headDimensions = k·${d}.` };
        }
        const interleaved = partners.every((ks, c) => ks.length === 1 && ks[0] === (c ^ 1));
        const acrossHeads = h > 1 && partners.every((ks, c) => ks.length === 1 && ks[0] === (c + C / 2) % C);
        const c0 = partners.findIndex((ks, c) => ks.length !== 1 || ks[0] !== want[c][0]);
        if (interleaved) {
          return { ...base0, step: 'pairs', title: `Pair 0 is columns 0 and 1; in rotate-half it is columns 0 and d/2 = ${d / 2}`, detail: `Your pairs are neighbours (2i, 2i + 1), the layout of the RoFormer paper. This challenge (like Llama and GPT-NeoX) uses rotate-half: inside a head of width d = ${d}, pair i is column i with column i + d/2 (${range(d / 2).map((i) => `${i} and ${i + d / 2}`).join(', ')}).` };
        }
        if (acrossHeads) {
          return { ...base0, step: 'pairs', title: `Pair 0 is columns 0 and ${C / 2} (half of C = ${C}); each head pairs its own columns: 0 and ${d / 2}`, detail: `Your pairs span the whole row, across heads. Each head of headDimensions = ${d} columns is rotated on its own: in head k, pair i is columns k·${d} + i and k·${d} + i + ${d / 2}.` };
        }
        const ks = partners[c0];
        return { ...base0, step: 'pairs', title: ks.length ? `Column ${c0} turns with column${ks.length > 1 ? 's' : ''} ${ks.join(', ')}; in rotate-half it pairs with column ${want[c0][0]}` : `Column ${c0} does not turn with any other column; in rotate-half it pairs with column ${want[c0][0]}`, detail: `An input that is 1 in column ${c0} comes out in column${[c0, ...ks].length > 1 ? 's' : ''} ${[c0, ...ks].join(', ')}. Pair i of a head of width d = ${d} is columns i and i + d/2, and both turn together.` };
      }
    }
    // 2. each pair: a rotation, and by which angle
    const angles = [];
    for (let r = 0; r < T; r++) {
      for (let k = 0; k < h; k++) {
        for (let i = 0; i < d / 2; i++) {
          const [a, b] = [k * d + i, k * d + i + d / 2];
          const theta = positions[r] * omega(i);
          const phi = readRotation(map, r, a, b);
          if (phi === null) {
            const [ca, sa] = [at(r, a)[a], at(r, a)[b]];
            const inPlace = Math.abs(ca - Math.cos(theta)) < 1e-9 && Math.abs(sa - Math.cos(theta) * Math.sin(theta)) < 1e-9;
            const swapped = Math.abs(at(r, b)[b] + Math.cos(theta)) < 1e-9 || Math.abs(at(r, a)[a] + Math.cos(theta)) < 1e-9;
            // e_a → (a'·, b'·) and e_b → (a'·, b'·): one line turns by +θ, the other by −θ
            const is = (x, y) => Math.abs(x - y) < 1e-9;
            const c = Math.cos(theta);
            const s = Math.sin(theta);
            const rightA = is(at(r, a)[a], c) && is(at(r, b)[a], -s);
            const rightB = is(at(r, a)[b], s) && is(at(r, b)[b], c);
            if (Math.abs(s) > 1e-6 && (rightA !== rightB) && is(at(r, a)[a], c) && is(at(r, b)[b], c)) {
              const line = rightA ? `b' = b·cos θ − a·sin θ` : `a' = a·cos θ + b·sin θ`;
              return {
                ...base0, step: 'rotation',
                title: `Pair ${i} (columns ${a} and ${b}) is not turned by a rotation: ${rightA ? `column ${b}` : `column ${a}`} has the wrong sign of sin θ`,
                detail: `At position ${positions[r]} (θ = ${fmt(theta)}), column ${rightA ? a : b} comes out right but yours computes ${line}: one line turns by +θ, the other by −θ, which is no rotation (the lengths change). a' = a·cos θ − b·sin θ, b' = a·sin θ + b·cos θ.`,
              };
            }
            return {
              ...base0, step: 'rotation',
              title: `Pair ${i} (columns ${a} and ${b}) is not turned by a rotation at position ${positions[r]}`,
              detail: inPlace
                ? `Column ${a} comes out right (a·cos θ − b·sin θ), but column ${b} is computed from the new value of column ${a} instead of the old one: ${fmt(sa)} = cos θ · sin θ where sin θ = ${fmt(Math.sin(theta))} was expected. Read a and b first, then write a' = a·cos θ − b·sin θ and b' = a·sin θ + b·cos θ.`
                : `An input of 1 in column ${a} comes out as (${fmt(ca)}, ${fmt(sa)}) in columns (${a}, ${b}); a rotation by θ = ${fmt(theta)} gives (cos θ, sin θ) = (${fmt(Math.cos(theta))}, ${fmt(Math.sin(theta))}). a' = a·cos θ − b·sin θ, b' = a·sin θ + b·cos θ${swapped ? ': check the signs and which of a, b each line uses' : ''}.`,
            };
          }
          angles.push({ r, k, i, a, b, theta, phi, p: positions[r] });
        }
      }
    }
    if (angles.every((x) => sameAngle(x.phi, x.theta))) return null; // right on this probe within the reading's precision
    const fits = (f) => angles.every((x) => sameAngle(x.phi, f(x)));
    const first = angles.find((x) => !sameAngle(x.phi, x.theta));
    const said = `pair ${first.i}${h > 1 ? ` of head ${first.k}` : ''} at position ${first.p} turns by ${fmt(first.phi)} rad; expected ${first.p} · ${base}^(−2·${first.i}/${d}) = ${fmt(first.theta)}`;
    if (fits((x) => Math.PI / 2 - x.theta)) {
      return { ...base0, step: 'rotation', title: 'cos and sin are swapped: every pair turns by 90° − θ', detail: `Your rotation is (a·sin θ − b·cos θ, a·cos θ + b·sin θ); ${said}. At position 0 nothing may turn: a' = a·cos θ − b·sin θ, b' = a·sin θ + b·cos θ.` };
    }
    if (fits((x) => -x.theta)) {
      return { ...base0, step: 'rotation', title: 'Every pair turns the wrong way (by −θ)', detail: `Your rotation is (a·cos θ + b·sin θ, −a·sin θ + b·cos θ); ${said}. Turn by +θ: a' = a·cos θ − b·sin θ, b' = a·sin θ + b·cos θ.` };
    }
    // on one head C = d: an exponent over C is right there and wrong with two heads (where −2i/C = −i/d)
    const overC = [(x) => x.p * base ** ((-2 * x.i) / (h * d)), `base^(−2i/C), with C = numberOfHeads · headDimensions = ${h * d}: on one head (C = d) your angles are right, here they are not. The exponent divides by the width of a head, headDimensions = ${d}, not of the whole row`];
    const frequencies = [
      ...(h > 1 && ctx.facts['rope:rope-1h'] ? [overC] : []),
      [(x) => x.p * base ** (-x.i / d), 'base^(−i/d): the exponent lacks its factor 2, it must be −2i/d'],
      [(x) => x.p * base ** ((2 * x.i) / d), 'base^(+2i/d): the exponent is negative, so later pairs turn more slowly'],
      [(x) => x.p * base ** ((-2 * (x.i + 1)) / d), 'base^(−2(i + 1)/d): pair 0 turns by one radian per position (i starts at 0)'],
      overC,
      [(x) => x.p * base ** ((-2 * (x.k * d / 2 + x.i)) / d), 'the pair index counted across heads: it restarts at 0 in every head, so every head turns by the same angles'],
      [(x) => x.p * base ** ((-2 * (x.k * d / 2 + x.i)) / (h * d)), 'the pair index and width of the whole row: every head turns by the same angles, with i counted inside the head and d = headDimensions'],
      [(x) => x.p / base ** (x.i / d), 'base^(−i/d): the exponent lacks its factor 2, it must be −2i/d'],
      [(x) => x.p * (2 * x.i / d === 0 ? 1 : 1 / (base * (2 * x.i) / d)), '1 / (base · 2i/d): base is raised to the power −2i/d'],
    ];
    for (const [f, why] of frequencies) {
      if (fits(f)) return { ...base0, step: 'frequency', title: `Pair ${first.i}${h > 1 ? ` of head ${first.k}` : ''} turns by ${fmt(first.phi)} rad at position ${first.p}; expected p · base^(−2i/d) = ${fmt(first.theta)}`, detail: `Your angles fit ${why}. Pair i turns by p · base^(−2i/d) (here base = ${base}, d = headDimensions = ${d}): pair 0 by p radians, pair ${d / 2 - 1} the slowest.` };
    }
    const positionsTried = [
      [(x) => (x.p - offset) * omega(x.i), `row r at position r: the offset (${offset}) is ignored`],
      [(x) => (x.p + 1) * omega(x.i), 'positions starting at 1: row r is at position offset + r, and row 0 of offset 0 does not turn'],
      [(x) => offset * omega(x.i), `every row at position offset = ${offset}: add the row index r`],
      [(x) => (offset - (x.p - offset)) * omega(x.i), 'position offset − r: rows count up from the offset'],
      [(x) => offset + (x.p - offset) * omega(x.i), `θ = offset + r · base^(−2i/d): the offset is added to the angle instead of to the position, θ = (offset + r) · base^(−2i/d)`],
    ];
    for (const [f, why] of positionsTried) {
      if (offset === 0 && /offset/.test(why) && !/starting at 1/.test(why)) continue; // offset 0 cannot tell these apart
      if (!fits(f)) continue;
      const onAngle = /added to the angle/.test(why);
      return { ...base0, step: 'position', title: onAngle ? `Row ${first.r}: pair ${first.i} turns by ${fmt(first.phi)} rad = offset + r · base^(−2i/d); expected (offset + r) · base^(−2i/d) = ${fmt(first.theta)}` : `Row ${first.r} turns as if at position ${fmt(first.phi / omega(first.i))}; expected position offset + r = ${first.p}`, detail: `Your angles fit ${why}. Row r of X is the token at position p = offset + r (options.offset = ${offset}).` };
    }
    // positions read from the slowest pair (its angle stays below π), then every pair checked against them
    const slow = d / 2 - 1;
    if (slow > 0) {
      const readPosition = (r, k) => angles.find((x) => x.r === r && x.k === k && x.i === slow).phi / omega(slow);
      const P = range(T).map((r) => range(h).map((k) => readPosition(r, k)));
      const consistent = angles.every((x) => sameAngle(x.phi, P[x.r][x.k] * omega(x.i)));
      const sameHeads = P.every((row) => row.every((x) => Math.abs(x - row[0]) < 1e-6));
      if (consistent && sameHeads && P.some((row, r) => Math.abs(row[0] - positions[r]) > 1e-6)) {
        const used = P.map((row) => row[0]);
        const shift = used[0] - positions[0];
        const step1 = used.every((x, r) => Math.abs(x - used[0] - r) < 1e-6);
        const r = used.findIndex((x, k) => Math.abs(x - positions[k]) > 1e-6);
        // every angle scaled by one factor: a scaled position and a scaled frequency look alike; both are said
        const ratios = used.map((x, k) => (positions[k] === 0 ? null : x / positions[k])).filter((x) => x !== null);
        const factor = ratios.length && used.every((x, k) => positions[k] !== 0 || Math.abs(x) < 1e-6) && ratios.every((x) => Math.abs(x - ratios[0]) < 1e-6) ? ratios[0] : null;
        if (factor !== null) {
          return { ...base0, step: 'frequency', title: `Every angle is ${fmt(factor)} times p · base^(−2i/d)${Math.abs(factor - Math.PI / 180) < 1e-9 ? ' (π/180: degrees instead of radians)' : ''}`, detail: `Each pair turns by ${fmt(factor)} · p · base^(−2i/d). The factor sits either in the angle of each pair or in the position (the two cannot be told apart from the output): pair i turns by p · base^(−2i/d) radians, with p = offset + r, and Math.cos and Math.sin take radians.` };
        }
        return { ...base0, step: 'position', title: `Row ${r} turns as if at position ${fmt(used[r])}; expected position offset + r = ${positions[r]}`, detail: `Every pair turns by (position) · base^(−2i/d) with your positions ${used.map(fmt).join(', ')} for rows ${range(T).join(', ')}${step1 ? (offset !== 0 && Math.abs(shift - offset) < 1e-6 ? ` (2·offset + r: the offset is added twice)` : ` (offset + r + ${fmt(shift)})`) : ''}. Row r of X is the token at position p = offset + r (options.offset = ${offset}).` };
      }
    }
    // at position 0 nothing turns, whatever the frequencies: a turn there is the rotation itself
    const atZero = angles.find((x) => x.p === 0 && !sameAngle(x.phi, 0));
    if (atZero) {
      return { ...base0, step: 'rotation', title: `At position 0 pair ${atZero.i} turns by ${fmt(atZero.phi)} rad; at position 0 nothing turns`, detail: `θ = 0 at position 0, and a rotation by 0 leaves (a, b) as it is: a' = a·cos θ − b·sin θ, b' = a·sin θ + b·cos θ. Check which of cos and sin each line uses, and their signs.` };
    }
    // the angle of each pair over the rows: p·ω with the right ω but other positions, or the reverse
    const ratio = angles.filter((x) => x.i === 0 && x.p > 0);
    return { ...base0, step: 'frequency', title: `The angles are not p · base^(−2i/d): ${said}`, detail: `Each pair turns by a rotation, but by other angles. Either the angle of pair i (base^(−2i/d) per position) or the position of row r (offset + r) is off; pair 0 turns by exactly p radians, so its angle names the position your code used${ratio.length ? `: row ${ratio[0].r} turns pair 0 by ${fmt(ratio[0].phi)} (position ${ratio[0].p} expected)` : ''}.` };
  };
}

/** Options left out: base defaults to 10000 and offset to 0 (one probe leaves out each). */
function checkRopeDefault(probeId, step, what) {
  return (ctx) => {
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    if (got.missing) return null;
    const expected = ctx.lab.rotaryEmbedding(probe.X, probe.options);
    if (got.error) {
      return { probe, step, expected: { label: `output with ${ropeOptionsText(probe.options)}`, matrix: expected }, actual: null, title: `Without options.${what} your function throws: ${what} has no default`, detail: `${got.error.name}: ${got.error.message}. When the options leave out ${what}, use ${what === 'base' ? 'base = 10000' : 'offset = 0'}: for example { base = 10000, offset = 0 } in the parameter list, before any check of its value.` };
    }
    const [O] = got.outputs;
    if (close(O, expected, 1e-9)) return null;
    if (!isMatrix(O, probe.T, probe.C)) return null; // the basis probes say more about a shape
    const nan = !finiteMatrix(O);
    // with every option given the rotation is right (the basis probes), so a difference here is the default
    if (!nan && !(ctx.facts['rope:rope-1h'] && ctx.facts['rope:rope-2h'])) return null;
    return { probe, step, expected: { label: `output with ${ropeOptionsText(probe.options)}`, matrix: expected }, actual: { label: 'your output', matrix: O }, title: nan ? `Without options.${what} your output is NaN: ${what} has no default` : `Without options.${what} your output is not the default's`, detail: `When the options leave out ${what}, use ${what === 'base' ? 'base = 10000' : 'offset = 0'}: for example { base = 10000, offset = 0 } in the parameter list.${nan ? ` undefined in an angle turns every number into NaN.` : ''}` };
  };
}

const ROPE = {
  steps: ['check', 'pairs', 'frequency', 'position', 'rotation'],
  argNames: ['X', 'options'],
  probes: [
    ropeProbe({ id: 'rope-1h', note: 'one head of 6 columns, 3 positions, base 100, X = one column at a time', T: 3, numberOfHeads: 1, headDimensions: 6, options: { base: 100, offset: 0 }, basis: true }),
    ropeProbe({ id: 'rope-2h', note: 'two heads of 4 columns, offset 2, base 100, X = one column at a time', T: 2, numberOfHeads: 2, headDimensions: 4, options: { base: 100, offset: 2 }, basis: true }),
    ropeProbe({ id: 'rope-no-base', note: 'no base in the options', T: 2, numberOfHeads: 1, headDimensions: 4, options: { offset: 1 }, X: [[1, 2, 3, 4], [-1, 0.5, 2, -3]] }),
    ropeProbe({ id: 'rope-no-offset', note: 'no offset in the options', T: 2, numberOfHeads: 1, headDimensions: 4, options: { base: 100 }, X: [[1, 2, 3, 4], [-1, 0.5, 2, -3]] }),
  ],
  checks: [
    checkRope('rope-1h'),
    checkRope('rope-2h'),
    checkRopeDefault('rope-no-base', 'frequency', 'base'),
    checkRopeDefault('rope-no-offset', 'position', 'offset'),
  ],
};

// ---- challenge 09: challenge 02's function with challenge 03's causal option ----------------------

const MULTI_HEAD_CAUSAL = {
  steps: ['slice', 'scores', 'scale', 'mask', 'softmax', 'weighted-sum', 'concat', 'w-o'],
  probes: [
    ...MULTI_HEAD.probes,
    spec({ id: 'mask-one-head', note: 'one head, a loud last key, V = one-hot columns', Q: Qm, K: Km, V: Qm, numberOfHeads: 1, headDimensions: 2, causal: true, readout: 'weights' }),
    spec({ id: 'mask-two-heads', note: 'two heads of three, V = one-hot columns', Q: Q2h, K: K2h, V: Q2h, numberOfHeads: 2, headDimensions: 3, causal: true, readout: 'weights' }),
    spec({ id: 'large-causal', note: 'one head, scores near 1000', Q: scaleBy(Q3, 30), K: scaleBy(K3, 30), V: Q3, numberOfHeads: 1, headDimensions: 3, causal: true, readout: 'weights' }),
  ],
  checks: [
    ...MULTI_HEAD.checks,
    checkWeights('mask-one-head'),
    checkWeights('mask-two-heads'),
    checkWeights('large-causal', { large: true }),
  ],
};

// Challenges 01 and 03 have no heads: their steps in their own words.
const ONE_HEAD_LABELS = { scores: 'the scores Q·Kᵀ', scale: 'the scale 1/√d_k', 'weighted-sum': 'the weighted sum with V' };

/**
 * Right on one token, a crash (not a check) on several: token t reads a cached row that is not
 * there yet (a loop over all T keys or values where the cache holds t + 1 rows).
 */
function checkCacheCrash(oneTokenId, probeId) {
  return (ctx) => {
    const one = ctx.probe(oneTokenId);
    const probe = ctx.probe(probeId);
    const gotOne = outputsOf(ctx, one);
    const got = outputsOf(ctx, probe);
    if (gotOne.error || !got.error || got.missing || isOwnCheck(got.error)) return null;
    if (!close(gotOne.outputs[0], trace(ctx.lab, callsOf(one)[0]).output, 1e-8)) return null;
    return { probe, step: 'cache', title: `Your function is right on one token and throws on ${probe.T}: a token reads a row that is not in the cache yet`, detail: `${got.error.name}: ${got.error.message}. When token t attends, the cache holds t + 1 keys and values (tokens 0 … t): loop over the cache's rows, not over all T rows of K or V.` };
  };
}

// Challenge 05: challenge 02's probes with causal: true (decoding token by token is causal
// attention), no W_O (the identity); which keys were in the cache is read from the weights.
const KV_CACHE = {
  steps: ['check', 'cache', 'slice', 'scores', 'scale', 'softmax', 'weighted-sum', 'concat'],
  validHint: 'Q, K and V are all T×C here, with C = numberOfHeads · headDimensions: throw only when a shape does not match.',
  probes: [
    ...MULTI_HEAD.probes.filter((p) => p.id !== 'w-o' && p.id !== 'w-o-absent').map((p) => ({ ...p, causal: true })),
    spec({ id: 'one-token', note: 'one token', Q: [Q2h[0]], K: [K2h[0]], V: [Q2h[1]], numberOfHeads: 2, headDimensions: 3, causal: true }),
  ],
  checks: [
    checkAverage('zero-v'),
    checkCacheCrash('one-token', 'one-head'),
    checkCache('one-head'),
    checkCache('one-head-5x2'),
    checkWeights('one-head'),
    checkWeights('one-head-5x2'),
    checkWeights('large', { large: true }),
    checkWeightedSum('sum', 'one-head-5x2'),
    checkStructure('structure'),
    checkStructure('structure-3'),
    checkHeads('heads'),
  ],
};

/** One row per challenge (the folder name under challenges/): its function, steps, probes and checks. */
export const TABLES = {
  '01-dot-product-attention': { function: 'dotProductAttention', dim: 'd_k', labels: ONE_HEAD_LABELS, ...DOT_PRODUCT },
  '02-multi-head-attention': { function: 'multiHeadAttention', ...MULTI_HEAD },
  '03-causal-mask': { function: 'dotProductAttention', dim: 'd_k', labels: ONE_HEAD_LABELS, ...CAUSAL },
  '04-learned-projections': { function: 'projectedSelfAttention', argNames: ['X', 'options'], ...PROJECTED },
  '05-kv-cache': { function: 'decode', labels: { scores: 'the scores q_t·k_j against the cached keys', 'weighted-sum': 'the weighted sum of the cached values' }, ...KV_CACHE },
  '06-grouped-query': { function: 'groupedQueryAttention', ...GROUPED },
  '07-rope': { function: 'rotaryEmbedding', ...ROPE },
  '08-sliding-window': { function: 'slidingWindowAttention', dim: 'd', labels: { ...ONE_HEAD_LABELS, scale: 'the scale 1/√d', mask: 'the sliding-window mask' }, ...SLIDING },
  '09-attention-in-a-model': { function: 'multiHeadAttention', ...MULTI_HEAD_CAUSAL },
};

function tableFor(challengeId) {
  return TABLES[challengeId] ?? null;
}

// ---- the diagnosis --------------------------------------------------------------------------

/**
 * The first step where the learner's function departs from the reference, or null.
 * `results`: Map (or object) of probe call id → { output } or { error }, as the worker returns them.
 * `lab`: the package (for expected values). Checks run in the table's order; the finding whose
 * step comes first in the course's order wins; findings without a step (a throw, a shape) only
 * when nothing is located.
 * `options.errors`: the challenge's error cases as run, [{ name, args, throws, result }] (a case of
 * tests.json `errors` with the learner's { output } or { error }). When the probes locate nothing
 * and one of them fails, the finding names the check that is missing or wrong (step 'check').
 * `options.failing`: names of failing cases; when nothing else is found, a finding still says so.
 */
export function locate(challengeId, results, lab, { errors = [], failing = [] } = {}) {
  const table = tableFor(challengeId);
  if (!table) return null;
  const byId = results instanceof Map ? results : new Map(Object.entries(results));
  const probes = new Map(table.probes.map((p) => [p.id, p]));
  const ctx = { lab, table, results: byId, facts: {}, probe: (id) => probes.get(id) };
  const findings = [];
  for (const check of table.checks) {
    let finding;
    try {
      finding = check(ctx);
    } catch (error) {
      finding = null; // a learner output the analysis cannot read: other checks may still locate the step
    }
    if (finding) findings.push(finding);
  }
  if (!findings.length) {
    const missing = errorCaseFinding(table, errors);
    if (missing) return decorate(missing, table);
    if (failing.length && byId.size) {
      return decorate({ step: null, title: `Every probe input is answered right, yet ${failing.length === 1 ? 'a case fails' : `${failing.length} cases fail`}: “${failing[0]}”${failing.length > 1 ? ' …' : ''}`, detail: 'The probes call your function on small inputs chosen to show one step at a time, and every step came out right there. Compare your output with the expected one on the failing case: a size the probes do not use (one token, one head, a larger T) may take another path through your code.', foundBy: 'the test cases' }, table);
    }
    return null;
  }
  const rank = (f) => (f.step ? STEP_ORDER.indexOf(f.step) : STEP_ORDER.length);
  // an output that is not a weighted average of V's rows: the probes that read weights read them wrong
  const trusted = findings.some((f) => f.assumption) ? findings.filter((f) => f.assumption || f.step === 'check') : findings;
  // at one step, a finding marked weak (told with fewer heads) gives way to another
  const first = trusted.reduce((best, f) => (rank(f) < rank(best) || (rank(f) === rank(best) && best.weak && !f.weak) ? f : best));
  return decorate(first, table);
}

/** The arguments of a call in words: matrices by their shape, options as written. */
function describeArgs(table, args) {
  const names = table.argNames ?? ['Q', 'K', 'V', 'options'];
  return args.map((a, i) => {
    const shape = Array.isArray(a) && Array.isArray(a[0]) ? `${a.length}×${a[0].length}` : null;
    if (shape) return `${names[i] ?? `argument ${i + 1}`} ${shape}`;
    if (a && typeof a === 'object') return JSON.stringify(a).replace(/"(\w+)":/g, '$1: ').replace(/,/g, ', ');
    return `${names[i] ?? `argument ${i + 1}`} ${JSON.stringify(a)}`;
  }).join(', ');
}

/**
 * The first error case the learner's function gets wrong, as a finding at the step 'check':
 * accepted (returned normally), or rejected with another error or another message.
 */
function errorCaseFinding(table, errors) {
  for (const c of errors) {
    const r = c.result;
    if (!r) continue;
    const want = c.throws;
    const said = want.referenceMessage ?? `${want.messageStartsWith}…`;
    const call = describeArgs(table, c.args);
    const base = { step: 'check', probe: null, foundBy: `the case “${c.name}” (${call})` };
    if (!r.error) {
      return { ...base, title: `A missing check: “${c.name}” was accepted; expected a ${want.name} saying “${want.messageStartsWith}…”`, detail: `Called with ${call}, your function returned ${describeValue(r.output)} instead of throwing. The reference throws ${want.name}: “${said}”. Check the arguments before computing anything, and throw new ${want.name}(…) with a message that starts “${want.messageStartsWith}”.` };
    }
    if (r.error.name !== want.name) {
      const crash = r.error.name === 'TypeError' && !r.error.message.startsWith(want.messageStartsWith);
      return { ...base, title: `“${c.name}”: your function threw ${r.error.name}, expected ${want.name}`, detail: `Called with ${call}, it threw ${r.error.name}: “${r.error.message}”.${crash ? ' That is a crash inside the computation, not a check: nothing stopped the bad input first.' : ''} The reference throws ${want.name}: “${said}”.` };
    }
    if (!r.error.message.startsWith(want.messageStartsWith)) {
      return { ...base, title: `“${c.name}”: the right error (${want.name}) with another message`, detail: `Called with ${call}, your function threw ${r.error.name}: “${r.error.message}”. The message must start “${want.messageStartsWith}” (the reference says “${said}”).` };
    }
  }
  return null;
}

const describeValue = (v) => (Array.isArray(v) && Array.isArray(v[0]) ? `a ${v.length}×${v[0].length} matrix` : v === undefined ? 'undefined' : Array.isArray(v) ? `an array of ${v.length}` : typeof v);

function decorate(f, table) {
  const p = f.probe;
  const located = Boolean(f.step);
  const result = {
    step: f.step,
    stepLabel: located ? table.labels?.[f.step] ?? STEPS[f.step].label : null,
    head: f.head ?? null,
    title: f.title,
    detail: f.detail,
    probe: p ? describeProbe(p, table) : null,
    // how the finding was made, in words: a probe input, or a test case
    foundBy: f.foundBy ?? (p ? `calling your function on a probe input (${describeProbe(p, table)})` : null),
    expected: f.expected ?? null,
    actual: f.actual ?? null,
  };
  if (located && p && STEPS[f.step].walk) result.walkthrough = walkthroughOf(f, table);
  return result;
}

/** The first row where two matrices differ (a token, in challenge 05), or 0. */
function firstDifferentRow(expected, actual) {
  if (!expected || !actual || !Array.isArray(actual)) return 0;
  const r = expected.findIndex((row, k) => !close([actual[k]], [row], 1e-9));
  return Math.max(0, r);
}

/**
 * The walkthrough's inputs for a finding, in the challenge's own mode and settings: the window
 * (08), the KV cache token by token (05), numberOfKVHeads (06), RoPE's base and offset with the
 * probe's X as Q, K and V (07); plain (causal) multi-head attention otherwise. null when the probe
 * cannot be shown there (a V wider than Q, the projections of challenge 04).
 */
function walkthroughOf(f, table) {
  const p = f.probe;
  // a challenge without W_O (05–08): its output is the concatenation (one head: the weighted sum), not the W_O page
  const last = table.steps.includes('concat') ? 'concat' : 'context';
  const step = STEPS[f.step].walk === 'output' && !table.steps.includes('w-o') ? last : STEPS[f.step].walk;
  if (table.function === 'rotaryEmbedding') {
    const call = p.basis ? callsOf(p)[f.column ?? 0] : p;
    const { base, offset } = p.options;
    return { mode: 'rope', Q: call.X, K: call.X, V: call.X, numberOfHeads: p.numberOfHeads, headDimensions: p.headDimensions, causal: false, W_O: null, base, offset, step, head: f.column === undefined ? 0 : Math.floor(f.column / p.headDimensions) };
  }
  if (!p.Q || !p.V || p.X) return null;
  const kvHeads = p.numberOfKVHeads ?? p.numberOfHeads;
  const grouped = table.function === 'groupedQueryAttention';
  if (p.V[0].length !== (grouped ? kvHeads * p.headDimensions : p.Q[0].length)) return null;
  const w = {
    Q: p.Q, K: p.K, V: p.V, numberOfHeads: p.numberOfHeads, headDimensions: p.headDimensions,
    causal: p.causal === true || p.window !== undefined, W_O: p.W_O === 'absent' || isIdentity(p.W_O) ? null : p.W_O, step, head: f.head ?? 0,
  };
  if (table.function === 'decode') return { ...w, mode: 'decoding', W_O: null, step: 'token', head: 0, token: firstDifferentRow(f.expected?.matrix, f.actual?.matrix) };
  if (grouped) return { ...w, mode: 'grouped', numberOfKVHeads: kvHeads, W_O: null };
  if (table.function === 'slidingWindowAttention' && p.window !== undefined) return { ...w, mode: 'window', window: p.window };
  return w;
}

const isIdentity = (M) => M.every((row, i) => row.every((x, j) => x === (i === j ? 1 : 0)));

/** The walkthrough's address for a finding's `walkthrough` (its query string carries the inputs). */
export function walkthroughHref(w, base = './walkthrough.html') {
  const params = new URLSearchParams();
  params.set('Q', JSON.stringify(w.Q));
  params.set('K', JSON.stringify(w.K));
  params.set('V', JSON.stringify(w.V));
  params.set('numberOfHeads', String(w.numberOfHeads));
  params.set('headDimensions', String(w.headDimensions));
  if (w.causal) params.set('causal', '1');
  if (w.W_O) params.set('W_O', JSON.stringify(w.W_O));
  // a modern mode and its settings (see the walkthrough's applyModeLink)
  if (w.mode) params.set('mode', w.mode);
  if (w.numberOfKVHeads !== undefined) params.set('numberOfKVHeads', String(w.numberOfKVHeads));
  if (w.window !== undefined) params.set('window', String(w.window));
  if (w.base !== undefined) params.set('base', String(w.base));
  if (w.offset !== undefined) params.set('offset', String(w.offset));
  params.set('step', w.step);
  if (w.token !== undefined) params.set('token', String(w.token));
  else if (w.head) params.set('head', String(w.head));
  return `${base}?${params}`;
}
