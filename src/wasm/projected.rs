//! Export: `projectedSelfAttention(X, options)`, self-attention with given projections W_Q,
//! W_K, W_V and W_O and no biases (challenge 04's reference; see [`crate::layer::projected_self_attention`]).

use wasm_bindgen::prelude::*;
use super::convert::missing;

use super::convert::{
    is_typed_candidate, js_result, read_count, read_matrix, read_typed_matrix, read_typed_weight, write_matrix, write_typed, Options, TypedValues,
};
use crate::error::Result;
use crate::layer::{projected_self_attention as projected, projected_self_attention_f32 as projected_f32, ProjectedOptions};
use crate::engine::Batch;
use crate::matrix::Matrix;
use crate::multi_head::HeadSplit;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/projected.d.ts");

const PROJECTED_KEYS: &str = "numberOfHeads, headDimensions, W_Q, W_K, W_V, W_O, causal, mask";

/// Self-attention of X with the projections W_Q, W_K, W_V and W_O (see the TypeScript declaration).
#[wasm_bindgen(js_name = projectedSelfAttention, skip_typescript)]
pub fn projected_self_attention(x: JsValue, options: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        if is_typed_candidate(&x) {
            return projected_typed(&x, &options);
        }
        let x = read_matrix(&x, "X")?;
        let o = read_options(&options)?;
        let split = read_split(&o)?;
        let options = ProjectedOptions {
            split,
            w_q: required_weight(&o, "W_Q")?,
            w_k: required_weight(&o, "W_K")?,
            w_v: required_weight(&o, "W_V")?,
            w_o: required_weight(&o, "W_O")?,
            mask: o.mask()?,
        };
        Ok(write_matrix(&projected(&x, options)?))
    })
}

/// The typed forms: Float64Array one batch item at a time through the f64 function (the same bits
/// as number[][]), Float32Array through the layer's f32 forward.
fn projected_typed(x: &JsValue, options: &JsValue) -> Result<JsValue> {
    let x = read_typed_matrix(x, "X", true)?;
    let o = read_options(options)?;
    let split = read_split(&o)?;
    let precision = x.array_name();
    let (b, (t, c)) = (x.batch().unwrap_or(1), x.rows_cols());
    // the weights as f64 (for Float32Array input, rounded to f32 first: what the f32 forward packs)
    let round = matches!(x.values, TypedValues::F32(_));
    let weight = |key| required_typed_weight(&o, key, precision).map(|w| if round { w.cast::<f32>().cast() } else { w });
    let options = ProjectedOptions { split, w_q: weight("W_Q")?, w_k: weight("W_K")?, w_v: weight("W_V")?, w_o: weight("W_O")?, mask: o.mask()? };
    let values = match &x.values {
        TypedValues::F64(data) => {
            let mut out = Vec::with_capacity(data.len());
            for item in data.chunks_exact(t * c) {
                out.extend_from_slice(projected(&Matrix::new(t, c, item.to_vec())?, options.clone())?.data()); // (T, C)
            }
            TypedValues::F64(out)
        }
        TypedValues::F32(data) => TypedValues::F32(projected_f32(Batch::new(data, b, t, c), x.batch().is_some(), options)?),
    };
    Ok(write_typed(&values, &x.shape))
}

/// The options object, which must be present.
fn read_options(options: &JsValue) -> Result<Options> {
    if options.is_undefined() || options.is_null() {
        return Err(missing("options", "{ numberOfHeads, headDimensions, W_Q, W_K, W_V, W_O, causal?, mask? }"));
    }
    Options::read(options, "options", PROJECTED_KEYS)
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
