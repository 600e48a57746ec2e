//! Conversions across the boundary: JS values → core types (with precise errors), core
//! results → JS values, and `AttentionError` → `TypeError` / `RangeError` / `Error`.
//!
//! Every property read goes through `Reflect.get`, which catches throwing getters and
//! Proxy traps, so hostile input becomes a `TypeError` rather than a half-finished call.

use js_sys::{Array, Float32Array, Float64Array, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::error::{AttentionError, Result};
use crate::mask::{BoolMatrix, Mask};
use crate::matrix::{checked_len, Matrix};
use crate::trace::{Step, Trace};

#[wasm_bindgen]
extern "C" {
    /// `Array.isArray`, which throws for a revoked Proxy. js-sys's binding does not catch, so the
    /// exception would unwind through wasm, skipping destructors (leaking memory and externref
    /// slots); this one returns the exception instead.
    #[wasm_bindgen(js_namespace = Array, js_name = isArray, catch)]
    fn is_array_or_throw(value: &JsValue) -> std::result::Result<bool, JsValue>;
}

// Reading properties without `catch` imports. A `catch` import that returns a JS value leaks
// one externref-table slot each time it throws (wasm-bindgen 0.2.130 allocates the slot for the
// return value before it sees the exception, and never frees it), so a loop over a throwing
// getter grew the table without bound (20,000 calls: 1,028 → 33,796 slots). These helpers catch
// in JS and hand back a marker instead; the thrown value is fetched separately.
#[wasm_bindgen(inline_js = r#"
const FAILED = Symbol('attention-lab: reading threw');
let thrown;
export function readProperty(target, key) {
  try { return Reflect.get(target, key); } catch (e) { thrown = e; return FAILED; }
}
export function ownKeys(target) {
  try { return Reflect.ownKeys(target); } catch (e) { thrown = e; return FAILED; }
}
export function readFailed(value) { return value === FAILED; }
export function takeThrown() { const e = thrown; thrown = undefined; return e; }
// 32 for a Float32Array, 64 for a Float64Array, 1 for another typed array or DataView, 0 for
// anything else, -1 when asking throws (`instanceof` on a revoked Proxy does)
export function floatKind(x) {
  try { return x instanceof Float32Array ? 32 : x instanceof Float64Array ? 64 : ArrayBuffer.isView(x) ? 1 : 0; } catch (e) { return -1; }
}
// the number of elements a Float32Array/Float64Array really holds (the TypedArray intrinsic, which
// a subclass cannot override), or -1 for an object that is not itself a typed array (a Proxy)
const typedLength = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Float32Array.prototype), 'length').get;
export function viewLength(x) {
  try { return typedLength.call(x); } catch (e) { return -1; }
}
// the message of a thrown Error, or undefined (not an Error, or asking throws)
export function errorMessage(e) {
  try { if (e instanceof Error) { const m = Reflect.get(e, 'message'); return typeof m === 'string' ? m : undefined; } } catch (_) {}
  return undefined;
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = readProperty)]
    fn read_property(target: &JsValue, key: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = ownKeys)]
    fn own_keys(target: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = readFailed)]
    fn read_failed(value: &JsValue) -> bool;
    #[wasm_bindgen(js_name = takeThrown)]
    fn take_thrown() -> JsValue;
    #[wasm_bindgen(js_name = floatKind)]
    pub(crate) fn float_kind(value: &JsValue) -> i32;
    #[wasm_bindgen(js_name = viewLength)]
    fn view_length(value: &JsValue) -> f64;
    #[wasm_bindgen(js_name = errorMessage)]
    fn error_message(thrown: &JsValue) -> Option<String>;
}

/// `result` of [`read_property`] or [`own_keys`], or what reading threw.
fn caught(result: JsValue) -> std::result::Result<JsValue, JsValue> {
    if read_failed(&result) {
        Err(take_thrown())
    } else {
        Ok(result)
    }
}

/// `Array.isArray(value)`, or `None` when asking throws (a revoked Proxy).
fn try_is_array(value: &JsValue) -> Option<bool> {
    is_array_or_throw(value).ok()
}

/// `Array.isArray(value)`; a revoked Proxy becomes a `TypeError` naming `place`.
pub fn is_array(value: &JsValue, place: &str) -> Result<bool> {
    try_is_array(value).ok_or_else(|| {
        AttentionError::type_error(format!("{place} could not be read (it is a revoked Proxy)"))
    })
}

