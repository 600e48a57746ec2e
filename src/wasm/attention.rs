//! Exports: `dotProductAttention`, `multiHeadAttention`, `traceMultiHeadAttention`.
//!
//! Their TypeScript declarations (with overloads and named option interfaces) are written
//! below in `TYPESCRIPT`, since wasm-bindgen cannot generate overloads; the JSDoc there is
//! the API reference users see in their editor.

use wasm_bindgen::prelude::*;
use super::convert::missing;

use super::convert::{js_result, read_count, write_trace, Options};
use super::typed::{read_group, read_qkv, read_typed_weight, Element, Form, OnTyped, SmallOptions, Typed};
use crate::attention;
use crate::error::{AttentionError, Result};
use crate::mask::Mask;
use crate::matrix::Matrix;
use crate::precision::Precision;
use crate::multi_head::{self, HeadSplit, MultiHeadOptions};
use crate::trace;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = r#"
/**
 * A matrix as one flat typed array: `data` holds the values row by row, `shape` is `[T, C]`, or
 * `[B, T, C]` for a batch of B sequences (where a function allows it). Every function returns the
 * same kind it was given. Float32Array data is computed in f32 with the SIMD kernels (fastest; results
 * agree with the f64 path to about 1e-6 relative), Float64Array data in f64 exactly as number[][] is.
 */
export interface TypedMatrix<A extends Float32Array | Float64Array = Float32Array | Float64Array> {
  data: A;
  shape: [number, number] | [number, number, number];
}

/** Options of `dotProductAttention`. */
export interface AttentionOptions {
  /** Forbid every key after the query: query i sees keys 0..i only. Default false. */
  causal?: boolean;
  /**
   * T×T table; `mask[i][j] === true` means query i may attend to key j (PyTorch's boolean
   * convention). Combined with `causal` by AND. A query row with no allowed key returns zeros.
   */
  mask?: boolean[][];
}

/** Options of `multiHeadAttention` and `traceMultiHeadAttention`. */
export interface MultiHeadAttentionOptions extends AttentionOptions {
  /** numberOfHeads (h): how many heads C is split into. A positive integer. */
  numberOfHeads: number;
  /** headDimensions (d_head): the width of each head. numberOfHeads · headDimensions must equal C. */
  headDimensions: number;
  /** The C×C output projection applied after concatenation. Default: the identity. */
  W_O?: number[][];
}

/** Options of the typed forms of `multiHeadAttention`: W_O may also be a typed matrix of Q's precision. */
export interface TypedMultiHeadAttentionOptions<A extends Float32Array | Float64Array> extends Omit<MultiHeadAttentionOptions, "W_O"> {
  W_O?: number[][] | TypedMatrix<A>;
}

/** A primitive operation of the attention spec. "Add" (a 1×C bias added to every row) appears only in `MultiHeadAttention.trace`. */
export type TraceOp = "Slice" | "Transpose" | "MatMul" | "Mul" | "StableSoftmax" | "Concat" | "Add";

/** One intermediate of multi-head attention. */
export interface TraceStep {
  op: TraceOp;
  /** The name later steps use for this result, e.g. "Q_0", "K_0^T", "scores_0", "weights_0", "context_0", "concat", "output". */
  name: string;
  /** The operands' names, in order; the inputs are called "Q", "K", "V" and "W_O". */
  inputs: string[];
  /** The head the step belongs to (absent for Concat and the W_O MatMul). */
  head?: number;
  /** [rows, cols]. */
  shape: [number, number];
  values: number[][];
  /** Slice: the column range [start, end). */
  columns?: [number, number];
  /** Mul: the scalar factor 1/√headDimensions. */
  scalar?: number;
  /** StableSoftmax: which (query, key) pairs were allowed, present only when something was masked (causal rule, window or mask). */
  allowed?: boolean[][];
  /** Slice of K or V in `traceGroupedQueryAttention`: the key/value head this query head reads. */
  kvHead?: number;
  /** Rotate: RoPE's base and the position of row 0 (row t is at position + t). */
  rotation?: { base: number; position: number };
}

