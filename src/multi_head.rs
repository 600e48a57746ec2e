//! Multi-head self-attention, as the course defines it (no learned Q/K/V projections):
//!
//! 1. slice Q, K and V by columns: head `i` takes columns `i·d_head .. (i+1)·d_head`;
//! 2. scaled dot-product attention per head, scaled by `1/√d_head` (not `1/√C`);
//! 3. concatenate the head outputs side by side;
//! 4. multiply by W_O (`C × C`, the identity when absent).
//!
//! Shapes: Q, K, V are `(T, C)` with `C = numberOfHeads · headDimensions` (h · d_head).

use crate::engine::{attend_heads, check_budget, project_output, Batch, Cols, HeadShape, Hooks, Kernel, Workspace};
use crate::error::{shape_text, AttentionError, Result};
use crate::mask::Mask;
use crate::matrix::Matrix;

/// The challenge's own message for a Q/K/V shape that does not fit the head split.
pub const SHAPE_MESSAGE: &str = "Q/K/V matrix dimensions must match the numberOfHeads * headDimensions";

/// How C splits into heads: `C = number_of_heads · head_dimensions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadSplit {
    /// numberOfHeads (h).
    pub number_of_heads: usize,
    /// headDimensions (d_head).
    pub head_dimensions: usize,
}

impl HeadSplit {
    /// C, the model width, or a `RangeError` when h or d_head is 0 or the product overflows.
    pub fn model_dimensions(&self) -> Result<usize> {
        for (name, value) in [("numberOfHeads", self.number_of_heads), ("headDimensions", self.head_dimensions)] {
            if value == 0 {
                return Err(AttentionError::range_error(format!("{name} is 0; expected a positive integer")));
            }
        }
        self.number_of_heads.checked_mul(self.head_dimensions).ok_or_else(|| {
            AttentionError::range_error(format!(
                "numberOfHeads · headDimensions = {} · {} is too large",
                self.number_of_heads, self.head_dimensions
            ))
        })
    }
}

/// Everything `multiHeadAttention` takes besides Q, K and V.
#[derive(Clone, Debug, PartialEq)]
pub struct MultiHeadOptions {
    pub split: HeadSplit,
    /// The `C × C` output projection; `None` means the identity.
    pub w_o: Option<Matrix>,
    pub mask: Mask,
}

impl MultiHeadOptions {
    /// No W_O, no mask.
    pub fn new(number_of_heads: usize, head_dimensions: usize) -> Self {
        Self { split: HeadSplit { number_of_heads, head_dimensions }, w_o: None, mask: Mask::none() }
    }
}

/// Checks Q, K, V, W_O and the mask against the head split.
pub fn check_multi_head(q: &Matrix, k: &Matrix, v: &Matrix, options: &MultiHeadOptions) -> Result<()> {
    check_multi_head_shapes(q.shape(), k.shape(), v.shape(), options.split, options.w_o.as_ref().map(Matrix::shape), &options.mask)
}

/// [`check_multi_head`] on shapes, with W_O given by its shape (`None`: the identity).
pub fn check_multi_head_shapes(
    q: (usize, usize),
    k: (usize, usize),
    v: (usize, usize),
    split: HeadSplit,
    w_o: Option<(usize, usize)>,
    mask: &Mask,
) -> Result<()> {
    let c = split.model_dimensions()?;
    if q.0 == 0 {
        return Err(AttentionError::range_error(format!(
            "{SHAPE_MESSAGE}: Q is {}; expected at least one row",
            shape_text(q.0, q.1)
        )));
    }
    if q.1 != c {
        return Err(AttentionError::range_error(format!(
            "{SHAPE_MESSAGE}: Q is {} but numberOfHeads · headDimensions = {} · {} = {c} columns",
            shape_text(q.0, q.1),
            split.number_of_heads,
            split.head_dimensions
        )));
    }
    for (name, m) in [("K", k), ("V", v)] {
        if m != q {
            return Err(AttentionError::range_error(format!(
                "{SHAPE_MESSAGE}: {name} is {} but Q is {}",
                shape_text(m.0, m.1),
                shape_text(q.0, q.1)
            )));
        }
    }
    if let Some((rows, cols)) = w_o {
        if (rows, cols) != (c, c) {
            return Err(AttentionError::range_error(format!(
                "W_O is {} but must be C×C = {c}×{c}",
                shape_text(rows, cols)
            )));
        }
    }
    mask.check_shape(q.0, k.0)?;
    // Q, K, V, W_O, concat (which becomes the output) and W_O's product
    let t = q.0;
    let w_o = w_o.unwrap_or((0, 0));
    let product = if w_o.0 == 0 { (0, 0) } else { (t, c) };
    check_budget(split.head_shape(t, t), &[q, k, v, w_o, (t, c), product], || {
        format!("multiHeadAttention with T = {t} and C = {c}")
    })
}

