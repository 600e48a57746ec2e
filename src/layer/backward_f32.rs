//! The f32 backward pass of [`MultiHeadAttention`]: `backward.rs`'s `backward_item` line by line,
//! each block under the forward line it differentiates, with the products computed by the SIMD
//! kernels of [`crate::kernels`] (`gemm_packed` on packed panels) on what the f32 training forward
//! (`forward_f32.rs`) kept. The loss is `Σ output ⊙ gradOutput` summed over the batch, so the
//! parameter gradients add up over items (each item's product, then added, in f32; `grads()` returns them widened exactly to f64).
//!
//! How a product of the backward maps onto `gemm_packed` (`C = A·B`, A row-major with a row
//! stride, B packed into panels): `A·Bᵀ` packs B transposed ([`crate::kernels::gemm_transposed_b`]);
//! `Aᵀ·B` first writes Aᵀ out row-major (a copy of `rows × cols` values, small next to the
//! product). The weights' transposes are packed once per set of weights.
//!
//! RoPE: the gradients of Q and K are rotated back by [`Rope::rotate`] on the f32 rows with
//! `inverse`: the same f64 angles as the forward, cos and sin rounded once to f32, the pair
//! arithmetic in f32. It is the transpose of the rotation the forward applied (the same rounded
//! cos and sin), costs no widening of the gradients, and adds three roundings per entry to the
//! error bound below.
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
//! (`g = numHeads / numKVHeads`). With `d = headDim`, `B` the batch, `C_kv = numKVHeads·d`:
//!
//! | gradient | K |
//! |---|---|
//! | query | `2C + d + 2T_k + 9` |
//! | key | `C + C_kv + d + T_k + T_q + g + 8` |
//! | value | `C + C_kv + T_q + g − 1` |
//! | W_Q, b_Q | `C + d + 2T_k + 9 + T_q + B` |
//! | W_K, b_K | `C + d + 2T_k + T_q + g + 8 + B` |
//! | W_V, b_V | `C + T_q + T_k + g − 1 + B` |
//! | W_O, b_O | `T_q + B` |
//!
//! (This is the forward-error bound of a chain of sums, first order in `u` per step, each sum
//! `Σ x_i` in any order within `γ_n·Σ|x_i|`.) The tests below check it entry by entry over
//! shapes with blocks past 64 rows, GQA, RoPE, masks, dropout, batches, bias and cross-attention
//! (the tests at the end of this file).
//! Against the f64 forward and backward (the forward in f64 too) the gradients differ further by
//! the f32 forward's own rounding carried through the softmax; the oracle tests bound that with
//! their f32 error model.

use super::backward::InputGradsF32;
use super::forward::{item_name, ForwardCache, HeadCache, ItemCache};
use super::forward_f32::{narrow_items_f32, BatchF32, ForwardCacheF32, ItemCacheF32, PackedWeightsF32};
use super::limits::{at_item, check_backward_f32};
use super::{Biases, MultiHeadAttention, Weights};
use crate::attention::attention_scale;
use crate::error::{AttentionError, Result};
use crate::kernels::{gemm_packed, gemm_transposed_b, PackedPanels};
use crate::limits::{non_finite_name, refuse_overflow_f32};
use crate::matrix::Matrix;
use crate::softmax::stable_softmax_backward_row;

/// The parameter gradients in f32, laid out like [`Weights`]: W_Q `(C, C)`, W_K and W_V `(C, C_kv)`,
/// W_O `(C, C)`, and the biases. Widened to f64 (exactly) when `grads()` first reads them: a
/// training step that never reads them does not pay for `4·C²` f64 values.
#[derive(Clone, Debug)]
pub(super) struct GradsF32 {
    w: [Vec<f32>; 4],
    b: Option<[Vec<f32>; 4]>,
    c: usize,
    kv_c: usize,
    widened: std::sync::OnceLock<Weights>,
}

