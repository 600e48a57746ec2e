//! Export: `linear(X, W, b?)`, the projection `X·W + b` with W stored as `[in, out]`: the arguments
//! read here, the op in [`crate::linear`].

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::{describe, is_typed_candidate, js_result, read_bias_js, read_matrix, refused, typed_to_vec, write_matrix, MAX_MATRIX_VALUES};
use super::typed::{read_typed, read_typed_matrix, write_typed, Like, SamePrecision};
use crate::precision::Precision;
use crate::engine::Batch;
use crate::error::{AttentionError, Result};
use crate::linear as core;
use crate::matrix::Matrix;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/linear.d.ts");

/// `X·W + b` (see the TypeScript declaration): the arguments converted, then [`crate::linear::linear`].
#[wasm_bindgen(js_name = linear, skip_typescript)]
pub fn linear(x: JsValue, w: JsValue, b: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        if !is_typed_candidate(&x) {
            let (x, w) = (read_matrix(&x, "X")?, read_matrix(&w, "W")?);
            core::check_shapes((x.rows(), x.cols()), w.shape())?;
            let bias = read_bias(&b, w.cols())?;
            let product = core::linear(Batch::of(&x), w.data(), w.shape(), bias.as_deref())?;
            return Ok(write_matrix(&Matrix::new(x.rows(), w.cols(), product)?));
        }
        let x = read_typed_matrix(&x, "X", true)?;
        if !is_typed_candidate(&w) {
            return Err(AttentionError::type_error(format!("W is {} but X is a typed matrix; pass X and W in the same form", describe(&w))));
        }
        let w = read_typed(&w, "W", false, 0, Some(Like { name: "X", first: &x, group: "X and W", same_rank: false }))?;
        let (w_shape, mut shape) = (w.rows_cols(), x.shape.clone());
        core::check_shapes((shape[shape.len() - 2], shape[shape.len() - 1]), w_shape)?;
        *shape.last_mut().expect("rank ≥ 2") = w_shape.1;
        let bias = read_bias(&b, w_shape.1)?;
        crate::by_precision!(F in SamePrecision::new([x, w])?, [x, w] => {
            Ok(write_typed(&F::wrap(core::linear(x.view(), &w.values, w_shape, bias.as_deref())?), &shape))
        })
    })
}

/// `b`: undefined, or the values of a `number[]`, a Float32Array or a Float64Array (read by
/// `readBias`; the core checks that they are finite and that there are `out` of them).
fn read_bias(b: &JsValue, out: usize) -> Result<Option<Vec<f64>>> {
    if b.is_undefined() {
        return Ok(None);
    }
    let values: js_sys::Float64Array = refused(read_bias_js(b, out as u32, MAX_MATRIX_VALUES))?.unchecked_into();
    Ok(Some(typed_to_vec(&values)))
}
