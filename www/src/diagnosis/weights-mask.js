// Reading a mask from one head's attention weights (explainWeights, weights.js): NaN rows of a
// window, the band of keys each query sees, keys the mask lets through or hides, a mask applied
// after the softmax. Each reader takes the reading `r` (weights.js) and returns a finding, or
// undefined to let the next reader look.
import { closeMatrix as close, finiteMatrix, range, softmaxRow } from '../matrix.js';
import { stepOf } from './probes.js';
import { capital, fmt } from './words.js';

/** Row and column sums of the learner's weights (once per reading). */
export function sums(r) {
  if (!r.sums) {
    const rowSums = r.Ŵ.map((row) => row.reduce((a, b) => a + b, 0));
    const colSums = range(r.T).map((j) => r.Ŵ.reduce((a, row) => a + row[j], 0));
    r.sums = { rowSums, colSums, rowsOk: rowSums.every((x) => Math.abs(x - 1) < 1e-7), colsOk: colSums.every((x) => Math.abs(x - 1) < 1e-7) };
  }
  return r.sums;
}

/** A window whose rows are NaN: every key of those rows masked. */
export function readWindowNaN(r) {
  const { ctx, lab, probe, t, i, Ŵ, W, allowed, d, C, dim, dv, scaleName, windowed, who, base, T, large } = r;
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
  return undefined;
}

/** A window (the `mask` of the data is `window`): the band of keys each query sees, too wide, too narrow or in the wrong place. */
export function readWindowBand(r) {
  const { ctx, lab, probe, t, i, Ŵ, W, allowed, d, C, dim, dv, scaleName, windowed, who, base, T, large } = r;
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
  return undefined;
}

/** A mask (the scores come with allowed keys): keys it lets through or hides, or a mask applied after the softmax. */
export function readMask(r) {
  const { ctx, lab, probe, t, i, Ŵ, W, allowed, d, C, dim, dv, scaleName, windowed, who, base, T, large } = r;
  const { rowSums, colSums, rowsOk, colsOk } = sums(r);
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
  return undefined;
}