impl GradsF32 {
    /// The gradients as f64 [`Weights`] (every f32 is exactly an f64).
    pub(super) fn widened(&self) -> &Weights {
        self.widened.get_or_init(|| {
            let widen = |v: &[f32], cols: usize| Matrix::new(v.len() / cols, cols, v.iter().map(|&x| f64::from(x)).collect()).unwrap_or_else(|e| panic!("shape of the layer's weights: {e}"));
            let to_f64 = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
            let [w_q, w_k, w_v, w_o] = &self.w;
            Weights {
                w_q: widen(w_q, self.c),
                w_k: widen(w_k, self.kv_c),
                w_v: widen(w_v, self.kv_c),
                w_o: widen(w_o, self.c),
                biases: self.b.as_ref().map(|[b_q, b_k, b_v, b_o]| Biases { b_q: to_f64(b_q), b_k: to_f64(b_k), b_v: to_f64(b_v), b_o: to_f64(b_o) }),
            }
        })
    }
}

/// Buffers reused across heads and items: one packing of B, one transposed A, one head's
/// `(T_q, T_k)` gradients and its `used` weights.
#[derive(Default)]
struct Scratch {
    panels: PackedPanels,
    transposed: Vec<f32>,
    used: Vec<f32>,
    d_used: Vec<f32>,
    d_scores: Vec<f32>,
}

/// `out (m × n, rows ldc apart) = A·B` (`+=` with `accumulate`): A `(m × k)` rows `lda` apart,
/// B `(k × n)` rows `ldb` apart, packed into `panels` first.
#[allow(clippy::too_many_arguments)]
fn mul(m: usize, k: usize, n: usize, a: &[f32], lda: usize, b: &[f32], ldb: usize, out: &mut [f32], ldc: usize, accumulate: bool, panels: &mut PackedPanels) {
    panels.pack(b, ldb, k, n);
    gemm_packed(m, k, n, a, lda, panels, out, ldc, accumulate);
}

/// `out = Aᵀ·B` (`+=` with `accumulate`): A `(k × m)` rows `lda` apart (written out transposed,
/// `(m × k)`, into `at` first), B `(k × n)` rows `ldb` apart.
#[allow(clippy::too_many_arguments)]
fn mul_at(m: usize, k: usize, n: usize, a: &[f32], lda: usize, b: &[f32], ldb: usize, out: &mut [f32], ldc: usize, accumulate: bool, scratch: &mut Scratch) {
    let at = &mut scratch.transposed;
    at.clear();
    at.resize(m * k, 0.0);
    // in 8 × 8 tiles, so that the writes of a tile stay within eight cache lines
    const TILE: usize = 8;
    for p0 in (0..k).step_by(TILE) {
        for i0 in (0..m).step_by(TILE) {
            for p in p0..(p0 + TILE).min(k) {
                for (i, &x) in a[p * lda + i0..p * lda + (i0 + TILE).min(m)].iter().enumerate() {
                    at[(i0 + i) * k + p] = x;
                }
            }
        }
    }
    mul(m, k, n, at, k, b, ldb, out, ldc, accumulate, &mut scratch.panels);
}

/// `target += the column sums of (rows × n) values` (summed from row 0 down, then added).
fn add_column_sums(target: &mut [f32], values: &[f32], n: usize) {
    let mut sums = vec![0.0f32; n];
    for row in values.chunks_exact(n) {
        sums.iter_mut().zip(row).for_each(|(s, &x)| *s += x);
    }
    target.iter_mut().zip(&sums).for_each(|(t, &s)| *t += s);
}

/// Whether every value is finite (no exponent field of all ones: ±Infinity or NaN), on the bits,
/// eight lanes at a time: a max over integer lanes vectorises where a `position` scan does not (the
/// scan over the `4·C²` parameter gradients took about 1.2 ms of a 27 ms backward at C = 768).
fn all_finite(values: &[f32]) -> bool {
    const EXPONENT: u32 = 0x7f80_0000;
    let mut lanes = [0u32; 8];
    let chunks = values.chunks_exact(8);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (lane, &x) in lanes.iter_mut().zip(chunk) {
            *lane = (*lane).max(x.to_bits() & EXPONENT);
        }
    }
    lanes.iter().copied().chain(tail.iter().map(|x| x.to_bits() & EXPONENT)).all(|e| e != EXPONENT)
}

