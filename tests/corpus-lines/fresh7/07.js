// A right answer as a generator that yields the rotated rows one at a time (spread into an array at the end), the inverse frequencies memoised per (base, width) in a module-level Map, the pairs walked by for…in over the inverse frequencies' indices.
const FREQUENCIES = new Map();
function inverseFrequencies(base, d) {
  const key = `${base}/${d}`;
  if (!FREQUENCIES.has(key)) FREQUENCIES.set(key, Array.from({ length: d / 2 }, (_, i) => 1 / base ** ((2 * i) / d)));
  return FREQUENCIES.get(key);
}

function* rotatedRows(X, H, d, base, offset) {
  const inv = inverseFrequencies(base, d);
  for (let r = 0; r < X.length; r++) {
    const row = [...X[r]];
    const p = offset + r;
    for (let h = 0; h < H; h++) {
      for (const key in inv) {
        const i = Number(key);
        const theta = p * inv[i];
        const a = X[r][h * d + i];
        const b = X[r][h * d + i + d / 2];
        row[h * d + i] = a * Math.cos(theta) - b * Math.sin(theta);
        row[h * d + i + d / 2] = b * Math.cos(theta) + a * Math.sin(theta);
      }
    }
    yield row;
  }
}

export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  if (headDimensions % 2 !== 0) throw new RangeError(`headDimensions = ${headDimensions} is odd; rotary embedding rotates pairs`);
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
  if (!Number.isFinite(base) || base <= 0) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
  if (!Number.isInteger(offset) || offset < 0) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
  const C = numberOfHeads * headDimensions;
  for (const row of X) if (row.length !== C) throw new RangeError(`X is ${X.length}×${row.length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
  return [...rotatedRows(X, numberOfHeads, headDimensions, base, offset)];
}
