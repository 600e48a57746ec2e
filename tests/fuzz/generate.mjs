// Seeded generators of valid, odd and hostile inputs for the package's exports.
//
// A case is fully determined by (seed, index): `makeCase(seed, index)` always builds the same
// arguments, so any failure is replayed with `node tests/fuzz/fuzz.mjs --seed S --case I`.
// What is generated per export is described by the table in exports.mjs; this module holds the
// random source, the value generators and the mutators, which know nothing about any one export.

/** SplitMix32-style generator: `next()` is uniform in [0, 1). */
export function rng(seed) {
  let state = seed >>> 0;
  const next32 = () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  const r = {
    next: () => next32() / 2 ** 32,
    /** An integer in [lo, hi]. */
    int: (lo, hi) => lo + Math.floor(r.next() * (hi - lo + 1)),
    bool: (p = 0.5) => r.next() < p,
    pick: (xs) => xs[Math.floor(r.next() * xs.length)],
    /** Picks by weight from [[weight, value], ...]. */
    weighted: (pairs) => {
      let x = r.next() * pairs.reduce((s, [w]) => s + w, 0);
      for (const [w, v] of pairs) {
        if ((x -= w) < 0) return v;
      }
      return pairs[pairs.length - 1][1];
    },
    uniform: (lo, hi) => lo + (hi - lo) * r.next(),
  };
  return r;
}

/** The seed of case `index` under master seed `seed` (so cases are independent of each other). */
export function caseSeed(seed, index) {
  let z = (Math.imul(seed >>> 0, 0x27d4eb2d) ^ Math.imul(index + 1, 0x165667b1)) >>> 0;
  z = Math.imul(z ^ (z >>> 15), 0x2c1b3c6d) >>> 0;
  return (z ^ (z >>> 12)) >>> 0;
}

// ---- values -----------------------------------------------------------------

/** Finite numbers that are legal but unusual. Large ones are kept where scores can still overflow. */
export const ODD_FINITE = [-0, 0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-310, 1e-300, 1e150, -1e150, 1e300, 1e308, -1e308, Number.MAX_VALUE, -Number.MAX_VALUE, 2 ** 53, 0.1, -1];

/** Anything that is not a finite number. */
export const NOT_FINITE = [NaN, Infinity, -Infinity];
export const WRONG_TYPES = [undefined, null, '1', '', true, false, {}, [], () => 1, 1n, Symbol('x'), new Number(1), new Date(0), new Map()];

/**
 * Odd values that are f32 numbers (most of ODD_FINITE is not: it rounds to 0 or ±Infinity):
 * near f32's range, where products and sums overflow it, and −0. (No f32 subnormals.)
 */
export const ODD_FINITE_F32 = [-0, 0, 1e18, -1e18, 1e30, -1e30, 1e36, 3.4e38, -3.4e38, 2 ** 24, 0.1, -1];

/** A matrix entry: mostly moderate, sometimes odd but finite (one of `odds`). */
export function entry(r, odd = 0.03, odds = ODD_FINITE) {
  if (r.bool(odd)) return r.pick(odds);
  return r.weighted([[6, () => r.uniform(-3, 3)], [1, () => r.int(-4, 4)], [1, () => r.uniform(-30, 30)]])();
}

/** A `rows × cols` plain `number[][]`. */
export function matrix(r, rows, cols, odd, odds = ODD_FINITE) {
  return Array.from({ length: rows }, () => Array.from({ length: cols }, () => entry(r, odd, odds)));
}

/** A `rows × cols` `boolean[][]`, mostly true. */
export function mask(r, rows, cols) {
  const p = r.pick([0.9, 0.6, 0.2, 0]);
  return Array.from({ length: rows }, () => Array.from({ length: cols }, () => !r.bool(p === 0 ? 1 : 1 - p)));
}

/** A small size, occasionally a larger one. */
export const size = (r) => r.weighted([[10, () => r.int(1, 4)], [3, () => r.int(5, 8)], [1, () => r.int(9, 24)]])();

// ---- hostile wrappers ---------------------------------------------------------

const thrower = (what) => () => {
  throw new Error(`fuzz: ${what} throws`);
};