/// An overflow check of an f32 gradient `(rows, cols)`, `name` being how the message calls it.
fn refuse_gradient_f32(values: &[f32], cols: usize, name: &str) -> Result<()> {
    if all_finite(values) {
        return Ok(());
    }
    refuse_overflow_f32(values, cols, name, "this gradient, a sum of products of finite gradients and weights,")
}

impl MultiHeadAttention {
    /// `backward` for an f32 `gradOutput` (`[B, T_q, C]`, `batched` as in the forward). After the f32
    /// training forward it differentiates that forward in f32 (see the module docs for the accuracy),
    /// stores the parameter gradients (widened exactly to f64, see `grads`) and returns the input
    /// gradients flat `[B, T, C]`. After an f64 forward, `gradOutput` is widened exactly, the f64
    /// backward runs, and the input gradients are rounded once to f32.
    pub fn backward_f32(&mut self, grad_output: BatchF32, batched: bool) -> Result<InputGradsF32> {
        if self.cache_f32.is_none() {
            let grads = self.backward(&grad_output.widen()?, batched)?;
            return Ok(InputGradsF32 {
                query: narrow_items_f32(&grads.query, batched, "backward(…).query")?,
                key: narrow_items_f32(&grads.key, batched, "backward(…).key")?,
                value: narrow_items_f32(&grads.value, batched, "backward(…).value")?,
            });
        }
        let cache = self.cache_f32.as_ref().expect("checked above");
        let (c, t_q, t_k, n) = (self.embed_dim, cache.t_q, cache.t_k, cache.items.len());
        check_gradient_shape(batched, cache.batched, grad_output.items, n, grad_output.rows, grad_output.cols, t_q, c)?;
        check_backward_f32(self, n, t_q, t_k, cache.keep_scale.is_some())?;
        // the weights' transposes, packed once per set of weights
        PackedWeightsF32::of(self);
        let (packed, weights) = (self.packed_f32.as_mut().expect("packed just above"), &self.weights);
        packed.transposed(weights);
        let (cache, packed) = (self.cache_f32.as_ref().expect("checked above"), self.packed_f32.as_ref().expect("packed above"));
        let transposed = packed.transposed.as_ref().expect("packed above");
        let kv_c = self.kv_heads * self.head_dimensions;
        let zeros = |rows: usize, cols: usize| vec![0.0f32; rows * cols];
        let mut grads = GradsF32 {
            w: [zeros(c, c), zeros(c, kv_c), zeros(c, kv_c), zeros(c, c)],
            b: packed.biases.as_ref().map(|_| [zeros(1, c), zeros(1, kv_c), zeros(1, kv_c), zeros(1, c)]),
            c,
            kv_c,
            widened: std::sync::OnceLock::new(),
        };
        let mut inputs = InputGradsF32 { query: zeros(n * t_q, c), key: zeros(n * t_k, c), value: zeros(n * t_k, c) };
        let mut scratch = Scratch::default();
        for (b, item) in cache.items.iter().enumerate() {
            let (q_len, k_len) = (t_q * c, t_k * c);
            let d_x = [&mut inputs.query[b * q_len..(b + 1) * q_len], &mut inputs.key[b * k_len..(b + 1) * k_len], &mut inputs.value[b * k_len..(b + 1) * k_len]];
            self.backward_item_f32(item, grad_output.item(b), cache, transposed, &mut grads, &mut scratch, d_x)
                .map_err(|e| at_item(e, batched, b))?;
        }
        refuse_parameter_gradients_f32(&grads)?;
        self.grads = None;
        self.grads_f32 = Some(grads);
        Ok(inputs)
    }

