//! Limits that keep every call finite and every answer a real number.
//!
//! 1. Memory: a call may hold at most [`MAX_WORKING_VALUES`] scalars at once (inputs,
//!    intermediates and output together). wasm32 has 4 GiB in all and cannot hold one
//!    `Vec<f64>` of 2 GiB, so a larger call is refused with a `RangeError` before any memory is
//!    asked for, instead of aborting the module on a failed allocation.
//! 2. Overflow: inputs are finite, so a non-finite intermediate can only come from a sum or
//!    product beyond the largest f64 (≈1.8e308). Such a result has no f64 answer; it is refused
//!    with a `RangeError` naming the entry, never returned as a silent NaN or Infinity.

use crate::error::{integer_text, AttentionError, Result};
use crate::real::Real;

/// Largest number of scalars one call may hold at once: 2^27, i.e. 1 GiB of f64.
pub const MAX_WORKING_VALUES: usize = 1 << 27;

/// `Σ rows·cols` over `parts`, computed without overflow (usize is 32 bits on wasm32).
pub fn count_values(parts: &[(usize, usize)]) -> u128 {
    parts.iter().map(|&(rows, cols)| rows as u128 * cols as u128).sum()
}

/// A `RangeError` when a call would hold more than [`MAX_WORKING_VALUES`] scalars, or, on wasm32,
/// more bytes (8 a value) than the heap has left ([`crate::heap`]): then the message says how much
/// is asked, how much is in use, and that `free()` releases it.
/// `what` describes the call and where the values go, e.g. "dotProductAttention with T = 9000".
pub fn check_working_set(needed: u128, what: impl FnOnce() -> String) -> Result<()> {
    if needed > MAX_WORKING_VALUES as u128 {
        return Err(AttentionError::range_error(format!(
            "{} needs {} values in memory at once, more than the {MAX_WORKING_VALUES} (1 GiB of f64) one call may hold",
            what(),
            integer_text(needed)
        )));
    }
    match crate::heap::capacity_and_use() {
        Some((capacity, in_use)) => check_fits(needed as u64 * 8, capacity, in_use, what),
        None => Ok(()),
    }
}

/// Heap room kept free beyond a call's count, for what the count leaves out (the allocator's own
/// bookkeeping, gaps between blocks, small temporaries).
pub const HEAP_SLACK_BYTES: u64 = 16 << 20;

/// A `RangeError` unless `bytes` (plus [`HEAP_SLACK_BYTES`]) fit in `capacity` with `in_use` taken.
pub fn check_fits(bytes: u64, capacity: u64, in_use: u64, what: impl FnOnce() -> String) -> Result<()> {
    let left = capacity.saturating_sub(in_use).saturating_sub(HEAP_SLACK_BYTES);
    if bytes <= left {
        return Ok(());
    }
    use crate::heap::bytes_text;
    Err(AttentionError::range_error(format!(
        "out of wasm memory: {} needs up to {} at once, but {} of the module's {} are in use and only {} more can be allocated. \
         Call free() on the layers, caches and models you no longer use (or create them with `using`): \
         the garbage collector does not see wasm memory, and what free() releases is reused",
        what(),
        bytes_text(bytes),
        bytes_text(in_use),
        bytes_text(capacity),
        bytes_text(left)
    )))
}

/// A `RangeError` naming the first non-finite entry of a row-major `values` with `cols`
/// columns, which is called `name` in the message; `cause` explains how finite inputs
/// overflowed there.
pub fn refuse_overflow<F: Real>(values: &[F], cols: usize, name: &str, cause: impl FnOnce(usize, usize) -> String) -> Result<()> {
    let Some(at) = values.iter().position(|x| !x.is_finite()) else {
        return Ok(());
    };
    let (r, c) = (at / cols, at % cols);
    Err(overflow_error(name, r, c, values[at].to_f64(), &cause(r, c)))
}

/// A `RangeError` naming the first non-finite entry of a `(rows, cols)` f32 result: finite f32
/// inputs overflowed there (f32 ends near 3.4e38). `formula` says what the entry is.
pub fn refuse_overflow_f32(values: &[f32], cols: usize, name: &str, formula: &str) -> Result<()> {
    let Some(at) = values.iter().position(|x| !x.is_finite()) else {
        return Ok(());
    };
    let (r, c) = (at / cols, at % cols);
    Err(AttentionError::range_error(format!(
        "{name}[{r}][{c}] overflows to {} in f32: {formula} is beyond the largest f32 (about 3.4e38); scale the inputs down or pass Float64Array",
        non_finite_name(f64::from(values[at]))
    )))
}

/// "NaN", "Infinity" or "-Infinity".
pub fn non_finite_name(x: f64) -> &'static str {
    if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
}

/// The f64 overflow message: `name[r][c] overflows to Infinity: {cause}, beyond the largest f64 …`.
pub fn overflow_error(name: &str, r: usize, c: usize, value: f64, cause: &str) -> AttentionError {
    AttentionError::range_error(format!(
        "{name}[{r}][{c}] overflows to {}: {cause}, beyond the largest f64 (about 1.8e308); scale the inputs down",
        non_finite_name(value)
    ))
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
    fn a_call_that_does_not_fit_in_what_is_left_says_how_much_and_to_free() {
        let capacity = 1u64 << 32;
        assert!(check_fits(1 << 20, capacity, 0, String::new).is_ok());
        let in_use = capacity - HEAP_SLACK_BYTES - (8 << 20);
        assert!(check_fits(8 << 20, capacity, in_use, String::new).is_ok());
        let err = check_fits((8 << 20) + 1, capacity, in_use, || "a layer with embedDim = 512".into()).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)));
        let m = err.message();
        assert!(m.starts_with("out of wasm memory: a layer with embedDim = 512 needs up to 8.4 MB at once, but 4.27 GB of the module's 4.29 GB are in use and only 8.4 MB more can be allocated."), "{m}");
        assert!(m.contains("Call free() on the layers, caches and models you no longer use"), "{m}");
        assert!(check_fits(1, capacity, capacity + 5, String::new).is_err());
    }

    #[test]
    fn overflow_names_the_first_bad_entry() {
        let m = [1.0, 2.0, f64::NEG_INFINITY, f64::NAN];
        let err = refuse_overflow(&m, 2, "scores", |r, c| format!("Q row {r} · K row {c}")).unwrap_err();
        assert!(err.message().starts_with("scores[1][0] overflows to -Infinity: Q row 1 · K row 0"), "{err}");
        assert!(refuse_overflow(&[f64::MAX, 5e-324], 2, "x", |_, _| String::new()).is_ok());
    }
}