impl HeadSplit {
    /// The engine's shape for `t_q` queries and `t_k` keys split into these heads.
    pub fn head_shape(&self, t_q: usize, t_k: usize) -> HeadShape {
        HeadShape::new(t_q, t_k, self.number_of_heads, self.number_of_heads, self.head_dimensions)
    }
}

/// Multi-head self-attention. Returns `(T, C)`.
pub fn multi_head_attention(q: &Matrix, k: &Matrix, v: &Matrix, options: &MultiHeadOptions) -> Result<Matrix> {
    let out = multi_head_attention_batch(Batch::of(q), Batch::of(k), Batch::of(v), options.split, options.w_o.as_ref(), &options.mask)?;
    Matrix::new(q.rows(), q.cols(), out)
}

/// Multi-head attention on every item of a batch (`[B, T, C]` each, same B), in either
/// precision; `w_o` must be `C × C`. Returns `[B, T, C]`.
pub fn multi_head_attention_batch<F: Kernel>(q: Batch<F>, k: Batch<F>, v: Batch<F>, split: HeadSplit, w_o: Option<&Matrix<F>>, mask: &Mask) -> Result<Vec<F>> {
    check_multi_head_shapes((q.rows, q.cols), (k.rows, k.cols), (v.rows, v.cols), split, w_o.map(Matrix::shape), mask)?;
    attend_batch(q, k, v, split.head_shape(q.rows, k.rows), w_o.map(Matrix::data), mask)
}

/// Every item of a checked batch: the heads, concatenated, times W_O (`C × C` row-major, `None`:
/// the identity). Returns `[B, T_q, C]`. Shared by multi-head and grouped-query attention.
pub(crate) fn attend_batch<F: Kernel>(q: Batch<F>, k: Batch<F>, v: Batch<F>, shape: HeadShape, w_o: Option<&[F]>, mask: &Mask) -> Result<Vec<F>> {
    let mut out = Vec::with_capacity(q.items * q.rows * q.cols);
    let mut workspace = Workspace::new();
    for i in 0..q.items {
        let mut concat = heads(q.cols_of(i), k.cols_of(i), v.cols_of(i), shape, mask, &mut workspace, &mut ())?;
        // 8. MatMul by W_O
        project_output(&mut concat, q.rows, q.cols, w_o)?; // (T_q, C)
        out.extend_from_slice(&concat);
    }
    Ok(out)
}