    /// One batch item: adds its parameter gradients into `grads`, writes `(d x_q, d x_k, d x_v)`,
    /// row-major `(T_q, C)`, `(T_k, C)`, `(T_k, C)`, into `d_x`.
    #[allow(clippy::too_many_arguments)]
    fn backward_item_f32(
        &self,
        item: &ItemCacheF32,
        d_output: &[f32],
        cache: &ForwardCacheF32,
        transposed: &[PackedPanels; 4],
        grads: &mut GradsF32,
        s: &mut Scratch,
        d_x: [&mut [f32]; 3],
    ) -> Result<()> {
        let (c, d_head) = (self.embed_dim, self.head_dimensions);
        let kv_c = self.kv_heads * d_head;
        let (t_q, t_k) = (cache.t_q, cache.t_k);
        let scale = attention_scale::<f32>(d_head);

        // 9. output = concat·W_O + b_O
        let mut d_concat = vec![0.0f32; t_q * c];
        gemm_packed(t_q, c, c, d_output, c, &transposed[3], &mut d_concat, c, false); // (T_q, C) = (T_q, C)·(C, C)ᵀ
        refuse_gradient_f32(&d_concat, c, "d_concat")?;
        mul_at(c, t_q, c, &item.concat, c, d_output, c, &mut grads.w[3], c, true, s); // (C, C) += concatᵀ·d_output
        if let Some(b) = &mut grads.b {
            add_column_sums(&mut b[3], d_output, c);
        }

        let mut d_q = vec![0.0f32; t_q * c]; // (T_q, C): head i's d_Q_h in its columns
        let mut d_k = vec![0.0f32; t_k * kv_c]; // (T_k, C_kv): per K/V head, the sum over its query heads
        let mut d_v = vec![0.0f32; t_k * kv_c]; // (T_k, C_kv)
        let group = self.number_of_heads / self.kv_heads;
        s.used.resize(t_q * t_k, 0.0);
        s.d_used.resize(t_q * t_k, 0.0);
        s.d_scores.resize(t_q * t_k, 0.0);
        for (head, kept) in item.heads.iter().enumerate() {
            let start = head * d_head;
            let kv = head / group;
            let kv_start = kv * d_head;
            // the first query head of a group writes its K/V head's gradients, the others add theirs
            let add = head % group != 0;
            // (Q_h, K_h, V_h: columns start.. of Q, kv_start.. of K and V, rows c and kv_c apart)
            // 8. concat = [context_0 | context_1 | …]: d_context is d_concat's columns start .. start + d_head
            let d_context = &d_concat[start..];
            // 7. context = used·V_h
            let mut used = std::mem::take(&mut s.used);
            kept.used_into(cache.keep_scale, &mut used);
            gemm_transposed_b(t_q, d_head, t_k, d_context, c, &item.v[kv_start..], kv_c, &mut s.d_used, t_k, false, &mut s.panels); // (T_q, T_k) = d_context·V_hᵀ
            mul_at(t_k, t_q, d_head, &used, t_k, d_context, c, &mut d_v[kv_start..], kv_c, add, s); // (T_k, d_head) = usedᵀ·d_context
            s.used = used;
            refuse_gradient_f32(&s.d_used, t_k, &format!("d_weights_{head}"))?;
            // 6. used = weights ⊙ factor (the same dropout flags as the forward)
            if let (Some(flags), Some(keep_scale)) = (&kept.kept, cache.keep_scale) {
                for (d, &k) in s.d_used.iter_mut().zip(flags) {
                    *d *= if k { keep_scale } else { 0.0 }; // (T_q, T_k)
                }
            }
            // 5. weights = StableSoftmax(scaled) (masked entries and empty rows get 0)
            for ((w, d_w), d_s) in kept.weights.chunks_exact(t_k).zip(s.d_used.chunks_exact(t_k)).zip(s.d_scores.chunks_exact_mut(t_k)) {
                stable_softmax_backward_row(w, d_w, d_s); // (T_q, T_k), row by row
            }
            // 4. scaled = scores · (1/√d_head)
            s.d_scores.iter_mut().for_each(|x| *x *= scale); // (T_q, T_k)
            refuse_gradient_f32(&s.d_scores, t_k, &format!("d_scores_{head}"))?;
            // 3. scores = Q_h·K_hᵀ
            let d_scores = std::mem::take(&mut s.d_scores);
            mul(t_q, t_k, d_head, &d_scores, t_k, &item.k[kv_start..], kv_c, &mut d_q[start..], c, false, &mut s.panels); // (T_q, d_head) = d_scores·K_h
            mul_at(t_k, t_q, d_head, &d_scores, t_k, &item.q[start..], c, &mut d_k[kv_start..], kv_c, add, s); // (T_k, d_head) = d_scoresᵀ·Q_h
            s.d_scores = d_scores;
            // 2. Q_h, K_g, V_g are column slices of Q, K, V; K_g and V_g are shared by the group's
            // query heads, so their gradients add up (the `add` above)
        }
        // 1b. Q and K were rotated by RoPE: rotate their gradients back (a rotation's transpose)
        if let Some(rope) = self.rope {
            rope.rotate(&mut d_q, c, d_head, cache.positions.query, true);
            rope.rotate(&mut d_k, kv_c, d_head, cache.positions.key, true);
        }
        refuse_gradient_f32(&d_q, c, "d_Q")?;
        refuse_gradient_f32(&d_k, kv_c, "d_K")?;
        refuse_gradient_f32(&d_v, kv_c, "d_V")?;

        // 1. Q = x_q·W_Q + b_Q, K = x_k·W_K + b_K, V = x_v·W_V + b_V
        let [d_x_q, d_x_k, d_x_v] = d_x;
        gemm_packed(t_q, c, c, &d_q, c, &transposed[0], d_x_q, c, false); // (T_q, C) = d_Q·W_Qᵀ
        gemm_packed(t_k, kv_c, c, &d_k, kv_c, &transposed[1], d_x_k, c, false); // (T_k, C) = d_K·W_Kᵀ, (T_k, C_kv)·(C, C_kv)ᵀ
        gemm_packed(t_k, kv_c, c, &d_v, kv_c, &transposed[2], d_x_v, c, false); // (T_k, C) = d_V·W_Vᵀ
        refuse_gradient_f32(d_x_q, c, "backward(…).query")?;
        refuse_gradient_f32(d_x_k, c, "backward(…).key")?;
        refuse_gradient_f32(d_x_v, c, "backward(…).value")?;
        mul_at(c, t_q, c, &item.x_q, c, &d_q, c, &mut grads.w[0], c, true, s); // (C, C) += x_qᵀ·d_Q
        if item.shared {
            // self-attention: x_k = x_v = x_q, whose transpose mul_at has just written out
            let x_t = std::mem::take(&mut s.transposed); // (C, T)
            mul(c, t_k, kv_c, &x_t, t_k, &d_k, kv_c, &mut grads.w[1], kv_c, true, &mut s.panels); // (C, C_kv) += x_kᵀ·d_K
            mul(c, t_k, kv_c, &x_t, t_k, &d_v, kv_c, &mut grads.w[2], kv_c, true, &mut s.panels); // (C, C_kv) += x_vᵀ·d_V
            s.transposed = x_t;
        } else {
            mul_at(c, t_k, kv_c, item.x_k(), c, &d_k, kv_c, &mut grads.w[1], kv_c, true, s); // (C, C_kv) += x_kᵀ·d_K
            mul_at(c, t_k, kv_c, item.x_v(), c, &d_v, kv_c, &mut grads.w[2], kv_c, true, s); // (C, C_kv) += x_vᵀ·d_V
        }
        if let Some(b) = &mut grads.b {
            add_column_sums(&mut b[0], &d_q, c);
            add_column_sums(&mut b[1], &d_k, kv_c);
            add_column_sums(&mut b[2], &d_v, kv_c);
        }
        Ok(())
    }
}