/// Core error → JS error: the one place where error classes are chosen.
pub fn to_js_error(error: AttentionError) -> JsValue {
    match error {
        AttentionError::Type(m) => js_sys::TypeError::new(&m).into(),
        AttentionError::Range(m) => js_sys::RangeError::new(&m).into(),
        AttentionError::State(m) => js_sys::Error::new(&m).into(),
    }
}

/// Runs a conversion-and-compute closure and turns its error into a JS error.
pub fn js_result<T>(f: impl FnOnce() -> Result<T>) -> std::result::Result<T, JsValue> {
    f().map_err(to_js_error)
}

/// A short description of a value's kind for messages: "a string", "undefined", "NaN", …
pub fn describe(value: &JsValue) -> String {
    if value.is_undefined() {
        "undefined".into()
    } else if value.is_null() {
        "null".into()
    } else if let Some(x) = value.as_f64() {
        if x.is_nan() {
            "NaN".into()
        } else {
            format!("the number {}", number_text(x))
        }
    } else if value.is_string() {
        "a string".into()
    } else if value.as_bool().is_some() {
        "a boolean".into()
    } else if try_is_array(value).is_none() {
        "a revoked Proxy".into()
    } else if try_is_array(value) == Some(true) {
        "an array".into()
    } else if value.is_function() {
        "a function".into()
    } else if value.is_bigint() {
        "a bigint".into()
    } else if value.is_symbol() {
        "a symbol".into()
    } else {
        "an object".into()
    }
}

/// A number the way JS prints it: `Infinity`, `1e+308`, `0.5` (Rust would print `inf` and 309 digits).
pub fn number_text(x: f64) -> String {
    String::from(js_sys::Number::from(x).to_string_with_radix(10).unwrap_or_else(|_| js_sys::JsString::from("a number")))
}

/// `target[key]`, with a throwing getter or Proxy trap turned into a `TypeError` naming `place`.
pub fn get(target: &JsValue, key: &JsValue, place: &str) -> Result<JsValue> {
    get_lazy(target, key, || place.to_string())
}

/// [`get`] with the place named only when reading throws (the success path formats nothing).
pub fn get_lazy(target: &JsValue, key: &JsValue, place: impl FnOnce() -> String) -> Result<JsValue> {
    caught(read_property(target, key)).map_err(|thrown| {
        let place = place();
        // the thrown value may itself be hostile (a revoked Proxy, a `message` getter that throws)
        let message = error_message(&thrown);
        let why = message.unwrap_or_else(|| describe(&thrown));
        AttentionError::type_error(format!("{place} could not be read (reading it threw: {why})"))
    })
}

/// The length of an array, read defensively.
fn array_length(array: &JsValue, place: &str) -> Result<usize> {
    array_length_lazy(array, || place.to_string())
}

/// [`array_length`] with the place named only on an error.
fn array_length_lazy(array: &JsValue, place: impl Fn() -> String) -> Result<usize> {
    let length = get_lazy(array, &JsValue::from_str("length"), || format!("{}.length", place()))?;
    match length.as_f64() {
        Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= u32::MAX as f64 => Ok(n as usize),
        _ => Err(AttentionError::type_error(format!("{}.length is {}; expected an array length", place(), describe(&length)))),
    }
}

/// Reads a rectangular `T[][]` table, converting each cell with `cell`.
/// Errors: not an array → TypeError; empty or ragged → RangeError.
fn read_table<T>(value: &JsValue, name: &str, expected: &str, cell: impl Fn(JsValue, &dyn Fn() -> String) -> Result<T>) -> Result<(usize, usize, Vec<T>)> {
    if !is_array(value, name)? {
        return Err(AttentionError::type_error(format!(
            "{name} is {}; expected an array of rows ({expected})",
            describe(value)
        )));
    }
    let rows = array_length(value, name)?;
    if rows == 0 {
        return Err(AttentionError::range_error(format!("{name} is empty; expected at least one row")));
    }
    let mut cols = 0;
    let mut data = Vec::new();
    for i in 0..rows {
        let place = || format!("{name}[{i}]");
        let row = get_lazy(value, &JsValue::from(i as u32), place)?;
        let Some(row_is_array) = try_is_array(&row) else {
            return Err(AttentionError::type_error(format!("{} could not be read (it is a revoked Proxy)", place())));
        };
        if !row_is_array {
            return Err(AttentionError::type_error(format!(
                "{} is {}; expected a row array ({expected})",
                place(),
                describe(&row)
            )));
        }
        let len = array_length_lazy(&row, place)?;
        if i == 0 {
            if len == 0 {
                return Err(AttentionError::range_error(format!("{name}[0] is empty; expected at least one column")));
            }
            cols = len;
            // a declared size is only a claim (a sparse `new Array(2**27)` costs nothing in JS):
            // refuse impossible ones, but let memory follow the entries actually read
            checked_len(rows, cols, name)?;
        } else if len != cols {
            return Err(AttentionError::range_error(format!(
                "{name}[{i}] has {len} entries but {name}[0] has {cols}: every row must be the same length"
            )));
        }
        for j in 0..len {
            let here = || format!("{name}[{i}][{j}]");
            let entry = get_lazy(&row, &JsValue::from(j as u32), here)?;
            let value = cell(entry, &here)?;
            if data.len() == data.capacity() {
                data.try_reserve(data.len().max(64)).map_err(|_| {
                    AttentionError::range_error(format!("{name} is {rows}×{cols}, too large to hold in memory"))
                })?;
            }
            data.push(value);
        }
    }
    Ok((rows, cols, data))
}

