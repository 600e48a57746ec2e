//! The fast f32 path (Float32Array input): scaled dot-product and multi-head attention computed
//! one head and one block of [`QUERY_BLOCK`] query rows at a time with the SIMD kernels of
//! [`crate::kernels`].
//!
//! Memory: besides Q, K, V and the output, one head's packed Kᵀ and V (`T × d_head` each) and a
//! `QUERY_BLOCK × T` block of scores: O(T·C + T·block), never the O(h·T²) of all weights at once.
//! The order of summation is the kernels' own, so results agree with the f64 path to rounding,
//! not bit for bit.

use crate::attention::attention_scale;
use crate::error::{AttentionError, Result};
use crate::kernels::{gemm_packed, softmax_row_f32, PackedPanels};
use crate::mask::Mask;
use crate::multi_head::{check_multi_head_shapes, HeadSplit};
use crate::matrix::Matrix;

/// Query rows per block.
pub const QUERY_BLOCK: usize = 64;

/// A raw score `Q row · K row` beyond the largest f32 (finite inputs, but their dot product is not):
/// the head cannot be computed in f32. Its softmax would otherwise treat −Infinity as a masked key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreOverflow {
    pub query: usize,
    pub key: usize,
    pub value: f32,
}

impl ScoreOverflow {
    /// The RangeError, with the scores called `scores` (`head` None) or `scores_{head}`.
    pub fn error(self, head: Option<usize>) -> AttentionError {
        let (scores, q, k) = match head {
            Some(h) => (format!("scores_{h}"), format!("Q_{h}"), format!("K_{h}")),
            None => ("scores".to_string(), "Q".to_string(), "K".to_string()),
        };
        let ScoreOverflow { query, key, value } = self;
        AttentionError::range_error(format!(
            "{scores}[{query}][{key}] overflows to {} in f32: computing the dot product of {q} row {query} and {k} row {key} went beyond the largest f32 (about 3.4e38); scale the inputs down or pass Float64Array",
            non_finite_name(value)
        ))
    }
}

/// "NaN", "Infinity" or "-Infinity".
fn non_finite_name(x: f32) -> &'static str {
    if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
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
        non_finite_name(values[at])
    )))
}

/// Buffers reused across heads and calls: packed Kᵀ, packed V, one block of scores.
#[derive(Debug, Default)]
pub struct AttentionWorkspace {
    keys: PackedPanels,
    values: PackedPanels,
    scores: Vec<f32>,
}

impl AttentionWorkspace {
    pub fn new() -> Self {
        Self::default()
    }
}

/// Row-major columns `start .. start + width` of a matrix whose rows are `stride` apart.
#[derive(Clone, Copy, Debug)]
pub struct Columns<'a> {
    pub data: &'a [f32],
    pub stride: usize,
    pub start: usize,
    pub width: usize,
}

impl<'a> Columns<'a> {
    /// All of a `(rows, cols)` row-major matrix.
    pub fn all(data: &'a [f32], cols: usize) -> Self {
        Self { data, stride: cols, start: 0, width: cols }
    }

    /// The slice starting at element (0, start).
    fn from_origin(&self) -> &'a [f32] {
        &self.data[self.start..]
    }
}

/// One head: `out[i][out_start..+d_v] = softmax(Q_i·Kᵀ/√d_k)·V` for `t` queries and `t` keys.
/// Q and K have `d_k` columns, V and the output `d_v`. Shapes must have been checked.
#[allow(clippy::too_many_arguments)]
pub fn attention_head_f32(
    q: Columns,
    k: Columns,
    v: Columns,
    t: usize,
    mask: &Mask,
    out: &mut [f32],
    out_stride: usize,
    out_start: usize,
    workspace: &mut AttentionWorkspace,
) -> std::result::Result<(), ScoreOverflow> {
    let target = HeadTarget { out, out_stride, out_start, weights: None };
    attention_head_cross_f32(q, k, v, (t, t), mask, target, workspace)
}

