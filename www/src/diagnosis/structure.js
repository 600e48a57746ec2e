// The probe checks that read the structure of multi-head attention (Q = 0: every weight is 1/T, so
// the output shows which columns of V each head read and where the heads were put), W_O, and the
// assumption under every weight reading: V = 0 gives 0 (the output is a weighted average of V's rows).
import { closeMatrix as close, finiteMatrix, identity, isMatrix, range, transpose } from '../matrix.js';
import { callsOf, hasStep, outputsOf, stepOf, trace } from './probes.js';
import { thrown, wrongShape } from './checks.js';
import { fmt } from './words.js';

/**
 * Q = 0: every weight is 1/T, so output column j is the average of the V column the learner
 * put there. With V[t][c] = (c + 1) + (t + 1)/100 the average names the column.
 * Records facts.source (output column → the V column it holds) and facts.concatRight.
 */
export function checkStructure(probeId) {
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
      if (hasStep(ctx.table, 'kv-head') && heads.every((cols) => blockOf(cols) >= 0)) {
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
 * Every probe without W_O (`absent`, ids; the first is shown) answers 0, and the probe with W_O
 * does not: the missing W_O is not the identity. Those probes cannot be read as weights, so this
 * finding wins (`assumption`).
 */
export function checkAbsentZero(probeWithId, { absent: ids }) {
  return (ctx) => {
    const absent = ids.map((id) => ctx.probe(id));
    const allZero = absent.every((probe) => {
      const got = outputsOf(ctx, probe);
      return !got.error && got.outputs.every((O) => Array.isArray(O) && O.every((row) => Array.isArray(row) && row.every((x) => x === 0)));
    });
    const given = outputsOf(ctx, ctx.probe(probeWithId));
    if (!absent.length || !allZero || given.error || given.outputs[0].flat().every((x) => x === 0)) return null;
    const [probe] = absent;
    return { probe, assumption: true, step: 'w-o', expected: { label: 'output (W_O absent: the identity)', matrix: trace(ctx.lab, callsOf(probe)[0]).output }, actual: { label: 'your output', matrix: outputsOf(ctx, probe).outputs[0] }, title: 'Without W_O your output is all 0', detail: 'When the options give no W_O, the output projection is the C×C identity, so the output is the heads side by side. Yours is 0 on every probe without W_O (and not with one): use W_O ?? identity(C), not a matrix of zeros.' };
  };
}

/** With the concatenation known right: output = concat·W_O (a permutation W_O, and W_O absent). */
export function checkOutputProjection(probeId, absentProbeId) {
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
      if (close(O, concat, 1e-8)) { title = 'W_O is not applied'; why = `Your output equals the concatenated heads. Multiply them by W_O${absentProbeId ? ' (the identity only when W_O is absent)' : ''}.`; }
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

// ---- checks before reading weights: is the output a weighted average of V's rows at all? --------

/** The reference output of a probe: the form's own function when it has one for the probe, else the trace's. */
function referenceOutput(ctx, probe) {
  return ctx.table.form.output?.(ctx.lab, probe) ?? trace(ctx.lab, probe).output;
}

/**
 * V = 0 (W_V = 0 in challenge 04): every output row is a weighted average of V's rows, so the
 * output must be 0, whatever the weights. When it is not, something after the weights adds to the
 * output (a residual, a bias, values taken from Q or K), and every probe that reads the output as
 * weights would read it wrong: this finding then wins over theirs (`assumption`).
 */
export function checkAverage(probeId) {
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
      return { ...base, step: 'residual', title: 'Your output is Q + attention: the queries are added to the result', detail: `${lead} Yours is Q itself. Return the weighted sum of V alone: output row i is Σ_j w_ij · V[j]${hasStep(ctx.table, 'w-o') ? ', then the heads side by side and W_O' : ''}, with nothing added.` };
    }
    if (hasStep(ctx.table, 'cache') && isMatrix(probe.K, probe.V.length, probe.V[0].length)) {
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
        const sum = { step: 'weighted-sum', title: `Your weighted sum takes the rows of ${name}, not of V`, detail: `${lead} Yours is weights·${name}: the values ${hasStep(ctx.table, 'cache') ? `your weighted sum reads are ${name}'s rows, not the cache's values` : `are ${name}'s rows`}. Output row i is Σ_j w_ij · V[j].` };
        if (!hasStep(ctx.table, 'cache')) return { ...base, ...sum };
        // (seen from outside, the cache's values and the weighted sum's reads are one: `readInstead`, the
        // weighted sum's own finding, for the line that repairs it to choose: repaired.js)
        return { ...base, step: 'cache', title: `Your cache's values are rows of ${name}: token t's weighted sum uses ${name}, not V`, detail: `${lead} Yours is weights·${name}: the values in the cache are the ${name === 'K' ? 'keys' : 'queries'}. Output row i is Σ_j w_ij · V[j].`, readInstead: sum };
      }
    }
    if (O.every((row) => close([row], [O[0]], 1e-9))) {
      return { ...base, step: 'residual', title: 'A constant row is added to every output row', detail: `${lead} Every row of yours is [${O[0].map(fmt).join(', ')}]: a bias, or a sum that does not start at 0. Output row i is Σ_j w_ij · V[j], with nothing added.` };
    }
    return { ...base, step: 'weighted-sum', title: `${probe.X ? 'With W_V = 0' : 'With V = 0'} your output is not 0: it is not a weighted average of V's rows`, detail: `${lead} So something other than V reaches your output after the weights (a residual, a bias, Q or K in place of V). Output row i is Σ_j w_ij · V[j]${hasStep(ctx.table, 'w-o') ? ', then the heads side by side and W_O' : ''}.` };
  };
}

// ---- the tables -----------------------------------------------------------------------------