#[wasm_bindgen(inline_js = r#"
// The fast path for the common case: a plain array of equal-length arrays of finite numbers,
// copied in one call instead of one Reflect.get per entry. Anything else (a hole, a non-number,
// NaN, a ragged row, a getter or Proxy trap that throws, …) returns undefined, and the careful
// reader in convert.rs reads the value again and reports exactly what is wrong.
export function readNumberRows(value) {
  try {
    if (!Array.isArray(value)) return undefined;
    const rows = value.length;
    if (rows === 0) return undefined;
    const first = value[0];
    if (!Array.isArray(first)) return undefined;
    const cols = first.length;
    if (cols === 0 || rows * cols > 4194304) return undefined; // 2^22: larger inputs take the careful path, whose memory grows fallibly
    const out = new Float64Array(2 + rows * cols); // [rows, cols, values…]
    out[0] = rows;
    out[1] = cols;
    for (let i = 0; i < rows; i++) {
      const row = value[i];
      if (!Array.isArray(row) || row.length !== cols) return undefined;
      for (let j = 0; j < cols; j++) {
        const x = row[j];
        if (typeof x !== "number" || !Number.isFinite(x)) return undefined;
        out[2 + i * cols + j] = x;
      }
    }
    return out;
  } catch (_) {
    return undefined;
  }
}

// The fast path for a whole small call, in one JS call: dotProductAttention(Q, K, V, { causal? }) or
// multiHeadAttention(Q, K, V, { numberOfHeads, headDimensions, causal? } | numberOfHeads, headDimensions)
// with plain arrays of equal-length arrays of finite numbers, written straight into `out` (a view of
// wasm memory) as [h, d, causal, T_Q, C_Q, T_K, C_K, T_V, C_V, Q…, K…, V…]. Returns how many values it
// wrote, or -1 for anything else (other keys, W_O or mask present, a value of another type, a throwing
// getter or Proxy trap, too large for `out`): then the readers below and in convert.rs read the whole
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
"#)]
extern "C" {
    // no `catch`: readNumberRows catches everything itself (and a throwing `catch` import would leak a slot)
    #[wasm_bindgen(js_name = readNumberRows)]
    fn read_number_rows(value: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = writeNumberRows)]
    fn write_number_rows(data: &[f64], cols: u32) -> JsValue;
    // no `catch`: readSmallCall catches everything itself
    #[wasm_bindgen(js_name = readSmallCall)]
    fn read_small_call_js(q: &JsValue, k: &JsValue, v: &JsValue, options: &JsValue, head_dimensions: &JsValue, multi_head: bool, out: &mut [f64]) -> f64;
}

/// Values [`read_small_call`] can take in one JS call (Q, K and V together): 32 KiB of f64, enough
/// for the challenge and the T=16, C=64 case.
const SMALL_CALL_VALUES: usize = 4096;

thread_local! {
    /// The wasm-memory buffer `readSmallCall` writes into, reused across calls.
    static SMALL_CALL: std::cell::RefCell<Vec<f64>> = std::cell::RefCell::new(vec![0.0; 9 + SMALL_CALL_VALUES]);
}

/// A whole call read by the one-JS-call fast path: Q, K, V, the head split (0, 0 for
/// `dotProductAttention`) and `causal`.
pub struct SmallCall {
    pub q: Matrix,
    pub k: Matrix,
    pub v: Matrix,
    pub heads: (usize, usize),
    pub causal: bool,
}

