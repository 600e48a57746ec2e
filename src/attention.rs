//! Scaled dot-product attention: `softmax(Q·Kᵀ / √d_k) · V`, one head of [`crate::engine`].
//!
//! Shapes: Q is `(T, d_k)`, K is `(T, d_k)`, V is `(T, d_v)`; the output is `(T, d_v)`.

use crate::engine::{attend_heads, check_budget, Batch, Cols, HeadShape, Kernel, Workspace};
use crate::error::{shape_text, AttentionError, Result};
use crate::mask::Mask;
use crate::matrix::Matrix;

pub use crate::engine::{attention_scale, QUERY_BLOCK};

/// Checks the shapes `dotProductAttention` accepts: Q and K `(T, d_k)`, V `(T, d_v)`, all
/// non-empty, and that the call fits the working-set budget.
pub fn check_attention_shapes(q: (usize, usize), k: (usize, usize), v: (usize, usize), mask: &Mask) -> Result<()> {
    for (name, (rows, cols)) in [("Q", q), ("K", k), ("V", v)] {
        if rows == 0 || cols == 0 {
            return Err(AttentionError::range_error(format!(
                "{name} is {}; expected at least one row and one column",
                shape_text(rows, cols)
            )));
        }
    }
    if k != q {
        return Err(AttentionError::range_error(format!(
            "K is {} but Q is {}: Q and K must both be T×d_k",
            shape_text(k.0, k.1),
            shape_text(q.0, q.1)
        )));
    }
    if v.0 != q.0 {
        return Err(AttentionError::range_error(format!(
            "V is {} but Q is {}: V must be T×d_v with the same T = {} rows",
            shape_text(v.0, v.1),
            shape_text(q.0, q.1),
            q.0
        )));
    }
    mask.check_shape(q.0, k.0)?;
    let shape = head_shape(q, k, v);
    check_budget(shape, &[q, k, v, (q.0, v.1)], || format!("dotProductAttention with T = {}", q.0))
}

fn head_shape(q: (usize, usize), k: (usize, usize), v: (usize, usize)) -> HeadShape {
    HeadShape { t_q: q.0, t_k: k.0, heads: 1, d_k: q.1, d_v: v.1, kv_heads: 1, offset: 0, named_heads: false }
}

/// Scaled dot-product attention with an optional mask, in either precision.
pub fn dot_product_attention<F: Kernel>(q: &Matrix<F>, k: &Matrix<F>, v: &Matrix<F>, mask: &Mask) -> Result<Matrix<F>> {
    let out = dot_product_attention_batch(Batch::of(q), Batch::of(k), Batch::of(v), mask)?;
    Matrix::new(q.rows(), v.cols(), out)
}

/// [`dot_product_attention`] on every item of a batch (`[B, T, d]` each, same B); returns
/// `[B, T, d_v]`.
pub fn dot_product_attention_batch<F: Kernel>(q: Batch<F>, k: Batch<F>, v: Batch<F>, mask: &Mask) -> Result<Vec<F>> {
    let (qs, ks, vs) = ((q.rows, q.cols), (k.rows, k.cols), (v.rows, v.cols));
    check_attention_shapes(qs, ks, vs, mask)?;
    let mut out = vec![F::ZERO; q.items * q.rows * v.cols];
    let mut workspace = Workspace::new();
    for (i, out) in out.chunks_exact_mut(q.rows * v.cols).enumerate() {
        attend_heads(q.cols_of(i), k.cols_of(i), Cols::all(v.item(i), v.cols), head_shape(qs, ks, vs), mask, out, v.cols, &mut workspace, &mut ())?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_bitwise_eq, assert_close, challenge_qkv, seeded_matrix};
    use crate::mask::BoolMatrix;

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
            assert_bitwise_eq(&dot_product_attention(&q, &k, &v, &mask).unwrap(), &whole);
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
    fn an_overflow_past_the_first_block_names_its_query_row() {
        let mut q = seeded_matrix(QUERY_BLOCK + 3, 1, 1);
        q.row_mut(QUERY_BLOCK + 1)[0] = 1e300;
        let err = dot_product_attention(&q, &q, &q, &Mask::none()).unwrap_err();
        let row = QUERY_BLOCK + 1;
        assert!(err.message().starts_with(&format!("scores[{row}][")), "{err}");
        assert!(err.message().contains(&format!("the dot product of Q row {row} and K row")), "{err}");
    }

    #[test]
    fn a_score_matrix_too_large_for_memory_is_refused_before_allocating() {
        // scores come in blocks of 64 query rows; with T = 2^21 one 64×2^21 block, packed K and V
        // and the inputs and output pass the 2^27-value budget
        let q: Matrix = Matrix::zeros(1 << 21, 1);
        let err = dot_product_attention(&q, &q, &q, &Mask::none()).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)));
        assert!(err.message().starts_with("dotProductAttention with T = 2097152 (inputs, outputs"), "{err}");
    }

    #[test]
    fn first_causal_row_copies_the_first_value() {
        let v = seeded_matrix(3, 2, 9);
        let out = dot_product_attention(&seeded_matrix(3, 2, 7), &seeded_matrix(3, 2, 8), &v, &Mask::causal()).unwrap();
        assert_eq!(out.row(0), v.row(0));
    }

    #[test]
    fn f32_refuses_an_allowed_score_beyond_f32_but_not_a_masked_one() {
        // q·k: the products −3.5e38 and 3e38 + 3e38 pass f32's 3.4e38 although the sum (2.5e38) does not
        let q = Matrix::new(2, 3, vec![1e19f32, 1e19, 1e19, 0.0, 0.0, 1.0]).unwrap();
        let k = Matrix::new(2, 3, vec![-3.5e19f32, 3e19, 3e19, 1.0, 1.0, 1.0]).unwrap();
        let v = Matrix::new(2, 3, vec![1.0f32, 0.0, 0.0, 0.0, 1.0, 0.0]).unwrap();
        let err = dot_product_attention(&q, &k, &v, &Mask::none()).unwrap_err();
        assert!(err.message().starts_with("scores[0][0] overflows to -Infinity in f32: computing the dot product of Q row 0 and K row 0"), "{err}");
        let mask = Mask { causal: false, allowed: Some(BoolMatrix::new(2, 2, vec![false, true, true, true]).unwrap()), window: None };
        assert!(dot_product_attention(&q, &k, &v, &mask).is_ok());
    }

    #[test]
    fn f32_fully_masked_rows_are_zero() {
        let (q, k, v) = (seeded_matrix(3, 2, 1).cast::<f32>(), seeded_matrix(3, 2, 2).cast::<f32>(), seeded_matrix(3, 2, 3).cast::<f32>());
        let mask = Mask { causal: false, allowed: Some(BoolMatrix::new(3, 3, vec![false, false, false, true, true, true, true, true, true]).unwrap()), window: None };
        let got = dot_product_attention(&q, &k, &v, &mask).unwrap();
        assert_eq!(got.row(0), &[0.0, 0.0]);
    }
}
