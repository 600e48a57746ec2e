// The JavaScript half of convert.rs: everything that walks a caller's JS values.
//
// These functions read arguments (arrays, options objects, typed matrices), check them, and
// hand Rust plain data: a Float64Array or Uint8Array of values, with the shape written into a
// small Uint32Array view of wasm memory. A bad argument never throws into wasm: the reader
// records a Refusal (TypeError or RangeError, and the message naming the argument, the place and
// what was expected) and returns FAILED; Rust takes it with takeRefusal() and raises the error
// from its one place of error conversion (convert.rs, to_js_error). Returning a marker instead of
// throwing matters: a `catch` import that throws leaks one externref-table slot per call in
// wasm-bindgen 0.2.130 (it allocates the slot for the return value before it sees the exception),
// and an exception that unwinds through wasm skips Rust's destructors.
//
// Every property is read with Reflect.get inside try/catch, so a throwing getter, a Proxy trap or
// a revoked Proxy becomes a TypeError naming the place rather than an exception inside wasm.

const FAILED = Symbol('attention-lab: refused');

/** A refusal: `range` picks RangeError over TypeError. */
class Refusal {
  constructor(range, message) {
    this.range = range;
    this.message = message;
  }
}

const typeError = (message) => new Refusal(false, message);
const rangeError = (message) => new Refusal(true, message);

let refusal; // the last refusal, until Rust takes it

/** Runs `read`; a Refusal (or, should one slip through, any other exception) becomes FAILED. */
function guarded(read) {
  return function (...args) {
    try {
      return read(...args);
    } catch (e) {
      let known = false;
      try { known = e instanceof Refusal; } catch (_) { /* a revoked Proxy was thrown */ }
      refusal = known ? e : typeError(`an argument could not be read (reading it threw: ${whatThrew(e)})`);
      return FAILED;
    }
  };
}

export function isFailed(value) { return value === FAILED; }

// A panic (a bug, never bad input), reported as console_error_panic_hook did: the message, then the stack.
export function reportPanic(message) { console.error(`${message}\n\nStack:\n\n${new Error().stack}\n\n`); }
/** Whether the last refusal is a RangeError (else a TypeError). */
export function refusalIsRange() { return refusal !== undefined && refusal.range; }
/** The last refusal's message; forgets the refusal. */
export function takeRefusal() {
  const message = refusal === undefined ? 'an argument was refused' : refusal.message;
  refusal = undefined;
  return message;
}

// ---- describing values ------------------------------------------------------------------------

/** A value's kind for messages: "undefined", "NaN", "the number 3", "a string", "an array", … */
export function describe(x) {
  if (x === undefined) return 'undefined';
  if (x === null) return 'null';
  if (typeof x === 'number') return Number.isNaN(x) ? 'NaN' : `the number ${x}`;
  if (typeof x === 'string') return 'a string';
  if (typeof x === 'boolean') return 'a boolean';
  let array;
  try { array = Array.isArray(x); } catch (_) { return 'a revoked Proxy'; }
  if (array) return 'an array';
  if (typeof x === 'function') return 'a function';
  if (typeof x === 'bigint') return 'a bigint';
  if (typeof x === 'symbol') return 'a symbol';
  return 'an object';
}

/** `describe` without "the number " (a RangeError already says what kind was expected). */
const bare = (x) => (typeof x === 'number' ? String(x) : describe(x));

/** What a thrown value says: an Error's message, or its description. */
function whatThrew(e) {
  try {
    if (e instanceof Error) {
      const m = Reflect.get(e, 'message');
      if (typeof m === 'string') return m;
    }
  } catch (_) { /* fall through */ }
  return describe(e);
}

// ---- reading defensively ------------------------------------------------------------------------

/** `x instanceof Kind`, false when asking throws (a revoked Proxy: the reader after names it). */
function isInstance(x, Kind) {
  try { return x instanceof Kind; } catch (_) { return false; }
}

/** `target[key]`; a throwing getter or trap is a TypeError naming `place` (a string or a function giving it). */
function get(target, key, place) {
  try {
    return Reflect.get(target, key);
  } catch (e) {
    throw typeError(`${named(place)} could not be read (reading it threw: ${whatThrew(e)})`);
  }
}

const named = (place) => (typeof place === 'function' ? place() : place);

/** `Array.isArray(value)`; a revoked Proxy is a TypeError naming `place`. */
function isArray(value, place) {
  try {
    return Array.isArray(value);
  } catch (_) {
    throw typeError(`${named(place)} could not be read (it is a revoked Proxy)`);
  }
}

/** An array's `length`, checked to be one. */
function arrayLength(array, place) {
  const length = get(array, 'length', () => `${named(place)}.length`);
  if (typeof length === 'number' && length >= 0 && Number.isInteger(length) && length <= 4294967295) return length;
  throw typeError(`${named(place)}.length is ${describe(length)}; expected an array length`);
}

/** rows·cols, or a RangeError when one matrix may not hold that many values. */
function checkedLength(rows, cols, name, maxElements) {
  const n = rows * cols;
  if (n > maxElements) throw rangeError(`${name} would be ${rows}×${cols}, more than the ${maxElements} elements one matrix may hold`);
  return n;
}

/** A finite number: not a number is a TypeError, NaN or ±Infinity a RangeError. */
function finite(x, place) {
  if (typeof x === 'number') {
    if (Number.isFinite(x)) return x;
    throw rangeError(`${named(place)} is ${x}; expected a finite number`);
  }
  throw typeError(`${named(place)} is ${describe(x)}; expected a number`);
}

function boolean(x, place) {
  if (typeof x === 'boolean') return x;
  throw typeError(`${named(place)} is ${describe(x)}; expected true or false`);
}

/** A positive integer up to 2^32 − 1: not a number is a TypeError, anything else wrong a RangeError. */
function count(x, place) {
  if (typeof x !== 'number') throw typeError(`${named(place)} is ${describe(x)}; expected a positive integer`);
  if (!(x >= 1 && Number.isInteger(x) && x <= 4294967295)) throw rangeError(`${named(place)} is ${bare(x)}; expected a positive integer`);
  return x;
}

/** An integer 0 … `max`: not a number is a TypeError, anything else wrong a RangeError. */
function index(x, place, max = 4294967295) {
  if (typeof x !== 'number') throw typeError(`${named(place)} is ${describe(x)}; expected an integer ≥ 0`);
  if (!(x >= 0 && Number.isInteger(x) && x <= max)) throw rangeError(`${named(place)} is ${x}; expected an integer ≥ 0`);
  return x;
}

// ---- matrices -------------------------------------------------------------------------------

/**
 * The common case in one pass: a plain array of equal-length arrays of finite numbers, at most
 * 2^22 values, copied with ordinary indexing. Anything else (a hole, a non-number, a ragged row, a
 * getter or trap that throws, …) gives undefined, and `readTable` reads the value again, carefully.
 */
function fastNumberRows(value, shape) {
  try {
    if (!Array.isArray(value)) return undefined;
    const rows = value.length;
    const first = value[0];
    if (rows === 0 || !Array.isArray(first)) return undefined;
    const cols = first.length;
    if (cols === 0 || rows * cols > 4194304) return undefined;
    const out = new Float64Array(rows * cols);
    for (let i = 0; i < rows; i++) {
      const row = value[i];
      if (!Array.isArray(row) || row.length !== cols) return undefined;
      for (let j = 0; j < cols; j++) {
        const x = row[j];
        if (typeof x !== 'number' || !Number.isFinite(x)) return undefined;
        out[i * cols + j] = x;
      }
    }
    shape[0] = rows;
    shape[1] = cols;
    return out;
  } catch (_) {
    return undefined;
  }
}

/**
 * A rectangular table read entry by entry with `cell`, into `Kind` (Float64Array or Uint8Array),
 * growing as entries are read, so a huge declared length costs nothing until it is filled.
 */
