// A right answer with closures returning closures: a rotor per head width and base returns one per position, which returns the rotation of one head's columns; the frequencies by Array.from, each pair by destructuring.
const rotor = (d, base) => {
  const half = d / 2;
  const freqs = Array.from({ length: half }, (_, i) => base ** (-i / half));
  return (position) => {
    const angles = freqs.map((f) => position * f);
    const cs = angles.map(Math.cos);
    const sn = angles.map(Math.sin);
    return (x) => {
      const out = x.slice();
      for (const [i, c] of cs.entries()) {
        const [a, b] = [x[i], x[i + half]];
        out[i] = a * c - b * sn[i];
        out[i + half] = a * sn[i] + b * c;
      }
      return out;
    };
  };
};

export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  if (headDimensions % 2 !== 0) throw new RangeError(`headDimensions = ${headDimensions} is odd; rotary embedding rotates pairs (x[i], x[i + d/2])`);
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
  if (!(Number.isFinite(base) && base > 0)) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
  if (!(Number.isInteger(offset) && offset >= 0)) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
  const C = numberOfHeads * headDimensions;
  if (X.some((row) => row.length !== C)) throw new RangeError(`X is ${X.length}×${X[0].length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
  const atPosition = rotor(headDimensions, base);
  return X.map((row, r) => {
    const turn = atPosition(offset + r);
    return Array.from({ length: numberOfHeads }, (_, h) => turn(row.slice(h * headDimensions, (h + 1) * headDimensions))).flat();
  });
}
