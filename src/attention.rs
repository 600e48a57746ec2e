//! Scaled dot-product attention: `softmax(Q·Kᵀ / √d_k) · V`.
//!
//! Shapes: Q is `(T, d_k)`, K is `(T, d_k)`, V is `(T, d_v)`; the output is `(T, d_v)`.
//! The passes follow the spec's expansion: Transpose, MatMul, Mul, StableSoftmax, MatMul.

use crate::error::{AttentionError, Result};
use crate::limits::{check_working_set, count_values, refuse_overflow};
use crate::mask::Mask;
use crate::matrix::Matrix;
use crate::real::Real;
use crate::softmax::stable_softmax_block;

/// The factor scores are multiplied by: `1/√d_k`.
pub fn attention_scale<F: Real>(d_k: usize) -> F {
    F::ONE / F::from_usize(d_k).sqrt()
}

/// Checks the shapes `dotProductAttention` accepts: Q and K `(T, d_k)`, V `(T, d_v)`, all non-empty.
pub fn check_attention_shapes<F: Real>(q: &Matrix<F>, k: &Matrix<F>, v: &Matrix<F>, mask: &Mask) -> Result<()> {
    for (name, m) in [("Q", q), ("K", k), ("V", v)] {
        if m.rows() == 0 || m.cols() == 0 {
            return Err(AttentionError::range_error(format!(
                "{name} is {}; expected at least one row and one column",
                m.shape_text()
            )));
        }
    }
    if k.shape() != q.shape() {
        return Err(AttentionError::range_error(format!(
            "K is {} but Q is {}: Q and K must both be T×d_k",
            k.shape_text(),
            q.shape_text()
        )));
    }
    if v.rows() != q.rows() {
        return Err(AttentionError::range_error(format!(
            "V is {} but Q is {}: V must be T×d_v with the same T = {} rows",
            v.shape_text(),
            q.shape_text(),
            q.rows()
        )));
    }
    mask.check_shape(q.rows(), k.rows())?;
    // Q, K, Kᵀ, V, then one block's scores, scaled scores and weights (block×T_k each), then the output
    let (t_q, t_k) = (q.rows(), k.rows());
    let block = QUERY_BLOCK.min(t_q);
    let needed = count_values(&[q.shape(), k.shape(), k.shape(), v.shape(), (3 * block, t_k), (t_q, v.cols())]);
    check_working_set(needed, || {
        format!("dotProductAttention with T = {t_q} (three {block}×{t_k} score blocks, plus Q, K, V and the output)")
    })
}

/// Query rows per block when no intermediate is kept: memory is O(T·block), not O(T²).
/// Blocking changes no bits: every entry is computed by the same operations in the same order.
pub const QUERY_BLOCK: usize = 64;

/// Passes 2–5 for a block of query rows `q_rows` whose first row is query `first_row`.
pub(crate) fn attend_rows<F: Real>(q_rows: &Matrix<F>, k_t: &Matrix<F>, v: &Matrix<F>, mask: &Mask, first_row: usize) -> Result<Matrix<F>> {
    // 2. MatMul: raw compatibility scores
    let scores = q_rows.matmul(k_t)?; // (rows, T)
    // 2b. Refuse overflow: with finite inputs, a non-finite score is a dot product beyond f64
    refuse_overflow(&scores, "scores", |i, j| {
        format!("the dot product of Q row {} and K row {j} is too large", first_row + i)
    })?;
    // 3. Mul by 1/√d_k
    let scaled = scores.scale(attention_scale(q_rows.cols())); // (rows, T)
    // 4. StableSoftmax along each row
    let weights = stable_softmax_block(&scaled, mask, first_row); // (rows, T)
    // 5. MatMul: the weighted sum of values
    let context = weights.matmul(v)?; // (rows, d_v)
    // 5b. Refuse overflow: a convex combination of finite values can round past f64 only at its edge
    refuse_overflow(&context, "output", |i, j| {
        format!("the weighted sum of V column {j} for query {} is too large", first_row + i)
    })?;
    Ok(context)
}

/// `softmax(Q·Kᵀ/√d_k)·V` without shape checks (callers have checked), one block of
/// [`QUERY_BLOCK`] query rows at a time.
pub(crate) fn attend<F: Real>(q: &Matrix<F>, k: &Matrix<F>, v: &Matrix<F>, mask: &Mask) -> Result<Matrix<F>> {
    // 1. Transpose K
    let k_t = k.transpose(); // (d_k, T)
    let (t, d_v) = (q.rows(), v.cols());
    let mut context = Matrix::zeros(t, d_v); // (T, d_v)
    for first in (0..t).step_by(QUERY_BLOCK) {
        let end = (first + QUERY_BLOCK).min(t);
        let block = attend_rows(&q.slice_rows(first, end)?, &k_t, v, mask, first)?; // (end − first, d_v)
        context.data_mut()[first * d_v..end * d_v].copy_from_slice(block.data());
    }
    Ok(context)
}