function readTable(value, name, expected, maxElements, shape, Kind, cell) {
  if (!isArray(value, name)) throw typeError(`${name} is ${describe(value)}; expected an array of rows (${expected})`);
  const rows = arrayLength(value, name);
  if (rows === 0) throw rangeError(`${name} is empty; expected at least one row`);
  let cols = 0;
  let data = new Kind(0);
  let used = 0;
  for (let i = 0; i < rows; i++) {
    const place = () => `${name}[${i}]`;
    const row = get(value, i, place);
    let rowIsArray;
    try { rowIsArray = Array.isArray(row); } catch (_) { throw typeError(`${place()} could not be read (it is a revoked Proxy)`); }
    if (!rowIsArray) throw typeError(`${place()} is ${describe(row)}; expected a row array (${expected})`);
    const len = arrayLength(row, place);
    if (i === 0) {
      if (len === 0) throw rangeError(`${name}[0] is empty; expected at least one column`);
      cols = len;
      // a declared size is only a claim (a sparse `new Array(2**27)` costs nothing): refuse the
      // impossible ones, and let memory follow the entries actually read
      checkedLength(rows, cols, name, maxElements);
    } else if (len !== cols) {
      throw rangeError(`${name}[${i}] has ${len} entries but ${name}[0] has ${cols}: every row must be the same length`);
    }
    for (let j = 0; j < len; j++) {
      const here = () => `${name}[${i}][${j}]`;
      const x = cell(get(row, j, here), here);
      if (used === data.length) {
        try {
          const grown = new Kind(Math.min(rows * cols, Math.max(64, 2 * used)));
          grown.set(data);
          data = grown;
        } catch (_) {
          throw rangeError(`${name} is ${rows}×${cols}, too large to hold in memory`);
        }
      }
      data[used++] = x;
    }
  }
  shape[0] = rows;
  shape[1] = cols;
  return data;
}

/** A `number[][]` as a Float64Array of its values, row by row, with `shape` = [rows, cols]. */
export const readMatrix = guarded((value, name, maxElements, shape) =>
  fastNumberRows(value, shape) ?? readTable(value, name, 'number[][]', maxElements, shape, Float64Array, finite));

/**
 * A `number[][]` `[T, C]` or a batch `number[][][]` `[B, T, C]` (a batch when `value[0][0]` is an
 * array), each matrix read as `readMatrix` reads it (the items named `name[b]`), every item its own
 * shape: returns the values one item after another, with `shapes` = [batched, rows₀, cols₀, rows₁, …].
 * With `like` 0 or 1 it must be batched as `likeName` is (1: a batch); with `like` 2 one matrix (a trace's).
 */
export const readBatch = guarded((value, name, maxElements, like, likeName) => {
  let batched = false;
  if (isArray(value, name) && arrayLength(value, name) > 0) {
    const first = get(value, 0, `${name}[0]`);
    if (isArray(first, `${name}[0]`) && arrayLength(first, `${name}[0]`) > 0) {
      batched = isArray(get(first, 0, `${name}[0][0]`), `${name}[0][0]`);
    }
  }
  const items = batched ? arrayLength(value, name) : 1;
  const shapes = new Uint32Array(1 + 2 * items);
  shapes[0] = batched ? 1 : 0;
  const parts = [];
  let total = 0;
  for (let b = 0; b < items; b++) {
    const place = batched ? `${name}[${b}]` : name;
    const item = batched ? get(value, b, place) : value;
    const shape = shapes.subarray(1 + 2 * b, 3 + 2 * b);
    const data = fastNumberRows(item, shape) ?? readTable(item, place, 'number[][]', maxElements, shape, Float64Array, finite);
    parts.push(data);
    total += data.length;
  }
  if (like === 2 && batched) throw rangeError(`${name} is a batch [B, T, C]; trace takes one [T, C] matrix`);
  if ((like === 0 || like === 1) && batched !== (like === 1)) {
    const rank = (b) => (b ? 'a batch [B, T, C]' : 'one [T, C] matrix');
    throw rangeError(`${name} is ${rank(batched)} but ${likeName} is ${rank(like === 1)}: query, key and value must all be batched or all not`);
  }
  if (items === 1) return [parts[0], shapes];
  let all;
  try { all = new Float64Array(total); } catch (_) { throw rangeError(`${name} is a batch of ${items}, too large to hold in memory`); }
  for (let b = 0, at = 0; b < items; at += parts[b].length, b++) all.set(parts[b], at);
  return [all, shapes];
});

/**
 * One tensor of `shape` ([rows, cols] or [n]) for setWeights and setState: number[][] (2-D), number[]
 * (1-D), or a flat Float32Array / Float64Array of its entries, as a Float64Array of finite values.
 */
function tensor(raw, place, shape, maxElements) {
  let values;
  if (isInstance(raw, Float32Array) || isInstance(raw, Float64Array)) {
    values = new Float64Array(raw.length);
    values.set(raw);
  } else if (shape.length === 2) {
    const got = [0, 0];
    values = fastNumberRows(raw, got) ?? readTable(raw, place, 'number[][]', maxElements, got, Float64Array, finite);
    if (got[0] !== shape[0] || got[1] !== shape[1]) throw rangeError(`${place} is ${got[0]}×${got[1]} but must be ${shape[0]}×${shape[1]}`);
  } else {
    values = vector(raw, place, maxElements);
  }
  const want = shape.reduce((n, d) => n * d, 1);
  if (values.length !== want) throw rangeError(`${place} has ${values.length} entries; expected ${want}`);
  const i = values.findIndex((x) => !Number.isFinite(x));
  if (i >= 0) throw rangeError(`${place} entry ${i} is ${values[i]}; expected a finite number`);
  return values;
}

/**
 * A Transformer's parameters as getWeights() writes them, `{ W_E, …, layers: [{ W_Q, … }] }` (setWeights,
 * setState): `names` are the parameters (", "-separated), `layers[i]` parameter i's layer (-1 for none),
 * `shapes[2i, 2i + 1]` its [rows, cols] (cols 0 for a vector). With `full` every parameter must be there,
 * otherwise any subset. An array with each parameter's values as `tensor` reads them, undefined where absent.
 */
export const readTree = guarded(tree);
function tree(value, name, names, layers, shapes, numLayers, full, maxElements) {
  if (!full && (value === undefined || value === null)) throw typeError(`${name} is missing; expected an object with some of the keys of getWeights()`);
  if (value === null || typeof value !== 'object') throw typeError(`${name} is ${describe(value)}; expected an object with the keys of getWeights()`);
  const params = names.split(', ').map((key, i) => ({ key, layer: layers[i], shape: shapes[2 * i + 1] === 0 ? [shapes[2 * i]] : [shapes[2 * i], shapes[2 * i + 1]] }));
  const keysOf = (layer) => params.filter((p) => p.layer === layer).map((p) => p.key);
  const top = options(value, name, keysOf(-1).concat(['layers']).join(', '));
  const list = get(top, 'layers', () => `${name}.layers`);
  const objects = [];
  if (list !== undefined) {
    const place = `${name}.layers`;
    if (!isArray(list, place)) throw typeError(`${place} is ${describe(list)}; expected an array of numLayers = ${numLayers} objects`);
    const len = arrayLength(list, place);
    if (len > numLayers || (full && len !== numLayers)) throw rangeError(`${place} has ${len} entries; this model has numLayers = ${numLayers}`);
    for (let l = 0; l < numLayers; l++) {
      const item = l < len ? get(list, l, `${place}[${l}]`) : undefined;
      objects.push(options(item, `${place}[${l}]`, keysOf(0).join(', ')));
    }
  }
  return params.map((p) => {
    const [object, place] = p.layer < 0 ? [top, `${name}.${p.key}`] : [objects[p.layer], `${name}.layers[${p.layer}].${p.key}`];
    const raw = object === undefined ? undefined : get(object, p.key, place);
    if (raw === undefined && full) throw typeError(`${place} is missing; ${name} must hold every parameter`);
    return raw === undefined ? undefined : tensor(raw, place, p.shape, maxElements);
  });
}


