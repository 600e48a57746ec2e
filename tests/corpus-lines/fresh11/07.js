// A right answer by recursion and no loops: turnRows(r) rotates row r and recurses on r + 1, turnHeads(row, position, h) rotates head h and recurses on h + 1, turnPairs(row, start, position, i) turns pair i of a copy and recurses on i + 1; inside, every quantity is its own small named const.
export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  if (headDimensions % 2 !== 0) throw new RangeError(`headDimensions = ${headDimensions} is odd; rotary embedding rotates pairs (x[i], x[i + d/2])`);
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
  if (!(Number.isFinite(base) && base > 0)) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
  if (!(Number.isInteger(offset) && offset >= 0)) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
  const C = numberOfHeads * headDimensions;
  if (X.some((row) => row.length !== C)) throw new RangeError(`X is ${X.length}×${X[0].length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
  const half = headDimensions / 2;
  const turnPairs = (row, start, position, i) => {
    if (i === half) return row;
    const inverseFrequency = base ** ((-2 * i) / headDimensions);
    const angle = position * inverseFrequency;
    const first = start + i;
    const second = first + half;
    const [a, b] = [row[first], row[second]];
    const turned = row.slice();
    turned[first] = a * Math.cos(angle) - b * Math.sin(angle);
    turned[second] = a * Math.sin(angle) + b * Math.cos(angle);
    return turnPairs(turned, start, position, i + 1);
  };
  const turnHeads = (row, position, h) => (h === numberOfHeads ? row : turnHeads(turnPairs(row, h * headDimensions, position, 0), position, h + 1));
  const turnRows = (r) => (r === X.length ? [] : [turnHeads(X[r], offset + r, 0), ...turnRows(r + 1)]);
  return turnRows(0);
}
