//! Export: `projectedSelfAttention(X, options)`, self-attention with given projections W_Q,
//! W_K, W_V and W_O and no biases (challenge 04's reference; see [`crate::projected::projected_self_attention`]).

use wasm_bindgen::prelude::*;

use super::convert::{js_result, Checked};
use super::typed::read_group;
use crate::projected::{projected_self_attention_batch, ProjectedOptions};
use crate::matrix::Matrix;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/projected.d.ts");

/// Self-attention of X with the projections W_Q, W_K, W_V and W_O (see the TypeScript declaration).
/// One body for every form of X: `number[][]` (f64, weights as number[][]), `{ data: Float64Array }`
/// and `{ data: Float32Array }` (weights as number[][] or typed matrices of X's precision, rounded to
/// it: what the f32 forward packs), through the layer's forward in X's precision.
#[wasm_bindgen(js_name = projectedSelfAttention, skip_typescript)]
pub fn projected_self_attention(x: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        crate::by_precision!(F in read_group([&x], ["X"], "X", true, false)?, [x] => {
            let keys = "numberOfHeads, headDimensions, W_Q, W_K, W_V, W_O, causal, mask";
            let expected = "{ numberOfHeads, headDimensions, W_Q, W_K, W_V, W_O, causal?, mask? }";
            let steps = "numberOfHeads:count headDimensions:count W_Q:required W_K:required W_V:required W_O:required causal:flag mask:bools window:window";
            let o = Checked::call(&options, "options", keys, expected, steps, x.kind(), "X", &[])?;
            // each present (readCall refused a missing one), rounded to X's precision
            let weight = |key| Ok::<_, crate::error::AttentionError>(o.matrix(key)?.map_or_else(|| Matrix::zeros(0, 0), |w| w.cast::<F>().cast()));
            let options = ProjectedOptions { split: o.split(), w_q: weight("W_Q")?, w_k: weight("W_K")?, w_v: weight("W_V")?, w_o: weight("W_O")?, mask: o.mask()? };
            let out = projected_self_attention_batch(x.view(), x.shape.len() == 3, options)?;
            Ok(x.write(out, &x.shape))
        })
    })
}
