//! The course's functions for attention as today's LLMs run it:
//!
//! - grouped-query attention: `numberOfHeads` query heads share `numberOfKVHeads` key/value heads,
//!   query head `i` reading K/V head `⌊i / (numberOfHeads / numberOfKVHeads)⌋` (consecutive query
//!   heads share one, as PyTorch's `repeat_interleave` and Llama's `repeat_kv` do);
//!   `numberOfKVHeads = 1` is multi-query attention, `= numberOfHeads` multi-head attention;
//! - rotary position embedding of a `T × C` matrix, each head rotated in place ([`Rope`]).
//!
//! Shapes: Q is `(T_q, h·d_head)`, K and V `(T_k, h_kv·d_head)`; the queries are the last `T_q`
//! of the `T_k` positions (see [`crate::mask::Mask`]). Both run through [`crate::engine`].

use crate::engine::{check_budget, Batch, HeadShape, Kernel, Rope};
use crate::error::{shape_text, AttentionError, Result};
use crate::mask::Mask;
use crate::matrix::Matrix;
use crate::multi_head::{attend_batch, HeadSplit};
use crate::real::Real;

/// Checks the K/V head count against the query heads: positive and a divisor.
pub fn check_kv_heads(heads: usize, kv_heads: usize, heads_name: &str, kv_name: &str, place: &str) -> Result<()> {
    if kv_heads == 0 {
        return Err(AttentionError::range_error(format!("{place}{kv_name} is 0; expected a positive integer")));
    }
    if !heads.is_multiple_of(kv_heads) {
        return Err(AttentionError::range_error(format!(
            "{place}{kv_name} = {kv_heads} does not divide {heads_name} = {heads}: each key/value head serves {heads_name} / {kv_name} query heads"
        )));
    }
    Ok(())
}

/// Checks Q, K, V, W_O and the mask of grouped-query attention, and the working-set budget.
pub fn check_grouped_shapes(q: (usize, usize), k: (usize, usize), v: (usize, usize), split: HeadSplit, kv_heads: usize, w_o: Option<(usize, usize)>, mask: &Mask) -> Result<()> {
    let c = split.model_dimensions()?;
    check_kv_heads(split.number_of_heads, kv_heads, "numberOfHeads", "numberOfKVHeads", "")?;
    let kv_c = kv_heads * split.head_dimensions;
    let (h, d) = (split.number_of_heads, split.head_dimensions);
    if q.0 == 0 || q.1 != c {
        return Err(AttentionError::range_error(format!(
            "Q is {} but must be T_q×(numberOfHeads · headDimensions) = T_q×({h} · {d}) = T_q×{c} with T_q ≥ 1",
            shape_text(q.0, q.1)
        )));
    }
    for (name, m) in [("K", k), ("V", v)] {
        if m.0 == 0 || m.1 != kv_c {
            return Err(AttentionError::range_error(format!(
                "{name} is {} but must be T_k×(numberOfKVHeads · headDimensions) = T_k×({kv_heads} · {d}) = T_k×{kv_c} with T_k ≥ 1",
                shape_text(m.0, m.1)
            )));
        }
    }
    if v.0 != k.0 {
        return Err(AttentionError::range_error(format!(
            "V is {} but K is {}: each key position needs one value row",
            shape_text(v.0, v.1),
            shape_text(k.0, k.1)
        )));
    }
    if let Some((rows, cols)) = w_o {
        if (rows, cols) != (c, c) {
            return Err(AttentionError::range_error(format!("W_O is {} but must be C×C = {c}×{c}", shape_text(rows, cols))));
        }
    }
    mask.check_shape(q.0, k.0)?;
    let (t_q, t_k) = (q.0, k.0);
    let product = if w_o.is_some() { (t_q, c) } else { (0, 0) };
    check_budget(HeadShape::new(t_q, t_k, h, kv_heads, d), &[q, k, v, w_o.unwrap_or((0, 0)), (t_q, c), product], || {
        format!("groupedQueryAttention with T_q = {t_q}, T_k = {t_k} and C = {c}")
    })
}

/// Grouped-query attention on every item of a batch, in either precision; returns `[B, T_q, C]`.
pub fn grouped_query_attention_batch<F: Kernel>(q: Batch<F>, k: Batch<F>, v: Batch<F>, split: HeadSplit, kv_heads: usize, w_o: Option<&Matrix<F>>, mask: &Mask) -> Result<Vec<F>> {
    check_grouped_shapes((q.rows, q.cols), (k.rows, k.cols), (v.rows, v.cols), split, kv_heads, w_o.map(Matrix::shape), mask)?;
    let shape = HeadShape::new(q.rows, k.rows, split.number_of_heads, kv_heads, split.head_dimensions);
    attend_batch(q, k, v, shape, w_o.map(Matrix::data), mask)
}

/// [`grouped_query_attention_batch`] of one `(T_q, C)` query matrix.
pub fn grouped_query_attention(q: &Matrix, k: &Matrix, v: &Matrix, split: HeadSplit, kv_heads: usize, w_o: Option<&Matrix>, mask: &Mask) -> Result<Matrix> {
    let out = grouped_query_attention_batch(Batch::of(q), Batch::of(k), Batch::of(v), split, kv_heads, w_o, mask)?;
    Matrix::new(q.rows(), q.cols(), out)
}

