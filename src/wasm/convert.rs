//! Conversions across the boundary: JS values → core types (with precise errors), core
//! results → JS values, and `AttentionError` → `TypeError` / `RangeError` / `Error`.
//!
//! The walking of JS values is done in JavaScript, by the readers in `convert.js` (in the
//! package's snippets): they read every property with `Reflect.get` inside try/catch, check the
//! value, and return flat data (a Float64Array and its shape) or a refusal that this file turns
//! into the `TypeError` or `RangeError`. One call per argument crosses the boundary instead of one
//! per entry, and the wasm module carries none of the reading and message code.

use js_sys::{Array, Float32Array, Float64Array, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::engine::Rope;
use crate::error::{AttentionError, Result};
use crate::mask::{BoolMatrix, Mask};
use crate::matrix::{Matrix, MAX_ELEMENTS};
use crate::trace::{Step, Trace};

#[wasm_bindgen(module = "/src/wasm/convert.js")]
extern "C" {
    // None of these throws: a bad argument comes back as the FAILED marker (see `refused`).
    #[wasm_bindgen(js_name = isFailed)]
    fn is_failed(value: &JsValue) -> bool;
    #[wasm_bindgen(js_name = refusalIsRange)]
    fn refusal_is_range() -> bool;
    #[wasm_bindgen(js_name = takeRefusal)]
    fn take_refusal() -> String;
    /// A short description of a value's kind for messages: "a string", "undefined", "NaN", "the number 3", …
    pub fn describe(value: &JsValue) -> String;
    #[wasm_bindgen(js_name = readMatrix)]
    fn read_matrix_js(value: &JsValue, name: &str, max_elements: u32, shape: &mut [u32]) -> JsValue;
    #[wasm_bindgen(js_name = readBoolMatrix)]
    fn read_bool_matrix_js(value: &JsValue, name: &str, max_elements: u32, shape: &mut [u32]) -> JsValue;
    #[wasm_bindgen(js_name = readVector)]
    fn read_vector_js(value: &JsValue, name: &str, max_elements: u32) -> JsValue;
    #[wasm_bindgen(js_name = readCount)]
    fn read_count_js(value: &JsValue, place: &str) -> JsValue;
    #[wasm_bindgen(js_name = checkIsArray)]
    fn check_is_array(value: &JsValue, place: &str) -> JsValue;
    #[wasm_bindgen(js_name = getProperty)]
    fn get_property(target: &JsValue, key: &JsValue, place: &str) -> JsValue;
    #[wasm_bindgen(js_name = readArrayLength)]
    fn read_array_length(array: &JsValue, place: &str) -> JsValue;
    #[wasm_bindgen(js_name = readSeed)]
    fn read_seed_js(value: &JsValue, place: &str) -> JsValue;
    #[wasm_bindgen(js_name = tagCache)]
    pub(crate) fn tag_cache(cache: &JsValue, id: u32) -> JsValue;
    #[wasm_bindgen(js_name = readCacheId)]
    fn read_cache_id_js(value: &JsValue, place: &str) -> JsValue;
    #[wasm_bindgen(js_name = readIndex)]
    fn read_index_js(value: &JsValue, place: &str, max: f64) -> JsValue;
    #[wasm_bindgen(js_name = readRope)]
    fn read_rope_js(value: &JsValue, place: &str, keys: &str) -> JsValue;
    #[wasm_bindgen(js_name = readRopeSettings)]
    fn read_rope_settings(options: &JsValue, name: &str, with_offset: bool) -> JsValue;
    #[wasm_bindgen(js_name = readLayerConfig)]
    pub(super) fn read_layer_config(config: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = readOptions)]
    fn read_options_js(value: &JsValue, name: &str, known: &str) -> JsValue;
    #[wasm_bindgen(js_name = optionValue)]
    fn option_value(options: &JsValue, name: &str, key: &str) -> JsValue;
    #[wasm_bindgen(js_name = optionFlag)]
    fn option_flag(options: &JsValue, name: &str, key: &str, fallback: bool) -> JsValue;
    #[wasm_bindgen(js_name = optionCount)]
    fn option_count(options: &JsValue, name: &str, key: &str) -> JsValue;
    #[wasm_bindgen(js_name = isTypedCandidate)]
    pub fn is_typed_candidate(value: &JsValue) -> bool;
    #[wasm_bindgen(js_name = readTypedMatrix)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn read_typed_matrix_js(value: &JsValue, name: &str, batches: bool, max_elements: u32, out: &mut [u32], cols: u32, like_name: &str, like_kind: u32, like_shape: &[u32], group: &str, same_rank: bool) -> JsValue;
    #[wasm_bindgen(js_name = readSmallCall)]
    pub(super) fn read_small_call_js(q: &JsValue, k: &JsValue, v: &JsValue, options: &JsValue, head_dimensions: &JsValue, multi_head: bool, out: &mut [f64]) -> f64;
    #[wasm_bindgen(js_name = readTokens)]
    pub(super) fn read_tokens_js(value: &JsValue, shape: &mut [f64]) -> JsValue;
    #[wasm_bindgen(js_name = readPrompt)]
    pub(super) fn read_prompt(value: &JsValue, vocab_size: f64) -> JsValue;
    #[wasm_bindgen(js_name = readBias)]
    pub(super) fn read_bias_js(value: &JsValue, out: u32, max_elements: u32) -> JsValue;
    #[wasm_bindgen(js_name = readWeight)]
    pub(super) fn read_weight_js(options: &JsValue, key: &str, input: &str, kind: u32, max_elements: u32, shape: &mut [u32]) -> JsValue;
    #[wasm_bindgen(js_name = readTree)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn read_tree_js(value: &JsValue, name: &str, names: &str, layers: &[i32], shapes: &[u32], num_layers: u32, full: bool, max_elements: u32) -> JsValue;
    #[wasm_bindgen(js_name = readLayerWeights)]
    pub(super) fn read_layer_weights(value: &JsValue, shapes: &mut [u32], lengths: &[u32], created_by: &str, max_elements: u32) -> JsValue;
    #[wasm_bindgen(js_name = readLayerParts)]
    pub(super) fn read_layer_parts(value: &JsValue, fused: bool, max_elements: u32) -> JsValue;
    #[wasm_bindgen(js_name = readDtype)]
    pub(super) fn read_dtype_js(value: &JsValue, place: &str) -> JsValue;
    #[wasm_bindgen(js_name = readModelConfig)]
    pub(super) fn read_model_config(config: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = readGenerate)]
    pub(super) fn read_generate_js(options: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = readAdamW)]
    pub(super) fn read_adamw_js(options: &JsValue, max_elements: u32) -> JsValue;
    #[wasm_bindgen(js_name = readThreads)]
    pub(super) fn read_threads_js(value: &JsValue, max: u32) -> JsValue;
    #[wasm_bindgen(js_name = readBatch)]
    pub(super) fn read_batch_js(value: &JsValue, name: &str, max_elements: u32) -> JsValue;
    #[wasm_bindgen(js_name = writeNumberRows)]
    pub(super) fn write_number_rows(data: &[f64], cols: u32) -> JsValue;
    #[wasm_bindgen(js_name = writeNested)]
    pub(super) fn write_nested_js(data: &[f64], shape: &[u32]) -> JsValue;
    #[wasm_bindgen(js_name = writeTraceStep)]
    fn write_trace_step(
        op: &str,
        name: &str,
        inputs: &str,
        head: i32,
        rows: u32,
        cols: u32,
        values: &[f64],
        columns: &[u32],
        scalar: Option<f64>,
        allowed: &[u8],
        kv_head: i32,
        base: Option<f64>,
        position: i32,
    ) -> JsValue;
}

