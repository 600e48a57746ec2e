//! The layer under the crate's limits ([`crate::limits`]), like the functions: the parameters, a
//! forward pass (with the cache `backward` keeps) and a backward pass are each counted before anything
//! is allocated; an overflow (inputs and weights are finite) is refused naming the entry, worded per
//! precision by [`LayerLimits::refuse_projection`], never returned nor stored as a gradient.

use crate::engine::{check_budget, HeadShape};
use crate::error::{AttentionError, Result};
use crate::kernels::all_finite_f32;
use crate::limits::{check_working_set, refuse_overflow, refuse_overflow_f32};
use crate::precision::Precision;
use super::MultiHeadAttention;

/// How many batch items a pass works on at once: one, or one per thread where training splits
/// the items over threads (forward.rs, backward.rs); each holds its own intermediates.
fn items_at_once(batch: usize) -> usize {
    crate::parallel::threads().min(batch).max(1)
}

/// Values a forward pass holds at once, in either precision, per batch item of `(T_q, C)` queries
/// and `(T_k, C)` keys/values. One that keeps what backward needs (`keep`, with `(needWeights,
/// averageWeights, dropout)`): per item the inputs, Q, K, V, concat and the output (twice: the item's,
/// copied into the batch's); per head the weights (with dropout also its flags and the weights used,
/// counted as values) and the weights returned (with their mean, every head's); the parameters as
/// the precision's products read them (`parameters` rows of C, [`LayerLimits::PARAMETER_ROWS`];
/// W_K and W_V counted as C × C). One that keeps
/// nothing (f32 in evaluation mode): the inputs and the output, per item in flight ([`items_at_once`])
/// Q, K, V, concat and its output, and the weights returned. Plus the engine's workspace.
pub(super) fn check_forward(layer: &MultiHeadAttention, b: usize, t_q: usize, t_k: usize, (need_weights, average_weights, dropout): (bool, bool, bool), keep: bool, parameters: usize) -> Result<()> {
    let (c, h, d_head) = (layer.embed_dim(), layer.number_of_heads(), layer.head_dimensions());
    let kv_c = layer.kv_heads() * d_head;
    let shape = HeadShape::new(t_q, t_k, h, layer.kv_heads(), d_head);
    let returned = match (need_weights, average_weights) {
        (false, _) => 0,
        (true, false) => h,
        (true, true) => 1 + h,
    };
    // the per-item parts counted in u128 (usize is 32 bits on wasm32), as rows of C or T_k values
    let rows = |n: u128| usize::try_from(n).unwrap_or(usize::MAX);
    let [b_, h_, t_q_, t_k_] = [b, h, t_q, t_k].map(|n| n as u128);
    let weights = (rows(b_ * h_ * (usize::from(keep) * (1 + 2 * usize::from(dropout)) + returned) as u128 * t_q_), t_k);
    let what = |kept: &str| format!("MultiHeadAttention.forward with a batch of {b}, T_q = {t_q}, T_k = {t_k} and C = {c}{kept}");
    if !keep {
        let m = items_at_once(b);
        let parts = [(b * (t_q + 2 * t_k), c), (m * (3 * t_q + 2 * t_k), c), (b * t_q, c), weights];
        return check_budget(shape, &parts, || what(""));
    }
    let parts = [(rows(b_ * (4 * t_q_ + 3 * t_k_)), c), (rows(b_ * 2 * t_k_), kv_c), weights, (parameters * c, c)];
    check_budget(shape, &parts, || what(&format!(" ({h} heads of {t_q}×{t_k} weights per item, kept for backward)")))
}

/// Values a backward pass holds in either precision, on top of what the forward kept (counted as in
/// [`check_forward`]): the input gradients of every item; per item in flight ([`items_at_once`]) its
/// `d_concat`, `d_Q`, `d_K`, `d_V`, input gradients, one head's `used`, `d_used`, `d_scores`, a packed
/// panel and a transposed copy of a `T_q × T_k` matrix, and its weights' gradients; the parameter
/// gradients and the transposed weights (`parameters`: as in [`check_forward`]).
pub(super) fn check_backward(layer: &MultiHeadAttention, batch: usize, t_q: usize, t_k: usize, dropout: bool, parameters: u128) -> Result<()> {
    let m = items_at_once(batch) as u128;
    let (c, h) = (layer.embed_dim() as u128, layer.number_of_heads() as u128);
    let [b, tq, tk] = [batch, t_q, t_k].map(|n| n as u128);
    let kept = b * (4 * (tq + tk) * c + h * tq * tk * if dropout { 3 } else { 1 }) + parameters * c * c;
    let in_flight = 2 * (tq + 2 * tk) * c + tq * c + 5 * (tq + 8) * tk + 4 * c * c;
    let needed = kept + b * (tq + 2 * tk) * c + m * in_flight + 4 * c * c + 4 * c;
    check_working_set(needed, || format!("MultiHeadAttention.backward with a batch of {batch}, T_q = {t_q}, T_k = {t_k} and C = {}", layer.embed_dim()))
}

