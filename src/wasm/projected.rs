//! Export: `projectedSelfAttention(X, options)`, self-attention with given projections W_Q,
//! W_K, W_V and W_O and no biases (challenge 04's reference; see [`crate::layer::projected_self_attention`]).

use wasm_bindgen::prelude::*;
use super::convert::missing;

use super::convert::{js_result, read_count, Options};
use super::typed::{read_group, read_typed_weight, Form};
use crate::precision::Precision;
use crate::error::Result;
use crate::layer::{projected_self_attention_batch, ProjectedOptions};
use crate::matrix::Matrix;
use crate::multi_head::HeadSplit;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/projected.d.ts");

const PROJECTED_KEYS: &str = "numberOfHeads, headDimensions, W_Q, W_K, W_V, W_O, causal, mask";

/// Self-attention of X with the projections W_Q, W_K, W_V and W_O (see the TypeScript declaration).
/// One body for every form of X: `number[][]` (f64, weights as number[][]), `{ data: Float64Array }`
/// and `{ data: Float32Array }` (weights as number[][] or typed matrices of X's precision, rounded to
/// it: what the f32 forward packs), through the layer's forward in X's precision.
#[wasm_bindgen(js_name = projectedSelfAttention, skip_typescript)]
pub fn projected_self_attention(x: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        crate::by_precision!(F in read_group([&x], ["X"], "X", true, false)?, [x] => {
            let o = read_options(&options)?;
            let split = read_split(&o)?;
            let weight = |key| match x.form {
                Form::Rows => required_weight(&o, key),
                Form::Typed => required_typed_weight(&o, key, F::ARRAY).map(|w| w.cast::<F>().cast()),
            };
            let options = ProjectedOptions { split, w_q: weight("W_Q")?, w_k: weight("W_K")?, w_v: weight("W_V")?, w_o: weight("W_O")?, mask: o.mask()? };
            let out = projected_self_attention_batch(x.view(), x.shape.len() == 3, options)?;
            Ok(x.write(out, &x.shape))
        })
    })
}

/// The options object, which must be present.
fn read_options(options: &JsValue) -> Result<Options> {
    Options::required(options, "options", PROJECTED_KEYS, "{ numberOfHeads, headDimensions, W_Q, W_K, W_V, W_O, causal?, mask? }")
}

/// `numberOfHeads` and `headDimensions` of an options object.
pub(super) fn read_split(o: &Options) -> Result<HeadSplit> {
    Ok(HeadSplit {
        number_of_heads: read_count(&o.raw("numberOfHeads")?, "options.numberOfHeads")?,
        head_dimensions: read_count(&o.raw("headDimensions")?, "options.headDimensions")?,
    })
}

/// A projection that must be present, as `number[][]`.
fn required_weight(o: &Options, key: &str) -> Result<Matrix> {
    o.matrix(key)?
        .ok_or_else(|| missing(&format!("options.{key}"), "a C×C number[][] oriented [in, out]"))
}

/// A projection that must be present, as `number[][]` or a typed matrix of X's precision.
fn required_typed_weight(o: &Options, key: &str, precision: &str) -> Result<Matrix> {
    read_typed_weight(o, key, "X", precision)?.ok_or_else(|| {
        missing(&format!("options.{key}"), &format!("a C×C number[][] or {{ data: {precision}, shape: [C, C] }} oriented [in, out]"))
    })
}