/** A Proxy over `target` that behaves like it (Array.isArray still sees an array). */
export const forwardingProxy = (target) => new Proxy(target, {});

/** A Proxy whose `get` trap throws for `key` (or for every key). */
export const throwingProxy = (target, key) =>
  new Proxy(target, { get: (t, k, rcv) => (key === undefined || k === key ? thrower(`get ${String(k)}`)() : Reflect.get(t, k, rcv)) });

/** A Proxy that has been revoked: every operation on it, even Array.isArray, throws a TypeError. */
export function revokedProxy(target) {
  const { proxy, revoke } = Proxy.revocable(target, {});
  revoke();
  return proxy;
}

/** A copy of `array` whose index `i` is a throwing getter. */
export function withThrowingGetter(array, i) {
  const copy = array.slice();
  Object.defineProperty(copy, i, { get: thrower(`index ${i}`), enumerable: true });
  return copy;
}

/** A copy of `array` whose index `i` is a getter returning the original value (valid, just unusual). */
export function withGetter(array, i) {
  const copy = array.slice();
  const value = array[i];
  Object.defineProperty(copy, i, { get: () => value, enumerable: true });
  return copy;
}

/** Deep-frozen copy. */
export const deepFreeze = (m) => Object.freeze(m.map((row) => (Array.isArray(row) ? Object.freeze(row.slice()) : row)));

/** An array of declared length `n` with no entries (`new Array(n)` would allocate below 2^25). */
export function sparse(n) {
  const a = [];
  a.length = n;
  return a;
}

class SubArray extends Array {}
/** The same rows in an Array subclass (Array.isArray is true). */
export const subclassed = (m) => SubArray.from(m.map((row) => (Array.isArray(row) ? SubArray.from(row) : row)));

// ---- mutators on one matrix-like argument --------------------------------------

/** Each returns a new value for a `number[][]` (or `boolean[][]`) argument `m`, which it does not modify. */
export const MATRIX_MUTATIONS = {
  wrongType: (r) => r.pick(WRONG_TYPES),
  typedArrayWhole: (r, m) => new Float64Array(m.flat().filter((x) => typeof x === 'number')),
  typedArrayRow: (r, m) => {
    const i = r.int(0, m.length - 1);
    const n = Math.max(0, (m[i]?.length ?? 1) + r.pick([-1, 0, 1]));
    return m.map((row, k) => (k === i ? r.pick([new Float64Array(n), new Float32Array(n), new Int32Array(n)]) : row));
  },
  arrayLike: (r, m) => ({ length: m.length, ...m }),
  empty: (r) => r.pick([[], [[]], [[], []], [[], [1]]]),
  raggedShorter: (r, m) => m.map((row, k) => (k === m.length - 1 && m.length > 1 ? row.slice(0, -1) : row)),
  raggedLonger: (r, m) => m.map((row, k) => (k === r.int(0, m.length - 1) ? [...row, row[0]] : row)),
  extraRow: (r, m) => [...m, m[0].slice()],
  missingRow: (r, m) => (m.length > 1 ? m.slice(1) : []),
  extraColumn: (r, m) => m.map((row) => [...row, row[0]]),
  missingColumn: (r, m) => m.map((row) => row.slice(1)),
  transposed: (r, m) => m[0].map((_, j) => m.map((row) => row[j])),
  holeInRow: (r, m) => {
    const copy = m.map((row) => row.slice());
    const i = r.int(0, copy.length - 1);
    delete copy[i][r.int(0, copy[i].length - 1)];
    return copy;
  },
  holeRow: (r, m) => {
    const copy = m.slice();
    delete copy[r.int(0, copy.length - 1)];
    return copy;
  },
  longerLength: (r, m) => {
    const copy = m.slice();
    copy.length += r.int(1, 3);
    return copy;
  },
  hugeDeclaredRows: (r, m) => {
    const huge = sparse(r.pick([2 ** 32 - 1, 2 ** 31, 2 ** 27, 2 ** 26]));
    huge[0] = m[0];
    return huge;
  },
  hugeDeclaredRow: (r) => [r.bool() ? new Array(2 ** 32 - 1) : sparse(r.pick([2 ** 28, 2 ** 27, 2 ** 26]))],
  hugeSharedRows: (r) => {
    const row = new Array(r.pick([2 ** 14, 2 ** 13]));
    return new Array(row.length).fill(row);
  },
  badEntry: (r, m) => {
    const copy = m.map((row) => row.slice());
    const i = r.int(0, copy.length - 1);
    copy[i][r.int(0, copy[i].length - 1)] = r.pick([...NOT_FINITE, ...WRONG_TYPES]);
    return copy;
  },
  oddEntry: (r, m) => {
    const copy = m.map((row) => row.slice());
    const i = r.int(0, copy.length - 1);
    copy[i][r.int(0, copy[i].length - 1)] = r.pick(ODD_FINITE);
    return copy;
  },
  allOdd: (r, m) => {
    const v = r.pick(ODD_FINITE);
    return m.map((row) => row.map(() => (r.bool(0.7) ? v : r.pick(ODD_FINITE))));
  },
  frozen: (r, m) => deepFreeze(m),
  subclass: (r, m) => subclassed(m),
  proxyWhole: (r, m) => forwardingProxy(m),
  proxyRows: (r, m) => m.map((row) => forwardingProxy(row)),
  throwingProxyWhole: (r, m) => throwingProxy(m, r.pick([undefined, 'length', '0'])),
  throwingProxyRow: (r, m) => m.map((row, k) => (k === 0 ? throwingProxy(row, r.pick([undefined, 'length', '0'])) : row)),
  revokedWhole: (r, m) => revokedProxy(m),
  revokedRow: (r, m) => m.map((row, k) => (k === m.length - 1 ? revokedProxy(row) : row)),
  throwingGetterRow: (r, m) => withThrowingGetter(m, r.int(0, m.length - 1)),
  throwingGetterEntry: (r, m) => m.map((row, k) => (k === 0 ? withThrowingGetter(row, r.int(0, row.length - 1)) : row)),
  getterEntry: (r, m) => m.map((row, k) => (k === 0 ? withGetter(row, 0) : row)),
  sameRowObject: (r, m) => m.map(() => m[0]),
};

