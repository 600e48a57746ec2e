//! The backward pass of [`MultiHeadAttention`] in either precision, written once over
//! [`LayerKernel`]: the forward's passes (`forward.rs`) in reverse, each differentiating one
//! forward line (quoted above it). The loss is taken to be `Σ output ⊙ gradOutput` summed over
//! the batch, so parameter gradients add up over items (each item's product, then added). With
//! threads the items run on the pool, each into weight gradients of its own (each product's whole
//! sum), added into the total in item order (the biases row by row): the additions, in the order,
//! of one pass in order, so the same bits on any number of threads.
//!
//! The products are [`LayerKernel`]'s (f64 in the spec's order, f32 on the SIMD kernels). RoPE: the
//! gradients of Q and K are rotated back by [`crate::engine::Rope::rotate`] with `inverse`, in the
//! precision of the pass (for f32: the same f64 angles as the forward, cos and sin rounded once, the
//! pair arithmetic in f32).
//!
//! ## Accuracy
//!
//! Let `u = 2^-24` (f32's unit roundoff) and `γ_K = K·u / (1 − K·u)`. Every gradient entry `g`
//! this pass returns satisfies, for results in f32's normal range,
//!
//! ```text
//! |g − g*| ≤ γ_K · m
//! ```
//!
//! where `g*` is the exact derivative of the f32 forward's kept values (what [`MultiHeadAttention::backward`]
//! computes, in f64, after the same forward), `m` the same entry computed with every operand
//! replaced by its absolute value (for the softmax: `m_s = |w| ⊙ (m_w + Σ_k |w_k|·m_w,k)`; for
//! RoPE: `|a|·|cos| + |b|·|sin|`), and `K` the number of roundings along the entry's chain: the
//! length of every dot product on the way, plus 1 for the dropout factor, `T_k + 2` for the
//! softmax's row sum, subtraction and product, 3 for the scale (f32's `1/√d_head` is within `2u`
//! of f64's, then a product), 3 for RoPE, and `g − 1` for the sum over a group's query heads
//! (`g = numHeads / numKVHeads`). The resulting `K` of each gradient is tabled in `docs/api.md`
//! (`backward`, **Accuracy**), and written out in `within_the_bound` below.
//!
//! (This is the forward-error bound of a chain of sums, first order in `u` per step, each sum
//! `Σ x_i` in any order within `γ_n·Σ|x_i|`.) The tests below check it entry by entry over
//! shapes with blocks past 64 rows, GQA, RoPE, masks, dropout, batches, bias and cross-attention.
//! Against the f64 forward and backward (the forward in f64 too) the gradients differ further by
//! the f32 forward's own rounding carried through the softmax; the oracle tests bound that with
//! their f32 error model.

use super::forward::{flatten, item_name, shapes, unflatten};
use super::kept::{BatchGrads, ForwardCache, ItemCache};
use super::kernel::{LayerKernel, Prepared};
use super::limits::{at_item, check_backward, PROJECTIONS};
use super::{LastForward, MultiHeadAttention, Weights};
use crate::attention::attention_scale;
use crate::engine::Batch;
use crate::error::{AttentionError, Result};
use crate::limits::{non_finite_name, refuse_overflow_f32};
use crate::matrix::Matrix;
use crate::precision::Precision;
use crate::real::Real;
use crate::softmax::stable_softmax_backward_row;

/// The gradients with respect to the three inputs of the last forward pass, one matrix per
/// batch item. For self-attention (`key` and `value` defaulted to `query`) the gradient with
/// respect to the shared input is `query + key + value`.
pub type InputGrads = BatchGrads<Matrix>;

impl MultiHeadAttention {
    /// [`Self::backward_batch`] on f64 matrices, one `(T_q, C)` per item (each item's shape checked).
    pub fn backward(&mut self, grad_output: &[Matrix], batched: bool) -> Result<InputGrads> {
        let (c, (t_q, t_k)) = (self.embed_dim, self.check_gradient_items(&shapes(grad_output), batched)?);
        let (data, ..) = flatten(grad_output);
        let BatchGrads { query, key, value } = self.backward_batch(Batch::new(&data, grad_output.len(), t_q, c), batched)?;
        Ok(InputGrads { query: unflatten(query, t_q, c)?, key: unflatten(key, t_k, c)?, value: unflatten(value, t_k, c)? })
    }

    /// Checks a gradient given by its items' shapes `(rows, cols)` against the last forward (nothing
    /// when there is none: [`Self::backward_batch`] says so); returns that forward's `(T_q, T_k)`.
    pub fn check_gradient_items(&self, shapes: &[(usize, usize)], batched: bool) -> Result<(usize, usize)> {
        let Some(kept) = &self.kept else { return Ok((0, 0)) };
        let (forward_batched, n, t_q, t_k) = crate::by_precision!(kept, c => (c.batched, c.items.len(), c.t_q, c.t_k));
        check_gradient_shape(batched, forward_batched, shapes.len(), n, shapes.iter().copied(), t_q, self.embed_dim)?;
        Ok((t_q, t_k))
    }

