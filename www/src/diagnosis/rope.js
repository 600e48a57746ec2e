// The probe checks of rotary position embedding (rotaryEmbedding): no attention, a rotation of each
// pair of columns. The output is linear in X, so X = e_c on every row (one call per column c) reads the learner's
// whole map at every position: row r of call c is what column c becomes at position offset + r.
// Pair i of a head is columns i and i + d/2 (rotate-half); the angle is (offset + r)·base^(−2i/d).
// base = 100 keeps every probe angle below π, so an angle read back with atan2 is the angle itself.
import { closeMatrix as close, finiteMatrix, isMatrix, range } from '../matrix.js';
import { callsOf, outputsOf } from './probes.js';
import { thrown } from './checks.js';
import { fmt, shapeOf } from './words.js';

const ropeOptionsText = (o) => Object.entries(o).map(([k, v]) => `${k}: ${v}`).join(', ');

/** The partner of column c in rotate-half: the other column of its pair, inside its own head. */
const halfPartner = (c, d) => { const start = c - (c % d); const i = c % d; return start + (i < d / 2 ? i + d / 2 : i - d / 2); };

/** Reads the learner's map from a basis probe: map[r][c] = the row column c becomes at row r, or null. */
function ropeMap(probe, outputs) {
  const { T, C } = probe;
  if (outputs.length !== C || !outputs.every((O) => isMatrix(O, T, C))) return null;
  return range(T).map((r) => range(C).map((c) => outputs[c][r]));
}

/** The angle the learner turns pair (a, b) by at row r, read from the images of e_a and e_b, or null when it is not a rotation. */
function readRotation(map, r, a, b) {
  const [ca, sa] = [map[r][a][a], map[r][a][b]]; // e_a → cos θ at a, sin θ at b
  const [sb, cb] = [-map[r][b][a], map[r][b][b]]; // e_b → −sin θ at a, cos θ at b
  if (![ca, sa, sb, cb].every(Number.isFinite)) return null;
  const rotation = Math.abs(ca - cb) < 1e-9 && Math.abs(sa - sb) < 1e-9 && Math.abs(ca * ca + sa * sa - 1) < 1e-9;
  return rotation ? Math.atan2(sa, ca) : null;
}
const sameAngle = (x, y) => Math.abs(Math.cos(x) - Math.cos(y)) < 1e-8 && Math.abs(Math.sin(x) - Math.sin(y)) < 1e-8;

/** Non-finite entries: an index outside the head (undefined → NaN) when pairing columns. */
function readNaN(g) {
  const { ctx, probe, options, T, C, h, d, base, offset, positions, omega, at, base0, map, got } = g;
  const nonFinite = range(T).flatMap((r) => range(C).filter((c) => !at(r, c).every(Number.isFinite)).map((c) => [r, c]));
  if (nonFinite.length) {
    const [r, c] = nonFinite[0];
    return { ...base0, step: 'pairs', title: `NaN in your output: column ${c} at position ${positions[r]} turns with a column that does not exist`, detail: `Column ${c} belongs to head ${Math.floor(c / d)}; its partner is column ${halfPartner(c, d)} (pair i of a head is columns i and i + d/2, here d = headDimensions = ${d}). An index past the end of the row reads undefined, and undefined turns into NaN.` };
  }
  return undefined;
}

