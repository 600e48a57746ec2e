//! The spec's `StableSoftmax`: softmax along each row after subtracting the row's maximum,
//! so `exp` never overflows (softmax([1000, 1000]) is [0.5, 0.5], not NaN).
//!
//! Masked entries get weight exactly 0. A row in which nothing is allowed returns all zeros,
//! as PyTorch's "safe softmax" does, instead of the NaN that 0/0 would give.

use crate::mask::Mask;
use crate::matrix::Matrix;
use crate::real::Real;

/// Softmax of one row in place. `allowed(j)` says whether entry `j` takes part.
pub fn stable_softmax_row<F: Real>(row: &mut [F], allowed: impl Fn(usize) -> bool) {
    // 1. the maximum over the allowed entries
    let mut max = F::NEG_INFINITY;
    let mut any = false;
    for (j, &x) in row.iter().enumerate() {
        if allowed(j) {
            any = true;
            if x > max {
                max = x;
            }
        }
    }
    if !any {
        row.fill(F::ZERO);
        return;
    }
    // 2. shifted exponentials and their sum
    let mut sum = F::ZERO;
    for (j, x) in row.iter_mut().enumerate() {
        *x = if allowed(j) { (*x - max).exp() } else { F::ZERO };
        sum += *x;
    }
    // 3. normalise (sum >= 1, since the maximum contributes exp(0) = 1)
    for x in row.iter_mut() {
        *x = *x / sum;
    }
}

/// Row-wise `StableSoftmax` of a `(T_q, T_k)` score matrix under `mask`.
pub fn stable_softmax<F: Real>(scores: &Matrix<F>, mask: &Mask) -> Matrix<F> {
    stable_softmax_block(scores, mask, 0)
}

/// `StableSoftmax` of a block of score rows whose first row is query `first_row`
/// (the mask is looked up at `(first_row + i, j)`). Row by row it is exactly `stable_softmax`.
pub fn stable_softmax_block<F: Real>(scores: &Matrix<F>, mask: &Mask, first_row: usize) -> Matrix<F> {
    let mut weights = scores.clone();
    for i in 0..weights.rows() {
        stable_softmax_row(weights.row_mut(i), |j| mask.allows(first_row + i, j));
    }
    weights
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::assert_close;

    #[test]
    fn large_equal_inputs_do_not_overflow() {
        let s = Matrix::from_rows(&[[1000.0, 1000.0]]).unwrap();
        assert_close(&stable_softmax(&s, &Mask::none()), &[&[0.5, 0.5]], 0.0);
    }

    #[test]
    fn rows_sum_to_one_and_keep_order() {
        let s = Matrix::from_rows(&[[1.0, 2.0, 3.0], [-5.0, 0.0, 5.0]]).unwrap();
        let w = stable_softmax(&s, &Mask::none());
        for i in 0..2 {
            let sum: f64 = w.row(i).iter().sum();
            assert!((sum - 1.0).abs() < 1e-15);
            assert!(w.get(i, 0) < w.get(i, 1) && w.get(i, 1) < w.get(i, 2));
        }
    }

    #[test]
    fn fully_masked_row_is_zero_not_nan() {
        let mut row = [3.0f64, 4.0];
        stable_softmax_row(&mut row, |_| false);
        assert_eq!(row, [0.0, 0.0]);
    }

    #[test]
    fn causal_mask_zeroes_the_future() {
        let s = Matrix::from_rows(&[[9.0, 9.0], [1.0, 1.0]]).unwrap();
        assert_close(&stable_softmax(&s, &Mask::causal()), &[&[1.0, 0.0], &[0.5, 0.5]], 0.0);
    }
}