    /// Differentiates the last forward pass for `grad_output` (`[B, T_q, C]`, `batched` as in
    /// that forward), stores the parameter gradients (read them with [`MultiHeadAttention::grads`],
    /// in f64) and returns the input gradients flat ([`BatchGrads`]).
    /// Dropout reuses the forward's mask. Can be called again for the same forward with another
    /// gradient. Across precisions: after an f32 training forward an f64 `grad_output`
    /// differentiates what it kept, widened exactly (the f64 derivative of the f32 forward); after
    /// an f64 forward an f32 `grad_output` is widened exactly, and the input gradients rounded once.
    pub fn backward_batch<F: LayerKernel>(&mut self, grad_output: Batch<F>, batched: bool) -> Result<BatchGrads<F>> {
        let Some(cache) = self.kept.as_ref().and_then(F::get) else { return self.backward_across(grad_output, batched) };
        let (grads, inputs) = self.differentiate(cache, grad_output, batched)?;
        self.grads = Some(F::wrap(grads));
        Ok(inputs)
    }

    /// `backward` when the last forward kept the other precision, in f64 ([`Self::backward_f64`]) with
    /// `gradOutput` widened exactly; the input gradients rounded once to `F` (a RangeError names the
    /// first beyond it, as `backward(…).query[r][c]`).
    fn backward_across<F: LayerKernel>(&mut self, grad_output: Batch<F>, batched: bool) -> Result<BatchGrads<F>> {
        let wide: Vec<f64> = grad_output.data.iter().map(|x| x.to_f64()).collect();
        let inputs = self.backward_f64(Batch::new(&wide, grad_output.items, grad_output.rows, grad_output.cols), batched)?;
        let (items, c) = (grad_output.items, self.embed_dim);
        let narrow = |values: Vec<f64>, name: &str| -> Result<Vec<F>> {
            let out: Vec<F> = values.iter().map(|&x| F::from_f64(x)).collect();
            if !F::all_finite(&out) {
                refuse_narrowed(&values, (items, c), name, batched)?;
            }
            Ok(out)
        };
        Ok(BatchGrads { query: narrow(inputs.query, "query")?, key: narrow(inputs.key, "key")?, value: narrow(inputs.value, "value")? })
    }

    /// The backward in f64 over what the last forward kept, widened if f32; the parameter gradients stored in f64.
    fn backward_f64(&mut self, grad_output: Batch<f64>, batched: bool) -> Result<BatchGrads<f64>> {
        // nothing kept: a `State` error saying why
        let kept = self.kept.as_ref().ok_or_else(|| {
            AttentionError::State(match self.last_forward {
                LastForward::Evaluation => "backward cannot differentiate a Float32Array forward in evaluation mode (the f32 kernels keep no intermediates): run forward with { training: true }, which keeps them, or with number[][] or Float64Array input".into(),
                LastForward::Cached => "backward cannot differentiate a forward with options.cache: decoding keeps no intermediates; run forward without a cache (causal: true over the whole sequence) to train".into(),
                _ => "backward needs the forward pass it differentiates: call forward first (setWeights discards the last forward pass)".into(),
            })
        })?;
        let widened = f32::get(kept).map(ForwardCache::widen);
        let cache = widened.as_ref().or(f64::get(kept)).expect("a forward keeps in one of the two precisions");
        let (grads, inputs) = self.differentiate(cache, grad_output, batched)?;
        self.grads = Some(f64::wrap(grads));
        Ok(inputs)
    }

