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
//   - large scores show a softmax that overflows.
// Each challenge declares its steps, probes and checks in one table (TABLES, at the end): a future
// challenge adds its own row. The probes are ordinary calls run in the same sandboxed worker as the
// tests; every expected value comes from the package (`lab`: traceMultiHeadAttention, linear,
// projectedSelfAttention), never from numbers written here.
//
// Plain ES module, no DOM: used by the challenge page and by the Node tests.

// ---- the course's vocabulary ------------------------------------------------------------

/** Steps in the order a correct answer performs them; `walk` is the walkthrough's step key. */
export const STEPS = {
  'project-Q': { label: 'the projection X·W_Q', walk: 'project-Q' },
  'project-K': { label: 'the projection X·W_K', walk: 'project-K' },
  'project-V': { label: 'the projection X·W_V', walk: 'project-V' },
  slice: { label: 'slicing into heads', walk: 'slice' },
  'kv-head': { label: 'choosing the key/value head ⌊i / group⌋', walk: 'slice' },
  scores: { label: 'the scores Q_h·K_hᵀ', walk: 'scores' },
  scale: { label: 'the scale 1/√headDimensions', walk: 'scale' },
  mask: { label: 'the causal mask', walk: 'weights' },
  softmax: { label: 'the softmax', walk: 'weights' },
  'weighted-sum': { label: 'the weighted sum with V_h', walk: 'context' },
  concat: { label: 'concatenating the heads', walk: 'concat' },
  'w-o': { label: 'the output projection W_O', walk: 'output' },
};
const STEP_ORDER = Object.keys(STEPS);

// ---- small matrix helpers (probe inputs only; expected values come from the package) -----------

const range = (n) => Array.from({ length: n }, (_, i) => i);
const zeros = (r, c) => range(r).map(() => range(c).map(() => 0));
const identity = (n) => range(n).map((i) => range(n).map((j) => (i === j ? 1 : 0)));
const transpose = (M) => M[0].map((_, j) => M.map((row) => row[j]));
const scaleMatrix = (M, s) => M.map((row) => row.map((x) => x * s));
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

// ---- running probes ---------------------------------------------------------------------------

