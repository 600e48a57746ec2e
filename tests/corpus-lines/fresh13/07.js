// Style: a PairCursor class implementing Symbol.iterator by hand (next() over rows, heads and pairs), each step a plain record.
class PairCursor {
  constructor(rows, heads, width) {
    this.rows = rows;
    this.heads = heads;
    this.half = width / 2;
  }

  [Symbol.iterator]() {
    let r = 0;
    let h = 0;
    let i = 0;
    const { rows, heads, half } = this;
    return {
      next() {
        if (r >= rows) return { done: true, value: undefined };
        const value = { r, h, i };
        i += 1;
        if (i === half) { i = 0; h += 1; }
        if (h === heads) { h = 0; r += 1; }
        return { done: false, value };
      },
    };
  }
}

export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  if (headDimensions % 2 !== 0) throw new RangeError(`headDimensions = ${headDimensions} is odd; RoPE turns pairs`);
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
  if (!(Number.isFinite(base) && base > 0)) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
  if (!(Number.isInteger(offset) && offset >= 0)) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
  const C = numberOfHeads * headDimensions;
  if (X.some((row) => row.length !== C)) {
    throw new RangeError(`X is ${X.length}×${X[0].length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
  }
  const half = headDimensions / 2;
  const out = X.map((row) => [...row]);
  for (const { r, h, i } of new PairCursor(X.length, numberOfHeads, headDimensions)) {
    const pos = r + offset;
    const freq = base ** (-(2 * i) / headDimensions);
    const theta = pos * freq;
    const first = h * headDimensions + i;
    const second = first + half;
    const x = X[r][first];
    const y = X[r][second];
    out[r][first] = x * Math.cos(theta) - y * Math.sin(theta);
    out[r][second] = x * Math.sin(theta) + y * Math.cos(theta);
  }
  return out;
}