/// The checks `backward` and `backward_f32` share: `gradOutput` has the last forward's layout, batch
/// size and `(T_q, C)` (`rows × cols` per item).
#[allow(clippy::too_many_arguments)]
pub(super) fn check_gradient_shape(batched: bool, forward_batched: bool, items: usize, n: usize, rows: usize, cols: usize, t_q: usize, c: usize) -> Result<()> {
    if batched != forward_batched {
        let (got, want) = if batched { ("a batch [B, T, C]", "one [T, C] matrix") } else { ("one [T, C] matrix", "a batch [B, T, C]") };
        return Err(AttentionError::range_error(format!(
            "gradOutput is {got} but the last forward returned {want}; gradOutput must have the output's shape"
        )));
    }
    if items != n {
        return Err(AttentionError::range_error(format!("gradOutput has a batch of {items} but the last forward had {n} items")));
    }
    if (rows, cols) != (t_q, c) {
        return Err(AttentionError::range_error(format!(
            "{} is {rows}×{cols} but the output was {t_q}×{c}; gradOutput must have the output's shape",
            item_name("gradOutput", batched, 0)
        )));
    }
    Ok(())
}

/// Every parameter gradient must be finite in f32 (the sums over the batch can overflow too): a
/// RangeError names the first one that is not.
fn refuse_parameter_gradients_f32(grads: &GradsF32) -> Result<()> {
    let names = ["W_Q", "W_K", "W_V", "W_O"];
    let cols = [grads.c, grads.kv_c, grads.kv_c, grads.c];
    for (i, w) in grads.w.iter().enumerate() {
        refuse_parameter_f32(w, cols[i], names[i], true)?;
    }
    if let Some(b) = &grads.b {
        for (i, v) in b.iter().enumerate() {
            refuse_parameter_f32(v, cols[i], &names[i].replace('W', "b"), false)?;
        }
    }
    Ok(())
}