/** A `number[]` (a bias) as a Float64Array. */
function vector(value, name, maxElements) {
  if (!isArray(value, name)) throw typeError(`${name} is ${describe(value)}; expected an array of numbers (number[])`);
  const len = arrayLength(value, name);
  if (len === 0) throw rangeError(`${name} is empty; expected at least one number`);
  checkedLength(1, len, name, maxElements);
  const out = new Float64Array(len);
  for (let i = 0; i < len; i++) {
    const place = () => `${name}[${i}]`;
    out[i] = finite(get(value, i, place), place);
  }
  return out;
}

/** `name` beside a first matrix `first` of the same `group`, typed (`typed`) or number[][]: in that form, or a mixed call. */
export const checkSameForm = guarded((value, name, first, group, typed) => {
  if (typed && !isTypedCandidate(value)) throw typeError(`${name} is ${describe(value)} but ${first} is a typed matrix; pass ${group} in the same form`);
  if (!typed && isTypedCandidate(value)) throw typeError(`${name} is an object but ${first} is number[][]; pass ${group} in the same form`);
});

/** `linear`'s `b` (not undefined): a `number[]`, a Float32Array or a Float64Array of `out` values, as a Float64Array. */
export const readBias = guarded((b, out, maxElements) => {
  const kind = floatKind(b);
  if (kind === 32 || kind === 64) {
    const values = new Float64Array(floatArrayLength(b, 'b'));
    values.set(b);
    return values;
  }
  if (isArray(b, 'b')) return vector(b, 'b', maxElements);
  throw typeError(`b is ${describe(b)}; expected number[], Float32Array or Float64Array with ${out} entries`);
});

// ---- token ids ----------------------------------------------------------------------------------

/** The ids of an Int32Array, Uint32Array, Uint16Array or (with `bytes`) Uint8Array, or undefined for anything else. */
function tokenArray(x, bytes) {
  const ids = isInstance(x, Int32Array) || isInstance(x, Uint32Array) || isInstance(x, Uint16Array) || (bytes && isInstance(x, Uint8Array));
  return ids ? Float64Array.from(x) : undefined;
}

/**
 * A Transformer's `[B, T]` tokens, `number[][]` or `{ data: an integer typed array, shape: [B, T] }`, as a
 * Float64Array of the ids (the core checks them against the model) with `shape` = [B, T].
 */
export const readTokens = guarded((value, shape) => {
  const expected = 'expected number[][] [B, T] or { data: Int32Array, shape: [B, T] }';
  const fast = fastNumberRows(value, shape); // the common case in one pass
  if (fast !== undefined) return fast;
  if (isArray(value, 'tokens')) {
    const b = arrayLength(value, 'tokens');
    const values = [];
    let t = 0;
    for (let i = 0; i < b; i++) {
      const place = `tokens[${i}]`;
      const row = get(value, i, place);
      if (!isArray(row, place)) throw typeError(`${place} is ${describe(row)}; ${expected}`);
      const len = arrayLength(row, place);
      if (i === 0) t = len;
      else if (len !== t) throw rangeError(`${place} has ${len} tokens but tokens[0] has ${t}; every sequence must have the same T`);
      for (let j = 0; j < t; j++) {
        const cell = `tokens[${i}][${j}]`;
        const x = get(row, j, cell);
        if (typeof x !== 'number') throw typeError(`${cell} is ${describe(x)}; expected an integer token`);
        values.push(x);
      }
    }
    shape[0] = b;
    shape[1] = t;
    return Float64Array.from(values);
  }
  if (value === null || typeof value !== 'object') throw typeError(`tokens is ${describe(value)}; ${expected}`);
  const data = get(value, 'data', 'tokens.data');
  const values = tokenArray(data, true);
  if (values === undefined) throw typeError(`tokens.data is ${describe(data)}; expected an Int32Array (or Uint32Array, Uint16Array, Uint8Array)`);
  const shapeValue = get(value, 'shape', 'tokens.shape');
  if (isArray(shapeValue, 'tokens.shape') && arrayLength(shapeValue, 'tokens.shape') === 2) {
    const [b, t] = [0, 1].map((i) => {
      const x = get(shapeValue, i, `tokens.shape[${i}]`);
      return typeof x === 'number' ? x : NaN;
    });
    if (Number.isInteger(b) && Number.isInteger(t) && b >= 0 && t >= 0 && b * t === values.length) {
      shape[0] = b;
      shape[1] = t;
      return values;
    }
  }
  throw rangeError(`tokens.shape is ${describe(shapeValue)}; expected [B, T] with B·T = tokens.data.length = ${values.length}`);
});

/** `generate`'s prompt: `number[]` (or an Int32Array / Uint32Array / Uint16Array) of token ids below `v`, as a Uint32Array. */
export const readPrompt = guarded((value, v) => {
  const expected = 'expected number[], the token ids of the prompt';
  if (value === undefined || value === null) throw typeError(`prompt is missing; expected ${expected}`);
  let values = tokenArray(value, false);
  if (values === undefined) {
    if (!isArray(value, 'prompt')) throw typeError(`prompt is ${describe(value)}; ${expected}`);
    values = [];
    for (let i = 0, n = arrayLength(value, 'prompt'); i < n; i++) {
      const x = get(value, i, `prompt[${i}]`);
      if (typeof x !== 'number') throw typeError(`prompt[${i}] is ${describe(x)}; expected an integer token id`);
      values.push(x);
    }
  }
  if (values.length === 0) throw rangeError('prompt is empty; expected at least one token');
  values.forEach((x, i) => {
    if (!(Number.isInteger(x) && x >= 0 && x < v)) throw rangeError(`prompt[${i}] is ${x}; expected an integer in 0 … vocabSize − 1 = ${v - 1}`);
  });
  return Uint32Array.from(values);
});


/** An optional seed: an integer number 0 … 2^53 − 1 or a bigint 0 … 2^64 − 1, as a bigint (default 0). */
export const readSeed = guarded(seed);
function seed(value, place) {
  if (value === undefined) return 0n;
  if (typeof value === 'bigint') {
    if (value >= 0n && value <= 18446744073709551615n) return value;
    throw rangeError(`${place} is a bigint outside 0 ..= 2^64 − 1; expected a 64-bit unsigned seed`);
  }
  if (typeof value !== 'number') throw typeError(`${place} is ${describe(value)}; expected a non-negative integer or a bigint`);
  if (value >= 0 && Number.isInteger(value) && value <= 9007199254740991) return BigInt(value);
  throw rangeError(`${place} is ${bare(value)}; expected an integer from 0 to 2^53 − 1 (or a bigint up to 2^64 − 1)`);
}

// ---- KV caches ----------------------------------------------------------------------------------

/** The key under which a cache made by `createCache()` carries its id (module-private). */
const CACHE_ID = Symbol('attention-lab KV cache');

/** Marks `cache` (a KvCache object) with its registry id; the mark cannot be changed or forged from outside. */
export function tagCache(cache, id) {
  Object.defineProperty(cache, CACHE_ID, { value: id });
  return cache;
}

/** The registry id of a cache from `createCache()`, or a TypeError naming `place`. */
function cacheId(value, place) {
  const id = value !== null && typeof value === 'object' ? value[CACHE_ID] : undefined;
  if (typeof id !== 'number') throw typeError(`${place} is ${describe(value)}; expected a cache from layer.createCache()`);
  return id;
}

/** An optional probability 0 ≤ p < 1 (default 0). */
function probability(value, place) {
  if (value === undefined) return 0;
  if (typeof value !== 'number') throw typeError(`${place} is ${describe(value)}; expected a number in [0, 1)`);
  if (value >= 0 && value < 1) return value;
  const last = place.slice(place.lastIndexOf('.') + 1);
  throw rangeError(`${place} is ${bare(value)}; expected a probability with 0 ≤ ${last} < 1`);
}

