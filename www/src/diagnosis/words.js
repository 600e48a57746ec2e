// How the probe diagnosis writes numbers, shapes and names in its findings (plain strings, no DOM).

/** A number as a finding writes it: integers as they are, 4 significant decimals, exponents for the very large or small. */
export const fmt = (x) => (typeof x !== 'number' ? String(x) : Number.isInteger(x) ? String(x) : Math.abs(x) >= 1e4 || Math.abs(x) < 1e-3 ? x.toExponential(3) : String(Number(x.toFixed(4))));

/** The shape of a value in words: `3×4`, `an array of 3`, `undefined`, or its type. */
export const shapeOf = (M) => (Array.isArray(M) && M.length && Array.isArray(M[0]) ? `${M.length}×${M[0].length}` : Array.isArray(M) ? `an array of ${M.length}` : M === undefined ? 'undefined' : typeof M);

/** The sentence's first letter in upper case. */
export const capital = (s) => s[0].toUpperCase() + s.slice(1);

/** `head i`, or `the head` when the probe has one. */
export const headName = (probe, i) => (probe.numberOfHeads > 1 ? `head ${i}` : 'the head');

/** `your weights for head i`, or `your weights` when the probe has one head. */
export const weightsName = (probe, i) => (probe.numberOfHeads > 1 ? `your weights for head ${i}` : 'your weights');
