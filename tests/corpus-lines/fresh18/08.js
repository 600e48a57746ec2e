// Sliding-window attention with a cell visitor: forEachCell(rows, cols, visit) drives every loop,
// the band test skips the cells outside the window, and −Infinity stays where nothing was written.

export function slidingWindowAttention(Q, K, V, { window } = {}) {
  if (window !== undefined) {
    if (typeof window !== 'number') throw new TypeError(`options.window is a ${typeof window}; expected a positive integer`);
    if (!Number.isInteger(window) || window < 1) throw new RangeError(`options.window is ${window}; expected a positive integer`);
  }
  const d = Q[0].length;
  if (K[0].length !== d) throw new RangeError(`K is ${K.length}×${K[0].length} but must be T×${d}, as wide as Q`);
  if (V[0].length !== d) throw new RangeError(`V is ${V.length}×${V[0].length} but must be T×${d}, as wide as Q`);
  const T = Q.length;
  const w = window ?? T;
  const inBand = (i, j) => j <= i && j > i - w;

  const scores = Array.from({ length: T }, () => new Array(T).fill(-Infinity));
  forEachCell(T, T, (i, j) => {
    if (!inBand(i, j)) return;
    let s = 0;
    for (let c = 0; c < d; c++) s += Q[i][c] * K[j][c];
    scores[i][j] = s / Math.sqrt(d);
  });

  const tops = scores.map((row) => Math.max(...row));
  const exps = scores.map((row, i) => row.map((x) => Math.exp(x - tops[i])));
  const totals = exps.map((row) => row.reduce((a, b) => a + b, 0));

  const out = Array.from({ length: T }, () => new Array(d).fill(0));
  forEachCell(T, T, (i, j) => {
    const p = exps[i][j] / totals[i];
    forEachCell(1, d, (_, c) => {
      out[i][c] += p * V[j][c];
    });
  });
  return out;
}

function forEachCell(rows, cols, visit) {
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) visit(i, j);
  }
}
