//! Conversions across the boundary: JS values → core types (with precise errors), core
//! results → JS values, and `AttentionError` → `TypeError` / `RangeError` / `Error`.
//!
//! Every property read goes through `Reflect.get`, which catches throwing getters and
//! Proxy traps, so hostile input becomes a `TypeError` rather than a half-finished call.

use js_sys::{Array, Float64Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::error::{AttentionError, Result};
use crate::mask::{BoolMatrix, Mask};
use crate::matrix::{checked_len, Matrix};

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
    caught(read_property(target, key)).map_err(|thrown| {
        // the thrown value may itself be hostile (a getter on `message` that throws): read it with Reflect too
        let message = thrown
            .dyn_ref::<js_sys::Error>()
            .and_then(|e| caught(read_property(e, &JsValue::from_str("message"))).ok())
            .and_then(|m| m.as_string());
        let why = message.unwrap_or_else(|| describe(&thrown));
        AttentionError::type_error(format!("{place} could not be read (reading it threw: {why})"))
    })
}

/// The length of an array, read defensively.
fn array_length(array: &JsValue, place: &str) -> Result<usize> {
    let length = get(array, &JsValue::from_str("length"), &format!("{place}.length"))?;
    match length.as_f64() {
        Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= u32::MAX as f64 => Ok(n as usize),
        _ => Err(AttentionError::type_error(format!("{place}.length is {}; expected an array length", describe(&length)))),
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
        let place = format!("{name}[{i}]");
        let row = get(value, &JsValue::from(i as u32), &place)?;
        if !is_array(&row, &place)? {
            return Err(AttentionError::type_error(format!(
                "{place} is {}; expected a row array ({expected})",
                describe(&row)
            )));
        }
        let len = array_length(&row, &place)?;
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
            let entry = get(&row, &JsValue::from(j as u32), &here())?;
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

/// Reads a `number[][]` into a matrix. NaN and ±Infinity are refused (RangeError).
pub fn read_matrix(value: &JsValue, name: &str) -> Result<Matrix> {
    let (rows, cols, data) = read_table(value, name, "number[][]", |entry, place| match entry.as_f64() {
        Some(x) if x.is_finite() => Ok(x),
        Some(x) => Err(AttentionError::range_error(format!(
            "{} is {}; expected a finite number",
            place(),
            number_text(x)
        ))),
        None => Err(AttentionError::type_error(format!("{} is {}; expected a number", place(), describe(&entry)))),
    })?;
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
    let rows = Array::new_with_length(m.rows() as u32);
    for r in 0..m.rows() {
        let row = Float64Array::from(m.row(r));
        rows.set(r as u32, Array::from(&row).into());
    }
    rows.into()
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
            Some(o) => get(o, &JsValue::from_str(key), &format!("{}.{key}", self.name)),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// An optional boolean (default false).
    pub fn flag(&self, key: &str) -> Result<bool> {
        let v = self.raw(key)?;
        if v.is_undefined() {
            return Ok(false);
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
    let Some(x) = value.as_f64() else {
        return Err(AttentionError::type_error(format!(
            "{place} is {}; expected a positive integer",
            describe(value)
        )));
    };
    if !(x >= 1.0 && x.fract() == 0.0 && x <= u32::MAX as f64) {
        return Err(AttentionError::range_error(format!("{place} is {}; expected a positive integer", describe(value).trim_start_matches("the number "))));
    }
    Ok(x as usize)
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
