//! Exports: `dotProductAttention`, `multiHeadAttention`, `traceMultiHeadAttention`.
//!
//! Their TypeScript declarations (with overloads and named option interfaces) are written
//! below in `TYPESCRIPT`, since wasm-bindgen cannot generate overloads; the JSDoc there is
//! the API reference users see in their editor.

use wasm_bindgen::prelude::*;

use super::convert::{js_result, read_count, read_matrix, write_matrix, Options};
use crate::attention;
use crate::error::{AttentionError, Result};
use crate::multi_head::{self, HeadSplit, MultiHeadOptions};
use crate::trace;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = r#"
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
  /** StableSoftmax: which (query, key) pairs were allowed, present only when something was masked. */
  allowed?: boolean[][];
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
 * `multiHeadAttention` with every intermediate recorded as a named step (Slice, Transpose,
 * MatMul, Mul, StableSoftmax, Concat). Replaying the steps in order reproduces `output` bit for bit,
 * and `output` equals `multiHeadAttention` on the same input bit for bit.
 */
export function traceMultiHeadAttention(Q: number[][], K: number[][], V: number[][], options: MultiHeadAttentionOptions): AttentionTrace;
"#;

const ATTENTION_KEYS: &[&str] = &["causal", "mask"];
const MULTI_HEAD_KEYS: &[&str] = &["numberOfHeads", "headDimensions", "W_O", "causal", "mask"];

/// Scaled dot-product attention `softmax(Q·Kᵀ/√d_k)·V` (see the TypeScript declaration).
#[wasm_bindgen(js_name = dotProductAttention, skip_typescript)]
pub fn dot_product_attention(q: JsValue, k: JsValue, v: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let (q, k, v) = (read_matrix(&q, "Q")?, read_matrix(&k, "K")?, read_matrix(&v, "V")?);
        let mask = Options::read(&options, "options", ATTENTION_KEYS)?.mask()?;
        Ok(write_matrix(&attention::dot_product_attention(&q, &k, &v, &mask)?))
    })
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
        let (q, k, v) = (read_matrix(&q, "Q")?, read_matrix(&k, "K")?, read_matrix(&v, "V")?);
        let options = read_multi_head_options(&options, &head_dimensions)?;
        Ok(write_matrix(&multi_head::multi_head_attention(&q, &k, &v, &options)?))
    })
}

/// Multi-head attention with every intermediate step (see the TypeScript declaration).
#[wasm_bindgen(js_name = traceMultiHeadAttention, skip_typescript)]
pub fn trace_multi_head_attention(q: JsValue, k: JsValue, v: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let (q, k, v) = (read_matrix(&q, "Q")?, read_matrix(&k, "K")?, read_matrix(&v, "V")?);
        let options = read_multi_head_options(&options, &JsValue::UNDEFINED)?;
        let trace = trace::trace_multi_head_attention(&q, &k, &v, &options)?;
        serde_wasm_bindgen::to_value(&trace)
            .map_err(|e| AttentionError::State(format!("the trace could not be converted: {e}")))
    })
}

/// `{ numberOfHeads, headDimensions, W_O?, causal?, mask? }`, or the positional
/// `numberOfHeads, headDimensions` pair.
fn read_multi_head_options(options: &JsValue, head_dimensions: &JsValue) -> Result<MultiHeadOptions> {
    if options.as_f64().is_some() {
        let number_of_heads = read_count(options, "numberOfHeads (argument 4)")?;
        let head_dimensions = read_count(head_dimensions, "headDimensions (argument 5)")?;
        return Ok(MultiHeadOptions::new(number_of_heads, head_dimensions));
    }
    if !head_dimensions.is_undefined() {
        return Err(AttentionError::type_error(
            "headDimensions (argument 5) is only for the positional form multiHeadAttention(Q, K, V, numberOfHeads, headDimensions); with an options object, put headDimensions inside it",
        ));
    }
    if options.is_undefined() || options.is_null() {
        return Err(AttentionError::type_error(
            "options is missing; expected { numberOfHeads, headDimensions } or the positional numberOfHeads, headDimensions",
        ));
    }
    let o = Options::read(options, "options", MULTI_HEAD_KEYS)?;
    let split = HeadSplit {
        number_of_heads: read_count(&o.raw("numberOfHeads")?, "options.numberOfHeads")?,
        head_dimensions: read_count(&o.raw("headDimensions")?, "options.headDimensions")?,
    };
    Ok(MultiHeadOptions { split, w_o: o.matrix("W_O")?, mask: o.mask()? })
}
