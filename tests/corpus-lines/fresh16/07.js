// Challenge 07 on a column-major Float64Array: X copied in column by column, read through an at(t, c)
// closure and the rotated numbers written through put(t, c, value) into a second buffer.

export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  if (headDimensions % 2 !== 0) throw new RangeError(`headDimensions = ${headDimensions} is odd`);
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
  if (!(Number.isFinite(base) && base > 0)) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
  if (!(Number.isInteger(offset) && offset >= 0)) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
  const T = X.length;
  const C = numberOfHeads * headDimensions;
  if (X.some((row) => row.length !== C)) {
    throw new RangeError(`X is ${T}×${X[0].length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
  }
  const half = headDimensions / 2;

  const src = new Float64Array(T * C);
  for (let c = 0; c < C; c++) for (let t = 0; t < T; t++) src[c * T + t] = X[t][c];
  const at = (t, c) => src[c * T + t];
  const dst = new Float64Array(T * C);
  const put = (t, c, value) => {
    dst[c * T + t] = value;
  };

  for (let h = 0; h < numberOfHeads; h++) {
    const first = h * headDimensions;
    for (let i = 0; i < half; i++) {
      const freq = Math.pow(base, (-2 * i) / headDimensions);
      const a = first + i;
      const b = first + i + half;
      for (let t = 0; t < T; t++) {
        const theta = (offset + t) * freq;
        const cos = Math.cos(theta);
        const sin = Math.sin(theta);
        put(t, a, at(t, a) * cos - at(t, b) * sin);
        put(t, b, at(t, a) * sin + at(t, b) * cos);
      }
    }
  }
  return Array.from({ length: T }, (_, t) => Array.from({ length: C }, (_, c) => dst[c * T + t]));
}
