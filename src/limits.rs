//! Limits that keep every call finite and every answer a real number.
//!
//! 1. Memory: a call may hold at most [`MAX_WORKING_VALUES`] scalars at once (inputs,
//!    intermediates and output together). wasm32 has 4 GiB in all and cannot hold one
//!    `Vec<f64>` of 2 GiB, so a larger call is refused with a `RangeError` before any memory is
//!    asked for, instead of aborting the module on a failed allocation.
//! 2. Overflow: inputs are finite, so a non-finite intermediate can only come from a sum or
//!    product beyond the largest f64 (≈1.8e308). Such a result has no f64 answer; it is refused
//!    with a `RangeError` naming the entry, never returned as a silent NaN or Infinity.

use crate::error::{AttentionError, Result};
use crate::matrix::Matrix;
use crate::real::Real;

/// Largest number of scalars one call may hold at once: 2^27, i.e. 1 GiB of f64.
pub const MAX_WORKING_VALUES: usize = 1 << 27;

/// `Σ rows·cols` over `parts`, computed without overflow (usize is 32 bits on wasm32).
pub fn count_values(parts: &[(usize, usize)]) -> u128 {
    parts.iter().map(|&(rows, cols)| rows as u128 * cols as u128).sum()
}

/// A `RangeError` when a call would hold more than [`MAX_WORKING_VALUES`] scalars.
/// `what` describes the call and where the values go, e.g. "dotProductAttention with T = 9000".
pub fn check_working_set(needed: u128, what: impl FnOnce() -> String) -> Result<()> {
    if needed <= MAX_WORKING_VALUES as u128 {
        return Ok(());
    }
    Err(AttentionError::range_error(format!(
        "{} needs {needed} values in memory at once, more than the {MAX_WORKING_VALUES} (1 GiB of f64) one call may hold",
        what()
    )))
}

/// A `RangeError` naming the first non-finite entry of `m`, which is called `name` in the
/// message; `cause` explains how finite inputs overflowed there.
pub fn refuse_overflow<F: Real>(m: &Matrix<F>, name: &str, cause: impl FnOnce(usize, usize) -> String) -> Result<()> {
    let Some(at) = m.data().iter().position(|x| !x.is_finite()) else {
        return Ok(());
    };
    let (r, c) = (at / m.cols(), at % m.cols());
    let x = m.data()[at].to_f64();
    let shown = if x.is_nan() { "NaN" } else if x > 0.0 { "Infinity" } else { "-Infinity" };
    Err(AttentionError::range_error(format!(
        "{name}[{r}][{c}] overflows to {shown}: {}, beyond the largest f64 (about 1.8e308); scale the inputs down",
        cause(r, c)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn working_set_counts_without_overflow() {
        assert_eq!(count_values(&[(1 << 20, 1 << 20), (3, 4)]), (1u128 << 40) + 12);
        assert!(check_working_set(MAX_WORKING_VALUES as u128, String::new).is_ok());
        let err = check_working_set(MAX_WORKING_VALUES as u128 + 1, || "this call".into()).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)));
        assert!(err.message().starts_with("this call needs 134217729 values"), "{err}");
    }

    #[test]
    fn overflow_names_the_first_bad_entry() {
        let m = Matrix::from_rows(&[[1.0, 2.0], [f64::NEG_INFINITY, f64::NAN]]).unwrap();
        let err = refuse_overflow(&m, "scores", |r, c| format!("Q row {r} · K row {c}")).unwrap_err();
        assert!(err.message().starts_with("scores[1][0] overflows to -Infinity: Q row 1 · K row 0"), "{err}");
        assert!(refuse_overflow(&Matrix::from_rows(&[[f64::MAX, 5e-324]]).unwrap(), "x", |_, _| String::new()).is_ok());
    }
}
