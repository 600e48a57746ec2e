// A right answer with the inverse frequencies computed once (a Float64Array) and each row rotated in a typed copy.
export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  if (headDimensions % 2 !== 0) throw new RangeError(`headDimensions = ${headDimensions} is odd; rotary embedding rotates pairs (x[i], x[i + d/2])`);
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
  if (!(Number.isFinite(base) && base > 0)) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
  if (!(Number.isInteger(offset) && offset >= 0)) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
  const C = numberOfHeads * headDimensions;
  if (X.some((row) => row.length !== C)) throw new RangeError(`X is ${X.length}×${X[0].length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
  const d = headDimensions;
  const half = d / 2;
  const inverse = Float64Array.from({ length: half }, (_, i) => Math.pow(base, -(2 * i) / d));
  return X.map((row, r) => {
    const out = Float64Array.from(row);
    const p = r + offset;
    for (let h = 0; h < numberOfHeads; h++) {
      for (let i = 0; i < half; i++) {
        const theta = p * inverse[i];
        const x1 = row[h * d + i];
        const x2 = row[h * d + i + half];
        out[h * d + i] = x1 * Math.cos(theta) - x2 * Math.sin(theta);
        out[h * d + i + half] = x2 * Math.cos(theta) + x1 * Math.sin(theta);
      }
    }
    return Array.from(out);
  });
}
