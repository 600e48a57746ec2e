//! The forward pass of [`MultiHeadAttention`], and what it keeps for the backward pass.
//!
//! Per batch item, in passes:
//! 1. project the inputs: `Q = x_q·W_Q + b_Q`, `K = x_k·W_K + b_K`, `V = x_v·W_V + b_V`;
//! 2. slice head `i`'s columns out of Q, K and V;
//! 3. `scores = Q_i·K_iᵀ`;
//! 4. `scaled = scores · (1/√d_head)`;
//! 5. `weights = StableSoftmax(scaled)` under the mask (a fully masked row is all zeros);
//! 6. training with `p > 0` only: `used = weights ⊙ keep / (1 − p)` (dropout);
//! 7. `context_i = used·V_i`;
//! 8. concatenate the heads' contexts side by side;
//! 9. `output = concat·W_O + b_O`.
//!
//! Passes 2–8 perform the same floating-point operations in the same order as
//! [`crate::multi_head_attention`], so with identity projections, zero biases and no mask
//! the two agree bit for bit.

use super::init::SplitMix64;
use super::limits::{at_item, check_forward, refuse_projection};
use super::MultiHeadAttention;
use crate::attention::attention_scale;
use crate::error::{AttentionError, Result};
use crate::limits::refuse_overflow;
use crate::mask::Mask;
use crate::matrix::Matrix;
use crate::softmax::stable_softmax;

/// Everything `forward` takes besides the inputs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ForwardOptions {
    /// Explicit `T_q × T_k` mask and/or the causal rule.
    pub mask: Mask,
    /// Return the attention weights, per head `(h, T_q, T_k)` for each batch item.
    pub need_weights: bool,
    /// With `need_weights`: return the mean over heads instead, `(T_q, T_k)` per item.
    pub average_weights: bool,
    /// Apply dropout to the attention weights (only when the layer's dropout `p > 0`).
    pub training: bool,
    /// Whether the inputs came as `[B, T, C]` (rather than one `[T, C]` matrix). Used in
    /// messages and to check that `backward` gets a gradient of the same layout.
    pub batched: bool,
}

/// What `forward` returns.
#[derive(Clone, Debug, PartialEq)]
pub struct ForwardOutput {
    /// One `(T_q, C)` matrix per batch item.
    pub output: Vec<Matrix>,
    /// With `need_weights`: per item, the weights of every head (`h` matrices `(T_q, T_k)`),
    /// or with `average_weights` their mean (one matrix). In training these are the weights
    /// after dropout, i.e. the ones that multiplied V.
    pub weights: Option<Vec<Vec<Matrix>>>,
}

/// One head's intermediates that the backward pass needs.
#[derive(Clone, Debug)]
pub(super) struct HeadCache {
    /// The softmax result, `(T_q, T_k)`.
    pub weights: Matrix,
    /// With dropout: the per-entry factor (0 or `1/(1−p)`) and `used = weights ⊙ factor`.
    pub dropout: Option<(Matrix, Matrix)>,
}

impl HeadCache {
    /// The weights that multiplied V.
    pub fn used(&self) -> &Matrix {
        self.dropout.as_ref().map_or(&self.weights, |(_, used)| used)
    }
}

/// One batch item's intermediates.
#[derive(Clone, Debug)]
pub(super) struct ItemCache {
    pub x_q: Matrix,
    pub x_k: Matrix,
    pub x_v: Matrix,
    /// The projections, `(T_q, C)`, `(T_k, C)`, `(T_k, C)`.
    pub q: Matrix,
    pub k: Matrix,
    pub v: Matrix,
    pub heads: Vec<HeadCache>,
    /// `(T_q, C)`.
    pub concat: Matrix,
}

/// What the last forward pass kept.
#[derive(Clone, Debug)]
pub(super) struct ForwardCache {
    pub batched: bool,
    pub t_q: usize,
    pub items: Vec<ItemCache>,
}

/// `"query"` or `"query[b]"`.
pub(super) fn item_name(name: &str, batched: bool, b: usize) -> String {
    if batched {
        format!("{name}[{b}]")
    } else {
        name.to_string()
    }
}

/// `x·W + b` (the bias only when present). `(T, C)·(C, C) → (T, C)`.
pub(super) fn project(x: &Matrix, w: &Matrix, b: Option<&[f64]>) -> Result<Matrix> {
    let mut projected = x.matmul(w)?; // (T, C)
    if let Some(b) = b {
        projected.add_row(b)?;
    }
    Ok(projected)
}