/** The output of multi-head attention and every step that produced it. */
export interface AttentionTrace {
  output: number[][];
  steps: TraceStep[];
}

/**
 * Scaled dot-product attention: softmax(Q·Kᵀ / √d_k) · V, computed in f64.
 *
 * Q and K are T×d_k, V is T×d_v (same T); the result is T×d_v. A query row whose keys are all
 * masked returns a row of zeros (PyTorch's "safe softmax"), never NaN.
 *
 * @throws {TypeError} when a matrix is not an array of arrays of numbers, or an option has the wrong type.
 * @throws {RangeError} for an empty or ragged matrix, mismatched shapes, NaN/±Infinity entries or a mask of the wrong shape.
 */
export function dotProductAttention(Q: number[][], K: number[][], V: number[][], options?: AttentionOptions): number[][];
/** The typed form: Q, K, V as `{ data: Float32Array, shape }` ([T, d] or [B, T, d]); the result is the same kind. */
export function dotProductAttention(Q: TypedMatrix<Float32Array>, K: TypedMatrix<Float32Array>, V: TypedMatrix<Float32Array>, options?: AttentionOptions): TypedMatrix<Float32Array>;
/** The typed form in f64: bit for bit what number[][] input gives. */
export function dotProductAttention(Q: TypedMatrix<Float64Array>, K: TypedMatrix<Float64Array>, V: TypedMatrix<Float64Array>, options?: AttentionOptions): TypedMatrix<Float64Array>;

/**
 * Multi-head self-attention as the course defines it: slice Q, K and V by columns into
 * numberOfHeads heads of headDimensions columns, run scaled dot-product attention per head
 * (scale 1/√headDimensions), concatenate the heads side by side and multiply by W_O
 * (the C×C identity unless given). Q, K and V must all be T×C with C = numberOfHeads·headDimensions.
 *
 * @example multiHeadAttention([[1, 2], [3, 4]], [[1, 2], [3, 4]], [[5, 6], [7, 8]], { numberOfHeads: 2, headDimensions: 1 })
 * // ≈ [[6.761594, 7.964028], [6.995055, 7.999329]]
 * @throws {TypeError} for a value of the wrong type or a missing/unknown option.
 * @throws {RangeError} "Q/K/V matrix dimensions must match the numberOfHeads * headDimensions: …" for a shape that does not fit, and for bad counts, NaN/±Infinity entries or a bad mask.
 */
export function multiHeadAttention(Q: number[][], K: number[][], V: number[][], options: MultiHeadAttentionOptions): number[][];
/** The positional form from the challenge: `multiHeadAttention(Q, K, V, numberOfHeads, headDimensions)`. */
export function multiHeadAttention(Q: number[][], K: number[][], V: number[][], numberOfHeads: number, headDimensions: number): number[][];
/**
 * The typed form: Q, K, V as `{ data: Float32Array, shape: [T, C] }` (or `[B, T, C]`), computed in f32
 * one head and one block of 64 query rows at a time, so memory stays O(T·C + 64·T) however long T is.
 * `W_O` may be a `[C, C]` TypedMatrix of the same precision or number[][].
 */
export function multiHeadAttention(Q: TypedMatrix<Float32Array>, K: TypedMatrix<Float32Array>, V: TypedMatrix<Float32Array>, options: TypedMultiHeadAttentionOptions<Float32Array>): TypedMatrix<Float32Array>;
export function multiHeadAttention(Q: TypedMatrix<Float32Array>, K: TypedMatrix<Float32Array>, V: TypedMatrix<Float32Array>, numberOfHeads: number, headDimensions: number): TypedMatrix<Float32Array>;
/** The typed form in f64: bit for bit what number[][] input gives. */
export function multiHeadAttention(Q: TypedMatrix<Float64Array>, K: TypedMatrix<Float64Array>, V: TypedMatrix<Float64Array>, options: TypedMultiHeadAttentionOptions<Float64Array>): TypedMatrix<Float64Array>;
export function multiHeadAttention(Q: TypedMatrix<Float64Array>, K: TypedMatrix<Float64Array>, V: TypedMatrix<Float64Array>, numberOfHeads: number, headDimensions: number): TypedMatrix<Float64Array>;

