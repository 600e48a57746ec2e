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

/// Row-wise `StableSoftmax` of a `(T_q, T_k)` score matrix under `mask`, queries the last `T_q`
/// positions (the spec's op on a whole matrix: the trace's replay and the tests; the engine calls
/// [`stable_softmax_row`]).
pub fn stable_softmax<F: Real>(scores: &Matrix<F>, mask: &Mask) -> Matrix<F> {
    let mut weights = scores.clone();
    let offset = scores.cols() as isize - scores.rows() as isize;
    for i in 0..weights.rows() {
        stable_softmax_row(weights.row_mut(i), |j| mask.allows(i, j, offset));
    }
    weights
}

/// Backward of [`stable_softmax`], one row: from the row's `weights` (the forward's result) and
/// the gradient `grad_weights` with respect to them, the gradient with respect to the scores.
///
/// Differentiates `weights_j = exp(s_j − max) / Σ_k exp(s_k − max)`, whose Jacobian is
/// `w_j·(δ_jk − w_k)`, so `grad_scores_j = w_j · (grad_weights_j − Σ_k w_k·grad_weights_k)`.
/// A masked entry has `w_j = 0` and so gets exactly zero; a fully masked row gets all zeros.
pub fn stable_softmax_backward_row<F: Real>(weights: &[F], grad_weights: &[F], grad_scores: &mut [F]) {
    // 1. the weighted mean of the incoming gradient, Σ_k w_k·grad_weights_k
    let mut mean = F::ZERO;
    for (&w, &g) in weights.iter().zip(grad_weights) {
        mean += w * g;
    }
    // 2. w_j · (grad_weights_j − mean)
    for ((out, &w), &g) in grad_scores.iter_mut().zip(weights).zip(grad_weights) {
        *out = w * (g - mean);
    }
}

/// Backward of [`stable_softmax`] for a whole `(T_q, T_k)` matrix (same shapes in and out).
pub fn stable_softmax_backward<F: Real>(weights: &Matrix<F>, grad_weights: &Matrix<F>) -> Matrix<F> {
    let mut grad_scores = Matrix::zeros(weights.rows(), weights.cols());
    for i in 0..weights.rows() {
        stable_softmax_backward_row(weights.row(i), grad_weights.row(i), grad_scores.row_mut(i));
    }
    grad_scores
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

    #[test]
    fn backward_matches_central_differences() {
        // loss = Σ_j g_j · softmax(s)_j; its gradient in s by central differences
        let scores = [0.3f64, -1.2, 2.0, 0.7];
        let g = [1.5f64, -0.5, 0.25, 2.0];
        let allowed = |j: usize| j != 1;
        let loss = |s: &[f64]| {
            let mut w = s.to_vec();
            stable_softmax_row(&mut w, allowed);
            w.iter().zip(&g).map(|(a, b)| a * b).sum::<f64>()
        };
        let mut weights = scores.to_vec();
        stable_softmax_row(&mut weights, allowed);
        let mut analytic = [0.0; 4];
        stable_softmax_backward_row(&weights, &g, &mut analytic);
        assert_eq!(analytic[1], 0.0, "a masked entry gets no gradient");
        for j in 0..4 {
            let h = 1e-6;
            let (mut up, mut down) = (scores, scores);
            up[j] += h;
            down[j] -= h;
            let numeric = (loss(&up) - loss(&down)) / (2.0 * h);
            assert!((analytic[j] - numeric).abs() <= 1e-8, "entry {j}: {} vs {numeric}", analytic[j]);
        }
    }

    #[test]
    fn backward_of_a_fully_masked_row_is_zero() {
        let w = Matrix::from_rows(&[[0.0f64, 0.0]]).unwrap();
        let g = Matrix::from_rows(&[[5.0f64, -3.0]]).unwrap();
        assert_eq!(stable_softmax_backward(&w, &g).data(), &[0.0, 0.0]);
    }
}