/// Where one head writes: its `d_v` output columns starting at `out_start` of rows `out_stride`
/// apart, and optionally its `(T_q, T_k)` softmax weights, row-major (entries a causal block
/// never computes are left as they are, so pass zeros).
pub struct HeadTarget<'a> {
    pub out: &'a mut [f32],
    pub out_stride: usize,
    pub out_start: usize,
    pub weights: Option<&'a mut [f32]>,
}

/// One head for `t_q` queries and `t_k` keys (cross-attention when they differ), a block of
/// [`QUERY_BLOCK`] query rows at a time. Shapes and the mask (`T_q × T_k`) must have been checked.
/// Stops at the first allowed raw score beyond f32's range.
pub fn attention_head_cross_f32(
    q: Columns,
    k: Columns,
    v: Columns,
    (t_q, t_k): (usize, usize),
    mask: &Mask,
    target: HeadTarget,
    workspace: &mut AttentionWorkspace,
) -> std::result::Result<(), ScoreOverflow> {
    let (d_k, d_v) = (q.width, v.width);
    let scale = attention_scale::<f32>(d_k);
    let HeadTarget { out, out_stride, out_start, mut weights } = target;
    // 1. pack Kᵀ (d_k, T_k) and V (T_k, d_v) once per head
    workspace.keys.pack_transposed(k.from_origin(), k.stride, d_k, t_k);
    workspace.values.pack(v.from_origin(), v.stride, t_k, d_v);
    for r0 in (0..t_q).step_by(QUERY_BLOCK) {
        let r1 = (r0 + QUERY_BLOCK).min(t_q);
        let rows = r1 - r0;
        // a causal block never looks past its last query
        let keys = if mask.causal { r1.min(t_k) } else { t_k };
        let scores = &mut workspace.scores;
        scores.clear();
        scores.resize(rows * keys, 0.0);
        // 2. MatMul: raw scores for the block, (rows, keys)
        gemm_packed(rows, d_k, keys, &q.from_origin()[r0 * q.stride..], q.stride, &workspace.keys, scores, keys, false);
        // 3. masked keys → −∞ (an allowed score beyond f32 is refused), then 4. softmax(scale · scores) along each row
        for (i, row) in scores.chunks_exact_mut(keys).enumerate() {
            let query = r0 + i;
            if mask.is_empty() {
                if let Some(key) = row.iter().position(|x| !x.is_finite()) {
                    return Err(ScoreOverflow { query, key, value: row[key] });
                }
            } else {
                for (j, x) in row.iter_mut().enumerate() {
                    if !mask.allows(query, j) {
                        *x = f32::NEG_INFINITY;
                    } else if !x.is_finite() {
                        return Err(ScoreOverflow { query, key: j, value: *x });
                    }
                }
            }
            softmax_row_f32(row, scale);
            if let Some(weights) = weights.as_deref_mut() {
                weights[query * t_k..query * t_k + keys].copy_from_slice(row);
            }
        }
        // 5. MatMul: weights · V for the block, (rows, d_v)
        gemm_packed(rows, keys, d_v, scores, keys, &workspace.values, &mut out[r0 * out_stride + out_start..], out_stride, false);
    }
    Ok(())
}

/// Scaled dot-product attention in f32 on `(T, d_k)`, `(T, d_k)`, `(T, d_v)` row-major slices
/// (checked by the caller). Returns `(T, d_v)`, or a RangeError for a score beyond f32.
pub fn dot_product_attention_f32(q: &[f32], k: &[f32], v: &[f32], t: usize, d_k: usize, d_v: usize, mask: &Mask) -> Result<Vec<f32>> {
    let mut out = vec![0.0; t * d_v];
    let mut workspace = AttentionWorkspace::new();
    let (q, k, v) = (Columns::all(q, d_k), Columns::all(k, d_k), Columns::all(v, d_v));
    attention_head_f32(q, k, v, t, mask, &mut out, d_v, 0, &mut workspace).map_err(|e| e.error(None))?;
    Ok(out)
}

