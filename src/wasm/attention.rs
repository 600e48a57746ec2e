//! Exports: `dotProductAttention`, `multiHeadAttention`, `traceMultiHeadAttention`.
//!
//! Their TypeScript declarations (with overloads and named option interfaces) are written by
//! hand in `types/attention.d.ts`, since wasm-bindgen cannot generate overloads; `TYPESCRIPT`
//! includes that file, so wasm-bindgen puts it into the generated `.d.ts`. Its JSDoc is the API
//! reference users see in their editor.

use wasm_bindgen::prelude::*;

use super::convert::{js_result, read_multi_head_js, write_trace, Checked, MAX_MATRIX_VALUES};
use super::typed::{read_group, read_qkv, SmallOptions};
use crate::attention;
use crate::error::{AttentionError, Result};
use crate::mask::Mask;
use crate::matrix::Matrix;
use crate::precision::Precision;
use crate::multi_head::{self, HeadSplit, MultiHeadOptions};
use crate::trace;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/attention.d.ts");

/// Scaled dot-product attention `softmax(Q·Kᵀ/√d_k)·V` (see the TypeScript declaration): in the
/// precision and form of its input, `[T, d_v]` or `[B, T, d_v]` back.
#[wasm_bindgen(js_name = dotProductAttention, skip_typescript)]
pub fn dot_product_attention(q: JsValue, k: JsValue, v: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let (qkv, small) = read_qkv(&q, &k, &v, &options, &JsValue::UNDEFINED, false)?;
        crate::by_precision!(qkv, [q, k, v] => {
            let mask = match small {
                Some(small) => causal_or_none(small.causal),
                None => Checked::options(&options, "causal, mask", "", super::convert::MASK)?.mask()?,
            };
            let out = attention::dot_product_attention_batch(q.view(), k.view(), v.view(), &mask)?;
            let mut shape = v.shape; // V's shape with Q's rows
            let n = shape.len();
            shape[n - 2] = q.shape[n - 2];
            Ok(q.write(out, &shape))
        })
    })
}

/// Multi-head self-attention, options or positional form (see the TypeScript declaration), in the
/// precision and form of its input; W_O is read in that precision.
#[wasm_bindgen(js_name = multiHeadAttention, skip_typescript)]
pub fn multi_head_attention(q: JsValue, k: JsValue, v: JsValue, options: JsValue, head_dimensions: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let (qkv, small) = read_qkv(&q, &k, &v, &options, &head_dimensions, true)?;
        crate::by_precision!(F in qkv, [q, k, v] => {
            let (split, w_o, mask) = match small {
                Some(SmallOptions { heads: (number_of_heads, head_dimensions), causal }) => {
                    (HeadSplit { number_of_heads, head_dimensions }, None, causal_or_none(causal))
                }
                None => read_multi_head(&options, &head_dimensions, q.kind())?,
            };
            let w_o: Option<Matrix<F>> = w_o.map(|w| w.cast());
            let out = multi_head::multi_head_attention_batch(q.view(), k.view(), v.view(), split, w_o.as_ref(), &mask)?;
            Ok(q.write(out, &q.shape))
        })
    })
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
        let [q, k, v] = qkv.map(|m| m.matrix());
        let (split, w_o, mask) = read_multi_head(&options, &JsValue::UNDEFINED, 0)?;
        write_trace(&trace::trace_multi_head_attention(&q?, &k?, &v?, &MultiHeadOptions { split, w_o, mask })?)
    })
}

/// `causal: true` → the causal mask, else none (the only masks the fast path reads).
fn causal_or_none(causal: bool) -> Mask {
    if causal { Mask::causal() } else { Mask::none() }
}

/// `{ numberOfHeads, headDimensions, W_O?, causal?, mask? }`, or the positional `numberOfHeads,
/// headDimensions` pair (read by `readMultiHead`): the head split, W_O (of the input's `kind`, see
/// [`Checked::call`]) and the mask.
fn read_multi_head(options: &JsValue, head_dimensions: &JsValue, kind: u32) -> Result<(HeadSplit, Option<Matrix>, Mask)> {
    let steps = "numberOfHeads:count headDimensions:count W_O:weight causal:flag mask:bools window:window";
    let expected = "{ numberOfHeads, headDimensions } or the positional numberOfHeads, headDimensions";
    let keys = "numberOfHeads, headDimensions, W_O, causal, mask";
    let c = Checked::read(read_multi_head_js(options, head_dimensions, keys, expected, steps, kind, MAX_MATRIX_VALUES))?;
    Ok((c.split(), c.matrix("W_O")?, c.mask()?))
}