/**
 * `multiHeadAttention` with every intermediate recorded as a named step (Slice, Transpose,
 * MatMul, Mul, StableSoftmax, Concat). Replaying the steps in order reproduces `output` bit for bit,
 * and `output` equals `multiHeadAttention` on the same input bit for bit.
 */
export function traceMultiHeadAttention(Q: number[][], K: number[][], V: number[][], options: MultiHeadAttentionOptions): AttentionTrace;
/** The trace of f64 typed input (`[T, C]`), identical to the number[][] trace. Float32Array is refused: the trace records exact f64 steps. */
export function traceMultiHeadAttention(Q: TypedMatrix<Float64Array>, K: TypedMatrix<Float64Array>, V: TypedMatrix<Float64Array>, options: MultiHeadAttentionOptions): AttentionTrace;
"#;

const ATTENTION_KEYS: &str = "causal, mask";
const MULTI_HEAD_KEYS: &str = "numberOfHeads, headDimensions, W_O, causal, mask";

/// Scaled dot-product attention `softmax(Q·Kᵀ/√d_k)·V` (see the TypeScript declaration).
#[wasm_bindgen(js_name = dotProductAttention, skip_typescript)]
pub fn dot_product_attention(q: JsValue, k: JsValue, v: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let (qkv, small) = read_qkv(&q, &k, &v, &options, &JsValue::UNDEFINED, false)?;
        qkv.call(DotProduct { options: &options, small })
    })
}

/// `dotProductAttention` in the precision and form of its input: `[T, d_v]` or `[B, T, d_v]` back.
struct DotProduct<'a> {
    options: &'a JsValue,
    /// The options, when the fast path read them with Q, K and V.
    small: Option<SmallOptions>,
}

impl OnTyped<3> for DotProduct<'_> {
    type Out = JsValue;
    fn call<F: Element>(self, [q, k, v]: [Typed<F>; 3]) -> Result<JsValue> {
        let mask = match self.small {
            Some(small) => causal_or_none(small.causal),
            None => Options::read(self.options, "options", ATTENTION_KEYS)?.mask()?,
        };
        let out = attention::dot_product_attention_batch(q.view(), k.view(), v.view(), &mask)?;
        let mut shape = v.shape; // V's shape with Q's rows
        let n = shape.len();
        shape[n - 2] = q.shape[n - 2];
        Ok(q.write(out, &shape))
    }
}

/// Multi-head self-attention, options or positional form (see the TypeScript declaration).
#[wasm_bindgen(js_name = multiHeadAttention, skip_typescript)]
pub fn multi_head_attention(
    q: JsValue,
    k: JsValue,
    v: JsValue,
    options: JsValue,
    head_dimensions: JsValue,
) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let (qkv, small) = read_qkv(&q, &k, &v, &options, &head_dimensions, true)?;
        qkv.call(MultiHead { options: &options, head_dimensions: &head_dimensions, small })
    })
}

/// `multiHeadAttention` in the precision and form of its input; W_O is read in that precision.
struct MultiHead<'a> {
    options: &'a JsValue,
    head_dimensions: &'a JsValue,
    /// The options, when the fast path read them with Q, K and V.
    small: Option<SmallOptions>,
}

impl OnTyped<3> for MultiHead<'_> {
    type Out = JsValue;
    fn call<F: Element>(self, [q, k, v]: [Typed<F>; 3]) -> Result<JsValue> {
        let (split, w_o, mask) = match self.small {
            Some(SmallOptions { heads: (number_of_heads, head_dimensions), causal }) => {
                (HeadSplit { number_of_heads, head_dimensions }, None, causal_or_none(causal))
            }
            None => read_multi_head_parts(self.options, self.head_dimensions, |o| read_w_o::<F>(o, q.form))?,
        };
        let out = multi_head::multi_head_attention_batch(q.view(), k.view(), v.view(), split, w_o.as_ref(), &mask)?;
        Ok(q.write(out, &q.shape))
    }
}