/** A `dtype`: undefined, 'float32' or 'float64' (returned as given). */
export const readDtype = guarded(dtype);
function dtype(value, place) {
  if (value === undefined || value === 'float32' || value === 'float64') return value;
  throw typeError(`${place} is ${describe(value)}; expected 'float32' or 'float64'`);
}


/** An optional finite number > 0 (undefined stays undefined): not a number is a TypeError, anything else wrong a RangeError. */
function positive(x, place) {
  if (x === undefined || (typeof x === 'number' && Number.isFinite(x) && x > 0)) return x;
  const message = `${place} is ${bare(x)}; expected a finite number > 0`;
  throw typeof x === 'number' ? rangeError(message) : typeError(message);
}

/**
 * The rotary embedding's `{ base?, offset? }` read from `o` (an options object called `name`, already
 * checked, or undefined), as [base, offset] (defaults 10000 and 0); `offset` only `withOffset`.
 */
function ropeSettings(o, name, withOffset) {
  const at = (key) => (o === undefined ? undefined : get(o, key, () => `${name}.${key}`));
  const base = positive(at('base'), `${name}.base`) ?? 10000;
  const offset = withOffset ? at('offset') : undefined;
  return [base, offset === undefined ? 0 : index(offset, `${name}.offset`)];
}

/** A `rope` option: undefined for absent or false; true (every default) or `{ keys }` as `ropeSettings`. */
function rope(value, place, keys) {
  if (value === undefined || value === false) return undefined;
  if (value === true) return ropeSettings(undefined, place, false);
  const boxed = isInstance(value, Boolean) || isInstance(value, Number) || isInstance(value, String);
  if (value === null || typeof value !== 'object' || boxed) throw typeError(`${place} is ${describe(value)}; expected true, false or { ${keys} }`);
  return ropeSettings(options(value, place, keys), place, keys.includes('offset'));
}

// ---- a whole small call, and results -------------------------------------------------------

// The fast path for a whole small call, in one JS call: dotProductAttention(Q, K, V, { causal? }) or
// multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, causal? } | numberOfHeads, headDimensions)
// with plain arrays of equal-length arrays of finite numbers, written straight into `out` (a view of
// wasm memory) as [h, d, causal, T_Q, C_Q, T_K, C_K, T_V, C_V, Q…, K…, V…]. Returns how many values it
// wrote, or -1 for anything else (other keys, W_O or mask present, a value of another type, a throwing
// getter or Proxy trap, too large for `out`): then the careful readers here read the whole
// call again, in the documented order, and name whatever is wrong. Every property the careful path
// reads (W_O and mask included, even when not an own key) is read here too, so both see the same call.
const isCount = (x) => Number.isInteger(x) && x >= 1 && x <= 4294967295;
export function readSmallCall(q, k, v, options, headDimensions, multiHead, out) {
  try {
    let h = 0, d = 0, causal = false;
    if (multiHead && typeof options === 'number') {
      if (!isCount(options) || !isCount(headDimensions)) return -1;
      h = options;
      d = headDimensions;
    } else {
      if (headDimensions !== undefined) return -1;
      if (options !== undefined) {
        if (options === null || typeof options !== 'object' || Array.isArray(options)) return -1;
        const keys = Reflect.ownKeys(options);
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i];
          if (key !== 'causal' && !(multiHead && (key === 'numberOfHeads' || key === 'headDimensions'))) return -1;
        }
        if (multiHead) {
          h = options.numberOfHeads;
          d = options.headDimensions;
          if (!isCount(h) || !isCount(d) || options.W_O !== undefined) return -1;
        }
        const c = options.causal;
        if (c !== undefined) {
          if (typeof c !== 'boolean') return -1;
          causal = c;
        }
        if (options.mask !== undefined) return -1;
      } else if (multiHead) {
        return -1;
      }
    }
    out[0] = h;
    out[1] = d;
    out[2] = causal ? 1 : 0;
    let at = 9;
    const matrices = [q, k, v];
    for (let m = 0; m < 3; m++) {
      const value = matrices[m];
      if (!Array.isArray(value)) return -1;
      const rows = value.length;
      if (rows === 0) return -1;
      const first = value[0];
      if (!Array.isArray(first)) return -1;
      const cols = first.length;
      if (cols === 0 || at + rows * cols > out.length) return -1;
      out[3 + 2 * m] = rows;
      out[4 + 2 * m] = cols;
      for (let i = 0; i < rows; i++) {
        const row = value[i];
        if (!Array.isArray(row) || row.length !== cols) return -1;
        for (let j = 0; j < cols; j++) {
          const x = row[j];
          if (typeof x !== 'number' || !Number.isFinite(x)) return -1;
          out[at++] = x;
        }
      }
    }
    return at;
  } catch (_) {
    return -1;
  }
}

// A row-major view of wasm memory as fresh nested arrays of `shape` (a Uint32Array: [rows, cols], or
// more dimensions in front), in one call with no intermediate copy.
export function writeNested(data, shape) {
  if (shape.length <= 2) return writeNumberRows(data, Math.max(1, shape[shape.length - 1]));
  const n = shape[0];
  const size = data.length / n;
  const inner = shape.subarray(1);
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = writeNested(data.subarray(i * size, (i + 1) * size), inner);
  return out;
}

// A row-major view of wasm memory as a fresh number[][] (one call, no intermediate copy).
export function writeNumberRows(data, cols) {
  const rows = data.length / cols;
  const out = new Array(rows);
  for (let i = 0; i < rows; i++) {
    const row = new Array(cols);
    for (let j = 0; j < cols; j++) row[j] = data[i * cols + j];
    out[i] = row;
  }
  return out;
}

/**
 * One trace step as `{ op, name, inputs, head?, kvHead?, shape, values, columns?, scalar?, rotation?, allowed? }`,
 * built in one call: `inputs` joined by newlines, `ints` = [head, kvHead, rows, cols, column₀, column₁,
 * position] (-1 for none), `allowed` (0/1, row-major) empty for none. Object literals define own
 * properties, so no setter on Object.prototype is ever called.
 */
export function writeTraceStep(op, name, inputs, ints, values, scalar, allowed, base) {
  const [head, kvHead, rows, cols, column0, column1, position] = ints;
  const step = { op, name, inputs: inputs.split('\n') };
  if (head >= 0) step.head = head;
  if (kvHead >= 0) step.kvHead = kvHead;
  step.shape = [rows, cols];
  step.values = writeNumberRows(values, cols);
  if (column0 >= 0) step.columns = [column0, column1];
  if (scalar !== undefined) step.scalar = scalar;
  if (base !== undefined) step.rotation = { base, position };
  if (allowed.length > 0) {
    step.allowed = Array.from({ length: rows }, (_, i) => Array.from(allowed.subarray(i * cols, (i + 1) * cols), (x) => x === 1));
  }
  return step;
}

// ---- options objects ----------------------------------------------------------------------------

const asciiLower = (s) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** True when `a` and `b` are at most two edits apart (for "did you mean"). */
function similar(a, b) {
  const [x, y] = [[...a], [...b]];
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const cur = [i];
    for (let j = 1; j <= y.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[y.length] <= 2;
}

/**
 * An options object: undefined or null give undefined ("no options"); anything else must be a
 * plain object whose string keys are all in `known` (", "-separated, as messages print them).
 */

/** `options` of an object that must be there: undefined or null is a TypeError showing `expected`. */
function requiredOptions(value, name, known, expected) {
  if (value === undefined || value === null) throw typeError(`${name} is missing; expected ${expected}`);
  return options(value, name, known);
}

function options(value, name, known) {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || isArray(value, name)) {
    throw typeError(`${name} is ${describe(value)}; expected an object with the keys ${known}`);
  }
  let keys;
  try { keys = Reflect.ownKeys(value); } catch (_) { throw typeError(`${name}: its keys could not be listed`); }
  const allowed = known.split(', ');
  for (const key of keys) {
    if (typeof key !== 'string' || allowed.includes(key)) continue;
    const guess = allowed.find((k) => asciiLower(k) === asciiLower(key) || similar(k, key));
    const hint = guess === undefined ? '' : ` (did you mean ${guess}?)`;
    throw typeError(`${name}.${key} is not an option${hint}; the options are ${known}`);
  }
  return value;
}

