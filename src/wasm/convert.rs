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
use crate::multi_head::HeadSplit;
use crate::precision::Dtype;
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
    #[wasm_bindgen(js_name = readMatrix)]
    fn read_matrix_js(value: &JsValue, name: &str, max_elements: u32, shape: &mut [u32]) -> JsValue;
    #[wasm_bindgen(js_name = tagCache)]
    pub(crate) fn tag_cache(cache: &JsValue, id: u32) -> JsValue;
    #[wasm_bindgen(js_name = readLayerConfig)]
    pub(super) fn read_layer_config(config: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = readCall)]
    #[allow(clippy::too_many_arguments)]
    fn read_call_js(value: &JsValue, name: &str, known: &str, expected: &str, steps: &str, kind: u32, input: &str, extra: &[u32], max_elements: u32) -> JsValue;
    #[wasm_bindgen(js_name = readMultiHead)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn read_multi_head_js(value: &JsValue, head_dimensions: &JsValue, known: &str, expected: &str, steps: &str, kind: u32, max_elements: u32) -> JsValue;
    #[wasm_bindgen(js_name = checkSameForm)]
    pub(super) fn check_same_form(value: &JsValue, name: &str, first: &str, group: &str, typed: bool) -> JsValue;
    #[wasm_bindgen(js_name = readKey)]
    fn read_key_js(options: &JsValue, key: &str, place: &str, how: &str) -> JsValue;
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
    #[wasm_bindgen(js_name = readTree)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn read_tree_js(value: &JsValue, name: &str, names: &str, layers: &[i32], shapes: &[u32], num_layers: u32, full: bool, max_elements: u32) -> JsValue;
    #[wasm_bindgen(js_name = readLayerWeights)]
    pub(super) fn read_layer_weights(value: &JsValue, shapes: &mut [u32], lengths: &[u32], created_by: &str, max_elements: u32) -> JsValue;
    #[wasm_bindgen(js_name = readLayerParts)]
    pub(super) fn read_layer_parts(value: &JsValue, fused: bool, max_elements: u32) -> JsValue;
    #[wasm_bindgen(js_name = readModelConfig)]
    pub(super) fn read_model_config(config: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = readGenerate)]
    pub(super) fn read_generate_js(options: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = readAdamW)]
    pub(super) fn read_adamw_js(options: &JsValue, max_elements: u32) -> JsValue;
    #[wasm_bindgen(js_name = readThreads)]
    pub(super) fn read_threads_js(value: &JsValue, max: u32) -> JsValue;
    #[wasm_bindgen(js_name = readBatch)]
    pub(super) fn read_batch_js(value: &JsValue, name: &str, max_elements: u32, like: i32, like_name: &str) -> JsValue;
    #[wasm_bindgen(js_name = writeNumberRows)]
    pub(super) fn write_number_rows(data: &[f64], cols: u32) -> JsValue;
    #[wasm_bindgen(js_name = writeNested)]
    pub(super) fn write_nested_js(data: &[f64], shape: &[u32]) -> JsValue;
    #[wasm_bindgen(js_name = writeTraceStep)]
    #[allow(clippy::too_many_arguments)]
    fn write_trace_step(op: &str, name: &str, inputs: &str, ints: &[i32], values: &[f64], scalar: Option<f64>, allowed: &[u8], base: Option<f64>) -> JsValue;
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

/// A matrix as a fresh JS `number[][]`.
pub fn write_matrix(m: &Matrix) -> JsValue {
    write_number_rows(m.data(), m.cols().max(1) as u32)
}

/// Rows of numbers (a trace's values) as a fresh JS `number[][]`.
fn write_rows(rows: &[Vec<f64>]) -> JsValue {
    let cols = rows.first().map_or(1, Vec::len).max(1);
    write_number_rows(&rows.concat(), cols as u32)
}

/// One step, in one call to convert.js (`writeTraceStep`: -1 for an absent head, K/V head, columns, position).
fn write_step(s: &Step) -> JsValue {
    let opt = |x: Option<usize>| x.map_or(-1, |x| x as i32);
    let [c0, c1] = s.columns.map_or([-1, -1], |c| c.map(|x| x as i32));
    let ints = [opt(s.head), opt(s.kv_head), s.shape[0] as i32, s.shape[1] as i32, c0, c1, opt(s.rotation.map(|r| r.1))];
    let allowed: Vec<u8> = s.allowed.iter().flatten().flatten().map(|&b| u8::from(b)).collect();
    write_trace_step(s.op.name(), &s.name, &s.inputs.join("\n"), &ints, &s.values.concat(), s.scalar, &allowed, s.rotation.map(|r| r.0))
}

/// A trace as `{ output: number[][], steps: Step[] }`.
pub fn write_trace(trace: &Trace) -> Result<JsValue> {
    let steps: Array = trace.steps.iter().map(write_step).collect();
    write_object(&[("output", write_rows(&trace.output)), ("steps", steps.into())])
}

