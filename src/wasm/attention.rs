//! Exports: `dotProductAttention`, `multiHeadAttention`, `traceMultiHeadAttention`.
//!
//! Their TypeScript declarations (with overloads and named option interfaces) are written by
//! hand in `types/attention.d.ts`, since wasm-bindgen cannot generate overloads; `TYPESCRIPT`
//! includes that file, so wasm-bindgen puts it into the generated `.d.ts`. Its JSDoc is the API
//! reference users see in their editor.

use wasm_bindgen::prelude::*;

use super::convert::{js_result, read_count, write_trace, Options};
use super::typed::{read_group, read_qkv, read_typed_weight, Element, Form, SmallOptions};
use crate::attention;
use crate::error::{AttentionError, Result};
use crate::mask::Mask;
use crate::matrix::Matrix;
use crate::precision::Precision;
use crate::multi_head::{self, HeadSplit, MultiHeadOptions};
use crate::trace;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/attention.d.ts");

const ATTENTION_KEYS: &str = "causal, mask";
const MULTI_HEAD_KEYS: &str = "numberOfHeads, headDimensions, W_O, causal, mask";

/// Scaled dot-product attention `softmax(Q·Kᵀ/√d_k)·V` (see the TypeScript declaration): in the
/// precision and form of its input, `[T, d_v]` or `[B, T, d_v]` back.
#[wasm_bindgen(js_name = dotProductAttention, skip_typescript)]
pub fn dot_product_attention(q: JsValue, k: JsValue, v: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let (qkv, small) = read_qkv(&q, &k, &v, &options, &JsValue::UNDEFINED, false)?;
        crate::by_precision!(qkv, [q, k, v] => {
            let mask = match small {
                Some(small) => causal_or_none(small.causal),
                None => Options::read(&options, "options", ATTENTION_KEYS)?.mask()?,
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
                None => read_multi_head_parts(&options, &head_dimensions, |o| read_w_o::<F>(o, q.form))?,
            };
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
    let o = Options::required(options, "options", MULTI_HEAD_KEYS, "{ numberOfHeads, headDimensions } or the positional numberOfHeads, headDimensions")?;
    let split = HeadSplit {
        number_of_heads: read_count(&o.raw("numberOfHeads")?, "options.numberOfHeads")?,
        head_dimensions: read_count(&o.raw("headDimensions")?, "options.headDimensions")?,
    };
    let w_o = read_w_o(&o)?;
    Ok((split, w_o, o.mask()?))
}
