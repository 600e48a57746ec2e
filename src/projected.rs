//! Self-attention with given projections and no biases: the function behind challenge 04
//! ("learned projections") and the `projectedSelfAttention` export.
//!
//! 1. project one input X three ways: `Q = X·W_Q`, `K = X·W_K`, `V = X·W_V`;
//! 2. multi-head attention on Q, K and V (heads by columns, scale `1/√d_head`);
//! 3. `output = concat·W_O`.
//!
//! It checks the arguments in the course's vocabulary (numberOfHeads, headDimensions) and
//! then runs [`MultiHeadAttention::forward`] with the given weights and `bias: false`, so the
//! arithmetic is the layer's own, not a second copy of it.

use crate::layer::{ForwardOptions, LayerKernel, MultiHeadAttention, Weights};
use crate::engine::Batch;
use crate::error::{AttentionError, Result};
use crate::mask::Mask;
use crate::error::shape_text;
use crate::matrix::Matrix;
use crate::multi_head::HeadSplit;

/// Everything `projected_self_attention` takes besides X. Each W is `C × C`, oriented
/// `[in, out]` (the computation is `X·W`), with `C = numberOfHeads · headDimensions`.
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectedOptions {
    pub split: HeadSplit,
    pub w_q: Matrix,
    pub w_k: Matrix,
    pub w_v: Matrix,
    pub w_o: Matrix,
    pub mask: Mask,
}

/// `multiHeadAttention(X·W_Q, X·W_K, X·W_V, { …, W_O })`, computed by the layer's forward in X's
/// precision (f32: the weights rounded to f32 as the f32 forward packs them): X is `[B, T, C]`
/// row-major (B = `x.items`; `batched` when the caller passed a `[B, T, C]` shape). Returns `[B, T, C]`.
pub fn projected_self_attention_batch<F: LayerKernel>(x: Batch<F>, batched: bool, options: ProjectedOptions) -> Result<Vec<F>> {
    let (mut layer, options) = projecting_layer((x.rows, x.cols), options)?;
    // 3. Its forward pass, with X as query, key and value
    let options = ForwardOptions { batched, ..options };
    Ok(layer.forward_batch(x, x, x, &options)?.output)
}

/// [`projected_self_attention_batch`] of one `(T, C)` matrix (for Rust users).
pub fn projected_self_attention(x: &Matrix, options: ProjectedOptions) -> Result<Matrix> {
    let out = projected_self_attention_batch(Batch::new(x.data(), 1, x.rows(), x.cols()), false, options)?;
    Matrix::new(x.rows(), x.cols(), out)
}