// ---- the options of one export, read whole: a fresh object Rust reads through typed getters ------

/** `trainStep`'s options `{ learningRate, betas?, eps?, weightDecay? }` (an absent one undefined: the core has the defaults). */
export const readAdamW = guarded((value, maxElements) => {
  const o = requiredOptions(value, 'options', 'learningRate, betas, eps, weightDecay', '{ learningRate, betas?, eps?, weightDecay? }');
  const at = (key) => get(o, key, () => `options.${key}`);
  const betas = at('betas');
  let pair = [undefined, undefined];
  if (betas !== undefined) {
    try { pair = vector(betas, 'options.betas', maxElements); } catch (_) { throw typeError(`options.betas is ${describe(betas)}; expected [beta1, beta2]`); }
    if (pair.length !== 2) throw rangeError(`options.betas has ${pair.length} entries; expected [beta1, beta2]`);
  }
  const number = (key, optional) => {
    const x = at(key);
    if (typeof x === 'number' || (optional && x === undefined)) return x;
    throw typeError(`options.${key} is ${describe(x)}; expected a number`);
  };
  return { beta1: pair[0], beta2: pair[1], learningRate: number('learningRate', false), eps: number('eps', true), weightDecay: number('weightDecay', true) };
});

/**
 * `generate`'s options `{ maxNewTokens, temperature?, topK?, topP?, seed?, onToken? }`, each checked for its
 * kind (the core checks the sampling values); `options` is the caller's object, whose seed Rust reads last.
 */
export const readGenerate = guarded((value) => {
  const o = requiredOptions(value, 'options', 'maxNewTokens, temperature, topK, topP, seed, onToken', '{ maxNewTokens, temperature?, topK?, topP?, seed?, onToken? }');
  const at = (key) => get(o, key, () => `options.${key}`);
  const maxNewTokens = at('maxNewTokens');
  if (maxNewTokens === undefined) throw typeError('options.maxNewTokens is missing; expected an integer ≥ 0, the tokens to generate');
  index(maxNewTokens, 'options.maxNewTokens');
  const temperature = at('temperature');
  if (temperature !== undefined && typeof temperature !== 'number') {
    throw typeError(`options.temperature is ${describe(temperature)}; expected a finite number ≥ 0 (0 is greedy)`);
  }
  const topK = at('topK');
  if (topK !== undefined) {
    if (typeof topK !== 'number') throw typeError(`options.topK is ${describe(topK)}; expected an integer ≥ 1`);
    if (!(Number.isInteger(topK) && topK >= 1 && topK <= 4294967295)) throw rangeError(`options.topK is ${topK}; expected an integer ≥ 1`);
  }
  const topP = at('topP');
  if (topP !== undefined && typeof topP !== 'number') throw typeError(`options.topP is ${describe(topP)}; expected a number in (0, 1]`);
  const onToken = at('onToken');
  if (onToken !== undefined && typeof onToken !== 'function') throw typeError(`options.onToken is ${describe(onToken)}; expected a function (id, index) => void`);
  return { maxNewTokens, temperature: temperature ?? 0, topK, topP, onToken, options: o };
});

/**
 * `new Transformer(config)`'s config, each key checked for its kind in the order the model reads them
 * (the core checks that they fit together). An absent optional key is undefined (the core has the
 * defaults); `mlp` is undefined (no MLP), 'gelu_new' or 'silu_gated'; `seed` a bigint; `options` the
 * caller's object, whose dtype Rust reads last.
 */
export const readModelConfig = guarded((value) => {
  const keys = 'vocabSize, contextLength, embedDim, numHeads, numLayers, positions, mlp, layerNorm, bias, seed, dtype, norm, normEps, mlpWidth, mlpBias, numKVHeads, ropeBase, tiedEmbeddings';
  const o = requiredOptions(value, 'config', keys, '{ vocabSize, contextLength, embedDim, numHeads, numLayers }');
  const at = (key) => get(o, key, () => `config.${key}`);
  const choice = (key, choices, expected) => {
    const x = at(key);
    if (x === undefined || choices.includes(x)) return x;
    throw typeError(`config.${key} is ${describe(x)}; expected ${expected}`);
  };
  const flag = (key, fallback) => {
    const x = at(key);
    return x === undefined ? fallback : boolean(x, `config.${key}`);
  };
  const counted = (key, required) => {
    const x = at(key);
    if (x === undefined && required) throw typeError(`config.${key} is missing; expected a positive integer`);
    return x === undefined ? undefined : count(x, `config.${key}`);
  };
  const positions = choice('positions', ['shortformer', 'learned', 'rope', 'none'], "'shortformer', 'learned', 'rope' or 'none'");
  const numLayers = at('numLayers');
  if (typeof numLayers !== 'number') throw typeError(`config.numLayers is ${describe(numLayers)}; expected an integer 0 … 1024`);
  if (!(numLayers >= 0 && Number.isInteger(numLayers) && numLayers <= 1024)) throw rangeError(`config.numLayers is ${numLayers}; expected an integer 0 … 1024`);
  const c = { positions, numLayers };
  for (const key of ['vocabSize', 'contextLength', 'embedDim', 'numHeads']) c[key] = counted(key, true);
  const mlp = choice('mlp', [false, true, 'gelu_new', 'silu_gated'], "false (no MLP), true or 'gelu_new' (a GELU MLP, GPT-2's) or 'silu_gated' (a SiLU-gated MLP, Llama's)");
  c.mlp = mlp === true ? 'gelu_new' : mlp || undefined;
  c.layerNorm = flag('layerNorm', false);
  c.norm = choice('norm', ['layer', 'rms'], "'layer' (LayerNorm) or 'rms' (RMSNorm)");
  c.normEps = positive(at('normEps'), 'config.normEps');
  c.mlpWidth = counted('mlpWidth', false);
  c.mlpBias = flag('mlpBias', true);
  c.numKVHeads = counted('numKVHeads', false);
  c.ropeBase = positive(at('ropeBase'), 'config.ropeBase');
  c.bias = flag('bias', false);
  c.seed = seed(at('seed'), 'config.seed');
  c.tiedEmbeddings = flag('tiedEmbeddings', false);
  c.options = o;
  return c;
});

/**
 * `new MultiHeadAttention(config)`'s config, read in the layer's order: `numKVHeads` is `numHeads` when
 * absent, `seed` a bigint, `ropeBase` undefined without `rope`.
 */
export const readLayerConfig = guarded((value) => {
  const keys = 'embedDim, numHeads, numKVHeads, bias, dropout, seed, rope';
  const o = requiredOptions(value, 'config', keys, '{ embedDim, numHeads, bias?, dropout?, seed? }');
  const at = (key) => get(o, key, () => `config.${key}`);
  const counted = (key) => {
    const x = at(key);
    if (x === undefined) throw typeError(`config.${key} is missing; expected a positive integer`);
    return count(x, `config.${key}`);
  };
  const c = { embedDim: counted('embedDim'), numHeads: counted('numHeads') };
  const kv = at('numKVHeads');
  c.numKVHeads = kv === undefined ? c.numHeads : count(kv, 'config.numKVHeads');
  const bias = at('bias');
  c.bias = bias === undefined ? true : boolean(bias, 'config.bias');
  c.dropout = probability(at('dropout'), 'config.dropout');
  c.seed = seed(at('seed'), 'config.seed');
  c.ropeBase = rope(at('rope'), 'config.rope', 'base')?.[0];
  return c;
});