    /// The backward over `cache`: `grad_output`'s shape and the working set checked, then the
    /// parameter gradients and the input gradients, or the first overflow.
    pub(super) fn differentiate<F: LayerKernel>(&self, cache: &ForwardCache<F>, grad_output: Batch<F>, batched: bool) -> Result<(Weights<F>, BatchGrads<F>)> {
        let (c, t_q, t_k, n) = (self.embed_dim, cache.t_q, cache.t_k, cache.items.len());
        let shapes = std::iter::repeat_n((grad_output.rows, grad_output.cols), grad_output.items.min(1));
        check_gradient_shape(batched, cache.batched, grad_output.items, n, shapes, t_q, c)?;
        check_backward(self, n, t_q, t_k, cache.keep_scale.is_some(), F::PARAMETER_ROWS as u128)?;
        let w = F::prepared(self, true); // with the transposes, packed once per set of weights
        let kv_c = self.kv_heads * self.head_dimensions;
        let mut grads = Weights::zeros(c, kv_c, w.b.is_some());
        let mut inputs = [vec![F::ZERO; n * t_q * c], vec![F::ZERO; n * t_k * c], vec![F::ZERO; n * t_k * c]];
        // threads: a few items at a time, each into gradients of its own, added in item order (module docs)
        let split = crate::parallel::worth_splitting(n, n * (t_q + 2 * t_k) * c * c);
        let at_once = if split { crate::parallel::threads() } else { 1 };
        let (q_len, k_len) = (t_q * c, t_k * c);
        for first in (0..n).step_by(at_once) {
            let count = at_once.min(n - first);
            let results = crate::parallel::map(count, split, |i| {
                let b = first + i;
                let mut item_grads = Weights::zeros(c, kv_c, false);
                let mut d_x = [vec![F::ZERO; q_len], vec![F::ZERO; k_len], vec![F::ZERO; k_len]];
                let d_qkv = self.backward_item(&w, cache, &cache.items[b], grad_output.item(b), &mut item_grads, &mut Scratch::default(), d_x.each_mut().map(|d| &mut d[..]));
                d_qkv.map(|d_qkv| (item_grads, d_x, d_qkv)).map_err(|e| at_item(e, batched, b))
            });
            for (i, result) in results.into_iter().enumerate() {
                let b = first + i;
                let (item_grads, d_x, [d_q, d_k, d_v]) = result?;
                for (sum, item) in [(&mut grads.w_q, &item_grads.w_q), (&mut grads.w_k, &item_grads.w_k), (&mut grads.w_v, &item_grads.w_v), (&mut grads.w_o, &item_grads.w_o)] {
                    sum.data_mut().iter_mut().zip(item.data()).for_each(|(s, &x)| *s += x);
                }
                if let Some(biases) = &mut grads.biases {
                    add_column_sums(&mut biases.b_o, grad_output.item(b), c);
                    add_column_sums(&mut biases.b_q, &d_q, c);
                    add_column_sums(&mut biases.b_k, &d_k, kv_c);
                    add_column_sums(&mut biases.b_v, &d_v, kv_c);
                }
                for ((all, d), len) in inputs.iter_mut().zip(&d_x).zip([q_len, k_len, k_len]) {
                    all[b * len..(b + 1) * len].copy_from_slice(d);
                }
            }
        }
        // every parameter gradient must be finite (the sums over the batch can overflow too): a
        // RangeError names the first one that is not, `grads().W_Q[i][j]` or `grads().b_Q[j]`
        for (name, data) in grads.tensors() {
            if F::all_finite(data) {
                continue;
            }
            let Some(at) = data.iter().position(|x| !x.is_finite()) else { continue };
            let cols = (data.len() / grads.w_q.rows()).max(1); // every weight has C rows
            let place = if name.starts_with('W') { format!("[{}][{}]", at / cols, at % cols) } else { format!("[{at}]") };
            return Err(AttentionError::range_error(format!(
                "grads().{name}{place} overflows to {}{}: the gradient summed over the batch is beyond the largest {}; scale the inputs or gradOutput down{}",
                non_finite_name(data[at].to_f64()),
                F::IN_PRECISION,
                F::LARGEST,
                F::ADVICE
            )));
        }
        let [query, key, value] = inputs;
        Ok((grads, BatchGrads { query, key, value }))
    }

