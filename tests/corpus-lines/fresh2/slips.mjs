// A second held-out batch for the first wrong line (issue 28), written after the fixes the first
// batch (../fresh/) led to and before the diagnosis was run on it: right answers in styles neither
// corpus nor the first batch has for these challenges (a pipeline of state objects; a generator of
// heads joined by Array.prototype.concat; a Float64Array of weights per query with the K/V columns by
// arithmetic; a filter over { j, s } entries), and slips of them. Its first run is the measure of the
// engine as those fixes left it.
import { readFileSync } from 'node:fs';
import { slipsOf } from '../slips.mjs';

export const base = (number) => readFileSync(new URL(`./${number}.js`, import.meta.url), 'utf8');

export const SLIPS = {
  '01': [
    { step: 'scale', edit: ['x / Math.sqrt(st.Q[0].length)', 'x / Math.sqrt(st.Q.length)'] },
    { step: 'weighted-sum', edit: ['s + p * V[j][c]', 's + p * V[c][j]'] },
    { step: 'softmax', edit: ['const e = row.map((x) => Math.exp(x - m));', 'const e = row.map((x) => Math.exp(x) - m);'] },
  ],
  '02': [
    { step: 'slice', edit: ['row.slice(h * d, h * d + d)', 'row.slice(h * d, h + d)'] },
    { step: 'w-o', edit: ['s + x * W_O[i][j]', 's + x * W_O[j][i]'] },
    { step: 'slice', edit: ['attention(q, ks[h], vs[h], headDimensions)', 'attention(q, ks[h], vs[0], headDimensions)'] },
  ],
  '06': [
    { step: 'kv-head', edit: ['const kvCol = Math.floor(h / ratio) * d;', 'const kvCol = Math.floor(h / ratio);'] },
    { step: 'scale', edit: ['w[j] = s / Math.sqrt(d);', 'w[j] = s / d;'] },
    { step: 'softmax', edit: ['z += (w[j] = Math.exp(w[j] - m));', 'z += (w[j] = Math.exp(w[j]) - m);'] },
  ],
  '08': [
    { step: 'mask', edit: ['j <= p && p - j < w', 'j <= p && p - j <= w'] },
    { step: 'weighted-sum', edit: ['(e / total) * V[j][c]', '(e / total) * V[p][c]'] },
    { step: 'softmax', edit: ['const total = exps.reduce((acc, { e }) => acc + e, 0);', 'const total = exps.length;'] },
  ],
};

/** Every slip as { number, index, step, line, source }. */
export const slips = () => slipsOf(SLIPS, base);