/** Which columns turn together: the pairs of each head (rotate-half), the heads that turn. */
function readPairs(g) {
  const { ctx, probe, options, T, C, h, d, base, offset, positions, omega, at, base0, map, got } = g;
  // 1. which columns turn together: read at a row where every angle is far from 0 and π
  // the learner's own positions may differ from ours: a column's partners over every row
  const r1 = range(T).find((r) => range(C).some((c) => range(C).some((k) => k !== c && Math.abs(at(r, c)[k]) > 1e-9))) ?? -1;
  if (r1 >= 0) {
    const partners = range(C).map((c) => range(C).filter((k) => k !== c && range(T).some((r) => Math.abs(at(r, c)[k]) > 1e-9)));
    const want = range(C).map((c) => [halfPartner(c, d)]);
    if (partners.some((ks, c) => ks.length !== 1 || ks[0] !== want[c][0])) {
      const still = range(h).filter((head) => range(d).every((i) => partners[head * d + i].length === 0 && range(T).every((r) => Math.abs(at(r, head * d + i)[head * d + i] - 1) < 1e-12)));
      if (still.length && still.length < h) {
        return { ...base0, step: 'pairs', title: `Head${still.length > 1 ? 's' : ''} ${still.join(', ')} ${still.length > 1 ? 'are' : 'is'} not rotated: only ${h - still.length} of numberOfHeads = ${h} heads turn`, detail: `Every head's ${d} columns are rotated on their own, with the same angles: loop over the ${h} heads, head k starting at column k·headDimensions = k·${d}.` };
      }
      const interleaved = partners.every((ks, c) => ks.length === 1 && ks[0] === (c ^ 1));
      const acrossHeads = h > 1 && partners.every((ks, c) => ks.length === 1 && ks[0] === (c + C / 2) % C);
      const c0 = partners.findIndex((ks, c) => ks.length !== 1 || ks[0] !== want[c][0]);
      if (interleaved) {
        return { ...base0, step: 'pairs', title: `Pair 0 is columns 0 and 1; in rotate-half it is columns 0 and d/2 = ${d / 2}`, detail: `Your pairs are neighbours (2i, 2i + 1), the layout of the RoFormer paper. This challenge (like Llama and GPT-NeoX) uses rotate-half: inside a head of width d = ${d}, pair i is column i with column i + d/2 (${range(d / 2).map((i) => `${i} and ${i + d / 2}`).join(', ')}).` };
      }
      if (acrossHeads) {
        return { ...base0, step: 'pairs', title: `Pair 0 is columns 0 and ${C / 2} (half of C = ${C}); each head pairs its own columns: 0 and ${d / 2}`, detail: `Your pairs span the whole row, across heads. Each head of headDimensions = ${d} columns is rotated on its own: in head k, pair i is columns k·${d} + i and k·${d} + i + ${d / 2}.` };
      }
      const ks = partners[c0];
      return { ...base0, step: 'pairs', title: ks.length ? `Column ${c0} turns with column${ks.length > 1 ? 's' : ''} ${ks.join(', ')}; in rotate-half it pairs with column ${want[c0][0]}` : `Column ${c0} does not turn with any other column; in rotate-half it pairs with column ${want[c0][0]}`, detail: `An input that is 1 in column ${c0} comes out in column${[c0, ...ks].length > 1 ? 's' : ''} ${[c0, ...ks].join(', ')}. Pair i of a head of width d = ${d} is columns i and i + d/2, and both turn together.` };
    }
  }
  return undefined;
}