/// What a reader in convert.js returned, or the TypeError / RangeError it refused the argument with.
pub(super) fn refused(value: JsValue) -> Result<JsValue> {
    if !is_failed(&value) {
        return Ok(value);
    }
    let range = refusal_is_range();
    let message = take_refusal();
    Err(if range { AttentionError::Range(message) } else { AttentionError::Type(message) })
}

/// The reader's limit on one matrix (2^27 values: it fits u32).
pub(super) const MAX_MATRIX_VALUES: u32 = MAX_ELEMENTS as u32;

/// `Array.isArray(value)`; a revoked Proxy becomes a `TypeError` naming `place`.
pub fn is_array(value: &JsValue, place: &str) -> Result<bool> {
    Ok(refused(check_is_array(value, place))?.is_truthy())
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

/// A number the way JS prints it: `Infinity`, `1e+308`, `0.5` (Rust would print `inf` and 309 digits).
pub fn number_text(x: f64) -> String {
    String::from(js_sys::Number::from(x).to_string_with_radix(10).unwrap_or_else(|_| js_sys::JsString::from("a number")))
}

/// `target[key]`, with a throwing getter or Proxy trap turned into a `TypeError` naming `place`.
pub fn get(target: &JsValue, key: &JsValue, place: &str) -> Result<JsValue> {
    refused(get_property(target, key, place))
}

/// The length of an array, read defensively.
pub fn array_length(array: &JsValue, place: &str) -> Result<usize> {
    Ok(refused(read_array_length(array, place))?.as_f64().unwrap_or(0.0) as usize)
}

/// `values` (a Float64Array, Float32Array or Uint8Array from convert.js) copied into wasm memory;
/// the allocation is fallible, so a matrix too large for wasm memory is a RangeError, not an abort.
pub(super) fn copy_in<T: Default + Clone>(length: u32, name: &str, shape: (u32, u32), copy: impl FnOnce(&mut [T])) -> Result<Vec<T>> {
    let mut data = Vec::new();
    data.try_reserve_exact(length as usize)
        .map_err(|_| AttentionError::range_error(format!("{name} is {}×{}, too large to hold in memory", shape.0, shape.1)))?;
    data.resize(length as usize, T::default());
    copy(&mut data);
    Ok(data)
}

/// A JS typed array whose values wasm memory takes with `TypedArray.prototype.set` on a view of it.
/// js-sys's `copy_to` and `to_vec` make the same copy after an `assert_eq!` of the two lengths, whose
/// `Debug` printing of both numbers was about 1 KB of the module; here the length is the array's own.
pub trait CopyIn: JsCast {
    type Item;
    /// # Safety
    /// `ptr` must be valid for `length` writes of `Item`, and nothing may allocate while the view lives.
    unsafe fn view(ptr: *mut Self::Item, length: usize) -> Self;
    fn set(&self, src: &JsValue);
    fn length(&self) -> u32;
}

macro_rules! copy_in_for {
    ($($array:ty => $item:ty),*) => {$(
        impl CopyIn for $array {
            type Item = $item;
            unsafe fn view(ptr: *mut $item, length: usize) -> Self {
                <$array>::view_mut_raw(ptr, length)
            }
            fn set(&self, src: &JsValue) {
                <$array>::set(self, src, 0)
            }
            fn length(&self) -> u32 {
                <$array>::length(self)
            }
        }
    )*};
}
copy_in_for!(Float64Array => f64, Float32Array => f32, Uint8Array => u8, js_sys::Uint32Array => u32);

/// Copies `values` into `out`, which has `values.length()` entries.
pub(super) fn copy_exact<A: CopyIn>(values: &A, out: &mut [A::Item]) {
    debug_assert_eq!(values.length() as usize, out.len());
    // SAFETY: `out` is `out.len()` writable items and the view is used at once, before any allocation
    unsafe { A::view(out.as_mut_ptr(), out.len()) }.set(values.unchecked_ref());
}

/// `values` in a new Vec (js-sys's `to_vec` without its length assertion, see [`CopyIn`]).
pub fn typed_to_vec<A: CopyIn>(values: &A) -> Vec<A::Item> {
    let length = values.length() as usize;
    let mut out = Vec::with_capacity(length);
    // SAFETY: the capacity is `length`; `set` writes all of it before `set_len`, and nothing allocates in between
    unsafe {
        A::view(out.as_mut_ptr(), length).set(values.unchecked_ref());
        out.set_len(length);
    }
    out
}

/// Reads a `number[][]` into a matrix: not an array of arrays of numbers → TypeError; empty,
/// ragged, NaN or ±Infinity → RangeError (each naming the entry, e.g. `Q[1][0] is NaN`).
pub fn read_matrix(value: &JsValue, name: &str) -> Result<Matrix> {
    let mut shape = [0u32; 2];
    let values: Float64Array = refused(read_matrix_js(value, name, MAX_MATRIX_VALUES, &mut shape))?.unchecked_into();
    let data = copy_in(values.length(), name, (shape[0], shape[1]), |out| copy_exact(&values, out))?;
    Matrix::new(shape[0] as usize, shape[1] as usize, data)
}

/// Reads a `boolean[][]` mask.
pub fn read_bool_matrix(value: &JsValue, name: &str) -> Result<BoolMatrix> {
    let mut shape = [0u32; 2];
    let values: Uint8Array = refused(read_bool_matrix_js(value, name, MAX_MATRIX_VALUES, &mut shape))?.unchecked_into();
    let bytes: Vec<u8> = copy_in(values.length(), name, (shape[0], shape[1]), |out| copy_exact(&values, out))?;
    BoolMatrix::new(shape[0] as usize, shape[1] as usize, bytes.into_iter().map(|b| b != 0).collect())
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

/// One step, in one call to convert.js (`writeTraceStep` leaves absent fields out).
fn write_step(step: &Step) -> JsValue {
    let [rows, cols] = step.shape;
    let allowed: Vec<u8> = step.allowed.iter().flatten().flatten().map(|&b| u8::from(b)).collect();
    let columns: Vec<u32> = step.columns.iter().flatten().map(|&c| c as u32).collect();
    write_trace_step(
        step.op.name(),
        &step.name,
        &step.inputs.join("\n"),
        step.head.map_or(-1, |h| h as i32),
        rows as u32,
        cols as u32,
        &step.values.concat(),
        &columns,
        step.scalar,
        &allowed,
        step.kv_head.map_or(-1, |h| h as i32),
        step.rotation.map(|(base, _)| base),
        step.rotation.map_or(-1, |(_, p)| p as i32),
    )
}

/// A trace as `{ output: number[][], steps: Step[] }`.
pub fn write_trace(trace: &Trace) -> Result<JsValue> {
    let steps: Array = trace.steps.iter().map(write_step).collect();
    write_object(&[("output", write_rows(&trace.output)), ("steps", steps.into())])
}

/// An object that a reader in convert.js built from the caller's options and checked, key by key
/// (`readModelConfig`, `readGenerate`, `readAdamW`): fresh and plain, so reading it cannot throw.
/// Its fields are read by kind; an option the caller left out is undefined (`None`).
pub struct Checked(JsValue);

impl Checked {
    /// What the reader returned, or the TypeError / RangeError it refused the options with.
    pub fn read(returned: JsValue) -> Result<Self> {
        Ok(Self(refused(returned)?))
    }

    pub fn value(&self, key: &str) -> JsValue {
        Reflect::get(&self.0, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    }

    pub fn number(&self, key: &str) -> Option<f64> {
        self.value(key).as_f64()
    }

    pub fn count(&self, key: &str) -> Option<usize> {
        self.number(key).map(|x| x as usize)
    }

    pub fn flag(&self, key: &str) -> bool {
        self.value(key).is_truthy()
    }

    pub fn text(&self, key: &str) -> Option<String> {
        self.value(key).as_string()
    }
}

/// An options object, read key by key. `undefined` and `null` mean "no options".
pub struct Options {
    /// The object, or undefined.
    object: JsValue,
    name: String,
}

impl Options {
    /// Checks that `value` is a plain object whose keys are all in `known` (", "-separated, as
    /// messages list them); an unknown key is a TypeError that suggests the nearest known one.
    pub fn read(value: &JsValue, name: &str, known: &str) -> Result<Self> {
        let object = refused(read_options_js(value, name, known))?;
        Ok(Self { object, name: name.into() })
    }

    /// [`Options::read`] of an object that must be there: `undefined` or `null` is [`missing`]'s
    /// TypeError, `expected` showing its required keys.
    pub fn required(value: &JsValue, name: &str, known: &str, expected: &str) -> Result<Self> {
        if is_missing(value) {
            return Err(missing(name, expected));
        }
        Self::read(value, name, known)
    }

    /// The object (undefined when there are no options).
    pub fn object(&self) -> &JsValue {
        &self.object
    }

    /// The raw value of `key` (undefined when absent).
    pub fn raw(&self, key: &str) -> Result<JsValue> {
        refused(option_value(&self.object, &self.name, key))
    }

    /// An optional boolean (default false).
    pub fn flag(&self, key: &str) -> Result<bool> {
        self.flag_or(key, false)
    }

    /// An optional boolean with the given default.
    pub fn flag_or(&self, key: &str, default: bool) -> Result<bool> {
        Ok(refused(option_flag(&self.object, &self.name, key, default))?.is_truthy())
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
        Ok(refused(option_count(&self.object, &self.name, key))?.as_f64().unwrap_or(0.0) as usize)
    }

    /// `{ causal?, mask?, window? }` as a core [`Mask`] (`window` only where the export lists it
    /// among its keys: elsewhere it is refused as an unknown option).
    pub fn mask(&self) -> Result<Mask> {
        let causal = self.flag("causal")?;
        let raw = self.raw("mask")?;
        let allowed = if raw.is_undefined() {
            None
        } else {
            Some(read_bool_matrix(&raw, &format!("{}.mask", self.name))?)
        };
        let window = self.raw("window")?;
        let window = if window.is_undefined() { None } else { Some(read_count(&window, &format!("{}.window", self.name))?) };
        Ok(Mask { causal, allowed, window })
    }

    /// The rotary embedding's `{ base?, offset? }` read from these options (`offset` only `with_offset`):
    /// the [`Rope`] and the offset, each defaulted.
    pub fn rope(&self, with_offset: bool) -> Result<(Rope, usize)> {
        rope_pair(refused(read_rope_settings(&self.object, &self.name, with_offset))?)
    }
}

/// A required integer `0 ..= max`: not a number is a TypeError, anything else wrong (negative,
/// fractional, NaN, above `max`) a RangeError; both say "expected an integer ≥ 0".
pub fn read_integer(raw: &JsValue, place: &str, max: f64) -> Result<f64> {
    Ok(refused(read_index_js(raw, place, max))?.as_f64().unwrap_or(0.0))
}

/// A required integer ≥ 0 up to 2^32 − 1 (a position, a layer, a head; see [`read_integer`]).
pub fn read_index(raw: &JsValue, place: &str) -> Result<usize> {
    read_integer(raw, place, 4294967295.0).map(|x| x as usize)
}

/// Whether an argument is absent: `undefined` or `null`.
pub fn is_missing(value: &JsValue) -> bool {
    value.is_undefined() || value.is_null()
}

/// A required positive integer, e.g. numberOfHeads. Non-numbers are a TypeError; zero,
/// negative, fractional, NaN or absurdly large values are a RangeError.
pub fn read_count(value: &JsValue, place: &str) -> Result<usize> {
    Ok(refused(read_count_js(value, place))?.as_f64().unwrap_or(0.0) as usize)
}

/// A `rope` option: absent or `false` → `None`; `true` → every default; a plain object → its
/// `{ keys }` (`base`, and `offset` where `keys` lists it). Anything else is a TypeError naming `place`.
pub fn read_rope_option(raw: &JsValue, place: &str, keys: &str) -> Result<Option<(Rope, usize)>> {
    let pair = refused(read_rope_js(raw, place, keys))?;
    if pair.is_undefined() { Ok(None) } else { rope_pair(pair).map(Some) }
}

/// `[base, offset]` from convert.js.
fn rope_pair(pair: JsValue) -> Result<(Rope, usize)> {
    let pair = Array::from(&pair);
    Ok((Rope { base: pair.get(0).as_f64().unwrap_or_default() }, pair.get(1).as_f64().unwrap_or_default() as usize))
}

/// The registry id of a cache made by `createCache()` (a TypeError naming `place` for anything else).
pub fn read_cache_id(value: &JsValue, place: &str) -> Result<u32> {
    Ok(refused(read_cache_id_js(value, place))?.as_f64().unwrap_or(0.0) as u32)
}

/// Reads a `number[]` (e.g. a bias). Not an array → TypeError; empty, NaN or ±Infinity → RangeError.
pub fn read_vector(value: &JsValue, name: &str) -> Result<Vec<f64>> {
    let values: Float64Array = refused(read_vector_js(value, name, MAX_MATRIX_VALUES))?.unchecked_into();
    copy_in(values.length(), name, (1, values.length()), |out| copy_exact(&values, out))
}

/// A vector as a fresh JS `number[]`.
pub fn write_vector(v: &[f64]) -> JsValue {
    Array::from(&Float64Array::from(v)).into()
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
    let seed = refused(read_seed_js(value, place))?;
    // convert.js returns a bigint it has checked to be in range
    u64::try_from(seed).map_err(|_| AttentionError::range_error(format!("{place} is outside 0 ..= 2^64 − 1")))
}

// ---- typed matrices: { data: Float32Array | Float64Array, shape: [T, C] | [B, T, C] } -------

/// The TypeError of a required argument that is missing: `"{name} is missing; expected {expected}"`.
pub fn missing(name: &str, expected: &str) -> AttentionError {
    AttentionError::type_error(format!("{name} is missing; expected {expected}"))
}
