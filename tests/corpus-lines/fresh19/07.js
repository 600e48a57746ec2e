// Challenge 07: each rotate-half pair (a, b) is turned in polar form. Its radius and phase come from
// Math.hypot and Math.atan2, the angle is added to the phase, and the pair is rebuilt from the new
// phase: a' = r·cos(φ + θ), b' = r·sin(φ + θ).

export function rotaryEmbedding(X, options) {
  const { numberOfHeads, headDimensions } = options;
  const { base = 10000, offset = 0 } = options;
  if (headDimensions % 2 === 1) {
    throw new RangeError(`headDimensions = ${headDimensions} is odd; rotary embedding needs pairs`);
  }
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}`);
  if (!(base > 0) || !Number.isFinite(base)) throw new RangeError(`options.base is ${base}`);
  if (!Number.isInteger(offset) || offset < 0) throw new RangeError(`options.offset is ${offset}`);
  const width = numberOfHeads * headDimensions;
  for (const row of X) {
    if (row.length !== width) {
      throw new RangeError(`X is ${X.length}×${row.length} but must be T×(numberOfHeads · headDimensions) = T×${width}`);
    }
  }

  const half = headDimensions / 2;
  const frequencies = [];
  for (let i = 0; i < half; i++) frequencies.push(Math.pow(base, (-2 * i) / headDimensions));

  const result = [];
  for (let r = 0; r < X.length; r++) {
    const position = offset + r;
    const turned = [...X[r]];
    for (let h = 0; h < numberOfHeads; h++) {
      const first = h * headDimensions;
      for (let i = 0; i < half; i++) {
        const a = X[r][first + i];
        const b = X[r][first + i + half];
        const radius = Math.hypot(a, b);
        const phase = Math.atan2(b, a);
        const theta = position * frequencies[i];
        turned[first + i] = radius * Math.cos(phase + theta);
        turned[first + i + half] = radius * Math.sin(phase + theta);
      }
    }
    result.push(turned);
  }
  return result;
}