/// Values a cached forward (decoding) holds: per item the new rows, their projections, concat and
/// output, the cache's keys and values after appending, and with needWeights every head's
/// `T_new × T_all` weights; plus the parameters and the engine's workspace. Nothing is kept for
/// backward, so without needWeights the memory is O(T_all·C), not O(h·T_new·T_all).
pub(super) fn check_cached_budget(layer: &super::MultiHeadAttention, batch: usize, t_new: usize, t_all: usize, need_weights: bool) -> Result<()> {
    let (c, h) = (layer.embed_dim(), layer.number_of_heads());
    let kv_c = layer.kv_heads() * layer.head_dimensions();
    let shape = HeadShape::new(t_new, t_all, h, layer.kv_heads(), layer.head_dimensions());
    let weights = if need_weights { (batch * h * t_new, t_all) } else { (0, 0) };
    let parts = [(batch * 5 * t_new, c), (batch * 2 * t_all, kv_c), weights, (4 * c, c)];
    check_budget(shape, &parts, || format!("MultiHeadAttention.forward with a cache, a batch of {batch}, {t_new} new positions over {t_all} and C = {c}"))
}

/// The layer's four projections as messages name them: `(result, input, weight, bias)`.
pub(super) const PROJECTIONS: [(&str, &str, &str, &str); 4] = [("Q", "query", "W_Q", "b_Q"), ("K", "key", "W_K", "b_K"), ("V", "value", "W_V", "b_V"), ("output", "concat", "W_O", "b_O")];

/// What the layer's limits say per precision (the products are [`super::LayerKernel`]'s; the
/// working-set counts, `check_forward` and `check_backward`, are one for both).
pub trait LayerLimits: Precision {
    /// The parameters as the products read them, in rows of C (for the working-set counts): f32
    /// packs them both ways, 8·C²; f64 reads them as they are, 4·C².
    const PARAMETER_ROWS: usize;
    /// The overflow check of projection `i` of `PROJECTIONS` (Q, K, V, output), `name = input·weight (+ bias)`, `(rows, cols)`.
    fn refuse_projection(values: &[Self], cols: usize, i: usize, bias: bool) -> Result<()>;
    /// An overflow check of a gradient `(rows, cols)` that messages call `name`.
    fn refuse_gradient(values: &[Self], cols: usize, name: &str) -> Result<()>;
}

impl LayerLimits for f64 {
    const PARAMETER_ROWS: usize = 4;

    fn refuse_projection(projected: &[f64], cols: usize, p: usize, bias: bool) -> Result<()> {
        let (name, input, weight, b) = PROJECTIONS[p];
        refuse_overflow(projected, cols, name, |i, j| match bias {
            true => format!("{input} row {i} · {weight} column {j} + {b}[{j}] is too large"),
            false => format!("{input} row {i} · {weight} column {j} is too large"),
        })
    }

    fn refuse_gradient(values: &[f64], cols: usize, name: &str) -> Result<()> {
        refuse_overflow(values, cols, name, |i, j| format!("the gradient at [{i}][{j}], a sum of products of finite gradients and weights, is too large"))
    }
}

impl LayerLimits for f32 {
    const PARAMETER_ROWS: usize = 8;

    fn refuse_projection(values: &[f32], cols: usize, p: usize, _bias: bool) -> Result<()> {
        // f32's messages write the formula with its bias whether or not the layer has one
        let (name, input, weight, bias) = PROJECTIONS[p];
        refuse_overflow_f32(values, cols, name, &format!("{input}·{weight} + {bias}"))
    }

    fn refuse_gradient(values: &[f32], cols: usize, name: &str) -> Result<()> {
        if all_finite_f32(values) {
            return Ok(());
        }
        refuse_overflow_f32(values, cols, name, "this gradient, a sum of products of finite gradients and weights,")
    }
}