/// An object that a reader in convert.js built from the caller's arguments and checked, key by key
/// (`readCall` for an export's options, `readModelConfig`, `readGenerate`, `readAdamW`, …): fresh and
/// plain, so reading it cannot throw. Its fields are read by kind; an option the caller left out is
/// undefined (`None`).
pub struct Checked(JsValue);

/// The steps of `readCall` that read `{ causal?, mask?, window? }` ([`Checked::mask`]).
pub const MASK: &str = "causal:flag mask:bools window:window";

impl Checked {
    /// What the reader returned, or the TypeError / RangeError it refused the options with.
    pub fn read(returned: JsValue) -> Result<Self> {
        Ok(Self(refused(returned)?))
    }

    /// An export's options (`name`, keys `known`; `expected` shows what a missing object should be, ''
    /// when it may be left out), read whole by `readCall` in the order of `steps` (`"key:how …"`):
    /// `kind` is 0 for `number[][]` input, else the typed input's precision (32 or 64), `input` its name;
    /// `extra` what a step needs besides (the cache's key/value flags, the model's headMask counts).
    #[allow(clippy::too_many_arguments)]
    pub fn call(value: &JsValue, name: &str, known: &str, expected: &str, steps: &str, kind: u32, input: &str, extra: &[u32]) -> Result<Self> {
        Self::read(read_call_js(value, name, known, expected, steps, kind, input, extra, MAX_MATRIX_VALUES))
    }

    /// [`Checked::call`] with no typed input and nothing extra.
    pub fn options(value: &JsValue, known: &str, expected: &str, steps: &str) -> Result<Self> {
        Self::call(value, "options", known, expected, steps, 0, "", &[])
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

    /// A table `{ values, rows, cols, place }` copied into wasm memory (a RangeError if it does not fit).
    #[allow(clippy::type_complexity)]
    pub fn table<A: CopyIn>(&self, key: &str) -> Result<Option<(Vec<A::Item>, usize, usize)>>
    where
        A::Item: Default + Clone,
    {
        let m = match self.value(key) {
            m if m.is_undefined() => return Ok(None),
            m => Checked(m),
        };
        let (values, rows, cols): (A, _, _) = (m.value("values").unchecked_into(), m.count("rows").unwrap_or_default(), m.count("cols").unwrap_or_default());
        let place = m.text("place").unwrap_or_default();
        Ok(Some((copy_in(values.length(), &place, (rows as u32, cols as u32), |out| copy_exact(&values, out))?, rows, cols)))
    }

    /// An optional `number[][]` (or a typed weight, as f64).
    pub fn matrix(&self, key: &str) -> Result<Option<Matrix>> {
        self.table::<Float64Array>(key)?.map(|(values, rows, cols)| Matrix::new(rows, cols, values)).transpose()
    }

    /// `{ causal?, mask?, window? }` as a core [`Mask`] (read by the steps [`MASK`]).
    pub fn mask(&self) -> Result<Mask> {
        let allowed = self.table::<Uint8Array>("mask")?.map(|(bytes, rows, cols)| BoolMatrix::new(rows, cols, bytes.into_iter().map(|b| b != 0).collect()));
        Ok(Mask { causal: self.flag("causal"), allowed: allowed.transpose()?, window: self.count("window") })
    }

    /// `numberOfHeads` and `headDimensions`.
    pub fn split(&self) -> HeadSplit {
        HeadSplit { number_of_heads: self.count("numberOfHeads").unwrap_or_default(), head_dimensions: self.count("headDimensions").unwrap_or_default() }
    }

    /// A `dtype`: `None` when absent.
    pub fn dtype(&self, key: &str) -> Option<Dtype> {
        self.text(key).and_then(|name| Dtype::parse(&name))
    }

    /// A `rope` option: `None` when absent or false, else its base and offset.
    pub fn rope(&self, key: &str) -> Option<(Rope, usize)> {
        let pair = self.value(key);
        (!pair.is_undefined()).then(|| {
            let pair = Array::from(&pair);
            (Rope { base: pair.get(0).as_f64().unwrap_or_default() }, pair.get(1).as_f64().unwrap_or_default() as usize)
        })
    }
}

/// `key` of an options object a reader already checked (`options`, as the caller gave it), read later
/// by `readKey`'s `how` (a step kind of `readCall`), when the core has checked what came before it.
pub fn read_key(options: &JsValue, key: &str, place: &str, how: &str) -> Result<JsValue> {
    refused(read_key_js(options, key, place, how))
}

/// Whether an argument is absent: `undefined` or `null`.
pub fn is_missing(value: &JsValue) -> bool {
    value.is_undefined() || value.is_null()
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