/** The calls of one probe: one, or ceil(T/d) when its weights are read out. */
function callsOf(probe) {
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
function nameScale(s, d, C, T, dim = 'headDimensions') {
  const all = [
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
  const scaleName = (x) => nameScale(x, d, C, W.length, dim);
  const who = weightsName(probe, i);
  const base = { probe, head: i, expected: { label: `weights_${i}`, matrix: W }, actual: { label: `your weights_${i}`, matrix: Ŵ } };
  const T = W.length;

  if (large && finiteMatrix(Ŵ)) {
    // near one-hot weights say little about the scale; only a softmax that breaks on large scores is told here
    if (!ctx.facts['weights:one-head']) return null;
    return { ...base, step: 'softmax', title: `${capital(who)} are wrong when the scores are large`, detail: `With scaled scores near ${fmt(Math.max(...stepOf(t, `scaled_${i}`).values.flat()))} your weights differ from the softmax, although they are right on small scores. Subtract each row's maximum, then exp(), then divide by the row's sum.` };
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
  if (!finiteMatrix(Ŵ)) {
    return {
      ...base, step: 'softmax',
      title: large ? `${capital(who)} turn into NaN or Infinity when the scores are large` : `${capital(who)} contain NaN or Infinity`,
      detail: large
        ? `With scaled scores near ${fmt(Math.max(...stepOf(t, `scaled_${i}`).values.flat()))}, e^score overflows to Infinity and Infinity / Infinity is NaN. Subtract each row's maximum before exp(): the weights do not change, and nothing overflows.`
        : 'Look for exp() of a large number, a division by zero, or an index past the end of a row (undefined becomes NaN).',
    };
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
          ? 'Your weights equal the weights without any mask: the mask is not applied. Set every scaled score with key j > query i to −Infinity before the softmax.'
          : Math.abs(effective) < 1e-6
            ? `The masked keys still get weight: they behave like a score of 0 (for query ${q}, key ${k}), and e⁰ = 1. Use −Infinity, so that e^(−∞) = 0.`
            : `For query ${q}, key ${k} ${k > q ? `> ${q}` : '(outside the window: query p sees only p − window < j ≤ p)'} gets weight ${fmt(Ŵ[q][k])}; with −Infinity before the softmax it gets exactly 0.`;
      } else why = `Keys after the query get weight (for example query ${leaks[0][0]}, key ${leaks[0][1]}: ${fmt(Ŵ[leaks[0][0]][leaks[0][1]])}). Mask the scaled scores with key j > query i (−Infinity) before the softmax.`;
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
  if (s !== null && Math.abs(s - expectedScale) > 1e-6 * expectedScale) {
    return {
      ...base, step: 'scale',
      title: `Your scores are multiplied by ${scaleName(s)}; expected 1/√${dim} = 1/√${d} ≈ ${fmt(expectedScale)}`,
      detail: `Read from the ratios of ${who}: log(w_ij / w_ik) = scale · (score_ij − score_ik) fits scale = ${fmt(s)} in every row.${Math.abs(s - 1 / Math.sqrt(C)) < 1e-9 && probe.numberOfHeads > 1 ? ' Inside a head the dot products run over headDimensions columns only, so divide by √headDimensions, not √C.' : ` A score is a sum of ${dim} products, so divide it by √${dim}.`}`,
    };
  }
  // other score matrices the learner may have built
  const [Qh, Kh] = [stepOf(t, `Q_${i}`).values, stepOf(t, `K_${i}`).values];
  const candidates = [];
  const [qn, kn] = ctx.table.dim === 'd_k' ? ['Q', 'K'] : ['Q_h', 'K_h'];
  if (Qh[0].length === Kh.length) candidates.push(['scores', lab.linear(Qh, Kh), `Your weights fit the scores ${qn}·${kn} (K not transposed). Transpose K so that score[i][j] = q_i · k_j.`]);
  candidates.push(['scores', transpose(S), `Your weights fit the scores ${kn}·${qn}ᵀ, the transpose of ${qn}·${kn}ᵀ: row i must belong to query i, column j to key j.`]);
  candidates.push(['scores', lab.linear(Qh, transpose(Qh)), 'Your weights fit the scores Q·Qᵀ: the keys are not used. score[i][j] = q_i · k_j, a query against a key.']);
  candidates.push(['scores', lab.linear(Kh, transpose(Kh)), 'Your weights fit the scores K·Kᵀ: the queries are not used. score[i][j] = q_i · k_j, a query against a key.']);
  const { Q, K } = probe;
  const h = probe.numberOfHeads;
  if (h > 1) {
    for (let other = 0; other < h; other++) {
      if (other === i) continue;
      const cols = range(d).map((c) => other * d + c);
      candidates.push(['slice', lab.linear(columns(Q, cols), transpose(columns(K, cols))), `Head ${i}'s weights fit the scores of columns ${cols[0]}–${cols.at(-1)}, which belong to head ${other}. Head i takes columns i·headDimensions up to (i+1)·headDimensions.`]);
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

function softmaxRow(row) {
  const max = Math.max(...row);
  const e = row.map((x) => Math.exp(x - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}
const capital = (s) => s[0].toUpperCase() + s.slice(1);

// ---- checks: each reads some probes and returns a finding or null ----------------------------

function thrown(ctx, probe, error, step = null) {
  return { step, probe, title: `Your function throws on a probe input (${describeProbe(probe, ctx.table)})`, detail: `${error.name}: ${error.message}` };
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
    // decode: which V column, averaged over all T tokens, sits in each output column?
    const mean = (T + 1) / 2 / 100;
    const source = range(C).map((j) => {
      const c = Math.round(O[0][j] - mean) - 1;
      return c >= 0 && c < C && O.every((row) => Math.abs(row[j] - concat[0][c]) < 1e-8) ? c : -1;
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
      return { ...base, step: 'slice', title: 'Your heads read the wrong columns of V', detail: heads.map((cols, i) => `head ${i} reads columns ${cols.join(', ')} (expected ${range(d).map((c) => i * d + c).join(', ')})`).join('; ') + '.' };
    }
    return { ...base, step: 'concat', title: 'The head outputs are put together in the wrong order', detail: `${where}. Row r of the result is row r of head 0, then row r of head 1, and so on.` };
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
  if (table?.dim === 'd_k') parts.push(`d_k = ${p.headDimensions}`, ...(p.V[0].length !== p.headDimensions && !p.readout ? [`d_v = ${p.V[0].length}`] : []));
  else parts.push(`numberOfHeads = ${p.numberOfHeads}`, `headDimensions = ${p.headDimensions}`);
  parts.push(p.causal === undefined ? (table?.function === 'dotProductAttention' ? 'no options' : null) : `{ causal: ${p.causal} }`);
  if (p.note) parts.push(p.note);
  if (table?.function === 'projectedSelfAttention' && !p.X) parts.push('X = [I | 0] and W_Q, W_K, W_V holding Q, K, V, so that X·W_Q = Q');
  return parts.filter(Boolean).join(', ');
}

// ---- the tables -----------------------------------------------------------------------------

const MULTI_HEAD = {
  steps: ['slice', 'scores', 'scale', 'softmax', 'weighted-sum', 'concat', 'w-o'],
  probes: [
    spec({ id: 'one-head', note: 'one head, V = one-hot columns (the output is the weights)', Q: Q3, K: K3, V: Q3, numberOfHeads: 1, headDimensions: 3, readout: 'weights' }),
    spec({ id: 'one-head-5x2', note: 'one head, 5 tokens of 2 columns, V = one-hot columns', Q: Q5x2, K: K5x2, V: V5x2, numberOfHeads: 1, headDimensions: 2, readout: 'weights' }),
    spec({ id: 'large', note: 'one head, scores near 1000', Q: scaleMatrix(Q3, 30), K: scaleMatrix(K3, 30), V: Q3, numberOfHeads: 1, headDimensions: 3, readout: 'weights' }),
    spec({ id: 'sum', note: 'one head, 5 tokens of 2 columns', Q: Q5x2, K: K5x2, V: V5x2, numberOfHeads: 1, headDimensions: 2 }),
    spec({ id: 'structure', note: 'Q = 0, so every weight is 1/T', Q: zeros(6, 6), K: K6, V: codedV(6, 6), numberOfHeads: 2, headDimensions: 3 }),
    spec({ id: 'structure-3', note: 'Q = 0, three heads of two', Q: zeros(6, 6), K: K6, V: codedV(6, 6), numberOfHeads: 3, headDimensions: 2 }),
    spec({ id: 'heads', note: 'two heads, V = one token at a time', Q: Q2h, K: K2h, V: Q2h, numberOfHeads: 2, headDimensions: 3, readout: 'per-key' }),
    spec({ id: 'w-o', note: 'Q = 0, a permutation W_O', Q: zeros(4, 4), K: K4x4, V: codedV(4, 4), numberOfHeads: 2, headDimensions: 2, W_O: P4 }),
    spec({ id: 'w-o-absent', note: 'no W_O in the options', Q: Q4x4, K: K4x4, V: codedV(4, 4), numberOfHeads: 2, headDimensions: 2, W_O: 'absent' }),
  ],
  checks: [
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
const single = (s) => spec({ numberOfHeads: 1, headDimensions: s.Q[0].length, readoutWidth: s.Q.length, ...s });

const DOT_PRODUCT = {
  steps: ['scores', 'scale', 'softmax', 'weighted-sum'],
  probes: [
    single({ id: 'one-head', note: 'V = one-hot columns (the output is the weights)', Q: Q3, K: K3, V: Q3, readout: 'weights' }),
    single({ id: 'one-head-5x2', note: '5 tokens, d_k = 2, V = one-hot columns', Q: Q5x2, K: K5x2, V: Q5x2, readout: 'weights' }),
    single({ id: 'large', note: 'scores near 1000', Q: scaleMatrix(Q3, 30), K: scaleMatrix(K3, 30), V: Q3, readout: 'weights' }),
    single({ id: 'sum', note: 'V wider than Q and K', Q: Q5x2, K: K5x2, V: V5x3 }),
  ],
  checks: [
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
    single({ id: 'large-causal', note: 'scores near 1000', Q: scaleMatrix(Q3, 30), K: scaleMatrix(K3, 30), V: Q3, causal: true, readout: 'weights' }),
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

const PROJECTED = {
  steps: ['project-Q', 'project-K', 'project-V', ...MULTI_HEAD.steps],
  probes: [
    projection({ id: 'proj-qk', note: 'X = I, W_V = W_O = I: the output is the weights', X: identity(3), W_Q: A3, W_K: B3, W_V: identity(3) }),
    projection({ id: 'proj-v', note: 'W_Q = W_K = 0: every weight is 1/T', X: X3, W_Q: zeros(3, 3), W_K: zeros(3, 3), W_V: A3 }),
    // challenge 02's probes where T ≤ C, through X = [I | 0] (so that X·W_Q = Q exactly)
    ...MULTI_HEAD.probes.filter((p) => p.T <= p.C && p.id !== 'w-o-absent'),
  ],
  checks: [
    checkProjectionQK('proj-qk'),
    checkProjectionV('proj-v'),
    checkWeights('one-head'),
    checkWeights('large', { large: true }),
    checkStructure('structure'),
    checkStructure('structure-3'),
    checkHeads('heads'),
    checkOutputProjection('w-o'),
  ],
};

// ---- challenge 06: grouped-query attention ----------------------------------------------------

/**
 * Q = 0 with numberOfHeads = 4, numberOfKVHeads = 2, headDimensions = 1: every weight is 1/T, so
 * output column i is the average of the V column of the key/value head that query head i reads.
 * ⌊i / group⌋ gives heads 0, 0, 1, 1; i mod numberOfKVHeads gives 0, 1, 0, 1. Runs after the
 * structure checks and only when they found the slicing and concatenation right.
 */
function checkKVHead(probeId) {
  return (ctx) => {
    if (!ctx.facts.concatRight) return null; // slicing or concatenation wrong: the structure probes name it
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    if (got.error) return got.missing ? null : thrown(ctx, probe, got.error);
    const [O] = got.outputs;
    const { numberOfHeads: h, numberOfKVHeads: kv, headDimensions: d } = probe;
    const expected = ctx.lab.groupedQueryAttention(probe.Q, probe.K, probe.V, { numberOfHeads: h, numberOfKVHeads: kv, headDimensions: d });
    if (close(O, expected, 1e-8)) return null;
    if (!isMatrix(O, probe.T, h * d) || !finiteMatrix(O)) return null;
    const means = columnMeans(probe.V)[0];
    const group = h / kv;
    const read = range(h).map((i) => range(kv).find((k) => range(d).every((c) => O.every((row) => Math.abs(row[i * d + c] - means[k * d + c]) < 1e-8))));
    if (read.some((k) => k === undefined)) return null; // not a plain choice of head: other checks say more
    const want = range(h).map((i) => Math.floor(i / group));
    const base = { probe, expected: { label: 'output (every weight 1/T: head i averages V of K/V head ⌊i / group⌋)', matrix: expected }, actual: { label: 'your output', matrix: O } };
    const modulo = read.every((k, i) => k === i % kv);
    return {
      ...base, step: 'kv-head',
      title: modulo ? 'Query head i reads key/value head i mod numberOfKVHeads instead of ⌊i / group⌋' : 'Your query heads read the wrong key/value heads',
      detail: `With numberOfHeads = ${h} and numberOfKVHeads = ${kv}, group = ${group}: heads ${range(h).join(', ')} must read key/value heads ${want.join(', ')} (consecutive query heads share one); yours read ${read.join(', ')}.`,
    };
  };
}

const K4x2 = [[1, 0], [0, 1], [2, -1], [-1, 2]];
const GROUPED = {
  steps: ['slice', 'kv-head', 'scores', 'scale', 'softmax', 'weighted-sum', 'concat'],
  probes: [
    // challenge 02's probes with numberOfKVHeads = numberOfHeads and no W_O (the identity)
    ...MULTI_HEAD.probes.filter((p) => p.id !== 'w-o' && p.id !== 'w-o-absent'),
    { ...spec({ id: 'kv-head', note: 'Q = 0, numberOfKVHeads = 2, so every weight is 1/T', Q: zeros(4, 4), K: K4x2, V: codedV(4, 2), numberOfHeads: 4, headDimensions: 1 }), numberOfKVHeads: 2 },
  ],
  checks: [
    checkWeights('one-head'),
    checkWeights('one-head-5x2'),
    checkWeights('large', { large: true }),
    checkWeightedSum('sum', 'one-head-5x2'),
    checkStructure('structure'),
    checkStructure('structure-3'),
    checkHeads('heads'),
    checkKVHead('kv-head'),
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
    windowed({ id: 'large', note: '{ window: 2 }, scores near 1000', Q: scaleMatrix(Q3, 30), K: scaleMatrix(K3, 30), V: Q3, window: 2, readout: 'weights' }),
    windowed({ id: 'sum', note: '{ window: 2 }, V of 5 tokens', Q: Q5x2, K: K5x2, V: V5x2, window: 2 }),
    windowed({ id: 'one-head-5x2', note: '{ window: 2 }, V = one-hot columns', Q: Q5x2, K: K5x2, V: Q5x2, window: 2, readout: 'weights' }),
  ],
  checks: [
    checkWeights('window-2'),
    checkWeights('window-3'),
    checkWeights('window-none'),
    checkWeights('one-head-5x2'),
    checkWeights('large', { large: true }),
    checkWeightedSum('sum', 'one-head-5x2'),
  ],
};

// ---- challenge 09: challenge 02's function with challenge 03's causal option ----------------------

const MULTI_HEAD_CAUSAL = {
  steps: ['slice', 'scores', 'scale', 'mask', 'softmax', 'weighted-sum', 'concat', 'w-o'],
  probes: [
    ...MULTI_HEAD.probes,
    spec({ id: 'mask-one-head', note: 'one head, a loud last key, V = one-hot columns', Q: Qm, K: Km, V: Qm, numberOfHeads: 1, headDimensions: 2, causal: true, readout: 'weights' }),
    spec({ id: 'mask-two-heads', note: 'two heads of three, V = one-hot columns', Q: Q2h, K: K2h, V: Q2h, numberOfHeads: 2, headDimensions: 3, causal: true, readout: 'weights' }),
    spec({ id: 'large-causal', note: 'one head, scores near 1000', Q: scaleMatrix(Q3, 30), K: scaleMatrix(K3, 30), V: Q3, numberOfHeads: 1, headDimensions: 3, causal: true, readout: 'weights' }),
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

/** One row per challenge (the folder name under challenges/): its function, steps, probes and checks. */
export const TABLES = {
  '01-dot-product-attention': { function: 'dotProductAttention', dim: 'd_k', labels: ONE_HEAD_LABELS, ...DOT_PRODUCT },
  '02-multi-head-attention': { function: 'multiHeadAttention', ...MULTI_HEAD },
  '03-causal-mask': { function: 'dotProductAttention', dim: 'd_k', labels: ONE_HEAD_LABELS, ...CAUSAL },
  '04-learned-projections': { function: 'projectedSelfAttention', ...PROJECTED },
  '06-grouped-query': { function: 'groupedQueryAttention', ...GROUPED },
  '09-attention-in-a-model': { function: 'multiHeadAttention', ...MULTI_HEAD_CAUSAL },
  '08-sliding-window': { function: 'slidingWindowAttention', dim: 'd', labels: { ...ONE_HEAD_LABELS, scale: 'the scale 1/√d', mask: 'the sliding-window mask' }, ...SLIDING },
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
 */
export function locate(challengeId, results, lab) {
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
  if (!findings.length) return null;
  const rank = (f) => (f.step ? STEP_ORDER.indexOf(f.step) : STEP_ORDER.length);
  const first = findings.reduce((best, f) => (rank(f) < rank(best) ? f : best));
  return decorate(first, table);
}

function decorate(f, table) {
  const p = f.probe;
  const located = Boolean(f.step);
  const result = {
    step: f.step,
    stepLabel: located ? table.labels?.[f.step] ?? STEPS[f.step].label : null,
    head: f.head ?? null,
    title: f.title,
    detail: f.detail,
    probe: describeProbe(p, table),
    expected: f.expected ?? null,
    actual: f.actual ?? null,
  };
  // the walkthrough shows traceMultiHeadAttention: Q, K and V of the same shape
  if (located && !p.X && p.V[0].length === p.Q[0].length) {
    result.walkthrough = {
      Q: p.Q, K: p.K, V: p.V, numberOfHeads: p.numberOfHeads, headDimensions: p.headDimensions,
      causal: p.causal === true, W_O: p.W_O === 'absent' || isIdentity(p.W_O) ? null : p.W_O, step: STEPS[f.step].walk, head: f.head ?? 0,
    };
  }
  return result;
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
  params.set('step', w.step);
  if (w.head) params.set('head', String(w.head));
  return `${base}?${params}`;
}