/**
 * `setWeights`' `{ W_Q?, …, b_O? }`, in that order: each weight nested (any shape: the core checks it) or a
 * flat Float32Array / Float64Array of `shapes[2i]`×`shapes[2i + 1]` entries, its [rows, cols] written back
 * into `shapes`; each bias a number[] or a flat array of `lengths[i]` entries (`lengths` empty: the layer has
 * no biases, and one given is refused naming `createdBy`). An array of 8 Float64Arrays, undefined where absent.
 */
export const readLayerWeights = guarded((value, shapes, lengths, createdBy, maxElements) => {
  const o = requiredOptions(value, 'weights', 'W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O', '{ W_Q?, W_K?, W_V?, W_O?, b_Q?, b_K?, b_V?, b_O? }');
  const at = (key) => get(o, key, () => `weights.${key}`);
  // a flat array as `tensor` reads it; otherwise the property is read a second time and read nested
  const read = (key, shape, nested) => {
    const raw = at(key);
    if (isInstance(raw, Float32Array) || isInstance(raw, Float64Array)) return tensor(raw, `weights.${key}`, shape, maxElements);
    const again = at(key);
    return again === undefined ? undefined : nested(again, `weights.${key}`);
  };
  const out = ['W_Q', 'W_K', 'W_V', 'W_O'].map((key, i) => {
    const shape = shapes.subarray(2 * i, 2 * i + 2);
    return read(key, Array.from(shape), (raw, place) => fastNumberRows(raw, shape) ?? readTable(raw, place, 'number[][]', maxElements, shape, Float64Array, finite));
  });
  ['b_Q', 'b_K', 'b_V', 'b_O'].forEach((key, i) => {
    if (lengths.length > 0) out.push(read(key, [lengths[i]], (raw, place) => vector(raw, place, maxElements)));
    else if (at(key) !== undefined) throw typeError(`weights.${key}: this layer has no biases (it was built with bias: false by ${createdBy})`);
  });
  return out;
});

/**
 * `MultiHeadAttention.fromFusedQKV(weights)` (`fused`) or `.fromPyTorch(state)`, read in the layer's order:
 * the input and output projections `w`, `wO` as `{ values, rows, cols, place }`, their biases `b`, `bO` the
 * same or undefined, `numHeads`, `dropout` and `seed` (a bigint). PyTorch's output projection may be given
 * under either spelling of its key, not both.
 */
export const readLayerParts = guarded((value, fused, maxElements) => {
  const name = fused ? 'weights' : 'state';
  const o = fused
    ? requiredOptions(value, name, 'W_QKV, b_QKV, W_O, b_O, numHeads, dropout, seed', '{ W_QKV, b_QKV?, W_O, b_O?, numHeads }')
    : requiredOptions(value, name, 'in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias, out_proj.weight, out_proj.bias, numHeads, dropout, seed', '{ in_proj_weight, in_proj_bias?, out_proj_weight, out_proj_bias?, numHeads }');
  const at = (key) => get(o, key, () => `${name}.${key}`);
  const read = (key, nested) => {
    const raw = at(key);
    if (raw === undefined) return undefined;
    const place = `${name}.${key}`;
    const shape = [1, 0];
    const values = nested ? fastNumberRows(raw, shape) ?? readTable(raw, place, 'number[][]', maxElements, shape, Float64Array, finite) : vector(raw, place, maxElements);
    return { values, rows: shape[0], cols: nested ? shape[1] : values.length, place };
  };
  const required = (key) => {
    const m = read(key, true);
    if (m === undefined) throw typeError(`${name}.${key} is missing; expected a number[][]`);
    return m;
  };
  const either = (a, b, aKey, bKey) => {
    if (a !== undefined && b !== undefined) throw typeError(`state has both ${aKey} and "${bKey}"; give one of them`);
    return a ?? b;
  };
  let p;
  if (fused) p = { w: required('W_QKV'), wO: required('W_O'), b: read('b_QKV', false), bO: read('b_O', false) };
  else {
    const w = required('in_proj_weight');
    const wO = either(read('out_proj_weight', true), read('out_proj.weight', true), 'out_proj_weight', 'out_proj.weight');
    if (wO === undefined) throw typeError('state.out_proj_weight is missing; expected a C×C number[][] (or the state dict key "out_proj.weight")');
    p = { w, wO, b: read('in_proj_bias', false), bO: either(read('out_proj_bias', false), read('out_proj.bias', false), 'out_proj_bias', 'out_proj.bias') };
  }
  const heads = at('numHeads');
  if (heads === undefined) throw typeError(`${name}.numHeads is missing; expected a positive integer`);
  p.numHeads = count(heads, `${name}.numHeads`);
  p.dropout = probability(at('dropout'), `${name}.dropout`);
  p.seed = seed(at('seed'), `${name}.seed`);
  return p;
});

/** `initThreadPool`'s `threads`: 0 for undefined (the core count), else an integer 1 … `max`. */
export const readThreads = guarded((value, max) => {
  if (value === undefined) return 0;
  const place = 'initThreadPool(threads): threads';
  if (typeof value !== 'number') throw typeError(`${place} is ${describe(value)}; expected a number of threads from 1 to ${max}, or nothing for the core count`);
  if (!(Number.isInteger(value) && value >= 1 && value <= max)) throw rangeError(`${place} is ${value}; expected an integer from 1 to ${max}`);
  return value;
});


// ---- typed matrices: { data: Float32Array | Float64Array, shape: [T, C] | [B, T, C] } --------

// 32 for a Float32Array, 64 for a Float64Array, 1 for another typed array or DataView, 0 for
// anything else, -1 when asking throws (`instanceof` on a revoked Proxy does)
function floatKind(x) {
  try { return x instanceof Float32Array ? 32 : x instanceof Float64Array ? 64 : ArrayBuffer.isView(x) ? 1 : 0; } catch (_) { return -1; }
}

// the number of elements a typed array really holds (the TypedArray intrinsic, which a subclass
// cannot override), or -1 for an object that is not itself a typed array (a Proxy)
const typedLength = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Float32Array.prototype), 'length').get;

/** True for a value only meant as a typed matrix: an object that is not an array or a function. */
export function isTypedCandidate(value) {
  if (value === null || typeof value !== 'object') return false;
  try { return !Array.isArray(value); } catch (_) { return false; } // a revoked Proxy: the number[][] reader names it
}

/**
 * `data.length` of a Float32Array/Float64Array, checked to be what the view really holds: a Proxy
 * (which `instanceof` lets through) is a TypeError, a subclass reporting another length a RangeError.
 */
function floatArrayLength(data, place) {
  const reported = get(data, 'length', `${place}.length`);
  let real;
  try { real = typedLength.call(data); } catch (_) { real = -1; }
  if (real < 0) throw typeError(`${place} is not itself a Float32Array or Float64Array (a Proxy?); pass the typed array itself`);
  if (reported !== real) {
    throw rangeError(`${place}.length is ${bare(reported)} but ${place} holds ${real} values; pass a typed array whose length is its own`);
  }
  return real;
}


const arrayName = (kind) => (kind === 32 ? 'Float32Array' : 'Float64Array');
const shapeText = (shape) => `[${Array.from(shape).join(', ')}]`;

/**
 * `{ data, shape }` with `shape` of rank 2 ([T, C]) or, when `batches` is true, 3 ([B, T, C]).
 * Returns `data` (checked: its real length is the shape's product, every value finite) and writes
 * `out` = [rank, precision (32 or 64), ...shape]. Passed beside a first matrix (`likeName` not '':
 * its precision `likeKind` and shape `likeShape`; `group` names them all in messages), it must have
 * that one's form and precision, and with `sameRank` its rank and batch size B. With `cols` ≠ 0 it
 * must have `cols` columns (a layer's embedDim).
 */