/** Mutations that turn a value for an options key into something else. */
export const COUNT_VALUES = [0, -1, -0, 1.5, 0.5, NaN, Infinity, -Infinity, 2 ** 32, 2 ** 32 - 1, 2 ** 31, 2 ** 53, 1e21, 1e308, '2', null, undefined, true, 2n, [2], {}];
export const FLAG_VALUES = ['true', 1, 0, null, {}, [], 'false', new Boolean(true)];
export const MISSPELLINGS = ['casual', 'Causal', 'masks', 'Mask', 'numberofheads', 'numHeads', 'heads', 'headDimension', 'head_dimensions', 'W_o', 'w_o', 'WO', 'foo', '', 'constructor', '__proto__x'];

// ---- the layer's arguments ------------------------------------------------------------------

/** Each returns a new value for a `number[]` argument `v` (a bias), which it does not modify. */
export const VECTOR_MUTATIONS = {
  wrongType: (r) => r.pick(WRONG_TYPES),
  empty: () => [],
  shorter: (r, v) => v.slice(1),
  longer: (r, v) => [...v, v[0] ?? 1],
  nested: (r, v) => [v],
  badEntry: (r, v) => v.map((x, i) => (i === 0 ? r.pick([...NOT_FINITE, ...WRONG_TYPES]) : x)),
  oddEntry: (r, v) => v.map((x, i) => (i === v.length - 1 ? r.pick(ODD_FINITE) : x)),
  // v may hold an earlier mutation's bigint or symbol, which a typed array cannot take: those become NaN
  typedArray: (r, v) => r.pick([Float64Array.from(v, (x) => { try { return Number(x); } catch { return NaN; } }), new Float32Array(v.length + 1)]),
  hole: (r, v) => {
    const copy = v.slice();
    delete copy[r.int(0, copy.length - 1)];
    return copy;
  },
  hugeDeclared: (r) => sparse(r.pick([2 ** 32 - 1, 2 ** 27 + 1])),
  throwingGetter: (r, v) => withThrowingGetter(v, 0),
  throwingProxy: (r, v) => throwingProxy(v, r.pick([undefined, 'length', '0'])),
  revoked: (r, v) => revokedProxy(v),
  frozen: (r, v) => Object.freeze(v.slice()),
  forwardingProxy: (r, v) => forwardingProxy(v),
};

