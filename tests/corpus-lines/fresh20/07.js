// Challenge 07 with a plan made once as a struct of arrays: for every rotate-half pair of every head,
// firstCol[n], secondCol[n] and invFreq[n] in three parallel arrays; each row is then copied and
// turned by walking n over the plan, the angle its position times invFreq[n].

function check(X, numberOfHeads, headDimensions, base, offset) {
  if (headDimensions % 2 !== 0) {
    throw new RangeError(`headDimensions = ${headDimensions} is odd; rotary embedding rotates pairs (x[i], x[i + d/2])`);
  }
  if (typeof base !== 'number') throw new TypeError(`options.base is a ${typeof base}; expected a finite number > 0`);
  if (!(Number.isFinite(base) && base > 0)) throw new RangeError(`options.base is ${base}; expected a finite number > 0`);
  if (!(Number.isInteger(offset) && offset >= 0)) throw new RangeError(`options.offset is ${offset}; expected an integer ≥ 0`);
  const C = numberOfHeads * headDimensions;
  for (const row of X) {
    if (row.length !== C) {
      throw new RangeError(`X is ${X.length}×${row.length} but must be T×(numberOfHeads · headDimensions) = T×${C}`);
    }
  }
}

function makePlan(numberOfHeads, headDimensions, base) {
  const half = headDimensions / 2;
  const firstCol = [];
  const secondCol = [];
  const invFreq = [];
  for (let h = 0; h < numberOfHeads; h++) {
    for (let i = 0; i < half; i++) {
      firstCol.push(h * headDimensions + i);
      secondCol.push(h * headDimensions + i + half);
      invFreq.push(base ** (-2 * i / headDimensions));
    }
  }
  return { firstCol, secondCol, invFreq, size: firstCol.length };
}

export function rotaryEmbedding(X, { numberOfHeads, headDimensions, base = 10000, offset = 0 }) {
  check(X, numberOfHeads, headDimensions, base, offset);
  const plan = makePlan(numberOfHeads, headDimensions, base);
  return X.map((row, r) => {
    const out = row.slice();
    const position = offset + r;
    for (let n = 0; n < plan.size; n++) {
      const angle = position * plan.invFreq[n];
      const cos = Math.cos(angle);
      const sin = Math.sin(angle);
      const a = row[plan.firstCol[n]];
      const b = row[plan.secondCol[n]];
      out[plan.firstCol[n]] = a * cos - b * sin;
      out[plan.secondCol[n]] = a * sin + b * cos;
    }
    return out;
  });
}