/// The fast path of `dotProductAttention` / `multiHeadAttention` (`multi_head`) for small, well-formed
/// `number[][]` calls with no options besides the head split and `causal`; `None` for any other call,
/// which the careful readers then read from the start.
pub fn read_small_call(q: &JsValue, k: &JsValue, v: &JsValue, options: &JsValue, head_dimensions: &JsValue, multi_head: bool) -> Option<SmallCall> {
    SMALL_CALL.with(|buffer| {
        let mut buffer = buffer.try_borrow_mut().ok()?;
        let written = read_small_call_js(q, k, v, options, head_dimensions, multi_head, &mut buffer);
        if written < 0.0 {
            return None;
        }
        let header = &buffer[..9];
        let (heads, causal) = ((header[0] as usize, header[1] as usize), header[2] != 0.0);
        let mut at = 9;
        let mut next = |m: usize| {
            let (rows, cols) = (header[3 + 2 * m] as usize, header[4 + 2 * m] as usize);
            let data = buffer[at..at + rows * cols].to_vec();
            at += rows * cols;
            Matrix::new(rows, cols, data).ok()
        };
        let (q, k, v) = (next(0)?, next(1)?, next(2)?);
        Some(SmallCall { q, k, v, heads, causal })
    })
}

/// Reads a `number[][]` into a matrix. NaN and ±Infinity are refused (RangeError).
pub fn read_matrix(value: &JsValue, name: &str) -> Result<Matrix> {
    // 1. the fast path: well-formed plain arrays in one call
    {
        let flat = read_number_rows(value);
        if let Some(flat) = flat.dyn_ref::<Float64Array>() {
            let (rows, cols) = (flat.get_index(0) as usize, flat.get_index(1) as usize);
            return Matrix::new(rows, cols, flat.subarray(2, flat.length()).to_vec());
        }
    }
    // 2. the careful path, entry by entry, which names whatever is wrong
    let (rows, cols, data) = read_table(value, name, "number[][]", |entry, place| read_finite(&entry, place))?;
    Matrix::new(rows, cols, data)
}

/// Reads a `boolean[][]` mask.
pub fn read_bool_matrix(value: &JsValue, name: &str) -> Result<BoolMatrix> {
    let (rows, cols, data) = read_table(value, name, "boolean[][]", |entry, place| {
        entry.as_bool().ok_or_else(|| {
            AttentionError::type_error(format!("{} is {}; expected true or false", place(), describe(&entry)))
        })
    })?;
    BoolMatrix::new(rows, cols, data)
}

/// A matrix as a fresh JS `number[][]`.
pub fn write_matrix(m: &Matrix) -> JsValue {
    write_number_rows(m.data(), m.cols().max(1) as u32)
}

/// Rows of numbers (a trace's values) as a fresh JS `number[][]`.
fn write_rows(rows: &[Vec<f64>]) -> JsValue {
    let cols = rows.first().map_or(1, Vec::len).max(1);
    write_number_rows(&rows.concat(), cols as u32)
}

/// One step as `{ op, name, inputs, head?, shape, values, columns?, scalar?, allowed? }` (absent
/// fields are left out, not set to undefined).
fn write_step(step: &Step) -> Result<JsValue> {
    let pair = |[a, b]: [usize; 2]| -> JsValue { Array::of2(&JsValue::from(a as u32), &JsValue::from(b as u32)).into() };
    let mut entries = vec![
        ("op", JsValue::from_str(step.op.name())),
        ("name", JsValue::from_str(&step.name)),
        ("inputs", step.inputs.iter().map(|s| JsValue::from_str(s)).collect::<Array>().into()),
    ];
    if let Some(head) = step.head {
        entries.push(("head", JsValue::from(head as u32)));
    }
    entries.push(("shape", pair(step.shape)));
    entries.push(("values", write_rows(&step.values)));
    if let Some(columns) = step.columns {
        entries.push(("columns", pair(columns)));
    }
    if let Some(scalar) = step.scalar {
        entries.push(("scalar", JsValue::from(scalar)));
    }
    if let Some(allowed) = &step.allowed {
        let rows: Array = allowed.iter().map(|row| row.iter().map(|&b| JsValue::from(b)).collect::<Array>()).collect();
        entries.push(("allowed", rows.into()));
    }
    write_object(&entries)
}

/// A trace as `{ output: number[][], steps: Step[] }`.
pub fn write_trace(trace: &Trace) -> Result<JsValue> {
    let steps = trace.steps.iter().map(write_step).collect::<Result<Array>>()?;
    write_object(&[("output", write_rows(&trace.output)), ("steps", steps.into())])
}

