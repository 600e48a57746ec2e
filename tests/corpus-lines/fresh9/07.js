// A right answer that builds, for every position and pair, the 2×2 rotation matrix [[cos, −sin], [sin, cos]] and applies it with a matVec2 helper; the inverse frequencies in a table made up front; the copy of X walked pair by pair (outer) and row by row (inner); the option checks a table of [failed, Error, message] rows.
const matVec2 = ([[a, b], [c, d]], [x, y]) => [a * x + b * y, c * x + d * y];
const rotationMatrix = (theta) => [[Math.cos(theta), -Math.sin(theta)], [Math.sin(theta), Math.cos(theta)]];

export function rotaryEmbedding(X, options) {
  const { numberOfHeads, headDimensions, base = 10000, offset = 0 } = options;
  const width = numberOfHeads * headDimensions;
  const checks = [
    [headDimensions % 2 !== 0, RangeError, `headDimensions = ${headDimensions} is odd; each head needs an even width`],
    [X.some((row) => row.length !== width), RangeError, `X is ${X.length}×${X[0].length} but must be T×(numberOfHeads · headDimensions) = T×${width}`],
    [typeof base !== 'number', TypeError, `options.base is a ${typeof base}; expected a finite number > 0`],
    [!(base > 0 && Number.isFinite(base)), RangeError, `options.base is ${base}; expected a finite number > 0`],
    [!(Number.isInteger(offset) && offset >= 0), RangeError, `options.offset is ${offset}; expected an integer ≥ 0`],
  ];
  for (const [failed, Kind, message] of checks) if (failed) throw new Kind(message);

  const half = headDimensions / 2;
  const invFreq = Array.from({ length: half }, (_, i) => base ** ((-2 * i) / headDimensions));
  const out = X.map((row) => [...row]);
  for (let h = 0; h < numberOfHeads; h++) {
    for (let i = 0; i < half; i++) {
      const left = h * headDimensions + i;
      const right = left + half;
      for (let r = 0; r < X.length; r++) {
        const pos = offset + r;
        const R = rotationMatrix(pos * invFreq[i]);
        [out[r][left], out[r][right]] = matVec2(R, [X[r][left], X[r][right]]);
      }
    }
  }
  return out;
}