/// Multi-head attention in f32 into `out` (`T × C`), on `(T, C)` row-major slices, with an
/// optional `C × C` W_O (packed into `w_o_panels`). Shapes must have been checked.
#[allow(clippy::too_many_arguments)]
pub fn multi_head_attention_f32_into(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    t: usize,
    split: HeadSplit,
    w_o: Option<&[f32]>,
    mask: &Mask,
    out: &mut [f32],
    workspace: &mut AttentionWorkspace,
) -> Result<()> {
    let HeadSplit { number_of_heads: h, head_dimensions: d_head } = split;
    let c = h * d_head;
    // 1. per head, block by block, straight into the concatenated layout (T, C)
    let mut concat = match w_o {
        Some(_) => vec![0.0f32; t * c],
        None => Vec::new(),
    };
    let target: &mut [f32] = if w_o.is_some() { &mut concat } else { &mut *out };
    for head in 0..h {
        let columns = |data| Columns { data, stride: c, start: head * d_head, width: d_head };
        attention_head_f32(columns(q), columns(k), columns(v), t, mask, target, c, head * d_head, workspace).map_err(|e| e.error(Some(head)))?;
    }
    // 2. MatMul by W_O (C, C); without it the concatenation already is the output
    if let Some(w_o) = w_o {
        let mut panels = PackedPanels::new();
        panels.pack(w_o, c, c, c);
        gemm_packed(t, c, c, &concat, c, &panels, out, c, false);
        refuse_overflow_f32(out, c, "output", "concat row · W_O column")?;
    }
    Ok(())
}

