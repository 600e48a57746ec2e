// Challenge 07 without mutation, through Array.prototype.with and .at: the rotate-half pairs of
// every head listed once as [first, second, frequency] triples, and each row turned by a reduce over
// them whose every step returns turned.with(first, …).with(second, …), a new row.

export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  if (headDimensions % 2 !== 0) throw new RangeError(`headDimensions = ${headDimensions} is odd`);
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}`);
  if (!(base > 0)) throw new RangeError(`options.base is ${base}`);
  if (!Number.isInteger(offset) || offset < 0) throw new RangeError(`options.offset is ${offset}`);
  const C = numberOfHeads * headDimensions;
  if (X.some((row) => row.length !== C)) {
    throw new RangeError(`X is ${X.length}×${X[0].length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
  }
  const half = headDimensions / 2;
  const pairs = Array.from({ length: numberOfHeads * half }, (_, n) => {
    const head = Math.floor(n / half);
    const i = n % half;
    const first = head * headDimensions + i;
    const second = first + half;
    const frequency = base ** ((-2 * i) / headDimensions);
    return [first, second, frequency];
  });
  return X.map((row, r) => {
    const position = offset + r;
    return pairs.reduce((turned, [first, second, frequency]) => {
      const angle = position * frequency;
      const a = row.at(first);
      const b = row.at(second);
      const turnedFirst = a * Math.cos(angle) - b * Math.sin(angle);
      const turnedSecond = a * Math.sin(angle) + b * Math.cos(angle);
      return turned.with(first, turnedFirst).with(second, turnedSecond);
    }, row);
  });
}
