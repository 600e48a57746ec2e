// Reading a scale from attention weights: log(w_ij / w_ik) = s·(S_ij − S_ik) fits one s when the
// weights are a softmax of the scores S times s; the scale is then named in the course's terms.
import { range } from '../matrix.js';
import { fmt } from './words.js';

/**
 * Fits log(w_ij / w_ik) = s·(S_ij − S_ik) over the allowed entries of every row: the scale s the
 * learner's weights imply for scores S, or null when no single s explains them.
 */
export function fitScale(W, S, allowed) {
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
export function nameScale(s, d, C, T, dim = 'headDimensions', dv = d) {
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

