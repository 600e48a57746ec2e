//! Export: `linear(X, W, b?)`, the projection `X·W + b` with W stored as `[in, out]`.
//!
//! It exists so that projections (W_Q, W_K, W_V, W_O) can be composed from JS, e.g. by the
//! benchmark, with the same fast f32 kernel the attention path uses.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::{
    describe, is_typed_candidate, js_result, number_text, read_matrix, read_typed_matrix, read_vector, write_matrix, write_typed, Element, OnTyped,
    SamePrecision, Typed, TypedValues,
};
use crate::engine::Kernel;
use crate::real::Real;
use crate::error::{AttentionError, Result};
use crate::matrix::Matrix;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = r#"
/**
 * The projection `X·W + b`: X is T×in (or [B, T, in] as a typed matrix), W is in×out (`[in, out]`,
 * so each column of W is one output feature), b has `out` entries (optional). Returns T×out in the
 * same form as X: number[][] and Float64Array are computed in f64 (each sum in increasing order of
 * the shared index, like `multiHeadAttention`), Float32Array in f32 with the SIMD kernel.
 *
 * @throws {TypeError} when X, W or b has the wrong type, or X and W are not the same kind.
 * @throws {RangeError} when W's rows do not match X's columns, b's length does not match W's columns, or a value is not finite.
 */
export function linear(X: number[][], W: number[][], b?: number[] | Float64Array): number[][];
export function linear(X: TypedMatrix<Float32Array>, W: TypedMatrix<Float32Array>, b?: Float32Array | number[]): TypedMatrix<Float32Array>;
export function linear(X: TypedMatrix<Float64Array>, W: TypedMatrix<Float64Array>, b?: Float64Array | number[]): TypedMatrix<Float64Array>;
"#;

/// `X·W + b` (see the TypeScript declaration).
#[wasm_bindgen(js_name = linear, skip_typescript)]
pub fn linear(x: JsValue, w: JsValue, b: JsValue) -> std::result::Result<JsValue, JsValue> {
    js_result(|| {
        if !is_typed_candidate(&x) {
            let (x, w) = (read_matrix(&x, "X")?, read_matrix(&w, "W")?);
            check(x.rows(), x.cols(), w.rows(), w.cols())?;
            let bias = read_bias(&b, w.cols())?;
            let mut product = vec![0.0; x.rows() * w.cols()];
            f64::linear(x.data(), x.rows(), x.cols(), w.data(), w.cols(), bias.as_deref(), &mut product);
            check_finite_output(product.iter().copied(), w.cols(), f64::LARGEST)?;
            return Ok(write_matrix(&Matrix::new(x.rows(), w.cols(), product)?));
        }
        let x = read_typed_matrix(&x, "X", true)?;
        if !is_typed_candidate(&w) {
            return Err(AttentionError::type_error(format!("W is {} but X is a typed matrix; pass X and W in the same form", describe(&w))));
        }
        let w = read_typed_matrix(&w, "W", false)?;
        if w.array_name() != x.array_name() {
            return Err(AttentionError::type_error(format!(
                "W.data is a {} but X.data is a {}; pass X and W in the same precision",
                w.array_name(),
                x.array_name()
            )));
        }
        let (t, c_in) = x.rows_cols();
        let rows = t * x.batch().unwrap_or(1);
        let (w_rows, c_out) = w.rows_cols();
        check(t, c_in, w_rows, c_out)?;
        let bias = read_bias(&b, c_out)?;
        let mut shape = x.shape.clone();
        *shape.last_mut().expect("rank ≥ 2") = c_out;
        let values = SamePrecision::new([x, w], ["X", "W"])?.call(Linear { rows, c_in, c_out, bias })?;
        Ok(write_typed(&values, &shape))
    })
}

/// The typed `X·W + b`, in either precision (f64 sums as `number[][]` does, f32 with the SIMD kernel).
struct Linear {
    rows: usize,
    c_in: usize,
    c_out: usize,
    bias: Option<Vec<f64>>,
}

impl OnTyped<2> for Linear {
    type Out = TypedValues;
    fn call<F: Element>(self, [x, w]: [Typed<F>; 2]) -> Result<TypedValues> {
        let bias: Option<Vec<F>> = self.bias.map(|b| b.iter().map(|&v| F::from_f64(v)).collect());
        let mut out = vec![F::ZERO; self.rows * self.c_out];
        F::linear(&x.values, self.rows, self.c_in, &w.values, self.c_out, bias.as_deref(), &mut out);
        check_finite_output(out.iter().map(|y| y.to_f64()), self.c_out, F::LARGEST)?;
        Ok(F::wrap(out))
    }
}

/// A RangeError for the first entry of `X·W + b` (row-major, `cols` per row) that overflowed
/// (or became NaN from ∞ − ∞): the exact value is beyond the largest `limit`.
fn check_finite_output(values: impl Iterator<Item = f64>, cols: usize, limit: &str) -> Result<()> {
    match values.enumerate().find(|(_, y)| !y.is_finite()) {
        None => Ok(()),
        Some((i, y)) => Err(AttentionError::range_error(format!(
            "(X·W + b)[{}][{}] overflows to {}: row {} of X · column {} of W (+ b) is too large, beyond the largest {limit}; scale the inputs down",
            i / cols,
            i % cols,
            if y.is_nan() { "Infinity − Infinity" } else if y > 0.0 { "Infinity" } else { "-Infinity" },
            i / cols,
            i % cols
        ))),
    }
}

fn check(t: usize, c_in: usize, w_rows: usize, c_out: usize) -> Result<()> {
    if w_rows != c_in {
        return Err(AttentionError::range_error(format!(
            "W is {w_rows}×{c_out} but X is {t}×{c_in}: W must be [in, out] with in = {c_in}, the columns of X"
        )));
    }
    Ok(())
}

/// `b`: undefined, a `number[]`, a Float32Array or a Float64Array with `out` finite entries.
fn read_bias(b: &JsValue, out: usize) -> Result<Option<Vec<f64>>> {
    if b.is_undefined() {
        return Ok(None);
    }
    let kind = super::convert::float_kind(b); // never throws, unlike `instanceof` on a revoked Proxy
    if kind == 32 || kind == 64 {
        super::convert::float_array_length(b, "b")?;
    }
    let values: Vec<f64> = if kind == 32 {
        super::convert::typed_to_vec(b.unchecked_ref::<js_sys::Float32Array>()).into_iter().map(f64::from).collect()
    } else if kind == 64 {
        super::convert::typed_to_vec(b.unchecked_ref::<js_sys::Float64Array>())
    } else if super::convert::is_array(b, "b")? {
        read_vector(b, "b")?
    } else {
        return Err(AttentionError::type_error(format!(
            "b is {}; expected number[], Float32Array or Float64Array with {out} entries",
            describe(b)
        )));
    };
    if let Some(i) = values.iter().position(|x| !x.is_finite()) {
        return Err(AttentionError::range_error(format!("b[{i}] is {}; expected a finite number", number_text(values[i]))));
    }
    if values.len() != out {
        return Err(AttentionError::range_error(format!("b has {} entries but W has {out} columns", values.len())));
    }
    Ok(Some(values))
}