/// Names the batch item in an error from one item's pass (`query[b]: …`); unbatched, unchanged.
pub(super) fn at_item(error: AttentionError, batched: bool, b: usize) -> AttentionError {
    if !batched {
        return error;
    }
    let message = format!("in batch item {b}: {}", error.message());
    match error {
        AttentionError::Type(_) => AttentionError::Type(message),
        AttentionError::Range(_) => AttentionError::Range(message),
        AttentionError::State(_) => AttentionError::State(message),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ForwardOptions, LayerConfig, MultiHeadAttention};
    use super::*;
    use crate::matrix::Matrix;
    use crate::testing::seeded_matrix;

    fn layer(c: usize, h: usize) -> MultiHeadAttention {
        MultiHeadAttention::new(&LayerConfig::new(c, h)).unwrap()
    }

    fn filled(rows: usize, cols: usize, x: f64) -> Matrix {
        Matrix::new(rows, cols, vec![x; rows * cols]).unwrap()
    }

    fn range_message<T: std::fmt::Debug>(r: Result<T>) -> String {
        match r {
            Err(AttentionError::Range(m)) => m,
            other => panic!("expected a RangeError, got {other:?}"),
        }
    }

    fn forward(layer: &mut MultiHeadAttention, x: &[Matrix], batched: bool) -> Result<Vec<Matrix>> {
        let options = ForwardOptions { batched, ..ForwardOptions::default() };
        layer.forward(x, x, x, &options).map(|o| o.output)
    }

    #[test]
    fn inputs_of_1e308_are_refused_at_the_projection() {
        let mut l = layer(4, 2);
        let x = filled(3, 4, 1e308);
        let m = range_message(forward(&mut l, std::slice::from_ref(&x), false));
        let named = ["Q", "K", "V"].iter().zip(["query", "key", "value"]).any(|(p, x)| m.starts_with(&format!("{p}[0][")) && m.contains(&format!("{x} row 0 · W_{p} column")));
        assert!(named && m.contains("overflows to"), "{m}");
        // the layer keeps working, and backward has no forward to differentiate
        assert!(forward(&mut l, &[seeded_matrix(3, 4, 1)], false).is_ok());
    }

    #[test]
    fn overflowing_scores_outputs_and_batch_items_are_named() {
        let mut l = layer(2, 1);
        let mut w = l.weights().into_owned();
        w.w_q = Matrix::identity(2);
        w.w_k = Matrix::identity(2);
        w.w_v = Matrix::identity(2);
        w.w_o = filled(2, 2, 1e300);
        l.set_weights(w.clone()).unwrap();
        // projections are finite (1e160), their dot product is not
        let m = range_message(forward(&mut l, &[filled(2, 2, 1e160)], false));
        assert!(m.starts_with("scores_0[0][0] overflows to Infinity: the dot product of Q_0 row 0 and K_0 row 0"), "{m}");
        // scores finite, concat·W_O is 2·1e10·1e300
        let m = range_message(forward(&mut l, &[filled(2, 2, 1e10)], false));
        assert!(m.starts_with("output[0][0] overflows to Infinity: concat row 0 · W_O column 0 + b_O[0] is too large"), "{m}");
        let items = [seeded_matrix(2, 2, 3), filled(2, 2, 1e10)];
        let m = range_message(forward(&mut l, &items, true));
        assert!(m.starts_with("in batch item 1: output[0][0] overflows"), "{m}");
    }

    #[test]
    fn overflowing_gradients_are_refused_and_not_stored() {
        let mut l = layer(2, 1);
        let mut w = l.weights().into_owned();
        w.w_o = filled(2, 2, 1e300);
        l.set_weights(w).unwrap();
        let x = [seeded_matrix(3, 2, 5)];
        forward(&mut l, &x, false).unwrap();
        let m = range_message(l.backward(&[filled(3, 2, 1e10)], false));
        assert!(m.starts_with("d_concat[0][0] overflows to Infinity"), "{m}");
        assert!(l.grads().is_err(), "a refused backward must not store gradients");
        // finite gradients of W_O can still sum past f64 over rows: concatᵀ·gradOutput
        let mut l = layer(2, 1);
        let x = [filled(3, 2, 1e150)];
        if forward(&mut l, &x, false).is_ok() {
            let m = range_message(l.backward(&[filled(3, 2, 1e300)], false));
            assert!(m.contains("overflows to"), "{m}");
        }
        let ok = l.backward(&[seeded_matrix(3, 2, 9)], false);
        assert!(ok.is_ok() || matches!(ok, Err(AttentionError::State(_))));
    }

    #[test]
    fn working_sets_beyond_the_budget_are_refused_before_allocating() {
        // 2^15 × 2^15 × 4 weights would be 32 GiB: refused, not attempted
        let m = match MultiHeadAttention::new(&LayerConfig::new(1 << 15, 1)) {
            Err(AttentionError::Range(m)) => m,
            other => panic!("{other:?}"),
        };
        assert!(m.starts_with("a layer with embedDim = 32768"), "{m}");
        // 8 heads of 2^14 × 2^14 weights kept for backward (2^31 values): refused
        let mut l = layer(8, 8);
        let x = Matrix::zeros(1 << 14, 8);
        let m = range_message(forward(&mut l, std::slice::from_ref(&x), false));
        assert!(m.starts_with("MultiHeadAttention.forward with a batch of 1, T_q = 16384"), "{m}");
        let m = range_message(l.trace(&x, &x, &x, &crate::mask::Mask::none()));
        assert!(m.contains("MultiHeadAttention.forward"), "{m}");
        // smaller calls run
        let x = seeded_matrix(128, 8, 2);
        assert!(forward(&mut l, std::slice::from_ref(&x), false).is_ok());
        assert!(l.backward(std::slice::from_ref(&x), false).is_ok());
    }
}
