// A right answer in while loops with manual indices: a table of { cos, sin } objects per position and pair built first, then each row copied and its heads rotated pair (i, i + half) by pair.
export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  if (headDimensions % 2 !== 0) throw new RangeError(`headDimensions = ${headDimensions} is odd; rotary embedding rotates pairs (x[i], x[i + d/2])`);
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
  if (!(Number.isFinite(base) && base > 0)) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
  if (!(Number.isInteger(offset) && offset >= 0)) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
  const C = numberOfHeads * headDimensions;
  if (X.some((row) => row.length !== C)) throw new RangeError(`X is ${X.length}×${X[0].length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
  const half = headDimensions / 2;
  const table = [];
  let t = 0;
  while (t < X.length) {
    const angles = [];
    let i = 0;
    while (i < half) {
      const theta = (offset + t) / Math.pow(base, (2 * i) / headDimensions);
      angles.push({ cos: Math.cos(theta), sin: Math.sin(theta) });
      i++;
    }
    table.push(angles);
    t++;
  }
  const out = [];
  t = 0;
  while (t < X.length) {
    const row = X[t].slice();
    let h = 0;
    while (h < numberOfHeads) {
      const start = h * headDimensions;
      let i = 0;
      while (i < half) {
        const a = X[t][start + i];
        const b = X[t][start + i + half];
        const { cos, sin } = table[t][i];
        row[start + i] = a * cos - b * sin;
        row[start + i + half] = a * sin + b * cos;
        i++;
      }
      h++;
    }
    out.push(row);
    t++;
  }
  return out;
}
