//! Multi-head self-attention, as the course defines it (no learned Q/K/V projections):
//!
//! 1. slice Q, K and V by columns: head `i` takes columns `i·d_head .. (i+1)·d_head`;
//! 2. scaled dot-product attention per head, scaled by `1/√d_head` (not `1/√C`);
//! 3. concatenate the head outputs side by side;
//! 4. multiply by W_O (`C × C`, the identity when absent).
//!
//! Shapes: Q, K, V are `(T, C)` with `C = numberOfHeads · headDimensions` (h · d_head).

use crate::attention::{attention_scale, QUERY_BLOCK};
use crate::error::{shape_text, AttentionError, Result};
use crate::limits::{check_working_set, count_values, refuse_overflow};
use crate::real::Real;
use crate::mask::Mask;
use crate::matrix::Matrix;
use crate::softmax::stable_softmax_block;
use crate::trace::{Op, Recorder, Step};

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
    check_multi_head_shapes(q, k, v, options.split, options.w_o.as_ref().map(Matrix::shape), &options.mask)
}

/// [`check_multi_head`] for any scalar type, with W_O given by its shape (`None`: the identity).
pub fn check_multi_head_shapes<F: Real>(
    q: &Matrix<F>,
    k: &Matrix<F>,
    v: &Matrix<F>,
    split: HeadSplit,
    w_o: Option<(usize, usize)>,
    mask: &Mask,
) -> Result<()> {
    let c = split.model_dimensions()?;
    if q.rows() == 0 {
        return Err(AttentionError::range_error(format!(
            "{SHAPE_MESSAGE}: Q is {}; expected at least one row",
            q.shape_text()
        )));
    }
    if q.cols() != c {
        return Err(AttentionError::range_error(format!(
            "{SHAPE_MESSAGE}: Q is {} but numberOfHeads · headDimensions = {} · {} = {c} columns",
            q.shape_text(),
            split.number_of_heads,
            split.head_dimensions
        )));
    }
    for (name, m) in [("K", k), ("V", v)] {
        if m.shape() != q.shape() {
            return Err(AttentionError::range_error(format!(
                "{SHAPE_MESSAGE}: {name} is {} but Q is {}",
                m.shape_text(),
                q.shape_text()
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
    mask.check_shape(q.rows(), k.rows())?;
    // Q, K, V, W_O; one head's slices and Kᵀ; one block's three rows×T matrices; concat and output
    let (t, d_head) = (q.rows(), split.head_dimensions);
    let w_o = w_o.unwrap_or((0, 0));
    let block = QUERY_BLOCK.min(t);
    let needed = count_values(&[(3 * t, c), w_o, (4 * t, d_head), (3 * block, t), (2 * t, c)]);
    check_working_set(needed, || {
        format!("multiHeadAttention with T = {t} and C = {c} (blocks of {block}×{t} scores, plus the inputs and outputs)")
    })
}

/// Multi-head self-attention. Returns `(T, C)`.
pub fn multi_head_attention(q: &Matrix, k: &Matrix, v: &Matrix, options: &MultiHeadOptions) -> Result<Matrix> {
    check_multi_head(q, k, v, options)?;
    run(q, k, v, options, &mut Recorder::Off)
}

/// The one implementation behind both `multi_head_attention` and the trace, so the two agree
/// bit for bit. Every intermediate is offered to `recorder`.
///
/// Memory: when recording, every head's full `T × T` matrices are kept (the trace holds them
/// anyway). Otherwise passes 3–6 run on blocks of [`QUERY_BLOCK`] query rows and each block's
/// context goes straight into the concatenation, so at most `QUERY_BLOCK × T` scores exist at
/// once. Every entry is computed by the same operations in the same order either way, so the
/// bits do not depend on the block size.
pub(crate) fn run(q: &Matrix, k: &Matrix, v: &Matrix, options: &MultiHeadOptions, recorder: &mut Recorder) -> Result<Matrix> {
    let HeadSplit { number_of_heads: h, head_dimensions: d_head } = options.split;
    // (T_q, T_k): equal here, but the layer's trace reuses this for cross-attention
    let (t_q, t_k) = (q.rows(), k.rows());
    let t = t_q;
    let c = h * d_head;
    let scale = attention_scale::<f64>(d_head);
    let block = if recorder.is_on() { t } else { QUERY_BLOCK };
    let mut concat = Matrix::zeros(t, c); // (T, h·d_head) = (T, C)
    for head in 0..h {
        let columns = [head * d_head, (head + 1) * d_head];
        // 1. Slice the head's columns out of Q, K and V
        let mut slice = |name: &str, m: &Matrix| -> Result<Matrix> {
            let part = m.slice_columns(columns[0], columns[1])?; // (T, d_head)
            recorder.record(|| Step::new(Op::Slice, format!("{name}_{head}"), &[name], Some(head), &part).with_columns(columns));
            Ok(part)
        };
        let q_h = slice("Q", q)?;
        let k_h = slice("K", k)?;
        let v_h = slice("V", v)?;
        // 2. Transpose K_h
        let k_h_t = k_h.transpose(); // (d_head, T)
        recorder.record(|| Step::new(Op::Transpose, format!("K_{head}^T"), &[&format!("K_{head}")], Some(head), &k_h_t));
        for first in (0..t).step_by(block) {
            let end = (first + block).min(t);
            let q_rows = if end - first == t { q_h.clone() } else { q_h.slice_rows(first, end)? }; // (rows, d_head)
            // 3. MatMul: scores
            let scores = q_rows.matmul(&k_h_t)?; // (rows, T)
            // 3b. Refuse overflow: with finite inputs, a non-finite score is a dot product beyond f64
            if !all_finite(&scores) {
                refuse_overflow(&scores, &format!("scores_{head}"), |i, j| {
                    format!("the dot product of Q_{head} row {} and K_{head} row {j} is too large", first + i)
                })?;
            }
            recorder.record(|| {
                Step::new(Op::MatMul, format!("scores_{head}"), &[&format!("Q_{head}"), &format!("K_{head}^T")], Some(head), &scores)
            });
            // 4. Mul by 1/√d_head
            let scaled = scores.scale(scale); // (rows, T)
            recorder.record(|| {
                Step::new(Op::Mul, format!("scaled_{head}"), &[&format!("scores_{head}")], Some(head), &scaled).with_scalar(scale)
            });
            // 5. StableSoftmax along each row (masked keys get weight 0)
            let weights = stable_softmax_block(&scaled, &options.mask, first); // (rows, T)
            recorder.record(|| {
                Step::new(Op::StableSoftmax, format!("weights_{head}"), &[&format!("scaled_{head}")], Some(head), &weights)
                    .with_allowed(options.mask.resolve(t_q, t_k))
            });
            // 6. MatMul: weighted sum of the head's values
            let context = weights.matmul(&v_h)?; // (rows, d_head)
            // 6b. Refuse overflow: a convex combination of finite values can round past f64 only at its edge
            if !all_finite(&context) {
                refuse_overflow(&context, &format!("context_{head}"), |i, j| {
                    format!("the weighted sum of V_{head} column {j} for query {} is too large", first + i)
                })?;
            }
            recorder.record(|| {
                Step::new(Op::MatMul, format!("context_{head}"), &[&format!("weights_{head}"), &format!("V_{head}")], Some(head), &context)
            });
            // 7. Concat: the block's context goes into the head's columns
            for (i, row) in (first..end).zip(context.data().chunks_exact(d_head)) {
                concat.row_mut(i)[columns[0]..columns[1]].copy_from_slice(row);
            }
        }
    }
    recorder.record(|| {
        let names: Vec<String> = (0..h).map(|i| format!("context_{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        Step::new(Op::Concat, "concat".into(), &names, None, &concat)
    });
    // 8. MatMul by W_O
    let output = match &options.w_o {
        Some(w_o) => concat.matmul(w_o)?,
        None => times_identity(&concat),
    }; // (T, C)
    // 8b. Refuse overflow: concat is finite here, so only the W_O product can overflow
    refuse_overflow(&output, "output", |i, j| format!("concat row {i} · W_O column {j} is too large"))?;
    recorder.record(|| Step::new(Op::MatMul, "output".into(), &["concat", "W_O"], None, &output));
    Ok(output)
}

/// Whether every entry is finite (checked before `refuse_overflow`, whose name is formatted eagerly).
fn all_finite(m: &Matrix) -> bool {
    m.data().iter().all(|x| x.is_finite())
}

/// `m · I` without the `O(T·C²)` work: each sum is `0 + x·1 + (±0)…`, which is `x`, except
/// that `-0` becomes `+0`. Adding `+0.0` reproduces exactly that, bit for bit.
fn times_identity(m: &Matrix) -> Matrix {
    let mut out = m.clone();
    out.data_mut().iter_mut().for_each(|x| *x += 0.0);
    out
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
        assert_bitwise_eq(&times_identity(&m), &m.matmul(&Matrix::identity(4)).unwrap());
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
        // blocks of 64 query rows: 3 · 64 · 2^20 scores alone exceed the 2^27-value budget
        let q: Matrix = Matrix::zeros(1 << 20, 2);
        let err = multi_head_attention(&q, &q, &q, &MultiHeadOptions::new(2, 1)).unwrap_err();
        assert!(err.message().starts_with("multiHeadAttention with T = 1048576 and C = 2"), "{err}");
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