impl MultiHeadAttention {
    /// Runs the layer on a batch (a one-item batch for unbatched input) and remembers what
    /// `backward` needs. `key` and `value` must have the same number of items as `query`.
    pub fn forward(&mut self, query: &[Matrix], key: &[Matrix], value: &[Matrix], options: &ForwardOptions) -> Result<ForwardOutput> {
        let (t_q, t_k) = self.check_inputs(query, key, value, options)?;
        let dropout = (options.training && self.dropout > 0.0).then_some(self.dropout);
        check_forward(self.embed_dim, self.number_of_heads, query.len(), t_q, t_k, options, dropout.is_some())?;
        // Draw into a copy of the generator and commit it only on success.
        let mut rng = self.dropout_rng.clone();
        let mut outputs = Vec::with_capacity(query.len());
        let mut items = Vec::with_capacity(query.len());
        for (b, ((x_q, x_k), x_v)) in query.iter().zip(key).zip(value).enumerate() {
            let (output, item) =
                self.forward_item(x_q, x_k, x_v, &options.mask, dropout, &mut rng).map_err(|e| at_item(e, options.batched, b))?;
            outputs.push(output);
            items.push(item);
        }
        let weights = options.need_weights.then(|| {
            items
                .iter()
                .map(|item| {
                    let used: Vec<Matrix> = item.heads.iter().map(|head| head.used().clone()).collect();
                    if options.average_weights {
                        vec![mean_over_heads(&used)]
                    } else {
                        used
                    }
                })
                .collect()
        });
        self.dropout_rng = rng;
        self.cache = Some(ForwardCache { batched: options.batched, t_q, items });
        Ok(ForwardOutput { output: outputs, weights })
    }

    /// Passes 1–9 for one batch item.
    fn forward_item(
        &self,
        x_q: &Matrix,
        x_k: &Matrix,
        x_v: &Matrix,
        mask: &Mask,
        dropout: Option<f64>,
        rng: &mut SplitMix64,
    ) -> Result<(Matrix, ItemCache)> {
        let w = &self.weights;
        let b = w.biases.as_ref();
        let d_head = self.head_dimensions;
        let scale = attention_scale::<f64>(d_head);
        // 1. Project the inputs
        let q = project(x_q, &w.w_q, b.map(|b| &b.b_q[..]))?; // (T_q, C)
        let k = project(x_k, &w.w_k, b.map(|b| &b.b_k[..]))?; // (T_k, C)
        let v = project(x_v, &w.w_v, b.map(|b| &b.b_v[..]))?; // (T_k, C)
        // 1b. Refuse overflow: finite inputs and weights, so a non-finite entry is beyond f64
        let bias = |name| b.is_some().then_some(name);
        refuse_projection(&q, "Q", "query", "W_Q", bias("b_Q"))?;
        refuse_projection(&k, "K", "key", "W_K", bias("b_K"))?;
        refuse_projection(&v, "V", "value", "W_V", bias("b_V"))?;
        let mut heads = Vec::with_capacity(self.number_of_heads);
        let mut contexts = Vec::with_capacity(self.number_of_heads);
        for head in 0..self.number_of_heads {
            let (start, end) = (head * d_head, (head + 1) * d_head);
            // 2. Slice the head's columns
            let q_h = q.slice_columns(start, end)?; // (T_q, d_head)
            let k_h = k.slice_columns(start, end)?; // (T_k, d_head)
            let v_h = v.slice_columns(start, end)?; // (T_k, d_head)
            // 3. MatMul: scores = Q_h·K_hᵀ
            let scores = q_h.matmul_transposed(&k_h)?; // (T_q, T_k)
            // 3b. Refuse overflow: a non-finite score is a dot product beyond f64
            refuse_overflow(&scores, &format!("scores_{head}"), |i, j| {
                format!("the dot product of Q_{head} row {i} and K_{head} row {j} is too large")
            })?;
            // 4. Mul by 1/√d_head
            let scaled = scores.scale(scale); // (T_q, T_k)
            // 5. StableSoftmax along each row under the mask
            let weights = stable_softmax(&scaled, mask); // (T_q, T_k)
            // 6. Dropout (training only)
            let dropout = dropout.map(|p| apply_dropout(&weights, p, rng)).transpose()?;
            let cache = HeadCache { weights, dropout };
            // 7. MatMul: context = used·V_h
            let context = cache.used().matmul(&v_h)?; // (T_q, d_head)
            // 7b. Refuse overflow (a convex combination only at f64's edge; with dropout, scaled by 1/(1−p))
            refuse_overflow(&context, &format!("context_{head}"), |i, j| {
                format!("the weighted sum of V_{head} column {j} for query {i} is too large")
            })?;
            heads.push(cache);
            contexts.push(context);
        }
        // 8. Concat the heads side by side
        let concat = Matrix::concat_columns(&contexts)?; // (T_q, C)
        // 9. Output projection
        let output = project(&concat, &w.w_o, b.map(|b| &b.b_o[..]))?; // (T_q, C)
        refuse_projection(&output, "output", "concat", "W_O", bias("b_O"))?;
        let item = ItemCache { x_q: x_q.clone(), x_k: x_k.clone(), x_v: x_v.clone(), q, k, v, heads, concat };
        Ok((output, item))
    }

