//! Exports: `groupedQueryAttention`, `traceGroupedQueryAttention`, `rotaryEmbedding` (attention as
//! today's LLMs run it).

use wasm_bindgen::prelude::*;
use super::convert::missing;

use super::convert::{js_result, read_count, read_matrix, write_trace};
use super::typed::{read_group, read_typed_weight};
use super::convert::{read_rope_option, Options};
use super::typed::{Element, Form, OnTyped, Typed};
use crate::engine::Rope;
use crate::error::Result;
use crate::grouped_query::{grouped_query_attention_batch, rotary_embedding_batch};
use crate::mask::Mask;
use crate::matrix::Matrix;
use crate::multi_head::HeadSplit;
use crate::trace;
use super::projected::read_split;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = r#"
/** Options of `groupedQueryAttention`. */
export interface GroupedQueryAttentionOptions {
  /** numberOfHeads (h): the query heads. A positive integer. */
  numberOfHeads: number;
  /** numberOfKVHeads: the key/value heads; must divide numberOfHeads. 1 is multi-query attention, numberOfHeads is multi-head attention. */
  numberOfKVHeads: number;
  /** headDimensions (d_head): the width of every head. */
  headDimensions: number;
  /** The C×C output projection (C = numberOfHeads·headDimensions). Default: the identity. */
  W_O?: number[][];
  /**
   * Query at position p sees keys j ≤ p only. The queries are the LAST T_q of the T_k key positions
   * (query i is at T_k − T_q + i): flash-attention's bottom-right alignment, the one decoding with a
   * KV cache needs, not PyTorch's top-left `is_causal`. With T_q = T_k it is the usual causal mask.
   */
  causal?: boolean;
  /** T_q×T_k table; `mask[i][j] === true` means query i may attend to key j. ANDed with the rest. */
  mask?: boolean[][];
  /** A sliding window w (positive integer): query at p sees keys with |p − j| < w; with `causal`, p − w < j ≤ p (Mistral). */
  window?: number;
}

/** The typed forms of `groupedQueryAttention`: W_O may also be a typed matrix of Q's precision. */
export interface TypedGroupedQueryAttentionOptions<A extends Float32Array | Float64Array> extends Omit<GroupedQueryAttentionOptions, "W_O"> {
  W_O?: number[][] | TypedMatrix<A>;
}

/** Options of `rotaryEmbedding`. */
export interface RotaryEmbeddingOptions {
  /** numberOfHeads (h): X's columns are h heads side by side. */
  numberOfHeads: number;
  /** headDimensions (d_head): each head's width; must be even (pairs are rotated). */
  headDimensions: number;
  /** The base of the angles θ = p·base^(−2i/d_head). Default 10000 (Llama). A finite number > 0. */
  base?: number;
  /** The position of row 0 (rows are at offset, offset + 1, …). Default 0. An integer ≥ 0; every position must stay below 2^20. */
  offset?: number;
}

/**
 * Grouped-query attention: numberOfHeads query heads share numberOfKVHeads key/value heads; query
 * head i reads K/V head ⌊i / (numberOfHeads / numberOfKVHeads)⌋ (consecutive query heads share one,
 * as PyTorch's `repeat_interleave` and Llama's `repeat_kv` do). Each head is scaled by 1/√headDimensions;
 * the heads are concatenated and multiplied by W_O. Q is T_q×(numberOfHeads·headDimensions), K and V are
 * T_k×(numberOfKVHeads·headDimensions); the result is T_q×C. With numberOfKVHeads = numberOfHeads and
 * T_q = T_k it equals `multiHeadAttention` bit for bit.
 *
 * @example groupedQueryAttention(Q, K, V, { numberOfHeads: 4, numberOfKVHeads: 2, headDimensions: 8, causal: true })
 * @throws {TypeError} for a value of the wrong type or a missing/unknown option.
 * @throws {RangeError} when numberOfKVHeads does not divide numberOfHeads, for shapes that do not fit, NaN/±Infinity entries, a bad window or mask.
 */