export const readTypedMatrix = guarded(typedMatrix);
function typedMatrix(value, name, batches, maxElements, out, cols, likeName, likeKind, likeShape, group, sameRank) {
  const expectedShape = batches ? '[T, C] or [B, T, C]' : '[T, C]';
  const expected = `number[][] or { data: Float32Array | Float64Array, shape: ${expectedShape} }`;
  const like = likeName !== '';
  if (like && !isTypedCandidate(value)) {
    throw typeError(`${name} is ${describe(value)} but ${likeName} is { data: ${arrayName(likeKind)}, shape: ${shapeText(likeShape)} }; pass ${group} in the same form`);
  }
  if (!isTypedCandidate(value)) throw typeError(`${name} is ${describe(value)}; expected ${expected}`);
  // 1. data: a Float32Array or Float64Array
  const data = get(value, 'data', `${name}.data`);
  const kind = floatKind(data);
  if (kind !== 32 && kind !== 64) {
    if (data === undefined) throw typeError(`${name} is an object without data; expected ${expected}`);
    if (kind === 1) throw typeError(`${name}.data is a typed array of another kind; expected a Float32Array or Float64Array (convert with Float32Array.from)`);
    throw typeError(`${name}.data is ${describe(data)}; expected a Float32Array or Float64Array`);
  }
  // 2. shape: [T, C] or [B, T, C] of positive integers, not too large
  const shapeValue = get(value, 'shape', `${name}.shape`);
  if (!isArray(shapeValue, `${name}.shape`)) throw typeError(`${name}.shape is ${describe(shapeValue)}; expected ${expectedShape}`);
  const rank = arrayLength(shapeValue, `${name}.shape`);
  if (rank !== 2 && !(batches && rank === 3)) throw rangeError(`${name}.shape has ${rank} entries; expected ${expectedShape}`);
  const shape = [];
  for (let i = 0; i < rank; i++) {
    const place = `${name}.shape[${i}]`;
    shape.push(count(get(shapeValue, i, place), place));
  }
  const perBatch = checkedLength(shape[rank - 2], shape[rank - 1], name, maxElements);
  const total = checkedLength(perBatch, rank === 3 ? shape[0] : 1, name, maxElements);
  // 3. data.length = the product of the shape
  const length = floatArrayLength(data, `${name}.data`);
  if (length !== total) throw rangeError(`${name}.data has ${length} values but ${name}.shape [${shape.join(', ')}] needs ${total}`);
  // 4. every value finite
  for (let i = 0; i < length; i++) {
    const x = data[i];
    if (x - x !== 0) {
      const [rows, cols] = [shape[rank - 2], shape[rank - 1]];
      const position = rank === 3
        ? `${name}[${Math.floor(i / (rows * cols))}][${Math.floor(i / cols) % rows}][${i % cols}]`
        : `${name}[${Math.floor(i / cols)}][${i % cols}]`;
      throw rangeError(`${name}.data[${i}] (${position}) is ${x}; expected a finite number`);
    }
  }
  if (like && kind !== likeKind) {
    throw typeError(`${name}.data is a ${arrayName(kind)} but ${likeName}.data is a ${arrayName(likeKind)}; pass ${group} in the same precision`);
  }
  if (like && sameRank && (rank !== likeShape.length || (rank === 3 && shape[0] !== likeShape[0]))) {
    throw rangeError(`${name}.shape is ${shapeText(shape)} but ${likeName}.shape is ${shapeText(likeShape)}; ${group} need the same rank and batch size B`);
  }
  if (cols !== 0 && shape[rank - 1] !== cols) {
    throw rangeError(`${name}.shape is ${shapeText(shape)} but the layer's embedDim is ${cols}: ${name} must be ${rank === 3 ? `[B, T, ${cols}]` : `[T, ${cols}]`}`);
  }
  out[0] = rank;
  out[1] = kind;
  for (let i = 0; i < rank; i++) out[2 + i] = shape[i];
  return data;
}

/**
 * `options[key]` beside a typed input called `input` of precision `kind` (32 or 64): undefined,
 * number[][], or a [C, C] typed matrix of that precision, as a Float64Array (exact for both) with
 * `out` = [rows, cols]. For a Float32Array input, a number[][] entry beyond f32's range is a
 * RangeError rather than an Infinity later.
 */
function weight(options, key, input, kind, maxElements, out) {
  const place = `options.${key}`;
  const at = () => (options === undefined ? undefined : get(options, key, place));
  let raw = at();
  if (raw === undefined || !isTypedCandidate(raw)) {
    raw = at(); // read again: the number[][] reader's own read
    if (raw === undefined) return undefined;
    const values = fastNumberRows(raw, out) ?? readTable(raw, place, 'number[][]', maxElements, out, Float64Array, finite);
    const i = kind === 32 ? values.findIndex((x) => !Number.isFinite(Math.fround(x))) : -1;
    if (i >= 0) {
      throw rangeError(`${place}[${Math.floor(i / out[1])}][${i % out[1]}] is ${values[i]}, beyond the range of Float32Array (about 3.4e38); scale ${key} down or pass Float64Array input`);
    }
    return values;
  }
  const shape = new Uint32Array(5);
  const data = typedMatrix(raw, place, false, maxElements, shape, 0, '', 0, [], '', false);
  if (shape[1] !== kind) {
    throw typeError(`${place}.data is a ${arrayName(shape[1])} but ${input}.data is a ${arrayName(kind)}; pass ${key} in ${input}'s precision (or as number[][])`);
  }
  out[0] = shape[2];
  out[1] = shape[3];
  return Float64Array.from(data);
}

// ---- an export's options, read whole in the order of its steps ----------------------------------

/** A number[][] (or with `bools` a boolean[][]) as `{ values, rows, cols, place }` (Checked::table). */
function table(raw, place, maxElements, bools) {
  const shape = [0, 0];
  const values = bools
    ? readTable(raw, place, 'boolean[][]', maxElements, shape, Uint8Array, boolean)
    : fastNumberRows(raw, shape) ?? readTable(raw, place, 'number[][]', maxElements, shape, Float64Array, finite);
  return { values, rows: shape[0], cols: shape[1], place };
}

/** `[layer, head]`, two integers ≥ 0. */
function headAt(raw, place) {
  const expected = 'expected [layer, head], two integers ≥ 0';
  if (!isArray(raw, place)) throw typeError(`${place} is ${describe(raw)}; ${expected}`);
  const len = arrayLength(raw, place);
  if (len !== 2) throw rangeError(`${place} has ${len} entries; ${expected}`);
  return [0, 1].map((i) => index(get(raw, i, `${place}[${i}]`), `${place}[${i}]`));
}