    /// Checks the batch and returns `(T_q, T_k)`.
    pub(super) fn check_inputs(&self, query: &[Matrix], key: &[Matrix], value: &[Matrix], options: &ForwardOptions) -> Result<(usize, usize)> {
        let c = self.embed_dim;
        let batched = options.batched;
        if query.is_empty() {
            return Err(AttentionError::range_error("query is an empty batch; expected at least one item"));
        }
        if !batched && query.len() != 1 {
            return Err(AttentionError::range_error("an unbatched forward takes exactly one query matrix"));
        }
        for (name, items) in [("key", key), ("value", value)] {
            if items.len() != query.len() {
                return Err(AttentionError::range_error(format!(
                    "{name} has a batch of {} but query has {}: key and value need one item per query item",
                    items.len(),
                    query.len()
                )));
            }
        }
        for (name, items) in [("query", query), ("key", key), ("value", value)] {
            let first = &items[0];
            for (b, m) in items.iter().enumerate() {
                let here = item_name(name, batched, b);
                if m.rows() == 0 {
                    return Err(AttentionError::range_error(format!("{here} is {}; expected at least one row", m.shape_text())));
                }
                if m.cols() != c {
                    return Err(AttentionError::range_error(format!(
                        "{here} is {} but the layer's embedDim is {c}: {name} must be T×{c}",
                        m.shape_text()
                    )));
                }
                if m.rows() != first.rows() {
                    return Err(AttentionError::range_error(format!(
                        "{here} is {} but {name}[0] is {}: every item of a batch must have the same T",
                        m.shape_text(),
                        first.shape_text()
                    )));
                }
            }
        }
        let (t_q, t_k) = (query[0].rows(), key[0].rows());
        if value[0].rows() != t_k {
            return Err(AttentionError::range_error(format!(
                "value has T = {} rows but key has T_k = {t_k}: each key position needs one value",
                value[0].rows()
            )));
        }
        options.mask.check_shape(t_q, t_k)?;
        if options.average_weights && !options.need_weights {
            return Err(AttentionError::type_error(
                "options.averageWeights only applies with options.needWeights: true; set both or neither",
            ));
        }
        Ok((t_q, t_k))
    }
}

/// Pass 6: draws one `next_unit()` per entry (row-major); drops it when the draw is `< p`.
/// Returns `(factor, used)` with `factor ∈ {0, 1/(1−p)}` and `used = weights ⊙ factor`.
fn apply_dropout(weights: &Matrix, p: f64, rng: &mut SplitMix64) -> Result<(Matrix, Matrix)> {
    let keep_scale = 1.0 / (1.0 - p);
    let mut factor = Matrix::zeros(weights.rows(), weights.cols());
    for f in factor.data_mut() {
        *f = if rng.next_unit() < p { 0.0 } else { keep_scale };
    }
    let used = weights.hadamard(&factor)?; // (T_q, T_k)
    Ok((factor, used))
}

/// The element-wise mean of the heads' `(T_q, T_k)` weights (summed in head order, then divided).
fn mean_over_heads(heads: &[Matrix]) -> Matrix {
    let mut mean = Matrix::zeros(heads[0].rows(), heads[0].cols());
    for head in heads {
        for (m, &x) in mean.data_mut().iter_mut().zip(head.data()) {
            *m += x;
        }
    }
    let n = heads.len() as f64;
    mean.data_mut().iter_mut().for_each(|m| *m /= n);
    mean
}