/// An options object, read key by key. `undefined` and `null` mean "no options".
pub struct Options {
    object: Option<JsValue>,
    name: String,
}

impl Options {
    /// Checks that `value` is a plain object whose keys are all in `known`.
    pub fn read(value: &JsValue, name: &str, known: &[&str]) -> Result<Self> {
        if value.is_undefined() || value.is_null() {
            return Ok(Self { object: None, name: name.into() });
        }
        if !value.is_object() || is_array(value, name)? || value.is_function() {
            return Err(AttentionError::type_error(format!(
                "{name} is {}; expected an object with the keys {}",
                describe(value),
                known.join(", ")
            )));
        }
        let keys = caught(own_keys(value))
            .map(|keys| js_sys::Array::from(&keys))
            .map_err(|_| AttentionError::type_error(format!("{name}: its keys could not be listed")))?;
        for key in keys.iter() {
            if let Some(key) = key.as_string() {
                if !known.contains(&key.as_str()) {
                    let hint = known
                        .iter()
                        .find(|k| k.eq_ignore_ascii_case(&key) || similar(k, &key))
                        .map(|k| format!(" (did you mean {k}?)"))
                        .unwrap_or_default();
                    return Err(AttentionError::type_error(format!(
                        "{name}.{key} is not an option{hint}; the options are {}",
                        known.join(", ")
                    )));
                }
            }
        }
        Ok(Self { object: Some(value.clone()), name: name.into() })
    }