/** A string as Rust's `{:?}` prints it in messages: quoted, with quotes, backslashes and control characters escaped. */
const quoted = (s) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\t/g, '\\t').replace(/\r/g, '\\r').replace(/\n/g, '\\n')
  .replace(/\0/g, '\\0').replace(/[\x01-\x1f\x7f-\x9f]/g, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`)}"`;

/**
 * How each kind of option is read: `(raw, place, call)`, `raw` the property's value (undefined when
 * absent), `call` what the export passed (`o` the options object, `kind` 0 for number[][] input or the
 * typed input's precision 32 | 64, `input` that input's name, `extra` the export's flags).
 */
const HOW = {
  count: (raw, place) => count(raw, place),
  need: (raw, place) => {
    if (raw === undefined) throw typeError(`${place} is missing; expected a positive integer`);
    return count(raw, place);
  },
  window: (raw, place) => (raw === undefined ? undefined : count(raw, place)),
  flag: (raw, place) => (raw === undefined ? false : boolean(raw, place)),
  index: (raw, place) => index(raw, place),
  step: (raw, place) => index(raw, place, 9007199254740991),
  seed: (raw, place) => seed(raw, place),
  dtype: (raw, place) => dtype(raw, place),
  raw: (raw) => raw,
  matrix: (raw, place, call) => (raw === undefined ? undefined : table(raw, place, call.maxElements, false)),
  bools: (raw, place, call) => (raw === undefined ? undefined : table(raw, place, call.maxElements, true)),
  rope: (raw, place) => rope(raw, place, 'base, offset'),
  base: (raw, place) => positive(raw, place) ?? 10000,
  offset: (raw, place) => (raw === undefined ? 0 : index(raw, place)),
  // setState's dtype: the model's own (`input`)
  sameDtype: (raw, place, call) => {
    if (raw !== call.input) throw typeError(`${place} is ${describe(raw)}; this model is '${call.input}': a state restores only a model of the same dtype`);
  },
  // fromPretrained's config, as JSON text for the core's reader
  config: (raw, place) => {
    const expected = 'expected the parsed config.json of a Hugging Face checkpoint (an object with model_type)';
    // (the doubled "expected" of a missing config and weights is their message as published, kept word for word)
    if (raw === undefined || raw === null) throw typeError(`${place} is missing; expected ${expected}`);
    if (typeof raw !== 'object' || isArray(raw, place)) throw typeError(`${place} is ${describe(raw)}; ${expected}`);
    let text;
    try { text = JSON.stringify(raw); } catch (_) { /* below */ }
    if (typeof text !== 'string') throw typeError(`${place} cannot be written as JSON (a cycle or a bigint?); ${expected}`);
    return text;
  },
  // fromPretrained's weights: the file's bytes, never copied here
  bytes: (raw, place) => {
    const expected = 'expected the bytes of a model.safetensors file (an ArrayBuffer or a Uint8Array)';
    if (raw === undefined || raw === null) throw typeError(`${place} is missing; expected ${expected}`);
    if (isInstance(raw, Uint8Array)) return raw;
    if (isInstance(raw, ArrayBuffer)) return new Uint8Array(raw);
    throw typeError(`${place} is ${describe(raw)}; ${expected}`);
  },
  // forward's cache: then key and value must be omitted (the cache holds the layer's own: self-attention)
  cache: (raw, place, call) => {
    if (raw === undefined) return undefined;
    const id = cacheId(raw, place);
    ['key', 'value'].forEach((name, i) => {
      if (call.extra[0] & (1 << i)) {
        throw typeError(`${name} must be omitted with options.cache: decoding is self-attention over the cached keys and values (forward(x, undefined, undefined, { cache, causal: true }))`);
      }
    });
    return id;
  },
  // W_O beside Q (or a projection beside X): number[][] for number[][] input, else also a typed matrix of its precision
  weight: (raw, place, call, key) => weightAt(call, key, place, raw),
  required: (raw, place, call, key) => {
    const w = weightAt(call, key, place, raw);
    if (w !== undefined) return w;
    const typed = call.kind === 0 ? '' : ` or { data: ${arrayName(call.kind)}, shape: [C, C] }`;
    throw typeError(`${place} is missing; expected a C×C number[][]${typed} oriented [in, out]`);
  },
  // [rows, each row's length…] and the values, read only while the counts are the model's (`extra`:
  // numLayers, numHeads), so that the core names a wrong count before anything after it is read
  headMask: (raw, place, call) => {
    if (raw === undefined) return undefined;
    const expected = 'expected boolean[][], numLayers rows of numHeads booleans (false switches a head off)';
    const name = 'options.headMask';
    if (!isArray(raw, name)) throw typeError(`${name} is ${describe(raw)}; ${expected}`);
    const [layers, heads] = call.extra;
    const lengths = [arrayLength(raw, name)];
    const values = [];
    for (let l = 0; l < layers && lengths[0] === layers; l++) {
      const here = `${name}[${l}]`;
      const row = get(raw, l, here);
      if (!isArray(row, here)) throw typeError(`${here} is ${describe(row)}; ${expected}`);
      lengths.push(arrayLength(row, here));
      if (lengths[l + 1] !== heads) break;
      for (let i = 0; i < heads; i++) values.push(boolean(get(row, i, `${here}[${i}]`), `${here}[${i}]`) ? 1 : 0);
    }
    return { values: Uint8Array.from(values), lengths: Uint32Array.from(lengths) };
  },
  // [l1, i, l2, j, input] per cut, input 0 (query), 1 (key) or 2 (value)
  pathMask: (raw) => {
    if (raw === undefined) return new Uint32Array(0);
    const name = 'options.pathMask';
    if (!isArray(raw, name)) throw typeError(`${name} is ${describe(raw)}; expected an array of { from: [layer, head], to: [layer, head], input: 'query' | 'key' | 'value' }`);
    const n = arrayLength(raw, name);
    const out = new Uint32Array(5 * n);
    for (let k = 0; k < n; k++) {
      const place = `${name}[${k}]`;
      const o = requiredOptions(get(raw, k, place), place, 'from, to, input', '{ from: [layer, head], to: [layer, head], input }');
      const input = get(o, 'input', () => `${place}.input`);
      const i = ['query', 'key', 'value'].indexOf(input);
      if (i < 0) throw typeError(`${place}.input is ${typeof input === 'string' ? quoted(input) : describe(input)}; expected 'query', 'key' or 'value'`);
      out.set([...headAt(get(o, 'from', () => `${place}.from`), `${place}.from`), ...headAt(get(o, 'to', () => `${place}.to`), `${place}.to`), i], 5 * k);
    }
    return out;
  },
};

/** `weight` of `call`'s options for `key`, as `table` gives it (the typed reader reads the property itself). */
function weightAt(call, key, place, raw) {
  if (call.kind === 0) return HOW.matrix(raw, place, call); // read by `call`
  const out = [0, 0];
  const values = weight(call.o, key, call.input, call.kind, call.maxElements, out);
  return values === undefined ? undefined : { values, rows: out[0], cols: out[1], place };
}

/**
 * An export's options `{ known }` (`expected` '' when they may be left out, else what a missing one is
 * told to be), read in the order of `steps` ("key:how …", see HOW) into a fresh object Rust reads by
 * kind (convert::Checked); `kind`, `input` and `extra` as HOW's `call`.
 */
export const readCall = guarded(call);
function call(value, name, known, expected, steps, kind, input, extra, maxElements) {
  const o = expected === '' ? options(value, name, known) : requiredOptions(value, name, known, expected);
  const c = { o, kind, input, extra, maxElements };
  const out = {};
  for (const step of steps.split(' ')) {
    const [key, how] = step.split(':');
    // `weight` reads the property itself, as the typed reader always has
    const raw = (how === 'weight' || how === 'required') && kind !== 0 ? undefined : o === undefined ? undefined : get(o, key, () => `${name}.${key}`);
    out[key] = HOW[how](raw, `${name}.${key}`, c, key);
  }
  return out;
}

/**
 * `multiHeadAttention`'s (and its trace's) options: the positional `numberOfHeads, headDimensions`
 * pair, or an options object read by `call` (`headDimensions` then undefined).
 */
export const readMultiHead = guarded((value, headDimensions, known, expected, steps, kind, maxElements) => {
  if (typeof value === 'number') {
    return { numberOfHeads: count(value, 'numberOfHeads (argument 4)'), headDimensions: count(headDimensions, 'headDimensions (argument 5)') };
  }
  if (headDimensions !== undefined) {
    throw typeError('headDimensions (argument 5) is only for the positional form multiHeadAttention(Q, K, V, numberOfHeads, headDimensions); with an options object, put headDimensions inside it');
  }
  return call(value, 'options', known, expected, steps, kind, 'Q', [], maxElements);
});

/** `key` of an options object a reader above already checked (`o`; none when undefined or null), read later by `how`. */
export const readKey = guarded((o, key, place, how) => HOW[how](o === undefined || o === null ? undefined : get(o, key, place), place));
