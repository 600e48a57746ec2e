//! Exports: `groupedQueryAttention`, `traceGroupedQueryAttention`, `rotaryEmbedding` (attention as
//! today's LLMs run it).

use wasm_bindgen::prelude::*;

use super::convert::{js_result, read_matrix, write_trace, Checked};
use super::typed::read_group;
use crate::grouped_query::{grouped_query_attention_batch, rotary_embedding_batch};
use crate::engine::Rope;
use crate::matrix::Matrix;
use crate::trace;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/grouped.d.ts");

const EXPECTED: &str = "{ numberOfHeads, numberOfKVHeads, headDimensions }";
/// The head split, the K/V heads and the mask, as both exports read them first.
const STEPS: &str = "numberOfHeads:count headDimensions:count numberOfKVHeads:count causal:flag mask:bools window:window";

/// Grouped-query attention with every step recorded (see the TypeScript declaration).
#[wasm_bindgen(js_name = traceGroupedQueryAttention, skip_typescript)]
pub fn trace_grouped_query_attention(q: JsValue, k: JsValue, v: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let (q, k, v) = (read_matrix(&q, "Q")?, read_matrix(&k, "K")?, read_matrix(&v, "V")?);
        let keys = "numberOfHeads, numberOfKVHeads, headDimensions, W_O, causal, mask, window, rope";
        let o = Checked::options(&options, keys, EXPECTED, &format!("{STEPS} W_O:matrix rope:rope"))?;
        let (kv_heads, w_o) = (o.count("numberOfKVHeads").unwrap_or_default(), o.matrix("W_O")?);
        write_trace(&trace::trace_grouped_query_attention(&q, &k, &v, o.split(), kv_heads, w_o.as_ref(), &o.mask()?, o.rope("rope"))?)
    })
}

/// Grouped-query attention (see the TypeScript declaration), in the precision and form of its input.
#[wasm_bindgen(js_name = groupedQueryAttention, skip_typescript)]
pub fn grouped_query_attention(q: JsValue, k: JsValue, v: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        // the matrices first, then the options (the order multiHeadAttention reads them in)
        let qkv = read_group([&q, &k, &v], ["Q", "K", "V"], "Q, K and V", true, false)?;
        crate::by_precision!(F in qkv, [q, k, v] => {
            let keys = "numberOfHeads, numberOfKVHeads, headDimensions, W_O, causal, mask, window";
            let o = Checked::call(&options, "options", keys, EXPECTED, &format!("{STEPS} W_O:weight"), q.kind(), "Q", &[])?;
            let w_o: Option<Matrix<F>> = o.matrix("W_O")?.map(|w| w.cast());
            let out = grouped_query_attention_batch(q.view(), k.view(), v.view(), o.split(), o.count("numberOfKVHeads").unwrap_or_default(), w_o.as_ref(), &o.mask()?)?;
            Ok(q.write(out, &q.shape))
        })
    })
}

/// Rotary position embedding (see the TypeScript declaration), in the precision and form of its input.
#[wasm_bindgen(js_name = rotaryEmbedding, skip_typescript)]
pub fn rotary_embedding(x: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let x = read_group([&x], ["X"], "X", true, false)?;
        let steps = "numberOfHeads:count headDimensions:count base:base offset:offset";
        let o = Checked::options(&options, "numberOfHeads, headDimensions, base, offset", "{ numberOfHeads, headDimensions }", steps)?;
        let (rope, offset) = (Rope { base: o.number("base").unwrap_or_default() }, o.count("offset").unwrap_or_default());
        crate::by_precision!(x, [x] => Ok(x.write(rotary_embedding_batch(x.view(), o.split(), rope, offset)?, &x.shape)))
    })
}