/// Passes 1–7 (slice, scores, scale, softmax, weighted sum) for every head, through the
/// engine, straight into the concatenation: returns `concat`, `(T_q, C)`. Every intermediate is
/// offered to `hooks` (the trace records them). `T_k` may differ from `T_q` (the layer's
/// cross-attention, a cache) and K/V may have fewer heads (grouped-query attention).
pub(crate) fn heads<F: Kernel>(
    q: Cols<F>,
    k: Cols<F>,
    v: Cols<F>,
    shape: HeadShape,
    mask: &Mask,
    workspace: &mut Workspace<F>,
    hooks: &mut dyn Hooks<F>,
) -> Result<Vec<F>> {
    let c = shape.heads * shape.d_v;
    let mut concat = vec![F::ZERO; shape.t_q * c]; // (T_q, h·d_head) = (T_q, C)
    attend_heads(q, k, v, shape, mask, &mut concat, c, workspace, hooks)?;
    Ok(concat)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::dot_product_attention;
    use crate::testing::{assert_bitwise_eq, assert_close, challenge_qkv, seeded_matrix};

    #[test]
    fn challenge_known_values() {
        let (q, k, v) = challenge_qkv();
        let out = multi_head_attention(&q, &k, &v, &MultiHeadOptions::new(2, 1)).unwrap();
        assert_close(&out, &[&[6.761594, 7.964028], &[6.995055, 7.999329]], 1e-6);
    }

    #[test]
    fn scale_is_per_head_not_per_model() {
        // Scaling by 1/√C would give [[6.609, 7.888], [6.972, 7.993]]; make sure we do not.
        let (q, k, v) = challenge_qkv();
        let out = multi_head_attention(&q, &k, &v, &MultiHeadOptions::new(2, 1)).unwrap();
        assert!((out.get(0, 0) - 6.609).abs() > 0.1 && (out.get(0, 1) - 7.888).abs() > 0.05);
    }

    #[test]
    fn one_head_is_dot_product_attention_bit_for_bit() {
        let (q, k, v) = (seeded_matrix(5, 4, 1), seeded_matrix(5, 4, 2), seeded_matrix(5, 4, 3));
        for mask in [Mask::none(), Mask::causal()] {
            let options = MultiHeadOptions { mask: mask.clone(), ..MultiHeadOptions::new(1, 4) };
            let multi = multi_head_attention(&q, &k, &v, &options).unwrap();
            let single = dot_product_attention(&q, &k, &v, &mask).unwrap();
            assert_bitwise_eq(&multi, &single);
        }
    }

    #[test]
    fn identity_shortcut_equals_identity_matmul() {
        let mut m = seeded_matrix(3, 4, 5);
        m.data_mut()[0] = -0.0;
        m.data_mut()[1] = 5e-324;
        let mut shortcut = m.data().to_vec();
        project_output(&mut shortcut, 3, 4, None).unwrap();
        assert_bitwise_eq(&Matrix::new(3, 4, shortcut).unwrap(), &m.matmul(&Matrix::identity(4)).unwrap());
    }

    #[test]
    fn explicit_w_o_is_applied() {
        let (q, k, v) = challenge_qkv();
        let swap = Matrix::from_rows(&[[0.0, 1.0], [1.0, 0.0]]).unwrap();
        let options = MultiHeadOptions { w_o: Some(swap), ..MultiHeadOptions::new(2, 1) };
        let out = multi_head_attention(&q, &k, &v, &options).unwrap();
        assert_close(&out, &[&[7.964028, 6.761594], &[7.999329, 6.995055]], 1e-6);
    }

    #[test]
    fn overflow_is_a_range_error_naming_the_head_or_w_o() {
        let big = Matrix::from_rows(&[[1.0, 1e200], [1.0, 1e200]]).unwrap();
        let err = multi_head_attention(&big, &big, &big, &MultiHeadOptions::new(2, 1)).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)));
        assert!(err.message().starts_with("scores_1[0][0] overflows to Infinity: the dot product of Q_1 row 0"), "{err}");
        let one = Matrix::from_rows(&[[1e308]]).unwrap();
        let w_o = Matrix::from_rows(&[[10.0]]).unwrap();
        let small = Matrix::from_rows(&[[1.0]]).unwrap();
        let options = MultiHeadOptions { w_o: Some(w_o), ..MultiHeadOptions::new(1, 1) };
        let err = multi_head_attention(&small, &small, &one, &options).unwrap_err();
        assert!(err.message().starts_with("output[0][0] overflows to Infinity: concat row 0 · W_O column 0"), "{err}");
    }

    #[test]
    fn too_much_memory_is_refused_before_allocating() {
        // blocks of 64 query rows: a 64 × 2^21 block of scores and the inputs pass the 2^27-value budget
        let q: Matrix = Matrix::zeros(1 << 21, 2);
        let err = multi_head_attention(&q, &q, &q, &MultiHeadOptions::new(2, 1)).unwrap_err();
        assert!(err.message().starts_with("multiHeadAttention with T = 2097152 and C = 2 (inputs"), "{err}");
    }

    #[test]
    fn shape_errors_begin_with_the_challenge_message() {
        let (q, k, v) = challenge_qkv();
        let err = multi_head_attention(&q, &k, &v, &MultiHeadOptions::new(3, 1)).unwrap_err();
        assert!(err.message().starts_with(SHAPE_MESSAGE), "{err}");
        let k3 = seeded_matrix(3, 2, 1);
        let err = multi_head_attention(&q, &k3, &v, &MultiHeadOptions::new(2, 1)).unwrap_err();
        assert_eq!(err.message(), format!("{SHAPE_MESSAGE}: K is 3×2 but Q is 2×2"));
        let err = multi_head_attention(&q, &k, &v, &MultiHeadOptions::new(0, 1)).unwrap_err();
        assert_eq!(err.message(), "numberOfHeads is 0; expected a positive integer");
    }
}