export function groupedQueryAttention(Q: number[][], K: number[][], V: number[][], options: GroupedQueryAttentionOptions): number[][];
/** The typed form in f32, with the SIMD kernels; [T, C] or [B, T, C]. */
export function groupedQueryAttention(Q: TypedMatrix<Float32Array>, K: TypedMatrix<Float32Array>, V: TypedMatrix<Float32Array>, options: TypedGroupedQueryAttentionOptions<Float32Array>): TypedMatrix<Float32Array>;
/** The typed form in f64: bit for bit what number[][] gives. */
export function groupedQueryAttention(Q: TypedMatrix<Float64Array>, K: TypedMatrix<Float64Array>, V: TypedMatrix<Float64Array>, options: TypedGroupedQueryAttentionOptions<Float64Array>): TypedMatrix<Float64Array>;

/** Options of `traceGroupedQueryAttention`: those of `groupedQueryAttention`, and RoPE. */
export interface TraceGroupedQueryAttentionOptions extends GroupedQueryAttentionOptions {
  /**
   * Rotate Q and K with rotary position embedding before the scores (absent or false: no rotation).
   * `offset` is the position of key 0 (default 0); query i is at offset + T_k − T_q + i, so T_q ≤ T_k.
   */
  rope?: boolean | { base?: number; offset?: number };
}

/**
 * `groupedQueryAttention` with every intermediate recorded, for the course: per head Slice (K and V
 * slices carry `kvHead`), Rotate (with `rope`), Transpose, MatMul, Mul, StableSoftmax (its `allowed`
 * shows the causal rule, the window and the mask), MatMul; then Concat and the W_O MatMul. Replaying
 * the steps reproduces `output` bit for bit.
 */
export function traceGroupedQueryAttention(Q: number[][], K: number[][], V: number[][], options: TraceGroupedQueryAttentionOptions): AttentionTrace;

/**
 * Rotary position embedding (RoPE), rotate-half layout (Llama and GPT-NeoX in Hugging Face): within
 * each head and for i < d/2, the pair (x[i], x[i + d/2]) of the row at position p is rotated by
 * θ = p·base^(−2i/d): x[i] → x[i]·cos θ − x[i+d/2]·sin θ, x[i+d/2] → x[i+d/2]·cos θ + x[i]·sin θ.
 * Row t is at position offset + t. Returns the rotated copy; X is not changed.
 *
 * @throws {RangeError} for an odd headDimensions, a shape that is not T×(numberOfHeads·headDimensions), a base that is not a finite number > 0 or a negative or fractional offset.
 */
export function rotaryEmbedding(X: number[][], options: RotaryEmbeddingOptions): number[][];
/** The typed forms, in X's precision; [T, C] or [B, T, C] (every item starts at `offset`). */
export function rotaryEmbedding(X: TypedMatrix<Float32Array>, options: RotaryEmbeddingOptions): TypedMatrix<Float32Array>;
export function rotaryEmbedding(X: TypedMatrix<Float64Array>, options: RotaryEmbeddingOptions): TypedMatrix<Float64Array>;
"#;

const GROUPED_KEYS: &str = "numberOfHeads, numberOfKVHeads, headDimensions, W_O, causal, mask, window";
const ROTARY_KEYS: &str = "numberOfHeads, headDimensions, base, offset";
const TRACE_KEYS: &str = "numberOfHeads, numberOfKVHeads, headDimensions, W_O, causal, mask, window, rope";
const ROPE_KEYS: &str = "base, offset";

