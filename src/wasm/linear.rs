//! Export: `linear(X, W, b?)`, the projection `X·W + b` with W stored as `[in, out]`: the arguments
//! read here, the op in [`crate::linear`].

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::{check_same_form, is_typed_candidate, js_result, read_bias_js, refused, typed_to_vec, MAX_MATRIX_VALUES};
use super::typed::{read_group, read_typed, read_typed_matrix, write_in, Like, SamePrecision};
use crate::error::Result;
use crate::linear as core;
use crate::precision::Precision;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/linear.d.ts");

/// `X·W + b` (see the TypeScript declaration): the arguments converted, then [`crate::linear::linear`],
/// one body for `number[][]` (f64) and typed input of either precision.
#[wasm_bindgen(js_name = linear, skip_typescript)]
pub fn linear(x: JsValue, w: JsValue, b: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        let xw = if is_typed_candidate(&x) {
            let x = read_typed_matrix(&x, "X", true)?;
            refused(check_same_form(&w, "W", "X", "X and W", true))?;
            let w = read_typed(&w, "W", false, 0, Some(Like { name: "X", first: &x, group: "X and W", same_rank: false }))?;
            SamePrecision::new([x, w])?
        } else {
            read_group([&x, &w], ["X", "W"], "X and W", false, false)?
        };
        crate::by_precision!(F in xw, [x, w] => {
            let (mut shape, w_shape) = (x.shape.clone(), (w.shape[0], w.shape[1]));
            core::check_shapes((shape[shape.len() - 2], shape[shape.len() - 1]), w_shape)?;
            *shape.last_mut().expect("rank ≥ 2") = w_shape.1;
            let bias = read_bias(&b, w_shape.1)?;
            Ok(write_in(x.form, F::wrap(core::linear(x.view(), &w.values, w_shape, bias.as_deref())?), &shape))
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
