//! Exports: `groupedQueryAttention`, `traceGroupedQueryAttention`, `rotaryEmbedding` (attention as
//! today's LLMs run it).

use wasm_bindgen::prelude::*;

use super::convert::{js_result, read_count, read_matrix, write_trace};
use super::typed::{read_group, read_typed_weight};
use super::convert::{read_rope_option, Options};
use super::typed::Form;
use crate::precision::Precision;
use crate::error::Result;
use crate::grouped_query::{grouped_query_attention_batch, rotary_embedding_batch};
use crate::mask::Mask;
use crate::matrix::Matrix;
use crate::multi_head::HeadSplit;
use crate::trace;
use super::projected::read_split;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/grouped.d.ts");

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
        let rope = read_rope_option(&o.raw("rope")?, "options.rope", ROPE_KEYS)?;
        write_trace(&trace::trace_grouped_query_attention(&q, &k, &v, split, kv_heads, w_o.as_ref(), &mask, rope)?)
    })
}

/// Grouped-query attention (see the TypeScript declaration), in the precision and form of its input.
#[wasm_bindgen(js_name = groupedQueryAttention, skip_typescript)]
pub fn grouped_query_attention(q: JsValue, k: JsValue, v: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        // the matrices first, then the options (the order multiHeadAttention reads them in)
        let qkv = read_group([&q, &k, &v], ["Q", "K", "V"], "Q, K and V", true, false)?;
        let (o, split, kv_heads, mask) = read_grouped_options(&options)?;
        crate::by_precision!(F in qkv, [q, k, v] => {
            let w_o = match q.form {
                Form::Rows => o.matrix("W_O")?,
                Form::Typed => read_typed_weight(&o, "W_O", "Q", F::ARRAY)?,
            };
            let w_o: Option<Matrix<F>> = w_o.map(|w| w.cast());
            let out = grouped_query_attention_batch(q.view(), k.view(), v.view(), split, kv_heads, w_o.as_ref(), &mask)?;
            Ok(q.write(out, &q.shape))
        })
    })
}

/// Rotary position embedding (see the TypeScript declaration), in the precision and form of its input.
#[wasm_bindgen(js_name = rotaryEmbedding, skip_typescript)]
pub fn rotary_embedding(x: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let x = read_group([&x], ["X"], "X", true, false)?;
        let o = required(&options, ROTARY_KEYS, "{ numberOfHeads, headDimensions }")?;
        let split = read_split(&o)?;
        let (rope, offset) = o.rope(true)?;
        crate::by_precision!(x, [x] => Ok(x.write(rotary_embedding_batch(x.view(), split, rope, offset)?, &x.shape)))
    })
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
    Options::required(options, "options", keys, expected)
}