/** Each pair: a rotation, and by which angle (kept in g.angles). */
function readRotations(g) {
  const { ctx, probe, options, T, C, h, d, base, offset, positions, omega, at, base0, map, got } = g;
  // 2. each pair: a rotation, and by which angle
  const angles = [];
  for (let r = 0; r < T; r++) {
    for (let k = 0; k < h; k++) {
      for (let i = 0; i < d / 2; i++) {
        const [a, b] = [k * d + i, k * d + i + d / 2];
        const theta = positions[r] * omega(i);
        const phi = readRotation(map, r, a, b);
        if (phi === null) {
          const [ca, sa] = [at(r, a)[a], at(r, a)[b]];
          const inPlace = Math.abs(ca - Math.cos(theta)) < 1e-9 && Math.abs(sa - Math.cos(theta) * Math.sin(theta)) < 1e-9;
          const swapped = Math.abs(at(r, b)[b] + Math.cos(theta)) < 1e-9 || Math.abs(at(r, a)[a] + Math.cos(theta)) < 1e-9;
          // e_a → (a'·, b'·) and e_b → (a'·, b'·): one line turns by +θ, the other by −θ
          const is = (x, y) => Math.abs(x - y) < 1e-9;
          const c = Math.cos(theta);
          const s = Math.sin(theta);
          const rightA = is(at(r, a)[a], c) && is(at(r, b)[a], -s);
          const rightB = is(at(r, a)[b], s) && is(at(r, b)[b], c);
          if (Math.abs(s) > 1e-6 && (rightA !== rightB) && is(at(r, a)[a], c) && is(at(r, b)[b], c)) {
            const line = rightA ? `b' = b·cos θ − a·sin θ` : `a' = a·cos θ + b·sin θ`;
            return {
              ...base0, step: 'rotation',
              title: `Pair ${i} (columns ${a} and ${b}) is not turned by a rotation: ${rightA ? `column ${b}` : `column ${a}`} has the wrong sign of sin θ`,
              detail: `At position ${positions[r]} (θ = ${fmt(theta)}), column ${rightA ? a : b} comes out right but yours computes ${line}: one line turns by +θ, the other by −θ, which is no rotation (the lengths change). a' = a·cos θ − b·sin θ, b' = a·sin θ + b·cos θ.`,
            };
          }
          return {
            ...base0, step: 'rotation',
            title: `Pair ${i} (columns ${a} and ${b}) is not turned by a rotation at position ${positions[r]}`,
            detail: inPlace
              ? `Column ${a} comes out right (a·cos θ − b·sin θ), but column ${b} is computed from the new value of column ${a} instead of the old one: ${fmt(sa)} = cos θ · sin θ where sin θ = ${fmt(Math.sin(theta))} was expected. Read a and b first, then write a' = a·cos θ − b·sin θ and b' = a·sin θ + b·cos θ.`
              : `An input of 1 in column ${a} comes out as (${fmt(ca)}, ${fmt(sa)}) in columns (${a}, ${b}); a rotation by θ = ${fmt(theta)} gives (cos θ, sin θ) = (${fmt(Math.cos(theta))}, ${fmt(Math.sin(theta))}). a' = a·cos θ − b·sin θ, b' = a·sin θ + b·cos θ${swapped ? ': check the signs and which of a, b each line uses' : ''}.`,
          };
        }
        angles.push({ r, k, i, a, b, theta, phi, p: positions[r] });
      }
    }
  }
  g.angles = angles;
  return undefined;
}

