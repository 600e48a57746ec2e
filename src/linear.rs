//! `linear(X, W, b)`: the projection `X·W + b` with W stored as `[in, out]`, in either precision
//! (the `linear` export converts its arguments and calls [`linear`]). It exists so that
//! projections (W_Q, W_K, W_V, W_O) can be composed from JS with the same products the attention
//! path uses: [`Kernel::linear`] (f64 summed in the spec's order, f32 the SIMD kernel).

use crate::engine::{Batch, Kernel};
use crate::error::{number_text, AttentionError, Result};

/// `X·W + b`: X is `[B, T, in]` (B = 1 for one matrix), W `in × out` row-major, b `out` numbers (as
/// given, in f64; rounded once to the precision). Returns `[B, T, out]`.
pub fn linear<F: Kernel>(x: Batch<F>, w: &[F], (w_rows, c_out): (usize, usize), bias: Option<&[f64]>) -> Result<Vec<F>> {
    let (t, c_in) = (x.rows, x.cols);
    check_shapes((t, c_in), (w_rows, c_out))?;
    if let Some(b) = bias {
        if let Some(i) = b.iter().position(|x| !x.is_finite()) {
            return Err(AttentionError::range_error(format!("b[{i}] is {}; expected a finite number", number_text(b[i]))));
        }
        if b.len() != c_out {
            return Err(AttentionError::range_error(format!("b has {} entries but W has {c_out} columns", b.len())));
        }
    }
    let bias: Option<Vec<F>> = bias.map(|b| b.iter().map(|&v| F::from_f64(v)).collect());
    let rows = x.items * t;
    let mut out = vec![F::ZERO; rows * c_out];
    F::linear(x.data, rows, c_in, w, c_out, bias.as_deref(), &mut out);
    // finite inputs: a non-finite entry overflowed (or became NaN from ∞ − ∞)
    if let Some(i) = out.iter().position(|y| !y.is_finite()) {
        let y = out[i].to_f64();
        return Err(AttentionError::range_error(format!(
            "(X·W + b)[{}][{}] overflows to {}: row {} of X · column {} of W (+ b) is too large, beyond the largest {}; scale the inputs down",
            i / c_out,
            i % c_out,
            if y.is_nan() { "Infinity − Infinity" } else if y > 0.0 { "Infinity" } else { "-Infinity" },
            i / c_out,
            i % c_out,
            F::LARGEST
        )));
    }
    Ok(out)
}

/// W `[in, out]` against X's `t × in` (a RangeError naming both): checked before b is read, so a
/// misshapen W is reported first whatever b is.
pub fn check_shapes((t, c_in): (usize, usize), (w_rows, c_out): (usize, usize)) -> Result<()> {
    if w_rows != c_in {
        return Err(AttentionError::range_error(format!(
            "W is {w_rows}×{c_out} but X is {t}×{c_in}: W must be [in, out] with in = {c_in}, the columns of X"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::Matrix;
    use crate::testing::{assert_bitwise_eq, seeded_matrix};

    #[test]
    fn f64_is_the_spec_ops_and_f32_agrees() {
        let (x, w) = (seeded_matrix(70, 5, 1), seeded_matrix(5, 3, 2));
        let b = [0.5, -1.0, 2.0];
        let got = linear(Batch::of(&x), w.data(), (5, 3), Some(&b)).unwrap();
        let mut want = x.matmul(&w).unwrap();
        want.add_row(&b).unwrap();
        assert_bitwise_eq(&Matrix::new(70, 3, got).unwrap(), &want);
        let (x32, w32) = (x.cast::<f32>(), w.cast::<f32>());
        let got = linear(Batch::of(&x32), w32.data(), (5, 3), Some(&b)).unwrap();
        assert!(got.iter().zip(want.data()).all(|(&a, &e)| (f64::from(a) - e).abs() < 1e-5));
    }

    #[test]
    fn shapes_biases_and_overflow_are_refused_by_name() {
        let x = seeded_matrix(2, 2, 1);
        let message = |r: Result<Vec<f64>>| r.unwrap_err().message().to_string();
        assert!(message(linear(Batch::of(&x), &[1.0; 6], (3, 2), None)).starts_with("W is 3×2 but X is 2×2"));
        assert!(message(linear(Batch::of(&x), &[1.0; 4], (2, 2), Some(&[1.0, f64::NAN]))).starts_with("b[1] is NaN"));
        assert!(message(linear(Batch::of(&x), &[1.0; 4], (2, 2), Some(&[1.0; 3]))).starts_with("b has 3 entries but W has 2 columns"));
        let huge = Matrix::new(1, 2, vec![1e308; 2]).unwrap();
        assert!(message(linear(Batch::of(&huge), &[10.0, 10.0], (2, 1), None)).starts_with("(X·W + b)[0][0] overflows to Infinity"));
    }
}
