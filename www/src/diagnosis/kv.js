// The probe checks of keys and values: which key/value head each query head reads
// (groupedQueryAttention), and which keys a decoded token had in its KV cache.
import { closeMatrix as close, columnMeans, isMatrix, range, softmaxRow } from '../matrix.js';
import { callsOf, outputsOf, readWeights, stepOf, trace } from './probes.js';
import { isOwnCheck, thrown } from './checks.js';
import { shapeOf } from './words.js';

/**
 * Q = 0 with numberOfHeads = 6, numberOfKVHeads = 3, headDimensions = 1 (for example): every weight is 1/T, so
 * output column i is the average of the V column of the key/value head that query head i reads.
 * ⌊i / group⌋ gives heads 0, 0, 1, 1, 2, 2; i mod numberOfKVHeads 0, 1, 2, 0, 1, 2; ⌊i / numberOfKVHeads⌋
 * 0, 0, 0, 1, 1, 1. Runs after the
 * structure checks and only when they found the slicing and concatenation right. `oneColumn`: the
 * probe with K/V heads one column wide, whose right answer makes a crash here an index not rounded down.
 */
export function checkKVHead(probeId, { oneColumn = null } = {}) {
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
    const rightWithOneColumn = oneColumn !== null && ctx.facts[`kv:${oneColumn}`];
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

/**
 * Which keys token t had in its cache when it attended: the keys its weights (read through one-hot
 * V) give weight to. Right: keys 0 … t (its own key is appended first). Named patterns: all T keys
 * (the cache bypassed), only t (overwritten), 0 … t − 1 (appended after attending), 0 … t + 1.
 */
export function checkCache(probeId) {
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
        // (or the weighted sum read row t of V for every key: repaired.js chooses by the line that repairs it)
        const readInstead = { step: 'weighted-sum', title: 'Your weighted sum reads the newest value, row t of V, for every key', detail: `With V one-hot, token ${q}'s output is its weights, and yours weighs only ${keys(seen[q])}: every key's weight went to row t of V. Output row t is Σ_j w_tj · V[j], each key's weight times its own value, over the whole cache.` };
        return { ...base, step: 'cache', title: 'Each token attended only its own key: the cache holds just the newest token', detail: `Token ${q} attended ${keys(seen[q])}; it must see keys 0 … ${q}. Append (push) row t of K and V to the cache and keep the earlier rows; do not replace them. (The same output comes from a weighted sum that uses V[t] alone: output row t is Σ_j w_tj · V[j] over the whole cache.)`, readInstead };
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

/**
 * Right on one token, a crash (not a check) on several: token t reads a cached row that is not
 * there yet (a loop over all T keys or values where the cache holds t + 1 rows).
 */
export function checkCacheCrash(oneTokenId, probeId) {
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
