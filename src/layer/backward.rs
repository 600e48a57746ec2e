//! The backward pass of [`MultiHeadAttention`]: the forward's passes in reverse, each
//! differentiating one forward line (quoted above it). The loss is taken to be
//! `Σ output ⊙ gradOutput` summed over the batch, so parameter gradients add up over items.

use super::forward::{item_name, ItemCache, Positions};
use super::limits::{at_item, check_backward, refuse_gradient, refuse_parameter_gradients};
use super::{LastForward, MultiHeadAttention, Weights};
use crate::attention::attention_scale;
use crate::error::{AttentionError, Result};
use crate::matrix::Matrix;
use crate::softmax::stable_softmax_backward;

/// The gradients with respect to the three inputs of the last forward pass, one matrix per
/// batch item. For self-attention (`key` and `value` defaulted to `query`) the gradient with
/// respect to the shared input is `query + key + value`.
#[derive(Clone, Debug, PartialEq)]
pub struct InputGrads {
    pub query: Vec<Matrix>,
    pub key: Vec<Matrix>,
    pub value: Vec<Matrix>,
}

/// The input gradients in f32 (`backward_f32`), each flat `[B, T, C]`.
#[derive(Clone, Debug, PartialEq)]
pub struct InputGradsF32 {
    pub query: Vec<f32>,
    pub key: Vec<f32>,
    pub value: Vec<f32>,
}

impl MultiHeadAttention {
    /// Differentiates the last forward pass for `grad_output` (one `(T_q, C)` matrix per item,
    /// `batched` as in that forward), stores the parameter gradients (read them with
    /// [`MultiHeadAttention::grads`]) and returns the input gradients. Dropout reuses the
    /// forward's mask. Can be called again for the same forward with another gradient.
    ///
    /// After an f32 training forward (`forward_f32` with `training`) this differentiates what that
    /// forward kept, widened exactly to f64: the f64 derivative of the f32 forward.
    pub fn backward(&mut self, grad_output: &[Matrix], batched: bool) -> Result<InputGrads> {
        let widened = match (&self.cache, &self.cache_f32) {
            (None, Some(kept)) => Some(kept.widen(self.embed_dim, self.kv_heads * self.head_dimensions)?),
            _ => None,
        };
        let cache = self.cache.as_ref().or(widened.as_ref()).ok_or_else(|| {
            if self.last_forward_f32() {
                return AttentionError::State(
                    "backward cannot differentiate a Float32Array forward in evaluation mode (the f32 kernels keep no intermediates): run forward with { training: true }, which keeps them, or with number[][] or Float64Array input".into(),
                );
            }
            if self.last_forward == LastForward::Cached {
                return AttentionError::State(
                    "backward cannot differentiate a forward with options.cache: decoding keeps no intermediates; run forward without a cache (causal: true over the whole sequence) to train".into(),
                );
            }
            AttentionError::State(
                "backward needs the forward pass it differentiates: call forward first (setWeights discards the last forward pass)".into(),
            )
        })?;
        // shape checks: same layout, batch size and (T_q, C) as the forward's output
        let (c, t_q, n) = (self.embed_dim, cache.t_q, cache.items.len());
        if batched != cache.batched {
            let (got, want) = if batched { ("a batch [B, T, C]", "one [T, C] matrix") } else { ("one [T, C] matrix", "a batch [B, T, C]") };
            return Err(AttentionError::range_error(format!(
                "gradOutput is {got} but the last forward returned {want}; gradOutput must have the output's shape"
            )));
        }
        if grad_output.len() != n {
            return Err(AttentionError::range_error(format!(
                "gradOutput has a batch of {} but the last forward had {n} items",
                grad_output.len()
            )));
        }
        for (b, g) in grad_output.iter().enumerate() {
            if g.shape() != (t_q, c) {
                return Err(AttentionError::range_error(format!(
                    "{} is {} but the output was {t_q}×{c}; gradOutput must have the output's shape",
                    item_name("gradOutput", batched, b),
                    g.shape_text()
                )));
            }
        }
        let dropout = cache.items[0].heads.first().is_some_and(|head| head.dropout.is_some());
        let t_k = cache.items[0].k.rows();
        check_backward(c, self.number_of_heads, n, t_q, t_k, dropout)?;
        let mut grads = self.weights.zeros_like();
        let mut inputs = InputGrads { query: Vec::with_capacity(n), key: Vec::with_capacity(n), value: Vec::with_capacity(n) };
        let positions = cache.positions;
        for (b, (item, d_output)) in cache.items.iter().zip(grad_output).enumerate() {
            let (d_x_q, d_x_k, d_x_v) = self.backward_item(item, d_output, positions, &mut grads).map_err(|e| at_item(e, batched, b))?;
            inputs.query.push(d_x_q);
            inputs.key.push(d_x_k);
            inputs.value.push(d_x_v);
        }
        refuse_parameter_gradients(&grads)?;
        self.grads = Some(grads);
        self.grads_f32 = None;
        Ok(inputs)
    }

