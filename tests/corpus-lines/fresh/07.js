// A right answer built functionally: each row split into heads and rebuilt by flatMap; a closure gives the angle, the pair rotated by destructuring.
export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  if (headDimensions % 2 !== 0) throw new RangeError(`headDimensions = ${headDimensions} is odd; rotary embedding rotates pairs (x[i], x[i + d/2])`);
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
  if (!(Number.isFinite(base) && base > 0)) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
  if (!(Number.isInteger(offset) && offset >= 0)) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
  const C = numberOfHeads * headDimensions;
  if (X.some((row) => row.length !== C)) throw new RangeError(`X is ${X.length}×${X[0].length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
  const half = headDimensions / 2;
  const angle = (position, i) => position / base ** ((2 * i) / headDimensions);
  const rotate = ([a, b], theta) => [a * Math.cos(theta) - b * Math.sin(theta), a * Math.sin(theta) + b * Math.cos(theta)];
  return X.map((row, r) => {
    const heads = Array.from({ length: numberOfHeads }, (_, h) => row.slice(h * headDimensions, (h + 1) * headDimensions));
    return heads.flatMap((x) => {
      const firsts = [];
      const seconds = [];
      for (let i = 0; i < half; i++) {
        const [u, v] = rotate([x[i], x[i + half]], angle(offset + r, i));
        firsts.push(u);
        seconds.push(v);
      }
      return [...firsts, ...seconds];
    });
  });
}