/// A RangeError naming the first non-finite entry of a parameter gradient: `grads().W_Q[i][j]` or `grads().b_Q[j]`.
fn refuse_parameter_f32(values: &[f32], cols: usize, name: &str, matrix: bool) -> Result<()> {
    if all_finite(values) {
        return Ok(());
    }
    let Some(at) = values.iter().position(|x| !x.is_finite()) else { return Ok(()) };
    let place = if matrix { format!("[{}][{}]", at / cols, at % cols) } else { format!("[{at}]") };
    Err(AttentionError::range_error(format!(
        "grads().{name}{place} overflows to {} in f32: the gradient summed over the batch is beyond the largest f32 (about 3.4e38); scale the inputs or gradOutput down, or train with Float64Array",
        non_finite_name(f64::from(values[at]))
    )))
}

impl ForwardCacheF32 {
    /// The kept f32 values widened exactly into the f64 backward's cache: the dropout factor of a
    /// kept weight is the f32 one the forward multiplied by, and `used` the f32 products. `backward`
    /// (f64 gradOutput) after an f32 training forward differentiates this, i.e. the f32 forward, in f64.
    pub(super) fn widen(&self, c: usize, kv_c: usize) -> Result<ForwardCache> {
        let (t_q, t_k) = (self.t_q, self.t_k);
        let m = |rows: usize, cols: usize, v: &[f32]| Matrix::new(rows, cols, v.iter().map(|&x| f64::from(x)).collect());
        let mut items = Vec::with_capacity(self.items.len());
        let mut used = vec![0.0f32; t_q * t_k];
        for item in &self.items {
            let mut heads = Vec::with_capacity(item.heads.len());
            for head in &item.heads {
                let dropout = match (&head.kept, self.keep_scale) {
                    (Some(flags), Some(s)) => {
                        head.used_into(self.keep_scale, &mut used);
                        let factor: Vec<f64> = flags.iter().map(|&k| if k { f64::from(s) } else { 0.0 }).collect();
                        Some((Matrix::new(t_q, t_k, factor)?, m(t_q, t_k, &used)?))
                    }
                    _ => None,
                };
                heads.push(HeadCache { weights: m(t_q, t_k, &head.weights)?, dropout });
            }
            items.push(ItemCache {
                x_q: m(t_q, c, &item.x_q)?,
                x_k: m(t_k, c, item.x_k())?,
                x_v: m(t_k, c, item.x_v())?,
                q: m(t_q, c, &item.q)?,
                k: m(t_k, kv_c, &item.k)?,
                v: m(t_k, kv_c, &item.v)?,
                heads,
                concat: m(t_q, c, &item.concat)?,
            });
        }
        Ok(ForwardCache { batched: self.batched, t_q, items, positions: self.positions })
    }
}