/** The angles against p · base^(−2i/d): cos and sin swapped, the wrong way, another frequency or position. */
function readAngles(g) {
  const { ctx, probe, options, T, C, h, d, base, offset, positions, omega, at, base0, map, got } = g;
  const { angles, fits, first, said } = g;
  if (fits((x) => Math.PI / 2 - x.theta)) {
    return { ...base0, step: 'rotation', title: 'cos and sin are swapped: every pair turns by 90° − θ', detail: `Your rotation is (a·sin θ − b·cos θ, a·cos θ + b·sin θ); ${said}. At position 0 nothing may turn: a' = a·cos θ − b·sin θ, b' = a·sin θ + b·cos θ.` };
  }
  if (fits((x) => -x.theta)) {
    return { ...base0, step: 'rotation', title: 'Every pair turns the wrong way (by −θ)', detail: `Your rotation is (a·cos θ + b·sin θ, −a·sin θ + b·cos θ); ${said}. Turn by +θ: a' = a·cos θ − b·sin θ, b' = a·sin θ + b·cos θ.` };
  }
  // on one head C = d: an exponent over C is right there and wrong with two heads (where −2i/C = −i/d)
  const overC = [(x) => x.p * base ** ((-2 * x.i) / (h * d)), `base^(−2i/C), with C = numberOfHeads · headDimensions = ${h * d}: on one head (C = d) your angles are right, here they are not. The exponent divides by the width of a head, headDimensions = ${d}, not of the whole row`];
  const frequencies = [
    ...(h > 1 && options.oneHead && ctx.facts[`rope:${options.oneHead}`] ? [overC] : []),
    [(x) => x.p * base ** (-x.i / d), 'base^(−i/d): the exponent lacks its factor 2, it must be −2i/d'],
    [(x) => x.p * base ** ((2 * x.i) / d), 'base^(+2i/d): the exponent is negative, so later pairs turn more slowly'],
    [(x) => x.p * base ** ((-2 * (x.i + 1)) / d), 'base^(−2(i + 1)/d): pair 0 turns by one radian per position (i starts at 0)'],
    overC,
    [(x) => x.p * base ** ((-2 * (x.k * d / 2 + x.i)) / d), 'the pair index counted across heads: it restarts at 0 in every head, so every head turns by the same angles'],
    [(x) => x.p * base ** ((-2 * (x.k * d / 2 + x.i)) / (h * d)), 'the pair index and width of the whole row: every head turns by the same angles, with i counted inside the head and d = headDimensions'],
    [(x) => x.p / base ** (x.i / d), 'base^(−i/d): the exponent lacks its factor 2, it must be −2i/d'],
    [(x) => x.p * (2 * x.i / d === 0 ? 1 : 1 / (base * (2 * x.i) / d)), '1 / (base · 2i/d): base is raised to the power −2i/d'],
  ];
  for (const [f, why] of frequencies) {
    if (fits(f)) return { ...base0, step: 'frequency', title: `Pair ${first.i}${h > 1 ? ` of head ${first.k}` : ''} turns by ${fmt(first.phi)} rad at position ${first.p}; expected p · base^(−2i/d) = ${fmt(first.theta)}`, detail: `Your angles fit ${why}. Pair i turns by p · base^(−2i/d) (here base = ${base}, d = headDimensions = ${d}): pair 0 by p radians, pair ${d / 2 - 1} the slowest.` };
  }
  const positionsTried = [
    [(x) => (x.p - offset) * omega(x.i), `row r at position r: the offset (${offset}) is ignored`],
    [(x) => (x.p + 1) * omega(x.i), 'positions starting at 1: row r is at position offset + r, and row 0 of offset 0 does not turn'],
    [(x) => offset * omega(x.i), `every row at position offset = ${offset}: add the row index r`],
    [(x) => (offset - (x.p - offset)) * omega(x.i), 'position offset − r: rows count up from the offset'],
    [(x) => offset + (x.p - offset) * omega(x.i), `θ = offset + r · base^(−2i/d): the offset is added to the angle instead of to the position, θ = (offset + r) · base^(−2i/d)`],
  ];
  for (const [f, why] of positionsTried) {
    if (offset === 0 && /offset/.test(why) && !/starting at 1/.test(why)) continue; // offset 0 cannot tell these apart
    if (!fits(f)) continue;
    const onAngle = /added to the angle/.test(why);
    return { ...base0, step: 'position', title: onAngle ? `Row ${first.r}: pair ${first.i} turns by ${fmt(first.phi)} rad = offset + r · base^(−2i/d); expected (offset + r) · base^(−2i/d) = ${fmt(first.theta)}` : `Row ${first.r} turns as if at position ${fmt(first.phi / omega(first.i))}; expected position offset + r = ${first.p}`, detail: `Your angles fit ${why}. Row r of X is the token at position p = offset + r (options.offset = ${offset}).` };
  }
  return undefined;
}