    /// One batch item: adds its parameter gradients into `grads`, returns `(d x_q, d x_k, d x_v)`.
    fn backward_item(&self, item: &ItemCache, d_output: &Matrix, positions: Positions, grads: &mut Weights) -> Result<(Matrix, Matrix, Matrix)> {
        let w = &self.weights;
        let d_head = self.head_dimensions;
        let scale = attention_scale::<f64>(d_head);

        // 9. output = concat·W_O + b_O
        let d_concat = d_output.matmul_transposed(&w.w_o)?; // (T_q, C) = (T_q, C)·(C, C)ᵀ
        refuse_gradient(&d_concat, "d_concat")?;
        grads.w_o.add_assign(&item.concat.transposed_matmul(d_output)?)?; // (C, C) = concatᵀ·d_output
        if let Some(b) = &mut grads.biases {
            add_into(&mut b.b_o, &d_output.column_sums());
        }

        let mut d_q_heads = Vec::with_capacity(self.number_of_heads);
        // per K/V head: the sum over the query heads that read it
        let mut d_k_heads: Vec<Matrix> = Vec::with_capacity(self.kv_heads);
        let mut d_v_heads: Vec<Matrix> = Vec::with_capacity(self.kv_heads);
        let group = self.number_of_heads / self.kv_heads;
        for (head, cache) in item.heads.iter().enumerate() {
            let (start, end) = (head * d_head, (head + 1) * d_head);
            let kv = head / group;
            let (kv_start, kv_end) = (kv * d_head, (kv + 1) * d_head);
            let q_h = item.q.slice_columns(start, end)?; // (T_q, d_head)
            let k_h = item.k.slice_columns(kv_start, kv_end)?; // (T_k, d_head): the head's K/V head g
            let v_h = item.v.slice_columns(kv_start, kv_end)?; // (T_k, d_head)
            // 8. concat = [context_0 | context_1 | …]
            let d_context = d_concat.slice_columns(start, end)?; // (T_q, d_head)
            // 7. context = used·V_h
            let d_used = d_context.matmul_transposed(&v_h)?; // (T_q, T_k) = d_context·V_hᵀ
            let d_v_h = cache.used().transposed_matmul(&d_context)?; // (T_k, d_head) = usedᵀ·d_context
            refuse_gradient(&d_used, &format!("d_weights_{head}"))?;
            // 6. used = weights ⊙ factor (the same dropout mask as the forward)
            let d_weights = match &cache.dropout {
                Some((factor, _)) => d_used.hadamard(factor)?, // (T_q, T_k)
                None => d_used,
            };
            // 5. weights = StableSoftmax(scaled) (masked entries and empty rows get 0)
            let d_scaled = stable_softmax_backward(&cache.weights, &d_weights); // (T_q, T_k)
            // 4. scaled = scores · (1/√d_head)
            let d_scores = d_scaled.scale(scale); // (T_q, T_k)
            refuse_gradient(&d_scores, &format!("d_scores_{head}"))?;
            // 3. scores = Q_h·K_hᵀ
            let d_q_h = d_scores.matmul(&k_h)?; // (T_q, d_head) = d_scores·K_h
            let d_k_h = d_scores.transposed_matmul(&q_h)?; // (T_k, d_head) = d_scoresᵀ·Q_h
            // 2. Q_h, K_g, V_g are column slices of Q, K, V; K_g and V_g are shared by the
            // group's query heads, so their gradients add up (the first one is copied, which
            // keeps the bits of multi-head attention, where every group has one head)
            d_q_heads.push(d_q_h);
            if head % group == 0 {
                d_k_heads.push(d_k_h);
                d_v_heads.push(d_v_h);
            } else {
                d_k_heads[kv].add_assign(&d_k_h)?;
                d_v_heads[kv].add_assign(&d_v_h)?;
            }
        }
        let d_q = Matrix::concat_columns(&d_q_heads)?; // (T_q, C)
        let d_k = Matrix::concat_columns(&d_k_heads)?; // (T_k, C_kv)
        let d_v = Matrix::concat_columns(&d_v_heads)?; // (T_k, C_kv)
        // 1b. Q and K were rotated by RoPE: rotate their gradients back (a rotation's transpose)
        let d_q = self.unrotated(d_q, positions.query);
        let d_k = self.unrotated(d_k, positions.key);
        for (m, name) in [(&d_q, "d_Q"), (&d_k, "d_K"), (&d_v, "d_V")] {
            refuse_gradient(m, name)?;
        }

        // 1. Q = x_q·W_Q + b_Q, K = x_k·W_K + b_K, V = x_v·W_V + b_V
        let d_x_q = d_q.matmul_transposed(&w.w_q)?; // (T_q, C) = d_Q·W_Qᵀ
        let d_x_k = d_k.matmul_transposed(&w.w_k)?; // (T_k, C) = d_K·W_Kᵀ, (T_k, C_kv)·(C, C_kv)ᵀ
        let d_x_v = d_v.matmul_transposed(&w.w_v)?; // (T_k, C) = d_V·W_Vᵀ
        for (m, name) in [(&d_x_q, "backward(…).query"), (&d_x_k, "backward(…).key"), (&d_x_v, "backward(…).value")] {
            refuse_gradient(m, name)?;
        }
        grads.w_q.add_assign(&item.x_q.transposed_matmul(&d_q)?)?; // (C, C) = x_qᵀ·d_Q
        grads.w_k.add_assign(&item.x_k.transposed_matmul(&d_k)?)?; // (C, C) = x_kᵀ·d_K
        grads.w_v.add_assign(&item.x_v.transposed_matmul(&d_v)?)?; // (C, C) = x_vᵀ·d_V
        if let Some(b) = &mut grads.biases {
            add_into(&mut b.b_q, &d_q.column_sums());
            add_into(&mut b.b_k, &d_k.column_sums());
            add_into(&mut b.b_v, &d_v.column_sums());
        }
        Ok((d_x_q, d_x_k, d_x_v))
    }
}

impl MultiHeadAttention {
    /// The backward of [`MultiHeadAttention::rotated`]: `m` rotated back by RoPE (row 0 at `position`).
    fn unrotated(&self, mut m: Matrix, position: usize) -> Matrix {
        if let Some(rope) = self.rope {
            let cols = m.cols();
            rope.rotate(m.data_mut(), cols, self.head_dimensions, position, true);
        }
        m
    }
}

/// `target += addend`, element-wise (equal lengths by construction).
fn add_into(target: &mut [f64], addend: &[f64]) {
    for (t, &a) in target.iter_mut().zip(addend) {
        *t += a;
    }
}