    /// One batch item: adds its weights' gradients into `grads`, writes `(d x_q, d x_k, d x_v)`,
    /// row-major `(T_q, C)`, `(T_k, C)`, `(T_k, C)`, into `d_x`, and returns `(d_Q, d_K, d_V)`
    /// (whose column sums, and `d_output`'s, are the biases' gradients).
    // one body per precision, not one per caller (the threads split and the loop in order)
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn backward_item<F: LayerKernel>(
        &self,
        w: &Prepared<F>,
        cache: &ForwardCache<F>,
        item: &ItemCache<F>,
        d_output: &[F],
        grads: &mut Weights<F>,
        s: &mut Scratch<F>,
        d_x: [&mut [F]; 3],
    ) -> Result<[Vec<F>; 3]> {
        let (c, d_head) = (self.embed_dim, self.head_dimensions);
        let kv_c = self.kv_heads * d_head;
        let (t_q, t_k) = (cache.t_q, cache.t_k);
        let scale = attention_scale::<F>(d_head);
        let k = &mut s.kernel;

        // 8. output = concat·W_O + b_O
        let mut d_concat = vec![F::ZERO; t_q * c];
        F::times_transposed(d_output, t_q, w.t[3], &mut d_concat); // (T_q, C) = (T_q, C)·(C, C)ᵀ
        F::refuse_gradient(&d_concat, c, "d_concat")?;
        F::at_b(c, t_q, c, &item.concat, c, d_output, c, grads.w_o.data_mut(), c, true, k); // (C, C) += concatᵀ·d_output

        let mut d_q = vec![F::ZERO; t_q * c]; // (T_q, C): head i's d_Q_h in its columns
        let mut d_k = vec![F::ZERO; t_k * kv_c]; // (T_k, C_kv): per K/V head, the sum over its query heads
        let mut d_v = vec![F::ZERO; t_k * kv_c]; // (T_k, C_kv)
        let group = self.number_of_heads / self.kv_heads;
        s.used.resize(t_q * t_k, F::ZERO);
        s.d_used.resize(t_q * t_k, F::ZERO);
        s.d_scores.resize(t_q * t_k, F::ZERO);
        for (head, kept) in item.heads.iter().enumerate() {
            let start = head * d_head;
            let kv_start = (head / group) * d_head;
            // the first query head of a group writes its K/V head's gradients, the others add theirs
            // (copying the first keeps the bits of multi-head attention, where every group has one head)
            let add = head % group != 0;
            // (Q_h, K_g, V_g: columns start.. of Q, kv_start.. of K and V, rows C and C_kv apart)
            // 6. context_h = used·V_g, into columns start .. start + d_head of concat: d_context is d_concat's
            let d_context = &d_concat[start..];
            kept.used_into(cache.keep_scale, &mut s.used);
            F::a_bt(t_q, d_head, t_k, d_context, c, &item.v[kv_start..], kv_c, &mut s.d_used, t_k, k); // (T_q, T_k) = d_context·V_gᵀ
            F::at_b(t_k, t_q, d_head, &s.used, t_k, d_context, c, &mut d_v[kv_start..], kv_c, add, k); // (T_k, d_head) = usedᵀ·d_context
            F::refuse_gradient(&s.d_used, t_k, &format!("d_weights_{head}"))?;
            // 5. used = weights ⊙ factor (the same dropout flags as the forward)
            if let (Some(flags), Some(keep_scale)) = (&kept.kept, cache.keep_scale) {
                for (d, &kept) in s.d_used.iter_mut().zip(flags) {
                    *d = *d * if kept { keep_scale } else { F::ZERO }; // (T_q, T_k)
                }
            }
            // 4. weights = StableSoftmax(scores · 1/√d_head) (masked entries and empty rows get 0)
            for ((w, d_w), d_s) in kept.weights.chunks_exact(t_k).zip(s.d_used.chunks_exact(t_k)).zip(s.d_scores.chunks_exact_mut(t_k)) {
                stable_softmax_backward_row(w, d_w, d_s); // (T_q, T_k), row by row: d_scaled
            }
            s.d_scores.iter_mut().for_each(|x| *x = *x * scale); // (T_q, T_k): d_scores = d_scaled · 1/√d_head
            F::refuse_gradient(&s.d_scores, t_k, &format!("d_scores_{head}"))?;
            // 2. scores = Q_h·K_gᵀ
            F::a_b(t_q, t_k, d_head, &s.d_scores, t_k, &item.k[kv_start..], kv_c, &mut d_q[start..], c, k); // (T_q, d_head) = d_scores·K_g
            F::at_b(t_k, t_q, d_head, &s.d_scores, t_k, &item.q[start..], c, &mut d_k[kv_start..], kv_c, add, k); // (T_k, d_head) = d_scoresᵀ·Q_h
            // 1. Q_h, K_g, V_g are column slices of Q, K, V; K_g and V_g are shared by the group's
            // query heads, so their gradients add up (the `add` above)
        }
        // 0. Q and K were rotated by RoPE: rotate their gradients back (a rotation's transpose)
        if let Some(rope) = self.rope {
            rope.rotate(&mut d_q, c, d_head, cache.positions.query, true);
            rope.rotate(&mut d_k, kv_c, d_head, cache.positions.key, true);
        }
        F::refuse_gradient(&d_q, c, "d_Q")?;
        F::refuse_gradient(&d_k, kv_c, "d_K")?;
        F::refuse_gradient(&d_v, kv_c, "d_V")?;

        // 0. Q = x_q·W_Q + b_Q, K = x_k·W_K + b_K, V = x_v·W_V + b_V
        // (T_q, C) = d_Q·W_Qᵀ; (T_k, C) = d_K·W_Kᵀ and d_V·W_Vᵀ, (T_k, C_kv)·(C, C_kv)ᵀ
        for (i, (d_x, (d, rows))) in d_x.into_iter().zip([(&d_q, t_q), (&d_k, t_k), (&d_v, t_k)]).enumerate() {
            F::times_transposed(d, rows, w.t[i], d_x);
            F::refuse_gradient(d_x, c, &format!("backward(…).{}", PROJECTIONS[i].1))?;
        }
        F::at_b(c, t_q, c, &item.x_q, c, &d_q, c, grads.w_q.data_mut(), c, true, k); // (C, C) += x_qᵀ·d_Q
        if item.x_k.is_none() && item.x_v.is_none() {
            // self-attention: x_k = x_v = x_q, whose transpose the precision may still hold
            F::at_b_same_a(c, t_k, kv_c, &item.x_q, c, &d_k, kv_c, grads.w_k.data_mut(), kv_c, true, k); // (C, C_kv) += x_kᵀ·d_K
            F::at_b_same_a(c, t_k, kv_c, &item.x_q, c, &d_v, kv_c, grads.w_v.data_mut(), kv_c, true, k); // (C, C_kv) += x_vᵀ·d_V
        } else {
            F::at_b(c, t_k, kv_c, item.x_k.as_deref().unwrap_or(&item.x_q), c, &d_k, kv_c, grads.w_k.data_mut(), kv_c, true, k); // (C, C_kv) += x_kᵀ·d_K
            F::at_b(c, t_k, kv_c, item.x_v.as_deref().unwrap_or(&item.x_q), c, &d_v, kv_c, grads.w_v.data_mut(), kv_c, true, k); // (C, C_kv) += x_vᵀ·d_V
        }
        Ok([d_q, d_k, d_v])
    }
}