/** Positions read from the slowest pair, then every pair checked against them; else the rotation or the angles are told. */
function readPositions(g) {
  const { ctx, probe, options, T, C, h, d, base, offset, positions, omega, at, base0, map, got } = g;
  const { angles, fits, first, said } = g;
  // positions read from the slowest pair (its angle stays below π), then every pair checked against them
  const slow = d / 2 - 1;
  if (slow > 0) {
    const readPosition = (r, k) => angles.find((x) => x.r === r && x.k === k && x.i === slow).phi / omega(slow);
    const P = range(T).map((r) => range(h).map((k) => readPosition(r, k)));
    const consistent = angles.every((x) => sameAngle(x.phi, P[x.r][x.k] * omega(x.i)));
    const sameHeads = P.every((row) => row.every((x) => Math.abs(x - row[0]) < 1e-6));
    if (consistent && sameHeads && P.some((row, r) => Math.abs(row[0] - positions[r]) > 1e-6)) {
      const used = P.map((row) => row[0]);
      const shift = used[0] - positions[0];
      const step1 = used.every((x, r) => Math.abs(x - used[0] - r) < 1e-6);
      const r = used.findIndex((x, k) => Math.abs(x - positions[k]) > 1e-6);
      // every angle scaled by one factor: a scaled position and a scaled frequency look alike; both are said
      const ratios = used.map((x, k) => (positions[k] === 0 ? null : x / positions[k])).filter((x) => x !== null);
      const factor = ratios.length && used.every((x, k) => positions[k] !== 0 || Math.abs(x) < 1e-6) && ratios.every((x) => Math.abs(x - ratios[0]) < 1e-6) ? ratios[0] : null;
      if (factor !== null) {
        return { ...base0, step: 'frequency', title: `Every angle is ${fmt(factor)} times p · base^(−2i/d)${Math.abs(factor - Math.PI / 180) < 1e-9 ? ' (π/180: degrees instead of radians)' : ''}`, detail: `Each pair turns by ${fmt(factor)} · p · base^(−2i/d). The factor sits either in the angle of each pair or in the position (the two cannot be told apart from the output): pair i turns by p · base^(−2i/d) radians, with p = offset + r, and Math.cos and Math.sin take radians.` };
      }
      return { ...base0, step: 'position', title: `Row ${r} turns as if at position ${fmt(used[r])}; expected position offset + r = ${positions[r]}`, detail: `Every pair turns by (position) · base^(−2i/d) with your positions ${used.map(fmt).join(', ')} for rows ${range(T).join(', ')}${step1 ? (offset !== 0 && Math.abs(shift - offset) < 1e-6 ? ` (2·offset + r: the offset is added twice)` : ` (offset + r + ${fmt(shift)})`) : ''}. Row r of X is the token at position p = offset + r (options.offset = ${offset}).` };
    }
  }
  // at position 0 nothing turns, whatever the frequencies: a turn there is the rotation itself
  const atZero = angles.find((x) => x.p === 0 && !sameAngle(x.phi, 0));
  if (atZero) {
    return { ...base0, step: 'rotation', title: `At position 0 pair ${atZero.i} turns by ${fmt(atZero.phi)} rad; at position 0 nothing turns`, detail: `θ = 0 at position 0, and a rotation by 0 leaves (a, b) as it is: a' = a·cos θ − b·sin θ, b' = a·sin θ + b·cos θ. Check which of cos and sin each line uses, and their signs.` };
  }
  // the angle of each pair over the rows: p·ω with the right ω but other positions, or the reverse
  const ratio = angles.filter((x) => x.i === 0 && x.p > 0);
  return { ...base0, step: 'frequency', title: `The angles are not p · base^(−2i/d): ${said}`, detail: `Each pair turns by a rotation, but by other angles. Either the angle of pair i (base^(−2i/d) per position) or the position of row r (offset + r) is off; pair 0 turns by exactly p radians, so its angle names the position your code used${ratio.length ? `: row ${ratio[0].r} turns pair 0 by ${fmt(ratio[0].phi)} (position ${ratio[0].p} expected)` : ''}.` };

}

const READERS = [readNaN, readPairs, readRotations];