    /// The raw value of `key` (undefined when absent).
    pub fn raw(&self, key: &str) -> Result<JsValue> {
        match &self.object {
            Some(o) => get_lazy(o, &JsValue::from_str(key), || format!("{}.{key}", self.name)),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// An optional boolean (default false).
    pub fn flag(&self, key: &str) -> Result<bool> {
        self.flag_or(key, false)
    }

    /// An optional boolean with the given default.
    pub fn flag_or(&self, key: &str, default: bool) -> Result<bool> {
        let v = self.raw(key)?;
        if v.is_undefined() {
            return Ok(default);
        }
        v.as_bool().ok_or_else(|| {
            AttentionError::type_error(format!("{}.{key} is {}; expected true or false", self.name, describe(&v)))
        })
    }

    /// An optional matrix.
    pub fn matrix(&self, key: &str) -> Result<Option<Matrix>> {
        let v = self.raw(key)?;
        if v.is_undefined() {
            return Ok(None);
        }
        read_matrix(&v, &format!("{}.{key}", self.name)).map(Some)
    }

    /// An optional `number[]`.
    pub fn vector(&self, key: &str) -> Result<Option<Vec<f64>>> {
        let v = self.raw(key)?;
        if v.is_undefined() {
            return Ok(None);
        }
        read_vector(&v, &format!("{}.{key}", self.name)).map(Some)
    }

    /// A required positive integer.
    pub fn count(&self, key: &str) -> Result<usize> {
        let v = self.raw(key)?;
        if v.is_undefined() {
            return Err(AttentionError::type_error(format!("{}.{key} is missing; expected a positive integer", self.name)));
        }
        read_count_lazy(&v, || format!("{}.{key}", self.name))
    }

    /// `{ causal?, mask? }` as a core [`Mask`].
    pub fn mask(&self) -> Result<Mask> {
        let causal = self.flag("causal")?;
        let raw = self.raw("mask")?;
        let allowed = if raw.is_undefined() {
            None
        } else {
            Some(read_bool_matrix(&raw, &format!("{}.mask", self.name))?)
        };
        Ok(Mask { causal, allowed })
    }
}

/// A required positive integer, e.g. numberOfHeads. Non-numbers are a TypeError; zero,
/// negative, fractional, NaN or absurdly large values are a RangeError.
pub fn read_count(value: &JsValue, place: &str) -> Result<usize> {
    read_count_lazy(value, || place.to_string())
}

/// [`read_count`] with the place named only on an error.
pub fn read_count_lazy(value: &JsValue, place: impl FnOnce() -> String) -> Result<usize> {
    let Some(x) = value.as_f64() else {
        return Err(AttentionError::type_error(format!(
            "{} is {}; expected a positive integer",
            place(),
            describe(value)
        )));
    };
    if !(x >= 1.0 && x.fract() == 0.0 && x <= u32::MAX as f64) {
        return Err(AttentionError::range_error(format!("{} is {}; expected a positive integer", place(), describe(value).trim_start_matches("the number "))));
    }
    Ok(x as usize)
}

/// Reads a `number[]` (e.g. a bias). Not an array → TypeError; empty, NaN or ±Infinity → RangeError.
pub fn read_vector(value: &JsValue, name: &str) -> Result<Vec<f64>> {
    if !is_array(value, name)? {
        return Err(AttentionError::type_error(format!("{name} is {}; expected an array of numbers (number[])", describe(value))));
    }
    let len = array_length(value, name)?;
    if len == 0 {
        return Err(AttentionError::range_error(format!("{name} is empty; expected at least one number")));
    }
    checked_len(1, len, name)?;
    (0..len)
        .map(|i| {
            let place = || format!("{name}[{i}]");
            let entry = get(value, &JsValue::from(i as u32), &place())?;
            read_finite(&entry, &place)
        })
        .collect()
}

/// One finite number: not a number → TypeError, NaN or ±Infinity → RangeError. `place` is
/// only formatted when there is an error.
fn read_finite(entry: &JsValue, place: &dyn Fn() -> String) -> Result<f64> {
    match entry.as_f64() {
        Some(x) if x.is_finite() => Ok(x),
        Some(x) => Err(AttentionError::range_error(format!(
            "{} is {}; expected a finite number",
            place(),
            number_text(x)
        ))),
        None => Err(AttentionError::type_error(format!("{} is {}; expected a number", place(), describe(entry)))),
    }
}

/// A vector as a fresh JS `number[]`.
pub fn write_vector(v: &[f64]) -> JsValue {
    Array::from(&Float64Array::from(v)).into()
}

/// Reads either one `number[][]` matrix `[T, C]` or a batch `number[][][]` `[B, T, C]`
/// (told apart by whether `value[0][0]` is an array). Returns the items and whether it was
/// a batch; an unbatched matrix is a batch of one. Items are named `name[b]`.
pub fn read_batch(value: &JsValue, name: &str) -> Result<(Vec<Matrix>, bool)> {
    if is_array(value, name)? && array_length(value, name)? > 0 {
        let first = get(value, &JsValue::from(0u32), &format!("{name}[0]"))?;
        if is_array(&first, &format!("{name}[0]"))? && array_length(&first, &format!("{name}[0]"))? > 0 {
            let cell = get(&first, &JsValue::from(0u32), &format!("{name}[0][0]"))?;
            if is_array(&cell, &format!("{name}[0][0]"))? {
                let items = (0..array_length(value, name)?)
                    .map(|b| {
                        let place = format!("{name}[{b}]");
                        read_matrix(&get(value, &JsValue::from(b as u32), &place)?, &place)
                    })
                    .collect::<Result<Vec<_>>>()?;
                return Ok((items, true));
            }
        }
    }
    Ok((vec![read_matrix(value, name)?], false))
}

/// Items back into a `number[][][]` batch, or the single matrix when `batched` is false.
pub fn write_batch(items: &[Matrix], batched: bool) -> JsValue {
    match (batched, items) {
        (false, [only]) => write_matrix(only),
        _ => items.iter().map(write_matrix).collect::<Array>().into(),
    }
}

/// A fresh plain object with the given properties (defining properties on a new object cannot
/// fail, but should it, the failure is an `Error`, not a panic).
pub fn write_object(entries: &[(&str, JsValue)]) -> Result<JsValue> {
    let object = js_sys::Object::new();
    for (key, value) in entries {
        Reflect::set(&object, &JsValue::from_str(key), value)
            .map_err(|_| AttentionError::State(format!("could not set {key} on the result object")))?;
    }
    Ok(object.into())
}

/// An optional seed: a non-negative integer number up to 2^53 − 1, or a `bigint` in
/// `0 ..= 2^64 − 1` (default 0). Wrong kind → TypeError, out of range → RangeError.
pub fn read_seed(value: &JsValue, place: &str) -> Result<u64> {
    if value.is_undefined() {
        return Ok(0);
    }
    if value.is_bigint() {
        return u64::try_from(value.clone())
            .map_err(|_| AttentionError::range_error(format!("{place} is a bigint outside 0 ..= 2^64 − 1; expected a 64-bit unsigned seed")));
    }
    match value.as_f64() {
        Some(x) if x >= 0.0 && x.fract() == 0.0 && x <= 9_007_199_254_740_991.0 => Ok(x as u64),
        Some(_) => Err(AttentionError::range_error(format!(
            "{place} is {}; expected an integer from 0 to 2^53 − 1 (or a bigint up to 2^64 − 1)",
            describe(value).trim_start_matches("the number ")
        ))),
        None => Err(AttentionError::type_error(format!("{place} is {}; expected a non-negative integer or a bigint", describe(value)))),
    }
}

/// An optional probability `0 ≤ p < 1` (default 0).
pub fn read_probability(value: &JsValue, place: &str) -> Result<f64> {
    if value.is_undefined() {
        return Ok(0.0);
    }
    match value.as_f64() {
        Some(p) if (0.0..1.0).contains(&p) => Ok(p),
        Some(_) => Err(AttentionError::range_error(format!(
            "{place} is {}; expected a probability with 0 ≤ {} < 1",
            describe(value).trim_start_matches("the number "),
            place.rsplit('.').next().unwrap_or(place)
        ))),
        None => Err(AttentionError::type_error(format!("{place} is {}; expected a number in [0, 1)", describe(value)))),
    }
}

/// True when `a` and `b` differ by one edit or one swap of neighbours (for "did you mean").
fn similar(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (n, m) = (a.len(), b.len());
    let mut prev: Vec<usize> = (0..=m).collect();
    for i in 1..=n {
        let mut cur = vec![i; m + 1];
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[m] <= 2
}

// ---- typed matrices: { data: Float32Array | Float64Array, shape: [T, C] | [B, T, C] } -------

/// The values of a typed matrix, in the precision they arrived in.
#[derive(Clone, Debug, PartialEq)]
pub enum TypedValues {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// A `{ data, shape }` argument, checked: `shape` is `[T, C]` or `[B, T, C]` of positive
/// integers, `data.length` is their product and every value is finite.
#[derive(Clone, Debug, PartialEq)]
pub struct TypedMatrix {
    pub values: TypedValues,
    pub shape: Vec<usize>,
}

impl TypedMatrix {
    /// `"Float32Array"` or `"Float64Array"`, as messages name the precision.
    pub fn array_name(&self) -> &'static str {
        match self.values {
            TypedValues::F32(_) => "Float32Array",
            TypedValues::F64(_) => "Float64Array",
        }
    }

    /// B for `[B, T, C]`, `None` for `[T, C]`.
    pub fn batch(&self) -> Option<usize> {
        (self.shape.len() == 3).then(|| self.shape[0])
    }

    /// `(T, C)`: the last two entries of the shape.
    pub fn rows_cols(&self) -> (usize, usize) {
        let n = self.shape.len();
        (self.shape[n - 2], self.shape[n - 1])
    }

    /// `[2, 3]`, as messages print a shape.
    pub fn shape_text(&self) -> String {
        format!("[{}]", self.shape.iter().map(usize::to_string).collect::<Vec<_>>().join(", "))
    }
}

/// True for a value that can only be meant as a typed matrix: an object that is not an array
/// and not a function. (Arrays go to the `number[][]` reader; everything else gets its message.)
pub fn is_typed_candidate(value: &JsValue) -> bool {
    // a revoked Proxy is not a candidate: the number[][] reader then names it
    value.is_object() && try_is_array(value) == Some(false) && !value.is_function()
}

/// Reads `{ data: Float32Array | Float64Array, shape }` whose shape has one of the lengths in
/// `ranks` (2 for `[T, C]`, 3 for `[B, T, C]`).
pub fn read_typed_matrix(value: &JsValue, name: &str, ranks: &[usize]) -> Result<TypedMatrix> {
    let expected_shape = match ranks {
        [2] => "[T, C]",
        _ => "[T, C] or [B, T, C]",
    };
    let expected = format!("number[][] or {{ data: Float32Array | Float64Array, shape: {expected_shape} }}");
    if !is_typed_candidate(value) {
        return Err(AttentionError::type_error(format!("{name} is {}; expected {expected}", describe(value))));
    }
    // 1. data: a Float32Array or Float64Array
    let data = get(value, &JsValue::from_str("data"), &format!("{name}.data"))?;
    let kind = float_kind(&data);
    let is_f32 = kind == 32;
    if kind != 32 && kind != 64 {
        let what = if data.is_undefined() {
            format!("{name} is an object without data; expected {expected}")
        } else if kind == 1 {
            format!("{name}.data is a typed array of another kind; expected a Float32Array or Float64Array (convert with Float32Array.from)")
        } else {
            format!("{name}.data is {}; expected a Float32Array or Float64Array", describe(&data))
        };
        return Err(AttentionError::type_error(what));
    }
    // 2. shape: [T, C] or [B, T, C], positive integers, not too large
    let shape_value = get(value, &JsValue::from_str("shape"), &format!("{name}.shape"))?;
    if !is_array(&shape_value, &format!("{name}.shape"))? {
        return Err(AttentionError::type_error(format!(
            "{name}.shape is {}; expected {expected_shape}",
            describe(&shape_value)
        )));
    }
    let rank = array_length(&shape_value, &format!("{name}.shape"))?;
    if !ranks.contains(&rank) {
        return Err(AttentionError::range_error(format!(
            "{name}.shape has {rank} entries; expected {expected_shape}"
        )));
    }
    let mut shape = Vec::with_capacity(rank);
    for i in 0..rank {
        let place = format!("{name}.shape[{i}]");
        shape.push(read_count(&get(&shape_value, &JsValue::from(i as u32), &place)?, &place)?);
    }
    let per_batch = checked_len(shape[rank - 2], shape[rank - 1], name)?;
    let total = checked_len(per_batch, if rank == 3 { shape[0] } else { 1 }, name)?;
    // 3. data.length = the product of the shape
    let length = float_array_length(&data, &format!("{name}.data"))? as f64;
    let typed = TypedMatrix { values: TypedValues::F64(Vec::new()), shape };
    if length != total as f64 {
        return Err(AttentionError::range_error(format!(
            "{name}.data has {} values but {name}.shape {} needs {total}",
            number_text(length),
            typed.shape_text()
        )));
    }
    // 4. copy into wasm memory and check that every value is finite
    let values = if is_f32 {
        let values = data.unchecked_into::<Float32Array>().to_vec();
        check_finite(&values, name, &typed.shape, |x| x.is_finite(), |x| x as f64)?;
        TypedValues::F32(values)
    } else {
        let values = data.unchecked_into::<Float64Array>().to_vec();
        check_finite(&values, name, &typed.shape, |x| x.is_finite(), |x| x)?;
        TypedValues::F64(values)
    };
    Ok(TypedMatrix { values, ..typed })
}

/// `data.length` of a value `float_kind` called a Float32Array or Float64Array, checked to be what
/// the view really holds: a Proxy (which `instanceof` lets through) is a TypeError, and a subclass
/// whose `length` reports another count is a RangeError. Copying such a value with `to_vec` would
/// size the copy by the reported length and leave the rest of it unwritten.
pub fn float_array_length(data: &JsValue, place: &str) -> Result<usize> {
    let reported = get(data, &JsValue::from_str("length"), &format!("{place}.length"))?;
    let real = view_length(data);
    if real < 0.0 {
        return Err(AttentionError::type_error(format!(
            "{place} is not itself a Float32Array or Float64Array (a Proxy?); pass the typed array itself"
        )));
    }
    if reported.as_f64() != Some(real) {
        return Err(AttentionError::range_error(format!(
            "{place}.length is {} but {place} holds {} values; pass a typed array whose length is its own",
            describe(&reported).trim_start_matches("the number "),
            number_text(real)
        )));
    }
    Ok(real as usize)
}

/// RangeError naming the first non-finite value by its flat index and its position.
fn check_finite<T: Copy>(values: &[T], name: &str, shape: &[usize], finite: impl Fn(T) -> bool, to_f64: impl Fn(T) -> f64) -> Result<()> {
    let Some(index) = values.iter().position(|&x| !finite(x)) else {
        return Ok(());
    };
    let x = to_f64(values[index]);
    let cols = shape[shape.len() - 1];
    let rows = shape[shape.len() - 2];
    let position = match shape.len() {
        3 => format!("{name}[{}][{}][{}]", index / (rows * cols), index / cols % rows, index % cols),
        _ => format!("{name}[{}][{}]", index / cols, index % cols),
    };
    let what = if x.is_nan() { "NaN" } else if x > 0.0 { "Infinity" } else { "-Infinity" };
    Err(AttentionError::range_error(format!("{name}.data[{index}] ({position}) is {what}; expected a finite number")))
}

/// A fresh `{ data: Float32Array, shape }` (or Float64Array) for JS.
pub fn write_typed(values: &TypedValues, shape: &[usize]) -> JsValue {
    let object = Object::new();
    let data: JsValue = match values {
        TypedValues::F32(v) => Float32Array::from(v.as_slice()).into(),
        TypedValues::F64(v) => Float64Array::from(v.as_slice()).into(),
    };
    let shape: Array = shape.iter().map(|&n| JsValue::from(n as u32)).collect();
    // setting own data properties on a fresh plain object cannot throw
    let _ = Reflect::set(&object, &JsValue::from_str("data"), &data);
    let _ = Reflect::set(&object, &JsValue::from_str("shape"), &shape);
    object.into()
}