/// Multi-head attention on f32 matrices, with the same checks and messages as the f64 version.
pub fn multi_head_attention_f32(q: &Matrix<f32>, k: &Matrix<f32>, v: &Matrix<f32>, split: HeadSplit, w_o: Option<&Matrix<f32>>, mask: &Mask) -> Result<Matrix<f32>> {
    check_multi_head_shapes(q, k, v, split, w_o.map(Matrix::shape), mask)?;
    let (t, c) = q.shape();
    let mut out = vec![0.0; t * c];
    let mut workspace = AttentionWorkspace::new();
    multi_head_attention_f32_into(q.data(), k.data(), v.data(), t, split, w_o.map(Matrix::data), mask, &mut out, &mut workspace)?;
    Matrix::new(t, c, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::dot_product_attention;
    use crate::multi_head::{multi_head_attention, MultiHeadOptions};
    use crate::testing::{challenge_qkv, seeded_matrix};
    use crate::mask::BoolMatrix;

    fn assert_near(f32_out: &Matrix<f32>, f64_out: &Matrix, tolerance: f64) {
        assert_eq!(f32_out.shape(), f64_out.shape());
        for (i, (a, b)) in f32_out.data().iter().zip(f64_out.data()).enumerate() {
            assert!((*a as f64 - b).abs() <= tolerance, "element {i}: {a} vs {b}");
        }
    }

    #[test]
    fn a_score_beyond_f32_is_refused_unless_masked() {
        // q·k: the products −3.5e38 and 3e38 + 3e38 pass f32's 3.4e38 although the sum (2.5e38) does not
        let q = [1e19f32, 1e19, 1e19, 0.0, 0.0, 1.0];
        let k = [-3.5e19f32, 3e19, 3e19, 1.0, 1.0, 1.0];
        let v = [1.0f32, 0.0, 0.0, 0.0, 1.0, 0.0];
        let err = dot_product_attention_f32(&q, &k, &v, 2, 3, 3, &Mask::none()).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)));
        assert!(err.message().starts_with("scores[0][0] overflows to -Infinity in f32: computing the dot product of Q row 0 and K row 0"), "{err}");
        // the same pair masked out is never used, so nothing is refused
        let mask = Mask { causal: false, allowed: Some(BoolMatrix::new(2, 2, vec![false, true, true, true]).unwrap()) };
        assert!(dot_product_attention_f32(&q, &k, &v, 2, 3, 3, &mask).is_ok());
        // in multi-head attention the message names the head
        let split = HeadSplit { number_of_heads: 1, head_dimensions: 3 };
        let (q, k, v) = (Matrix::new(2, 3, q.to_vec()).unwrap(), Matrix::new(2, 3, k.to_vec()).unwrap(), Matrix::new(2, 3, v.to_vec()).unwrap());
        let err = multi_head_attention_f32(&q, &k, &v, split, None, &Mask::none()).unwrap_err();
        assert!(err.message().starts_with("scores_0[0][0] overflows to -Infinity in f32"), "{err}");
        // and a W_O product beyond f32 is refused, not returned as Infinity
        let ones = Matrix::new(2, 3, vec![1.0f32; 6]).unwrap();
        let w_o = Matrix::new(3, 3, vec![3e38f32; 9]).unwrap();
        let err = multi_head_attention_f32(&ones, &ones, &ones, split, Some(&w_o), &Mask::none()).unwrap_err();
        assert!(err.message().starts_with("output[0][0] overflows to Infinity in f32: concat row · W_O column"), "{err}");
    }

    #[test]
    fn challenge_in_f32() {
        let (q, k, v) = challenge_qkv();
        let out = multi_head_attention_f32(&q.cast(), &k.cast(), &v.cast(), HeadSplit { number_of_heads: 2, head_dimensions: 1 }, None, &Mask::none()).unwrap();
        assert_near(&out, &multi_head_attention(&q, &k, &v, &MultiHeadOptions::new(2, 1)).unwrap(), 1e-5);
    }

    #[test]
    fn agrees_with_f64_across_blocks_masks_and_w_o() {
        // T = 150 spans three query blocks, the last one partial
        let (t, h, d) = (150, 3, 5);
        let c = h * d;
        let (q, k, v) = (seeded_matrix(t, c, 1), seeded_matrix(t, c, 2), seeded_matrix(t, c, 3));
        let w_o = seeded_matrix(c, c, 4);
        let table: Vec<bool> = (0..t * t).map(|n| (n * 7919) % 5 != 0).collect();
        let explicit = Mask { causal: false, allowed: Some(BoolMatrix::new(t, t, table.clone()).unwrap()) };
        let both = Mask { causal: true, allowed: Some(BoolMatrix::new(t, t, table).unwrap()) };
        for mask in [Mask::none(), Mask::causal(), explicit, both] {
            for w in [None, Some(&w_o)] {
                let options = MultiHeadOptions { w_o: w.cloned(), mask: mask.clone(), ..MultiHeadOptions::new(h, d) };
                let want = multi_head_attention(&q, &k, &v, &options).unwrap();
                let w32 = w.map(Matrix::cast);
                let got = multi_head_attention_f32(&q.cast(), &k.cast(), &v.cast(), options.split, w32.as_ref(), &mask).unwrap();
                assert_near(&got, &want, 1e-4);
            }
        }
    }

    #[test]
    fn dot_product_with_different_value_width() {
        let (q, k, v) = (seeded_matrix(70, 4, 5), seeded_matrix(70, 4, 6), seeded_matrix(70, 9, 7));
        let want = dot_product_attention(&q, &k, &v, &Mask::causal()).unwrap();
        let got = dot_product_attention_f32(q.cast::<f32>().data(), k.cast::<f32>().data(), v.cast::<f32>().data(), 70, 4, 9, &Mask::causal()).unwrap();
        assert_near(&Matrix::new(70, 9, got).unwrap(), &want, 1e-5);
    }

    #[test]
    fn fully_masked_rows_are_zero() {
        let (q, k, v) = (seeded_matrix(3, 2, 1), seeded_matrix(3, 2, 2), seeded_matrix(3, 2, 3));
        let mask = Mask { causal: false, allowed: Some(BoolMatrix::new(3, 3, vec![false, false, false, true, true, true, true, true, true]).unwrap()) };
        let got = dot_product_attention_f32(q.cast::<f32>().data(), k.cast::<f32>().data(), v.cast::<f32>().data(), 3, 2, 2, &mask).unwrap();
        assert_eq!(&got[..2], &[0.0, 0.0]);
    }
}
