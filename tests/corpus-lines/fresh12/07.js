// Style: while loops with manual indices over a flat Float64Array copy, the angles kept in a string-keyed cache `${p}|${i}`.
export function rotaryEmbedding(X, options) {
  const { numberOfHeads, headDimensions } = options;
  const { base = 10000, offset = 0 } = options;
  if (headDimensions % 2 !== 0) throw new RangeError(`headDimensions = ${headDimensions} is odd; RoPE turns pairs`);
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
  if (!(Number.isFinite(base) && base > 0)) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
  if (!(Number.isInteger(offset) && offset >= 0)) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
  const C = numberOfHeads * headDimensions;
  const T = X.length;
  let r = 0;
  while (r < T) {
    if (X[r].length !== C) throw new RangeError(`X is ${T}×${X[0].length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
    r++;
  }

  const angles = {};
  const angle = (p, i) => {
    const key = `${p}|${i}`;
    if (!(key in angles)) angles[key] = p * Math.pow(base, (-2 * i) / headDimensions);
    return angles[key];
  };

  const buf = Float64Array.from(X.flat());
  const half = headDimensions / 2;
  r = 0;
  while (r < T) {
    const p = offset + r;
    let h = 0;
    while (h < numberOfHeads) {
      const start = r * C + h * headDimensions;
      let i = 0;
      while (i < half) {
        const a = buf[start + i];
        const b = buf[start + i + half];
        const th = angle(p, i);
        buf[start + i] = a * Math.cos(th) - b * Math.sin(th);
        buf[start + i + half] = a * Math.sin(th) + b * Math.cos(th);
        i++;
      }
      h++;
    }
    r++;
  }

  const out = [];
  r = 0;
  while (r < T) {
    out.push(Array.from(buf.subarray(r * C, r * C + C)));
    r++;
  }
  return out;
}