/// Buffers reused across heads and items: the products' own, and one head's `(T_q, T_k)`
/// `used` weights and gradients.
#[derive(Default)]
struct Scratch<F: LayerKernel> {
    kernel: F::Scratch,
    used: Vec<F>,
    d_used: Vec<F>,
    d_scores: Vec<F>,
}

/// The RangeError of f64 input gradients `values` (`items` of `c` columns, called `name`) beyond f32
/// once rounded (the f64 gradients were refused if not finite, so only f32 can be beyond), naming the
/// first as `backward(…).query[r][c]`; one body for both precisions' `backward_across`.
fn refuse_narrowed(values: &[f64], (items, c): (usize, usize), name: &str, batched: bool) -> Result<()> {
    let rounded: Vec<f32> = values.iter().map(|&x| x as f32).collect();
    for (b, item) in rounded.chunks((values.len() / items.max(1)).max(1)).enumerate() {
        refuse_overflow_f32(item, c, &format!("backward(…).{name}"), "its value, computed in f64,").map_err(|e| at_item(e, batched, b))?;
    }
    Ok(())
}

/// `target += the column sums of (rows × n) values` (summed from row 0 down from zero, then added).
fn add_column_sums<F: Real>(target: &mut [F], values: &[F], n: usize) {
    let mut sums = vec![F::ZERO; n];
    for row in values.chunks_exact(n) {
        sums.iter_mut().zip(row).for_each(|(s, &x)| *s += x);
    }
    target.iter_mut().zip(&sums).for_each(|(t, &s)| *t += s);
}

