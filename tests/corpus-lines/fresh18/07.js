// Rotary position embedding with a visitor: forEachPair() walks every head's rotate-half pairs and
// calls back with the pair's two columns and its index; the callback destructures and turns them.

export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  if (headDimensions % 2 !== 0) {
    throw new RangeError(`headDimensions = ${headDimensions} is odd; rotary embedding rotates pairs (x[i], x[i + d/2])`);
  }
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
  if (!(Number.isFinite(base) && base > 0)) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
  if (!(Number.isInteger(offset) && offset >= 0)) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
  const C = numberOfHeads * headDimensions;
  if (X.some((row) => row.length !== C)) {
    throw new RangeError(`X is ${X.length}×${X[0].length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
  }
  const half = headDimensions / 2;
  const inverse = Array.from({ length: half }, (_, i) => base ** (-(2 * i) / headDimensions));
  return X.map((row, r) => {
    const position = offset + r;
    const out = [...row];
    forEachPair(numberOfHeads, headDimensions, (lo, hi, i) => {
      const theta = position * inverse[i];
      const [cos, sin] = [Math.cos(theta), Math.sin(theta)];
      const [x, y] = [row[lo], row[hi]];
      out[lo] = x * cos - y * sin;
      out[hi] = x * sin + y * cos;
    });
    return out;
  });
}

function forEachPair(heads, width, visit) {
  const half = width / 2;
  for (let h = 0; h < heads; h++) {
    const start = h * width;
    for (let i = 0; i < half; i++) visit(start + i, start + i + half, i);
  }
}