/// Grouped-query attention with every step recorded (see the TypeScript declaration).
#[wasm_bindgen(js_name = traceGroupedQueryAttention, skip_typescript)]
pub fn trace_grouped_query_attention(q: JsValue, k: JsValue, v: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let (q, k, v) = (read_matrix(&q, "Q")?, read_matrix(&k, "K")?, read_matrix(&v, "V")?);
        let o = required(&options, TRACE_KEYS, "{ numberOfHeads, numberOfKVHeads, headDimensions }")?;
        let split = read_split(&o)?;
        let kv_heads = read_count(&o.raw("numberOfKVHeads")?, "options.numberOfKVHeads")?;
        let mask = o.mask()?;
        let w_o = o.matrix("W_O")?;
        let rope = match read_rope_option(&o.raw("rope")?, "options.rope", ROPE_KEYS)? {
            Some(r) => Some((Rope { base: r.positive_or("base", Rope::default().base)? }, r.index_or("offset", 0)?)),
            None => None,
        };
        write_trace(&trace::trace_grouped_query_attention(&q, &k, &v, split, kv_heads, w_o.as_ref(), &mask, rope)?)
    })
}

/// Grouped-query attention (see the TypeScript declaration).
#[wasm_bindgen(js_name = groupedQueryAttention, skip_typescript)]
pub fn grouped_query_attention(q: JsValue, k: JsValue, v: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        // the matrices first, then the options (the order multiHeadAttention reads them in)
        let qkv = read_group([&q, &k, &v], ["Q", "K", "V"], "Q, K and V", true, false)?;
        let (o, split, kv_heads, mask) = read_grouped_options(&options)?;
        qkv.call(Grouped { options: &o, split, kv_heads, mask })
    })
}

/// `groupedQueryAttention` in the precision and form of its input.
struct Grouped<'a> {
    options: &'a Options,
    split: HeadSplit,
    kv_heads: usize,
    mask: Mask,
}

impl OnTyped<3> for Grouped<'_> {
    type Out = JsValue;
    fn call<F: Element>(self, [q, k, v]: [Typed<F>; 3]) -> Result<JsValue> {
        let w_o = match q.form {
            Form::Rows => self.options.matrix("W_O")?,
            Form::Typed => read_typed_weight(self.options, "W_O", "Q", F::ARRAY)?,
        };
        let w_o: Option<Matrix<F>> = w_o.map(|w| w.cast());
        let out = grouped_query_attention_batch(q.view(), k.view(), v.view(), self.split, self.kv_heads, w_o.as_ref(), &self.mask)?;
        Ok(q.write(out, &q.shape))
    }
}

/// Rotary position embedding (see the TypeScript declaration).
#[wasm_bindgen(js_name = rotaryEmbedding, skip_typescript)]
pub fn rotary_embedding(x: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let x = read_group([&x], ["X"], "X", true, false)?;
        let o = required(&options, ROTARY_KEYS, "{ numberOfHeads, headDimensions }")?;
        let (split, rope, offset) = (read_split(&o)?, Rope { base: o.positive_or("base", Rope::default().base)? }, o.index_or("offset", 0)?);
        x.call(Rotary { split, rope, offset })
    })
}

/// `rotaryEmbedding` in the precision and form of its input.
struct Rotary {
    split: HeadSplit,
    rope: Rope,
    offset: usize,
}

impl OnTyped<1> for Rotary {
    type Out = JsValue;
    fn call<F: Element>(self, [x]: [Typed<F>; 1]) -> Result<JsValue> {
        let out = rotary_embedding_batch(x.view(), self.split, self.rope, self.offset)?;
        Ok(x.write(out, &x.shape))
    }
}

/// The options of `groupedQueryAttention`: the object, the head split, the K/V heads and the mask.
fn read_grouped_options(options: &JsValue) -> Result<(Options, HeadSplit, usize, Mask)> {
    let o = required(options, GROUPED_KEYS, "{ numberOfHeads, numberOfKVHeads, headDimensions }")?;
    let split = read_split(&o)?;
    let kv_heads = read_count(&o.raw("numberOfKVHeads")?, "options.numberOfKVHeads")?;
    let mask = o.mask()?;
    Ok((o, split, kv_heads, mask))
}

/// The options object, which must be present; `expected` shows its required keys.
fn required(options: &JsValue, keys: &str, expected: &str) -> Result<Options> {
    if options.is_undefined() || options.is_null() {
        return Err(missing("options", expected));
    }
    Options::read(options, "options", keys)
}