/** Values for the layer's dropout and seed. */
export const PROBABILITY_VALUES = [0, -0, 0.5, 0.999, 1, -0.1, 1.5, NaN, Infinity, '0.1', null, true, 1n, 5e-324];
export const SEED_VALUES = [0, 1, 2 ** 53 - 1, 2 ** 53, -1, 1.5, NaN, Infinity, 0n, 2n ** 64n - 1n, 2n ** 64n, -1n, '7', null, {}, true];

/** Misspelled keys of the layer's config, weights and options. */
export const LAYER_MISSPELLINGS = ['embed_dim', 'embeddim', 'EmbedDim', 'num_heads', 'numheads', 'heads', 'numberOfHeads', 'biases', 'Bias', 'drop_out', 'Seed', 'need_weights', 'needweights', 'average_weights', 'train', 'W_q', 'b_q', 'bQ', 'W_qkv', 'in_proj', 'out_proj', 'out_proj_weights', 'constructor', ''];

// ---- typed matrices: { data: Float32Array | Float64Array, shape: [T, C] | [B, T, C] } --------

/** `{ data, shape }` of precision `kind` (32 or 64) holding the items of `items` (one T×C matrix, or a batch). */
export function typed(kind, m, batched = false) {
  const Ctor = kind === 32 ? Float32Array : Float64Array;
  const list = batched ? m : [m];
  const [T, C] = [list[0].length, list[0][0].length];
  return { data: Ctor.from(list.flat(2)), shape: batched ? [list.length, T, C] : [T, C] };
}

/** A Float32Array/Float64Array subclass whose own `length` reports `lie` whatever it holds. */
function lyingArray(data, lie) {
  const Base = data instanceof Float32Array ? Float32Array : Float64Array;
  class Lying extends Base {
    get length() {
      return lie;
    }
  }
  return Lying.from(data);
}

/** The same values in a view at an offset into a larger buffer (valid). */
function offsetView(data) {
  const Ctor = data.constructor === Float32Array ? Float32Array : Float64Array;
  const whole = new Ctor(data.length + 3);
  whole.set(data, 2);
  return whole.subarray(2, 2 + data.length);
}

/** The same values in a SharedArrayBuffer (valid). */
function sharedView(data) {
  const Ctor = data.constructor === Float32Array ? Float32Array : Float64Array;
  const view = new Ctor(new SharedArrayBuffer(data.length * Ctor.BYTES_PER_ELEMENT));
  view.set(data);
  return view;
}

/** A view whose buffer was transferred away (length 0). */
function detachedView(data) {
  const copy = data.slice();
  structuredClone(copy.buffer, { transfer: [copy.buffer] });
  return copy;
}

/** A shape entry as Int32Array.from can take it (an earlier mutation may have left a bigint there, which it refuses). */
const asInt32Source = (n) => (typeof n === 'bigint' ? Number(BigInt.asIntN(32, n)) : n);

export const SHAPE_ENTRY_VALUES = [0, -1, -0, 1.5, 0.5, NaN, Infinity, -Infinity, 2 ** 32, 2 ** 32 - 1, 2 ** 31, 2 ** 53, 1e21, '2', null, undefined, true, 2n, [2], {}];