/// Rotary embedding of every item of a batch: X is `[B, T, h·d_head]`, row `t` of each head
/// rotated at position `offset + t`. Returns the rotated copy.
pub fn rotary_embedding_batch<F: Real>(x: Batch<F>, split: HeadSplit, rope: Rope, offset: usize) -> Result<Vec<F>> {
    let c = split.model_dimensions()?;
    Rope::check_width(split.head_dimensions, "headDimensions")?;
    Rope::check_base(rope.base, "options.base")?;
    if x.rows == 0 || x.cols != c {
        return Err(AttentionError::range_error(format!(
            "X is {} but must be T×(numberOfHeads · headDimensions) = T×({} · {}) = T×{c} with T ≥ 1",
            shape_text(x.rows, x.cols),
            split.number_of_heads,
            split.head_dimensions
        )));
    }
    Rope::check_positions(offset, x.rows, "X's rows")?;
    rope.check_angles(offset, x.rows, split.head_dimensions, "options.base")?;
    let mut out = x.data.to_vec();
    for item in out.chunks_exact_mut(x.rows * c) {
        rope.rotate(item, c, split.head_dimensions, offset, false);
        Rope::refuse_overflow(item, c, "rotaryEmbedding(X)")?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multi_head::{multi_head_attention, MultiHeadOptions};
    use crate::testing::{assert_bitwise_eq, seeded_matrix};

    /// K or V with each K/V head repeated `group` times side by side (repeat_interleave).
    fn repeat_heads(m: &Matrix, kv_heads: usize, d: usize, group: usize) -> Matrix {
        let parts: Vec<Matrix> = (0..kv_heads * group).map(|i| m.slice_columns((i / group) * d, (i / group + 1) * d).unwrap()).collect();
        Matrix::concat_columns(&parts).unwrap()
    }

    #[test]
    fn equals_multi_head_attention_with_the_kv_heads_repeated_bit_for_bit() {
        let (t, h, d) = (70, 6, 3);
        for kv in [1, 2, 3, 6] {
            let q = seeded_matrix(t, h * d, 1);
            let (k, v) = (seeded_matrix(t, kv * d, 2), seeded_matrix(t, kv * d, 3));
            for mask in [Mask::none(), Mask::causal(), Mask { causal: true, window: Some(5), ..Mask::none() }] {
                let split = HeadSplit { number_of_heads: h, head_dimensions: d };
                let got = grouped_query_attention(&q, &k, &v, split, kv, None, &mask).unwrap();
                let (k2, v2) = (repeat_heads(&k, kv, d, h / kv), repeat_heads(&v, kv, d, h / kv));
                let want = multi_head_attention(&q, &k2, &v2, &MultiHeadOptions { mask, ..MultiHeadOptions::new(h, d) }).unwrap();
                assert_bitwise_eq(&got, &want);
            }
        }
    }

    #[test]
    fn a_window_as_long_as_the_sequence_changes_nothing() {
        let (q, k, v) = (seeded_matrix(9, 4, 1), seeded_matrix(12, 2, 2), seeded_matrix(12, 2, 3));
        let split = HeadSplit { number_of_heads: 2, head_dimensions: 2 };
        for causal in [false, true] {
            let plain = grouped_query_attention(&q, &k, &v, split, 1, None, &Mask { causal, ..Mask::none() }).unwrap();
            let windowed = grouped_query_attention(&q, &k, &v, split, 1, None, &Mask { causal, window: Some(12), ..Mask::none() }).unwrap();
            assert_bitwise_eq(&plain, &windowed);
        }
    }

    #[test]
    fn f32_agrees_with_f64() {
        let (q, k, v) = (seeded_matrix(70, 8, 1), seeded_matrix(90, 4, 2), seeded_matrix(90, 4, 3));
        let split = HeadSplit { number_of_heads: 4, head_dimensions: 2 };
        let mask = Mask { causal: true, window: Some(20), ..Mask::none() };
        let want = grouped_query_attention(&q, &k, &v, split, 2, None, &mask).unwrap();
        let (q32, k32, v32) = (q.cast::<f32>(), k.cast::<f32>(), v.cast::<f32>());
        let got = grouped_query_attention_batch(Batch::of(&q32), Batch::of(&k32), Batch::of(&v32), split, 2, None, &mask).unwrap();
        let worst = got.iter().zip(want.data()).map(|(&a, &b)| (f64::from(a) - b).abs()).fold(0.0, f64::max);
        assert!(worst < 1e-5, "{worst}");
    }

    #[test]
    fn bad_head_counts_and_shapes_are_range_errors() {
        let q = seeded_matrix(2, 4, 1);
        let split = HeadSplit { number_of_heads: 4, head_dimensions: 1 };
        let err = grouped_query_attention(&q, &q, &q, split, 3, None, &Mask::none()).unwrap_err();
        assert!(err.message().starts_with("numberOfKVHeads = 3 does not divide numberOfHeads = 4"), "{err}");
        let err = grouped_query_attention(&q, &q, &q, split, 2, None, &Mask::none()).unwrap_err();
        assert!(err.message().starts_with("K is 2×4 but must be T_k×(numberOfKVHeads · headDimensions) = T_k×(2 · 1) = T_k×2"), "{err}");
        let x = seeded_matrix(2, 3, 1);
        let err = rotary_embedding_batch(Batch::of(&x), HeadSplit { number_of_heads: 1, head_dimensions: 3 }, Rope::default(), 0).unwrap_err();
        assert!(err.message().starts_with("headDimensions = 3 is odd"), "{err}");
    }
}