#[cfg(test)]
mod tests {
    //! The f32 backward against the f64 derivative of the same kept values, entry by entry within
    //! the module docs' bound `γ_K·m`, and its errors.
    use super::super::{ForwardOptions, InputGrads, LayerConfig};
    use super::*;
    use crate::engine::Rope;
    use crate::mask::{BoolMatrix, Mask};
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
    fn magnitudes(layer: &MultiHeadAttention, cache: &ForwardCache, d_out: &[Matrix]) -> (InputGrads, Weights) {
        let w = layer.weights();
        let (d, h, kv_heads) = (layer.head_dimensions(), layer.number_of_heads(), layer.kv_heads());
        let group = h / kv_heads;
        let scale = attention_scale::<f64>(d);
        let mut params = w.zeros_like();
        let mut inputs = InputGrads { query: vec![], key: vec![], value: vec![] };
        for (item, g) in cache.items.iter().zip(d_out) {
            let g = abs(g);
            let m_concat = g.matmul_transposed(&abs(&w.w_o)).unwrap();
            params.w_o.add_assign(&abs(&item.concat).transposed_matmul(&g).unwrap()).unwrap();
            if let Some(b) = &mut params.biases {
                add_into(&mut b.b_o, &g.column_sums());
            }
            let (mut m_q, mut m_k, mut m_v): (Vec<Matrix>, Vec<Matrix>, Vec<Matrix>) = (vec![], vec![], vec![]);
            for (head, kept) in item.heads.iter().enumerate() {
                let kv = head / group;
                let q_h = abs(&item.q.slice_columns(head * d, (head + 1) * d).unwrap());
                let k_h = abs(&item.k.slice_columns(kv * d, (kv + 1) * d).unwrap());
                let v_h = abs(&item.v.slice_columns(kv * d, (kv + 1) * d).unwrap());
                let m_context = m_concat.slice_columns(head * d, (head + 1) * d).unwrap();
                let m_used = m_context.matmul_transposed(&v_h).unwrap();
                let m_v_h = abs(kept.used()).transposed_matmul(&m_context).unwrap();
                let m_weights = match &kept.dropout {
                    Some((factor, _)) => m_used.hadamard(&abs(factor)).unwrap(),
                    None => m_used,
                };
                let mut m_scaled = Matrix::zeros(m_weights.rows(), m_weights.cols());
                for r in 0..m_weights.rows() {
                    let (wr, gr) = (kept.weights.row(r), m_weights.row(r));
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
        let mut weights = layer.weights().clone();
        if let Some(b) = &mut weights.biases {
            for (i, v) in [&mut b.b_q, &mut b.b_k, &mut b.b_v, &mut b.b_o].into_iter().enumerate() {
                *v = seeded_matrix(1, v.len(), 60 + i as u64).data().iter().map(|x| x * 0.5).collect();
            }
        }
        layer.set_weights(weights).unwrap();
        layer
    }

    /// One case: the f32 training forward, `backward_f32`, then `backward` (the f64 derivative of
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
            .forward_f32(BatchF32::new(&x_q, b, t_q, c), BatchF32::new(&x_k, b, t_k, c), BatchF32::new(&x_v, b, t_k, c), &options)
            .unwrap();
        let g = values(b, t_q, c, 4);
        let got = layer.backward_f32(BatchF32::new(&g, b, t_q, c), batched).unwrap();
        let got_params = layer.grads().unwrap().clone();
        let d_out: Vec<Matrix> = (0..b).map(|i| Matrix::new(t_q, c, g[i * t_q * c..(i + 1) * t_q * c].iter().map(|&x| f64::from(x)).collect()).unwrap()).collect();
        let cache = layer.cache_f32.as_ref().unwrap().widen(c, kv_c).unwrap();
        let (m_inputs, m_params) = magnitudes(&layer, &cache, &d_out);
        let want = layer.backward(&d_out, batched).unwrap();
        let want_params = layer.grads().unwrap().clone();
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
    fn all_finite_sees_every_non_finite_value_in_lanes_and_tail() {
        for len in [0, 1, 7, 8, 9, 17, 64] {
            assert!(all_finite(&vec![f32::MAX; len]));
            for at in 0..len {
                for bad in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
                    let mut v = vec![-1.5f32; len];
                    v[at] = bad;
                    assert!(!all_finite(&v), "{bad} at {at} of {len}");
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
