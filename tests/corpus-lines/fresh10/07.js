// A right answer inline in one function, column by column: for every output column the learner works out its head, its index inside the head, the pair index i = c mod d/2 and its partner column, then writes the first-half or the second-half formula with an if/else; the option checks an if chain at the top.
export function rotaryEmbedding(X, options) {
  const numberOfHeads = options.numberOfHeads;
  const d = options.headDimensions;
  const base = options.base === undefined ? 10000 : options.base;
  const offset = options.offset === undefined ? 0 : options.offset;
  if (d % 2 === 1) throw new RangeError(`headDimensions = ${d} is odd; rotary embedding rotates pairs (x[i], x[i + d/2])`);
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
  if (!isFinite(base) || base <= 0) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
  if (!Number.isInteger(offset) || offset < 0) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
  const C = numberOfHeads * d;
  for (const row of X) {
    if (row.length !== C) throw new RangeError(`X is ${X.length}×${row.length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
  }
  const half = d / 2;
  const result = [];
  for (let t = 0; t < X.length; t++) {
    const p = t + offset;
    const newRow = [];
    for (let c = 0; c < C; c++) {
      const h = Math.floor(c / d);
      const inHead = c - h * d;
      const i = inHead % half;
      const freq = Math.pow(base, -2 * i / d);
      const theta = p * freq;
      if (inHead < half) {
        const other = X[t][c + half];
        newRow.push(X[t][c] * Math.cos(theta) - other * Math.sin(theta));
      } else {
        const other = X[t][c - half];
        newRow.push(other * Math.sin(theta) + X[t][c] * Math.cos(theta));
      }
    }
    result.push(newRow);
  }
  return result;
}