/** Each returns a new value for a `{ data, shape }` argument `x` (a plain one), which it does not modify. */
export const TYPED_MUTATIONS = {
  wrongType: (r) => r.pick(WRONG_TYPES),
  nestedInArray: (r, x) => [x],
  dataShorter: (r, x) => ({ ...x, data: x.data.slice(0, -1) }),
  dataLonger: (r, x) => ({ ...x, data: x.data.constructor.from([...x.data, 1]) }),
  dataEmpty: (r, x) => ({ ...x, data: new x.data.constructor(0) }),
  shapeEntry: (r, x) => ({ ...x, shape: x.shape.map((n, i) => (i === r.int(0, x.shape.length - 1) ? r.pick(SHAPE_ENTRY_VALUES) : n)) }),
  hugeShape: (r, x) => ({ ...x, shape: r.pick([[2 ** 16, 2 ** 16], [2 ** 14, 2 ** 13 + 1], [2 ** 10, 2 ** 10, 2 ** 10], [2 ** 32 - 1, 2 ** 32 - 1], [1, 2 ** 27 + 1], [2, 2 ** 26, 2]]) }),
  swappedShape: (r, x) => ({ ...x, shape: x.shape.slice().reverse() }),
  rank: (r, x) => ({ ...x, shape: r.pick([[], [x.data.length], [1, ...x.shape], [...x.shape, 1], [1, 1, 1, x.data.length]]) }),
  shapeNotArray: (r, x) => ({ ...x, shape: r.pick([x.shape.join(','), { ...x.shape, length: x.shape.length }, Int32Array.from(x.shape, asInt32Source), x.data.length, null, undefined]) }),
  shapeProxy: (r, x) => ({ ...x, shape: forwardingProxy(x.shape.slice()) }),
  shapeRevoked: (r, x) => ({ ...x, shape: revokedProxy(x.shape.slice()) }),
  shapeThrowingGetter: (r, x) => ({ ...x, shape: withThrowingGetter(x.shape, r.int(0, x.shape.length - 1)) }),
  otherKind: (r, x) => ({ ...x, data: r.pick([Int32Array, Uint8Array, Float64Array, Float32Array, BigInt64Array, DataView, Array]).name === 'BigInt64Array' ? BigInt64Array.from(x.data, (v) => BigInt(Number.isFinite(v) ? Math.trunc(v) : 0)) : r.pick([Int32Array.from(x.data), Uint8ClampedArray.from(x.data), new DataView(x.data.buffer), Array.from(x.data), x.data.constructor === Float32Array ? Float64Array.from(x.data) : Float32Array.from(x.data)]) }),
  dataMissing: (r, x) => ({ shape: x.shape }),
  dataThrowingGetter: (r, x) => Object.defineProperty({ shape: x.shape }, 'data', { get: thrower('data'), enumerable: true }),
  shapeThrowingProp: (r, x) => Object.defineProperty({ data: x.data }, 'shape', { get: thrower('shape'), enumerable: true }),
  dataRevoked: (r, x) => ({ ...x, data: revokedProxy(x.data) }),
  dataProxy: (r, x) => ({ ...x, data: forwardingProxy(x.data) }),
  dataLengthProxy: (r, x) => ({ ...x, data: new Proxy(x.data, { get: (t, k) => (k === 'length' ? t.length : Reflect.get(t, k)) }) }),
  dataLying: (r, x) => ({ ...x, data: lyingArray(x.data, r.pick([x.data.length, x.data.length + 1, Math.max(0, x.data.length - 1)])) }),
  lyingButTruthful: (r, x) => ({ ...x, data: lyingArray(x.data, x.data.length) }),
  wholeRevoked: (r, x) => revokedProxy(x),
  wholeProxy: (r, x) => forwardingProxy(x),
  wholeThrowingProxy: (r, x) => throwingProxy(x, r.pick([undefined, 'data', 'shape'])),
  inherited: (r, x) => Object.create(x),
  frozen: (r, x) => Object.freeze({ ...x, shape: Object.freeze(x.shape.slice()) }),
  nonFinite: (r, x) => {
    const data = x.data.slice();
    if (data.length) data[r.int(0, data.length - 1)] = r.pick(NOT_FINITE);
    return { ...x, data };
  },
  oddValue: (r, x) => {
    const data = x.data.slice();
    if (data.length) data[r.int(0, data.length - 1)] = r.pick(ODD_FINITE);
    return { ...x, data };
  },
  offsetView: (r, x) => ({ ...x, data: offsetView(x.data) }),
  shared: (r, x) => ({ ...x, data: sharedView(x.data) }),
  detached: (r, x) => ({ ...x, data: detachedView(x.data) }),
  sameData: (r, x) => x,
};