/// Multi-head attention with every intermediate step (see the TypeScript declaration).
#[wasm_bindgen(js_name = traceMultiHeadAttention, skip_typescript)]
pub fn trace_multi_head_attention(q: JsValue, k: JsValue, v: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let Some(qkv) = f64::take(read_group([&q, &k, &v], ["Q", "K", "V"], "Q, K and V", false, true)?) else {
            return Err(AttentionError::type_error(
                "Q, K and V are Float32Array matrices; traceMultiHeadAttention records exact f64 steps: pass them as number[][] or { data: Float64Array, shape: [T, C] }",
            ));
        };
        let [q, k, v] = qkv.map(|m| {
            let view = m.view();
            Matrix::new(view.rows, view.cols, m.values)
        });
        let (q, k, v) = (q?, k?, v?);
        let options = read_multi_head_options(&options, &JsValue::UNDEFINED)?;
        let trace = trace::trace_multi_head_attention(&q, &k, &v, &options)?;
        write_trace(&trace)
    })
}

/// `causal: true` → the causal mask, else none (the only masks the fast path reads).
fn causal_or_none(causal: bool) -> Mask {
    if causal { Mask::causal() } else { Mask::none() }
}

/// `options.W_O` in the inputs' precision: for `number[][]` inputs, `number[][]` only; for typed
/// inputs, `number[][]` or a `[C, C]` typed matrix of Q's precision.
fn read_w_o<F: Element>(options: &Options, form: Form) -> Result<Option<Matrix<F>>> {
    let w_o = match form {
        Form::Rows => options.matrix("W_O")?,
        Form::Typed => read_typed_weight(options, "W_O", "Q", F::ARRAY)?,
    };
    Ok(w_o.map(|w| w.cast()))
}

/// `{ numberOfHeads, headDimensions, W_O?, causal?, mask? }`, or the positional
/// `numberOfHeads, headDimensions` pair.
fn read_multi_head_options(options: &JsValue, head_dimensions: &JsValue) -> Result<MultiHeadOptions> {
    let (split, w_o, mask) = read_multi_head_parts(options, head_dimensions, |o| o.matrix("W_O"))?;
    Ok(MultiHeadOptions { split, w_o, mask })
}

/// The head split, W_O (read by `read_w_o`) and the mask, from either form.
fn read_multi_head_parts<W>(
    options: &JsValue,
    head_dimensions: &JsValue,
    read_w_o: impl FnOnce(&Options) -> Result<Option<W>>,
) -> Result<(HeadSplit, Option<W>, Mask)> {
    if options.as_f64().is_some() {
        let number_of_heads = read_count(options, "numberOfHeads (argument 4)")?;
        let head_dimensions = read_count(head_dimensions, "headDimensions (argument 5)")?;
        return Ok((HeadSplit { number_of_heads, head_dimensions }, None, Mask::none()));
    }
    if !head_dimensions.is_undefined() {
        return Err(AttentionError::type_error(
            "headDimensions (argument 5) is only for the positional form multiHeadAttention(Q, K, V, numberOfHeads, headDimensions); with an options object, put headDimensions inside it",
        ));
    }
    if options.is_undefined() || options.is_null() {
        return Err(missing("options", "{ numberOfHeads, headDimensions } or the positional numberOfHeads, headDimensions"));
    }
    let o = Options::read(options, "options", MULTI_HEAD_KEYS)?;
    let split = HeadSplit {
        number_of_heads: read_count(&o.raw("numberOfHeads")?, "options.numberOfHeads")?,
        head_dimensions: read_count(&o.raw("headDimensions")?, "options.headDimensions")?,
    };
    let w_o = read_w_o(&o)?;
    Ok((split, w_o, o.mask()?))
}