/// `gradOutput` has the last forward's layout, batch size and `(T_q, C)` per item (`shapes`, the
/// first one named when it differs).
pub(super) fn check_gradient_shape(batched: bool, forward_batched: bool, items: usize, n: usize, shapes: impl Iterator<Item = (usize, usize)>, t_q: usize, c: usize) -> Result<()> {
    if batched != forward_batched {
        let (got, want) = if batched { ("a batch [B, T, C]", "one [T, C] matrix") } else { ("one [T, C] matrix", "a batch [B, T, C]") };
        return Err(AttentionError::range_error(format!(
            "gradOutput is {got} but the last forward returned {want}; gradOutput must have the output's shape"
        )));
    }
    if items != n {
        return Err(AttentionError::range_error(format!("gradOutput has a batch of {items} but the last forward had {n} items")));
    }
    for (b, (rows, cols)) in shapes.enumerate() {
        if (rows, cols) != (t_q, c) {
            return Err(AttentionError::range_error(format!(
                "{} is {rows}×{cols} but the output was {t_q}×{c}; gradOutput must have the output's shape",
                item_name("gradOutput", batched, b)
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The f32 backward against the f64 derivative of the same kept values, entry by entry within
    //! the module docs' bound `γ_K·m`, and its errors.
    use super::super::{ForwardOptions, InputGrads, LayerConfig};
    use super::*;
    use crate::layer::kept::HeadCache;
    use crate::engine::Rope;
    use crate::mask::{BoolMatrix, Mask};
    use crate::precision::Precision;
    use crate::testing::{assert_within_bounds, seeded_matrix};

    const U32: f64 = 1.0 / (1u64 << 24) as f64;
    const U64: f64 = f64::EPSILON / 2.0;

    fn gamma(k: usize, u: f64) -> f64 {
        k as f64 * u / (1.0 - k as f64 * u)
    }

    fn abs(m: &Matrix) -> Matrix {
        Matrix::new(m.rows(), m.cols(), m.data().iter().map(|x| x.abs()).collect()).unwrap()
    }

    fn add_into(target: &mut [f64], addend: &[f64]) {
        target.iter_mut().zip(addend).for_each(|(t, &a)| *t += a);
    }

    /// `m` rotated back by RoPE in magnitudes: `|a|·|cos| + |b|·|sin|`, `|b|·|cos| + |a|·|sin|`.
    fn unrotated_magnitudes(rope: Rope, m: &Matrix, d: usize, position: usize) -> Matrix {
        let half = d / 2;
        // cos θ in column i and sin θ in column i + d/2 of every head: (1, 0) rotated
        let mut unit: Matrix = Matrix::new(m.rows(), m.cols(), (0..m.rows() * m.cols()).map(|n| if n % m.cols() % d < half { 1.0 } else { 0.0 }).collect()).unwrap();
        let cols = m.cols();
        rope.rotate(unit.data_mut(), cols, d, position, false);
        let mut out = m.clone();
        for r in 0..m.rows() {
            for head in 0..cols / d {
                for i in 0..half {
                    let (a, b) = (m.get(r, head * d + i).abs(), m.get(r, head * d + i + half).abs());
                    let (cos, sin) = (unit.get(r, head * d + i).abs(), unit.get(r, head * d + i + half).abs());
                    out.row_mut(r)[head * d + i] = a * cos + b * sin;
                    out.row_mut(r)[head * d + i + half] = b * cos + a * sin;
                }
            }
        }
        out
    }

    /// `m` of the module docs: `backward_item` with every operand replaced by its absolute value.
    fn magnitudes(layer: &MultiHeadAttention, cache: &ForwardCache<f64>, d_out: &[Matrix]) -> (InputGrads, Weights) {
        let w = layer.weights();
        let (d, h, kv_heads) = (layer.head_dimensions(), layer.number_of_heads(), layer.kv_heads());
        let group = h / kv_heads;
        let scale = attention_scale::<f64>(d);
        let mut params = Weights::zeros(layer.embed_dim(), kv_heads * d, w.biases.is_some());
        let mut inputs = InputGrads { query: vec![], key: vec![], value: vec![] };
        let (t_q, t_k, c) = (cache.t_q, cache.t_k, layer.embed_dim());
        let kv_c = kv_heads * d;
        let m = |rows: usize, cols: usize, v: &[f64]| Matrix::new(rows, cols, v.to_vec()).unwrap();
        for (cached, g) in cache.items.iter().zip(d_out) {
            let item = Item {
                concat: m(t_q, c, &cached.concat),
                q: m(t_q, c, &cached.q),
                k: m(t_k, kv_c, &cached.k),
                v: m(t_k, kv_c, &cached.v),
                x_q: m(t_q, c, &cached.x_q),
                x_k: m(t_k, c, cached.x_k.as_deref().unwrap_or(&cached.x_q)),
                x_v: m(t_k, c, cached.x_v.as_deref().unwrap_or(&cached.x_q)),
            };
            let g = abs(g);
            let m_concat = g.matmul_transposed(&abs(&w.w_o)).unwrap();
            params.w_o.add_assign(&abs(&item.concat).transposed_matmul(&g).unwrap()).unwrap();
            if let Some(b) = &mut params.biases {
                add_into(&mut b.b_o, &g.column_sums());
            }
            let (mut m_q, mut m_k, mut m_v): (Vec<Matrix>, Vec<Matrix>, Vec<Matrix>) = (vec![], vec![], vec![]);
            for (head, kept) in cached.heads.iter().enumerate() {
                let (used, factor, weights) = head_matrices(kept, cache.keep_scale, t_q, t_k);
                let kv = head / group;
                let q_h = abs(&item.q.slice_columns(head * d, (head + 1) * d).unwrap());
                let k_h = abs(&item.k.slice_columns(kv * d, (kv + 1) * d).unwrap());
                let v_h = abs(&item.v.slice_columns(kv * d, (kv + 1) * d).unwrap());
                let m_context = m_concat.slice_columns(head * d, (head + 1) * d).unwrap();
                let m_used = m_context.matmul_transposed(&v_h).unwrap();
                let m_v_h = abs(&used).transposed_matmul(&m_context).unwrap();
                let m_weights = match &factor {
                    Some(factor) => m_used.hadamard(&abs(factor)).unwrap(),
                    None => m_used,
                };
                let mut m_scaled = Matrix::zeros(m_weights.rows(), m_weights.cols());
                for r in 0..m_weights.rows() {
                    let (wr, gr) = (weights.row(r), m_weights.row(r));
                    let mean: f64 = wr.iter().zip(gr).map(|(a, b)| a.abs() * b).sum();
                    for (j, out) in m_scaled.row_mut(r).iter_mut().enumerate() {
                        *out = wr[j].abs() * (gr[j] + mean);
                    }
                }
                let m_scores = m_scaled.scale(scale);
                m_q.push(m_scores.matmul(&k_h).unwrap());
                let m_k_h = m_scores.transposed_matmul(&q_h).unwrap();
                if head % group == 0 {
                    m_k.push(m_k_h);
                    m_v.push(m_v_h);
                } else {
                    m_k[kv].add_assign(&m_k_h).unwrap();
                    m_v[kv].add_assign(&m_v_h).unwrap();
                }
            }
            let (mut m_q, mut m_k, m_v) = (Matrix::concat_columns(&m_q).unwrap(), Matrix::concat_columns(&m_k).unwrap(), Matrix::concat_columns(&m_v).unwrap());
            if let Some(rope) = layer.rope() {
                m_q = unrotated_magnitudes(rope, &m_q, d, cache.positions.query);
                m_k = unrotated_magnitudes(rope, &m_k, d, cache.positions.key);
            }
            inputs.query.push(m_q.matmul_transposed(&abs(&w.w_q)).unwrap());
            inputs.key.push(m_k.matmul_transposed(&abs(&w.w_k)).unwrap());
            inputs.value.push(m_v.matmul_transposed(&abs(&w.w_v)).unwrap());
            params.w_q.add_assign(&abs(&item.x_q).transposed_matmul(&m_q).unwrap()).unwrap();
            params.w_k.add_assign(&abs(&item.x_k).transposed_matmul(&m_k).unwrap()).unwrap();
            params.w_v.add_assign(&abs(&item.x_v).transposed_matmul(&m_v).unwrap()).unwrap();
            if let Some(b) = &mut params.biases {
                add_into(&mut b.b_q, &m_q.column_sums());
                add_into(&mut b.b_k, &m_k.column_sums());
                add_into(&mut b.b_v, &m_v.column_sums());
            }
        }
        (inputs, params)
    }

    /// One item's kept values as matrices.
    struct Item {
        concat: Matrix,
        q: Matrix,
        k: Matrix,
        v: Matrix,
        x_q: Matrix,
        x_k: Matrix,
        x_v: Matrix,
    }

    /// A head's `used` weights, its dropout factors (0 or the scale) and its softmax weights, `(T_q, T_k)`.
    fn head_matrices(head: &HeadCache<f64>, keep_scale: Option<f64>, t_q: usize, t_k: usize) -> (Matrix, Option<Matrix>, Matrix) {
        let mut used = vec![0.0; t_q * t_k];
        head.used_into(keep_scale, &mut used);
        let factor = head.kept.as_ref().zip(keep_scale).map(|(kept, s)| Matrix::new(t_q, t_k, kept.iter().map(|&k| if k { s } else { 0.0 }).collect()).unwrap());
        (Matrix::new(t_q, t_k, used).unwrap(), factor, Matrix::new(t_q, t_k, head.weights.clone()).unwrap())
    }

    /// A batch of seeded values in f32, flat `[B, T, C]`.
    fn values(b: usize, t: usize, c: usize, seed: u64) -> Vec<f32> {
        (0..b).flat_map(|i| seeded_matrix(t, c, seed + 100 * i as u64).into_data()).map(|x| x as f32).collect()
    }

    fn flat(items: &[Matrix]) -> Vec<f64> {
        items.iter().flat_map(|m| m.data().to_vec()).collect()
    }

    /// A layer from `config` with seeded non-zero biases (zero ones would hide bias mistakes).
    fn layer(config: &LayerConfig) -> MultiHeadAttention {
        let mut layer = MultiHeadAttention::new(config).unwrap();
        let mut weights = layer.weights().into_owned();
        if let Some(b) = &mut weights.biases {
            for (i, v) in [&mut b.b_q, &mut b.b_k, &mut b.b_v, &mut b.b_o].into_iter().enumerate() {
                *v = seeded_matrix(1, v.len(), 60 + i as u64).data().iter().map(|x| x * 0.5).collect();
            }
        }
        layer.set_weights(weights).unwrap();
        layer
    }

    /// One case: the f32 training forward, the f32 backward, then the f64 one (the f64 derivative of
    /// the same kept values); every gradient within `(γ_K(2^-24) + γ_K(2^-53))·m`. Returns the
    /// largest `|got − want| / bound` over the gradients.
    #[allow(clippy::too_many_arguments)]
    fn within_the_bound(label: &str, config: &LayerConfig, b: usize, t_q: usize, t_k: usize, cross: bool, mask: Mask, batched: bool) -> f64 {
        let mut layer = layer(config);
        let (c, d) = (layer.embed_dim(), layer.head_dimensions());
        let kv_c = layer.kv_heads() * d;
        let g_heads = layer.number_of_heads() / layer.kv_heads();
        let x_q = values(b, t_q, c, 1);
        let (x_k, x_v) = if cross { (values(b, t_k, c, 2), values(b, t_k, c, 3)) } else { (x_q.clone(), x_q.clone()) };
        let options = ForwardOptions { mask, training: true, batched, ..ForwardOptions::default() };
        layer
            .forward_batch(Batch::new(&x_q, b, t_q, c), Batch::new(&x_k, b, t_k, c), Batch::new(&x_v, b, t_k, c), &options)
            .unwrap();
        let g = values(b, t_q, c, 4);
        let got = layer.backward_batch(Batch::new(&g, b, t_q, c), batched).unwrap();
        let got_params = layer.grads().unwrap().into_owned();
        let d_out: Vec<Matrix> = (0..b).map(|i| Matrix::new(t_q, c, g[i * t_q * c..(i + 1) * t_q * c].iter().map(|&x| f64::from(x)).collect()).unwrap()).collect();
        let Some(kept) = layer.kept.as_ref().and_then(f32::get) else { panic!("an f32 training forward keeps") };
        let cache = kept.widen();
        let (m_inputs, m_params) = magnitudes(&layer, &cache, &d_out);
        let want = layer.backward(&d_out, batched).unwrap();
        let want_params = layer.grads().unwrap().into_owned();
        // K per gradient (module docs)
        let k_q = c + d + 2 * t_k + 9;
        let k_k = c + d + t_k + t_q + g_heads + 8;
        let k_v = c + t_q + g_heads - 1;
        let ks = [("query", k_q + c), ("key", k_k + kv_c), ("value", k_v + kv_c)];
        let mut worst = 0.0f64;
        let mut check = |name: &str, k: usize, got: &[f64], want: &[f64], m: &[f64]| {
            let bound: Vec<f64> = m.iter().map(|&m| (gamma(k, U32) + gamma(k, U64)) * m).collect();
            let ratio = assert_within_bounds(&format!("{label}: {name}"), got, want, &bound);
            worst = worst.max(ratio);
        };
        for ((name, k), (got, (want, m))) in ks.iter().zip([
            (&got.query, (&want.query, &m_inputs.query)),
            (&got.key, (&want.key, &m_inputs.key)),
            (&got.value, (&want.value, &m_inputs.value)),
        ]) {
            let got: Vec<f64> = got.iter().map(|&x| f64::from(x)).collect();
            check(name, *k, &got, &flat(want), &flat(m));
        }
        let param_k = |name: &str| match name {
            "W_Q" | "b_Q" => k_q + t_q + b,
            "W_K" | "b_K" | "W_V" | "b_V" => (if name.ends_with('K') { k_k } else { k_v }) + t_k + b,
            _ => t_q + b,
        };
        for (((name, got), (_, want)), (_, m)) in got_params.tensors().into_iter().zip(want_params.tensors()).zip(m_params.tensors()) {
            check(&format!("grads().{name}"), param_k(name), got, want, m);
        }
        eprintln!("{label}: worst |f32 − f64| / bound = {worst:.4}");
        worst
    }

    #[test]
    fn a_gradient_of_the_wrong_shape_is_refused_across_precisions() {
        // an f64 gradOutput after an f32 training forward, and an f32 one after an f64 forward
        let config = LayerConfig::new(4, 2);
        let x = values(1, 3, 4, 1);
        let options = ForwardOptions { training: true, ..ForwardOptions::default() };
        let mut layer = MultiHeadAttention::new(&config).unwrap();
        layer.forward_batch(Batch::new(&x, 1, 3, 4), Batch::new(&x, 1, 3, 4), Batch::new(&x, 1, 3, 4), &options).unwrap();
        let short = vec![1.0f64; 8];
        let err = layer.backward_batch(Batch::new(&short, 1, 2, 4), false).unwrap_err();
        assert!(err.message().starts_with("gradOutput is 2×4 but the output was 3×4"), "{err}");
        let wide: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        layer.forward_batch(Batch::new(&wide, 1, 3, 4), Batch::new(&wide, 1, 3, 4), Batch::new(&wide, 1, 3, 4), &options).unwrap();
        let err = layer.backward_batch(Batch::new(&[1.0f32; 8][..], 1, 2, 4), false).unwrap_err();
        assert!(err.message().starts_with("gradOutput is 2×4 but the output was 3×4"), "{err}");
        assert!(layer.grads().is_err(), "a refused backward stores nothing");
    }

    #[test]
    fn all_finite_sees_every_non_finite_value_in_lanes_and_tail() {
        for len in [0, 1, 7, 8, 9, 17, 64] {
            assert!(<f32 as LayerKernel>::all_finite(&vec![f32::MAX; len]));
            for at in 0..len {
                for bad in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
                    let mut v = vec![-1.5f32; len];
                    v[at] = bad;
                    assert!(!<f32 as LayerKernel>::all_finite(&v), "{bad} at {at} of {len}");
                }
            }
        }
    }

    #[test]
    fn gradients_agree_with_the_f64_derivative_within_the_stated_bound() {
        let base = |c, h| LayerConfig { seed: 11, ..LayerConfig::new(c, h) };
        let t_q = 80;
        let table: Vec<bool> = (0..t_q * 130).map(|n| (n * 7919) % 5 != 0).collect();
        let explicit = Mask { causal: false, allowed: Some(BoolMatrix::new(t_q, 130, table).unwrap()), window: None };
        let window = Mask { causal: true, allowed: None, window: Some(17) };
        let mut worst = 0.0f64;
        // blocks past 64 rows, causal, bias, a batch of 2
        worst = worst.max(within_the_bound("causal", &base(16, 4), 2, 70, 70, false, Mask::causal(), true));
        // cross-attention with an explicit mask, grouped heads and dropout
        let gqa = LayerConfig { kv_heads: 2, dropout: 0.3, ..base(16, 4) };
        worst = worst.max(within_the_bound("cross+gqa+dropout", &gqa, 2, t_q, 130, true, explicit, true));
        // RoPE, a causal window, one K/V head, dropout, no bias, unbatched
        let rope = LayerConfig { kv_heads: 1, dropout: 0.1, bias: false, rope: Some(Rope::default()), ..base(32, 4) };
        worst = worst.max(within_the_bound("rope+window+mqa", &rope, 1, 100, 100, false, window, false));
        // RoPE on cross-attention (queries the last T_q of T_k positions), batch of 3
        let rope_cross = LayerConfig { rope: Some(Rope { base: 100.0 }), ..base(8, 2) };
        worst = worst.max(within_the_bound("rope+cross", &rope_cross, 3, 66, 129, true, Mask::none(), true));
        // tiny: one head, T = 3
        worst = worst.max(within_the_bound("tiny", &base(4, 1), 1, 3, 3, false, Mask::causal(), false));
        assert!(worst > 0.0, "the f32 backward rounded nothing: it cannot be computing in f32");
    }
}