/// Passes 1 and 2 of both forms: the shapes checked in the course's words, then the layer with
/// these weights and no biases, and its forward options.
fn projecting_layer((rows, cols): (usize, usize), options: ProjectedOptions) -> Result<(MultiHeadAttention, ForwardOptions)> {
    let ProjectedOptions { split, w_q, w_k, w_v, w_o, mask } = options;
    // 1. Check the shapes against the head split, in the course's words
    let c = split.model_dimensions()?;
    if cols != c {
        return Err(AttentionError::range_error(format!(
            "X is {} but numberOfHeads · headDimensions = {} · {} = {c}: X must have C = {c} columns",
            shape_text(rows, cols),
            split.number_of_heads,
            split.head_dimensions
        )));
    }
    for (name, w) in [("W_Q", &w_q), ("W_K", &w_k), ("W_V", &w_v), ("W_O", &w_o)] {
        if w.shape() != (c, c) {
            return Err(AttentionError::range_error(format!(
                "{name} is {} but must be C×C = {c}×{c} (oriented [in, out]: the projection is X·{name})",
                w.shape_text()
            )));
        }
    }
    // 2. The layer with these weights and no biases (no dropout: the seed is never used)
    let weights = Weights { w_q, w_k, w_v, w_o, biases: None };
    let layer = MultiHeadAttention::from_weights(weights, split.number_of_heads, 0.0, 0)?;
    Ok((layer, ForwardOptions { mask, ..ForwardOptions::default() }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layer::LayerConfig;
    use crate::multi_head::{multi_head_attention, MultiHeadOptions};
    use crate::testing::{assert_bitwise_eq, seeded_matrix};

    fn options(h: usize, d: usize, seed: u64) -> ProjectedOptions {
        let c = h * d;
        ProjectedOptions {
            split: HeadSplit { number_of_heads: h, head_dimensions: d },
            w_q: seeded_matrix(c, c, seed),
            w_k: seeded_matrix(c, c, seed + 1),
            w_v: seeded_matrix(c, c, seed + 2),
            w_o: seeded_matrix(c, c, seed + 3),
            mask: Mask::none(),
        }
    }

    #[test]
    fn equals_multi_head_attention_of_the_projections_bit_for_bit() {
        for (h, d, mask) in [(1, 3, Mask::none()), (2, 2, Mask::none()), (3, 2, Mask::causal())] {
            let x = seeded_matrix(4, h * d, 7);
            let mut o = options(h, d, 11);
            o.mask = mask.clone();
            let got = projected_self_attention(&x, o.clone()).unwrap();
            let (q, k, v) = (x.matmul(&o.w_q).unwrap(), x.matmul(&o.w_k).unwrap(), x.matmul(&o.w_v).unwrap());
            let heads = MultiHeadOptions { split: o.split, w_o: Some(o.w_o.clone()), mask };
            assert_bitwise_eq(&got, &multi_head_attention(&q, &k, &v, &heads).unwrap());
        }
    }

    #[test]
    fn equals_a_bias_free_layer_with_the_same_weights() {
        let mut layer = MultiHeadAttention::new(&LayerConfig { bias: false, seed: 3, ..LayerConfig::new(6, 3) }).unwrap();
        let w = layer.weights().into_owned();
        let x = seeded_matrix(5, 6, 9);
        let split = HeadSplit { number_of_heads: 3, head_dimensions: 2 };
        let o = ProjectedOptions { split, w_q: w.w_q, w_k: w.w_k, w_v: w.w_v, w_o: w.w_o, mask: Mask::causal() };
        let got = projected_self_attention(&x, o).unwrap();
        let one = std::slice::from_ref(&x);
        let forward = layer.forward(one, one, one, &ForwardOptions { mask: Mask::causal(), ..Default::default() }).unwrap();
        assert_bitwise_eq(&got, &forward.output[0]);
    }

    #[test]
    fn the_f32_form_agrees_with_the_f64_one_per_batch_item() {
        let (h, d, t, b) = (3, 4, 70, 2); // 70 rows: two blocks of 64 query rows
        let mut o = options(h, d, 21);
        o.mask = Mask::causal();
        // f32 values, and their exact f64 copies, for X and for the weights
        let round = |m: &Matrix| m.cast::<f32>().cast::<f64>();
        for w in [&mut o.w_q, &mut o.w_k, &mut o.w_v, &mut o.w_o] {
            *w = round(w);
        }
        let items: Vec<Matrix> = (0..b).map(|i| round(&seeded_matrix(t, h * d, 30 + i as u64))).collect();
        let flat: Vec<f32> = items.iter().flat_map(|m| m.data().iter().map(|&v| v as f32)).collect();
        let got = projected_self_attention_batch(Batch::new(&flat, b, t, h * d), true, o.clone()).unwrap();
        let want: Vec<f64> = items.iter().flat_map(|x| projected_self_attention(x, o.clone()).unwrap().into_data()).collect();
        assert_eq!(got.len(), want.len());
        let worst = got.iter().zip(&want).map(|(&g, &w)| (f64::from(g) - w).abs()).fold(0.0, f64::max);
        assert!(worst < 1e-5, "max |f32 − f64| = {worst}");
        // the same checks as the f64 form
        let error = projected_self_attention_batch(Batch::new(&flat, b, t, h * d), true, options(2, 1, 0)).unwrap_err();
        assert!(error.message().starts_with("X is 70×12 but numberOfHeads · headDimensions = 2 · 1 = 2"), "{error}");
    }

    #[test]
    fn shape_errors_name_the_argument_and_the_sizes() {
        let x = seeded_matrix(2, 3, 1);
        let error = projected_self_attention(&x, options(2, 1, 0)).unwrap_err();
        assert_eq!(error, AttentionError::range_error("X is 2×3 but numberOfHeads · headDimensions = 2 · 1 = 2: X must have C = 2 columns"));
        let x = seeded_matrix(2, 2, 1);
        let mut o = options(2, 1, 0);
        o.w_k = seeded_matrix(2, 3, 0);
        let error = projected_self_attention(&x, o).unwrap_err();
        assert!(error.message().starts_with("W_K is 2×3 but must be C×C = 2×2"), "{error}");
        let mut o = options(2, 1, 0);
        o.split.head_dimensions = 0;
        assert!(matches!(projected_self_attention(&x, o), Err(AttentionError::Range(m)) if m.starts_with("headDimensions is 0")));
        let mut o = options(2, 1, 0);
        o.mask = Mask { causal: false, allowed: Some(crate::mask::BoolMatrix::new(1, 2, vec![true, true]).unwrap()), window: None };
        assert!(matches!(projected_self_attention(&x, o), Err(AttentionError::Range(_))));
    }
}