/// Scaled dot-product attention with an optional mask.
pub fn dot_product_attention<F: Real>(q: &Matrix<F>, k: &Matrix<F>, v: &Matrix<F>, mask: &Mask) -> Result<Matrix<F>> {
    check_attention_shapes(q, k, v, mask)?;
    attend(q, k, v, mask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_close, challenge_qkv, seeded_matrix};

    #[test]
    fn known_value_identity_queries() {
        let q = Matrix::from_rows(&[[1.0, 0.0], [0.0, 1.0]]).unwrap();
        let (k, _, v) = challenge_qkv();
        let out = dot_product_attention(&q, &k, &v, &Mask::none()).unwrap();
        assert_close(&out, &[&[6.609, 7.609], &[6.609, 7.609]], 5e-4);
    }

    #[test]
    fn row_blocks_give_the_unblocked_bits() {
        let (q, k, v) = (seeded_matrix(QUERY_BLOCK * 2 + 5, 3, 1), seeded_matrix(QUERY_BLOCK * 2 + 5, 3, 2), seeded_matrix(QUERY_BLOCK * 2 + 5, 4, 3));
        for mask in [Mask::none(), Mask::causal()] {
            let whole = crate::softmax::stable_softmax(&q.matmul(&k.transpose()).unwrap().scale(attention_scale(3)), &mask).matmul(&v).unwrap();
            crate::testing::assert_bitwise_eq(&dot_product_attention(&q, &k, &v, &mask).unwrap(), &whole);
        }
    }

    #[test]
    fn shape_errors_name_both_shapes() {
        let q = seeded_matrix(2, 2, 1);
        let k = seeded_matrix(3, 2, 2);
        let err = dot_product_attention(&q, &k, &q, &Mask::none()).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)));
        assert!(err.message().starts_with("K is 3×2 but Q is 2×2"), "{err}");
        let v = seeded_matrix(3, 5, 3);
        let err = dot_product_attention(&q, &q, &v, &Mask::none()).unwrap_err();
        assert!(err.message().starts_with("V is 3×5 but Q is 2×2"), "{err}");
    }

    #[test]
    fn causal_rows_ignore_later_keys_and_values() {
        let (q, k, v) = (seeded_matrix(4, 3, 1), seeded_matrix(4, 3, 2), seeded_matrix(4, 2, 3));
        let before = dot_product_attention(&q, &k, &v, &Mask::causal()).unwrap();
        let mut k2 = k.clone();
        let mut v2 = v.clone();
        k2.row_mut(3).fill(100.0);
        v2.row_mut(3).fill(-100.0);
        let after = dot_product_attention(&q, &k2, &v2, &Mask::causal()).unwrap();
        for r in 0..3 {
            assert_eq!(before.row(r), after.row(r));
        }
        assert_ne!(before.row(3), after.row(3));
    }

    #[test]
    fn overflowing_scores_are_a_range_error_not_nan() {
        // 1e308 · 1e308 is beyond f64: softmax would see Infinity − Infinity = NaN
        let big = Matrix::from_rows(&[[1e308, 1e308], [1.0, 1.0]]).unwrap();
        let v = seeded_matrix(2, 1, 4);
        let err = dot_product_attention(&big, &big, &v, &Mask::none()).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)));
        assert!(
            err.message().starts_with("scores[0][0] overflows to Infinity: the dot product of Q row 0 and K row 0 is too large"),
            "{err}"
        );
        // large but representable scores still work: softmax subtracts the row maximum
        let fine = Matrix::from_rows(&[[1e150], [1.0]]).unwrap();
        let out = dot_product_attention(&fine, &fine, &v, &Mask::none()).unwrap();
        assert_eq!(out.get(0, 0), v.get(0, 0));
    }

    #[test]
    fn a_score_matrix_too_large_for_memory_is_refused_before_allocating() {
        // scores come in blocks of 64 query rows; with T = 2^20 three 64×2^20 blocks exceed the budget
        let q: Matrix = Matrix::zeros(1 << 20, 1);
        let err = dot_product_attention(&q, &q, &q, &Mask::none()).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)));
        assert!(err.message().starts_with("dotProductAttention with T = 1048576 (three 64×1048576 score blocks"), "{err}");
    }

    #[test]
    fn first_causal_row_copies_the_first_value() {
        let v = seeded_matrix(3, 2, 9);
        let out = dot_product_attention(&seeded_matrix(3, 2, 7), &seeded_matrix(3, 2, 8), &v, &Mask::causal()).unwrap();
        assert_eq!(out.row(0), v.row(0));
    }
}
