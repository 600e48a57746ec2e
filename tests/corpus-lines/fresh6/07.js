// A right answer built on destructuring: each head's chunk is split into its halves [a, b] by slice, the frequencies and each row's cos/sin tables come from Array.from and map, and the turned halves are put back together by spread.
export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  if (headDimensions % 2 !== 0) throw new RangeError(`headDimensions = ${headDimensions} is odd; rotary embedding rotates pairs (x[i], x[i + d/2])`);
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
  if (!(base > 0 && Number.isFinite(base))) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
  if (!Number.isInteger(offset) || offset < 0) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
  const [H, d] = [numberOfHeads, headDimensions];
  if (X.some(({ length }) => length !== H * d)) throw new RangeError(`X is ${X.length}×${X[0].length} but must be T×(numberOfHeads · headDimensions) = T×${H * d}`);
  const half = d / 2;
  const freqs = Array.from({ length: half }, (_, i) => base ** (-(2 * i) / d));
  return X.map((row, r) => {
    const angles = freqs.map((f) => (offset + r) * f);
    const [cos, sin] = [angles.map((t) => Math.cos(t)), angles.map((t) => Math.sin(t))];
    return Array.from({ length: H }, (_, h) => row.slice(h * d, (h + 1) * d)).flatMap((chunk) => {
      const [a, b] = [chunk.slice(0, half), chunk.slice(half)];
      const first = a.map((x, i) => x * cos[i] - b[i] * sin[i]);
      const second = b.map((y, i) => a[i] * sin[i] + y * cos[i]);
      return [...first, ...second];
    });
  });
}