/** One basis probe (X = e_c, one call per column): the learner's map at every position, read pair by pair. `oneHead`: a probe with one head, whose right answer makes an exponent over C the likely mistake. */
export function checkRope(probeId, options = {}) {
  return (ctx) => {
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    if (got.error) return got.missing ? null : thrown(ctx, probe, got.error);
    const { T, C, numberOfHeads: h, headDimensions: d } = probe;
    const { base = 10000, offset = 0 } = probe.options;
    const expected = callsOf(probe).map((call) => ctx.lab.rotaryEmbedding(call.X, probe.options));
    if (got.outputs.every((O, k) => close(O, expected[k], 1e-9))) { ctx.facts[`rope:${probeId}`] = true; return null; }
    const map = ropeMap(probe, got.outputs);
    const bad = got.outputs.findIndex((O, k) => !close(O, expected[k], 1e-9));
    const base0 = { probe, column: bad, expected: { label: `output for X = 1 in column ${bad}`, matrix: expected[bad] }, actual: { label: 'your output', matrix: got.outputs[bad] } };
    const longer = got.outputs.find((O) => isMatrix(O, T, O?.[0]?.length) && O[0].length > C);
    if (!map && longer) {
      return { ...base0, actual: { label: 'your output', matrix: longer }, step: 'pairs', title: `Your rows come out ${longer[0].length} wide, not C = ${C}: a pair's second column lies past the end of the row`, detail: `Writing out[ib] with ib ≥ ${C} makes the row longer. Each head is rotated on its own: in head k, pair i is columns k·d + i and k·d + i + d/2, with d = headDimensions = ${d} (not half of the whole row).` };
    }
    if (!map) {
      const O = got.outputs[bad];
      return { ...base0, step: null, actual: isMatrix(O, O?.length, O?.[0]?.length) ? base0.actual : null, title: `Your result is ${shapeOf(O)}; expected ${T}×${C}, the shape of X`, detail: 'Each row of X is turned on its own: the result has as many rows and columns as X.' };
    }
    const positions = range(T).map((r) => offset + r);
    const omega = (i) => base ** ((-2 * i) / d);
    const at = (r, c) => map[r][c];
    const g = { ctx, probe, options, T, C, h, d, base, offset, positions, omega, at, base0, map, got };
    for (const read of READERS) {
      const found = read(g);
      if (found !== undefined) return found;
    }
    const { angles } = g;
    if (angles.every((x) => sameAngle(x.phi, x.theta))) return null; // right on this probe within the reading's precision
    const fits = (f) => angles.every((x) => sameAngle(x.phi, f(x)));
    const first = angles.find((x) => !sameAngle(x.phi, x.theta));
    const said = `pair ${first.i}${h > 1 ? ` of head ${first.k}` : ''} at position ${first.p} turns by ${fmt(first.phi)} rad; expected ${first.p} · ${base}^(−2·${first.i}/${d}) = ${fmt(first.theta)}`;
    Object.assign(g, { fits, first, said });
    return readAngles(g) ?? readPositions(g);
  };
}

/** Options left out: base defaults to 10000 and offset to 0 (one probe leaves out each). `after`: the basis probes that must be right first. */
export function checkRopeDefault(probeId, step, what, { after = [] } = {}) {
  return (ctx) => {
    const probe = ctx.probe(probeId);
    const got = outputsOf(ctx, probe);
    if (got.missing) return null;
    const expected = ctx.lab.rotaryEmbedding(probe.X, probe.options);
    if (got.error) {
      return { probe, step, expected: { label: `output with ${ropeOptionsText(probe.options)}`, matrix: expected }, actual: null, title: `Without options.${what} your function throws: ${what} has no default`, detail: `${got.error.name}: ${got.error.message}. When the options leave out ${what}, use ${what === 'base' ? 'base = 10000' : 'offset = 0'}: for example { base = 10000, offset = 0 } in the parameter list, before any check of its value.` };
    }
    const [O] = got.outputs;
    if (close(O, expected, 1e-9)) return null;
    if (!isMatrix(O, probe.T, probe.C)) return null; // the basis probes say more about a shape
    const nan = !finiteMatrix(O);
    // with every option given the rotation is right (the basis probes), so a difference here is the default
    if (!nan && !after.every((id) => ctx.facts[`rope:${id}`])) return null;
    return { probe, step, expected: { label: `output with ${ropeOptionsText(probe.options)}`, matrix: expected }, actual: { label: 'your output', matrix: O }, title: nan ? `Without options.${what} your output is NaN: ${what} has no default` : `Without options.${what} your output is not the default's`, detail: `When the options leave out ${what}, use ${what === 'base' ? 'base = 10000' : 'offset = 0'}: for example { base = 10000, offset = 0 } in the parameter list.${nan ? ` undefined in an angle turns every number into NaN.` : ''}` };
  };
}
