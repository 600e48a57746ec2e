// A right answer over flat Float64Array buffers: the input copied into one buffer of T·C with a row stride of C, the inverse frequencies and the angles flat Float64Arrays made by Float64Array.from with index arithmetic, each pair rotated in place, the rows cut out of the buffer at the end.
export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  if (headDimensions % 2 !== 0) throw new RangeError(`headDimensions = ${headDimensions} is odd; rotary embedding rotates pairs (x[i], x[i + d/2])`);
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
  if (!(Number.isFinite(base) && base > 0)) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
  if (!(Number.isInteger(offset) && offset >= 0)) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
  const C = numberOfHeads * headDimensions;
  if (X.some((row) => row.length !== C)) throw new RangeError(`X is ${X.length}×${X[0].length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
  const T = X.length;
  const half = headDimensions / 2;
  const buf = Float64Array.from(X.flat());
  const inv = Float64Array.from({ length: half }, (_, i) => 1 / base ** ((2 * i) / headDimensions));
  const angle = Float64Array.from({ length: T * half }, (_, k) => (offset + Math.floor(k / half)) * inv[k % half]);
  for (let t = 0; t < T; t++) {
    for (let h = 0; h < numberOfHeads; h++) {
      const at = t * C + h * headDimensions;
      for (let i = 0; i < half; i++) {
        const theta = angle[t * half + i];
        const a = buf[at + i];
        const b = buf[at + i + half];
        buf[at + i] = a * Math.cos(theta) - b * Math.sin(theta);
        buf[at + i + half] = a * Math.sin(theta) + b * Math.cos(theta);
      }
    }
  }
  return Array.from({ length: T }, (_, t) => Array.from(buf.subarray(t * C, (t + 1) * C)));
}
