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

use super::cache::KvCache;
use super::init::SplitMix64;
use super::limits::{at_item, check_cached_budget, check_forward, refuse_projection};
use super::{LastForward, MultiHeadAttention};
use crate::engine::{Cols, HeadShape, Hooks, Rope, Workspace};
use crate::error::{AttentionError, Result};
use crate::mask::Mask;
use crate::matrix::Matrix;
use crate::multi_head::heads;

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
    /// The projections (Q and K rotated when the layer has RoPE), `(T_q, C)`, `(T_k, C_kv)`,
    /// `(T_k, C_kv)`.
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
    /// The positions of query 0 and key 0 (RoPE's angles, the causal rule and the window).
    pub positions: Positions,
}

/// Where the rows are in the sequence: query `i` at `query + i`, key `j` at `key + j`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Positions {
    pub query: usize,
    pub key: usize,
}

impl Positions {
    /// Without a cache: keys at `0 … T_k − 1`, queries the last `T_q` of them (`T_q > T_k` puts
    /// the first queries before every key, where the causal rule hides all of them).
    pub fn aligned(t_q: usize, t_k: usize) -> Self {
        Self { query: t_k.saturating_sub(t_q), key: 0 }
    }

    /// The engine's offset: position of query 0 minus that of key 0, with `T_q > T_k` counted.
    pub fn offset(&self, t_q: usize, t_k: usize) -> isize {
        self.query as isize - self.key as isize - t_q.saturating_sub(t_k) as isize
    }
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
        check_forward(self.embed_dim, self.number_of_heads, query.len(), t_q, t_k, options.need_weights, dropout.is_some())?;
        let positions = Positions::aligned(t_q, t_k);
        self.check_rope_alignment(t_q, t_k)?;
        // Draw into a copy of the generator and commit it only on success.
        let mut rng = self.dropout_rng.clone();
        let mut outputs = Vec::with_capacity(query.len());
        let mut items = Vec::with_capacity(query.len());
        for (b, ((x_q, x_k), x_v)) in query.iter().zip(key).zip(value).enumerate() {
            let (output, item) = self
                .forward_item(x_q, x_k, x_v, &options.mask, positions, dropout, &mut rng)
                .map_err(|e| at_item(e, options.batched, b))?;
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
        self.cache = Some(ForwardCache { batched: options.batched, t_q, items, positions });
        self.cache_f32 = None;
        self.last_forward = LastForward::Kept;
        Ok(ForwardOutput { output: outputs, weights })
    }

    /// Decoding with a KV cache: projects `x` (`[B, T_new, C]`, B as the cache's once it has
    /// one), rotates Q and K at positions `cache.length() …`, appends K and V to the cache and
    /// attends causally over everything it holds (with `mask.window`, the cache then drops the
    /// keys no later query can see). Row for row this is one causal `forward` over the whole
    /// sequence. Keeps nothing for `backward`. On an error the cache is unchanged.
    pub fn forward_cached(&mut self, x: &[Matrix], cache: &mut KvCache, options: &ForwardOptions) -> Result<ForwardOutput> {
        check_cached(self, cache, x.len(), options)?;
        let (t_new, _) = self.check_inputs(x, x, x, options)?;
        let held = cache.keys.first().map_or(0, Matrix::rows);
        check_cached_budget(self, x.len(), t_new, held + t_new, options.need_weights)?;
        let w = &self.weights;
        let b = w.biases.as_ref();
        let bias = |name| b.is_some().then_some(name);
        let (mut outputs, mut weights) = (Vec::with_capacity(x.len()), Vec::with_capacity(x.len()));
        let mut rng = self.dropout_rng.clone(); // no dropout draws: decoding is evaluation
        // the cache grows in place; on an error every item is cut back to what it held
        if cache.keys.is_empty() {
            let kv_c = self.kv_heads * self.head_dimensions;
            cache.keys = vec![Matrix::zeros(0, kv_c); x.len()];
            cache.values = vec![Matrix::zeros(0, kv_c); x.len()];
        }
        for (item, x) in x.iter().enumerate() {
            let mut step = || -> Result<(Matrix, Vec<Matrix>)> {
                // 1. Project the new rows; rotate Q and K at their positions
                let (q, k_new, v_new) = self.project_all(x, x, x, Positions { query: cache.length, key: cache.length })?;
                // 2. Append K and V to what the cache holds: (held + T_new, C_kv)
                cache.keys[item].append_rows(&k_new)?;
                cache.values[item].append_rows(&v_new)?;
                // 3–8. The engine over every held key: query i at position length + i, key j at start + j
                let positions = Positions { query: cache.length, key: cache.start };
                let (k, v) = (&cache.keys[item], &cache.values[item]);
                let (concat, heads) = self.attend_item(&q, k, v, &options.mask, positions, None, &mut rng, options.need_weights)?;
                // 9. Output projection
                let output = project(&concat, &w.w_o, b.map(|b| &b.b_o[..]))?; // (T_new, C)
                refuse_projection(&output, "output", "concat", "W_O", bias("b_O"))?;
                Ok((output, heads.into_iter().map(|h| h.weights).collect()))
            };
            match step() {
                Ok((output, item_weights)) => {
                    outputs.push(output);
                    weights.push(item_weights);
                }
                Err(e) => {
                    for m in cache.keys.iter_mut().chain(cache.values.iter_mut()) {
                        m.keep_rows(0, held);
                    }
                    if cache.items == 0 {
                        cache.keys.clear();
                        cache.values.clear();
                    }
                    return Err(at_item(e, options.batched, item));
                }
            }
        }
        // commit. With a window w no later query sees a position before length + 1 − w; those rows
        // are dropped once they are w or more (so the cache holds fewer than 2·w positions, and
        // dropping costs O(1) per token amortised)
        cache.items = x.len();
        cache.length += t_new;
        if let Some(w) = options.mask.window {
            let visible_from = (cache.length + 1).saturating_sub(w).max(cache.start);
            if visible_from - cache.start >= w.max(1) {
                let drop = visible_from - cache.start;
                for m in cache.keys.iter_mut().chain(cache.values.iter_mut()) {
                    let rows = m.rows();
                    m.keep_rows(drop, rows);
                }
                cache.start = visible_from;
            }
        }
        self.cache = None;
        self.cache_f32 = None;
        self.last_forward = LastForward::Cached;
        let weights = options.need_weights.then(|| {
            weights.into_iter().map(|used| if options.average_weights { vec![mean_over_heads(&used)] } else { used }).collect()
        });
        Ok(ForwardOutput { output: outputs, weights })
    }

    /// With RoPE the queries are the last `T_q` of the `T_k` positions, so `T_q ≤ T_k`.
    pub(super) fn check_rope_alignment(&self, t_q: usize, t_k: usize) -> Result<()> {
        if self.rope.is_some() && t_q > t_k {
            return Err(AttentionError::range_error(format!(
                "query has T_q = {t_q} rows but key has T_k = {t_k}: with rope the queries are the last T_q of the T_k positions, so T_q ≤ T_k"
            )));
        }
        Ok(())
    }

    /// Pass 1 for one item: `Q = x_q·W_Q + b_Q`, `K = x_k·W_K + b_K`, `V = x_v·W_V + b_V`, each
    /// checked for overflow, then Q and K rotated at `positions` when the layer has RoPE.
    pub(super) fn project_all(&self, x_q: &Matrix, x_k: &Matrix, x_v: &Matrix, positions: Positions) -> Result<(Matrix, Matrix, Matrix)> {
        let (q, k, v) = self.project_unrotated(x_q, x_k, x_v)?;
        Ok((self.rotated(q, positions.query, "Q")?, self.rotated(k, positions.key, "K")?, v))
    }

    /// Pass 1 without the rotation: `(T_q, C)`, `(T_k, C_kv)`, `(T_k, C_kv)`.
    pub(super) fn project_unrotated(&self, x_q: &Matrix, x_k: &Matrix, x_v: &Matrix) -> Result<(Matrix, Matrix, Matrix)> {
        let w = &self.weights;
        let b = w.biases.as_ref();
        let q = project(x_q, &w.w_q, b.map(|b| &b.b_q[..]))?; // (T_q, C)
        let k = project(x_k, &w.w_k, b.map(|b| &b.b_k[..]))?; // (T_k, C_kv)
        let v = project(x_v, &w.w_v, b.map(|b| &b.b_v[..]))?; // (T_k, C_kv)
        // Refuse overflow: finite inputs and weights, so a non-finite entry is beyond f64
        let bias = |name| b.is_some().then_some(name);
        refuse_projection(&q, "Q", "query", "W_Q", bias("b_Q"))?;
        refuse_projection(&k, "K", "key", "W_K", bias("b_K"))?;
        refuse_projection(&v, "V", "value", "W_V", bias("b_V"))?;
        Ok((q, k, v))
    }

    /// `m` (called `name`) with every head rotated by RoPE, row 0 at `position` (unchanged
    /// without RoPE); a RangeError past position 2^20 or beyond f64.
    pub(super) fn rotated(&self, mut m: Matrix, position: usize, name: &str) -> Result<Matrix> {
        if let Some(rope) = self.rope {
            Rope::check_positions(position, m.rows(), &format!("{name}'s rows"))?;
            let cols = m.cols();
            rope.rotate(m.data_mut(), cols, self.head_dimensions, position, false);
            Rope::refuse_overflow(m.data(), cols, name)?;
        }
        Ok(m)
    }

    /// Passes 2–8 for one item: the engine over every head, the softmax weights kept (and, with
    /// `dropout`, dropped out) by the hooks; returns `(concat (T_q, C), the heads' caches)`.
    #[allow(clippy::too_many_arguments)]
    /// With `keep` false (decoding without needWeights) nothing is kept: the heads run in blocks of
    /// query rows and the returned list is empty.
    #[allow(clippy::too_many_arguments)]
    fn attend_item(&self, q: &Matrix, k: &Matrix, v: &Matrix, mask: &Mask, positions: Positions, dropout: Option<f64>, rng: &mut SplitMix64, keep: bool) -> Result<(Matrix, Vec<HeadCache>)> {
        let (t_q, t_k) = (q.rows(), k.rows());
        let mut shape = HeadShape::new(t_q, t_k, self.number_of_heads, self.kv_heads, self.head_dimensions);
        shape.offset = positions.offset(t_q, t_k);
        let mut kept = Keep { t_q, t_k, dropout, rng, heads: Vec::with_capacity(self.number_of_heads) };
        let hooks: &mut dyn Hooks<f64> = if keep { &mut kept } else { &mut () };
        let concat = heads(Cols::of(q), Cols::of(k), Cols::of(v), shape, mask, &mut Workspace::new(), hooks)?;
        Ok((Matrix::new(t_q, self.embed_dim, concat)?, kept.heads))
    }

    /// Passes 1–9 for one batch item.
    #[allow(clippy::too_many_arguments)]
    fn forward_item(
        &self,
        x_q: &Matrix,
        x_k: &Matrix,
        x_v: &Matrix,
        mask: &Mask,
        positions: Positions,
        dropout: Option<f64>,
        rng: &mut SplitMix64,
    ) -> Result<(Matrix, ItemCache)> {
        let w = &self.weights;
        let b = w.biases.as_ref();
        // 1. Project the inputs (and rotate Q and K with RoPE)
        let (q, k, v) = self.project_all(x_q, x_k, x_v, positions)?;
        // 2–8. The engine: per head slice, scores, scale, softmax (kept, and dropped out in
        // training, by the hooks), weights·V_g, straight into the concatenation
        let (concat, heads) = self.attend_item(&q, &k, &v, mask, positions, dropout, rng, true)?; // (T_q, C)
        // 9. Output projection
        let output = project(&concat, &w.w_o, b.map(|b| &b.b_o[..]))?; // (T_q, C)
        refuse_projection(&output, "output", "concat", "W_O", b.is_some().then_some("b_O"))?;
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

/// The engine's hooks for the f64 forward: every head's softmax weights are kept for
/// `backward` and, in training, pass 6 (dropout) is applied to them before the weighted sum.
struct Keep<'a> {
    t_q: usize,
    t_k: usize,
    dropout: Option<f64>,
    rng: &'a mut SplitMix64,
    heads: Vec<HeadCache>,
}

impl Hooks<f64> for Keep<'_> {
    fn head_start(&mut self, _head: usize, _q: Cols<f64>, _k: Cols<f64>, _v: Cols<f64>) -> Result<()> {
        let zeros = || Matrix::zeros(self.t_q, self.t_k); // (T_q, T_k)
        self.heads.push(HeadCache { weights: zeros(), dropout: self.dropout.map(|_| (zeros(), zeros())) });
        Ok(())
    }

    /// Pass 6: one `next_unit()` per entry, row-major over the head's `T_q × T_k` (the blocks
    /// come in row order); an entry is dropped when its draw is `< p`, `factor ∈ {0, 1/(1−p)}`
    /// and `used = weights ⊙ factor`.
    fn weights(&mut self, _head: usize, first: usize, weights: &mut [f64], _n_keys: usize) -> Result<()> {
        let at = first * self.t_k; // f64 computes every key: the block is rows × T_k
        let head = self.heads.last_mut().ok_or_else(|| AttentionError::State("weights before any head".into()))?;
        head.weights.data_mut()[at..at + weights.len()].copy_from_slice(weights);
        if let (Some(p), Some((factor, used))) = (self.dropout, head.dropout.as_mut()) {
            let keep_scale = 1.0 / (1.0 - p);
            for (n, x) in weights.iter_mut().enumerate() {
                let f = if self.rng.next_unit() < p { 0.0 } else { keep_scale };
                factor.data_mut()[at + n] = f;
                *x *= f;
                used.data_mut()[at + n] = *x;
            }
        }
        Ok(())
    }
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

/// The checks of a cached forward: this layer's cache, the same B, causal, no explicit mask,
/// no training.
pub(super) fn check_cached(layer: &MultiHeadAttention, cache: &KvCache, batch: usize, options: &ForwardOptions) -> Result<()> {
    if cache.layer != layer.id {
        return Err(AttentionError::State(
            "options.cache belongs to another layer: a cache holds one layer's keys and values; create it with this layer's createCache()".into(),
        ));
    }
    if cache.items != 0 && cache.items != batch {
        return Err(AttentionError::range_error(format!(
            "the input has a batch of {batch} but options.cache holds {}: a cache keeps one sequence per batch item (reset() it to start over)",
            cache.items
        )));
    }
    if !options.mask.causal {
        return Err(AttentionError::type_error(
            "options.cache needs options.causal: true (decoding appends tokens after everything cached, each seeing only the past)",
        ));
    }
    if options.mask.allowed.is_some() {
        return Err(AttentionError::type_error("options.mask cannot be used with options.cache (its columns would change with every token); use causal and window"));
    }
    if options.training {
        return Err(AttentionError::type_error("options.training cannot be used with options.cache: a cached forward keeps no intermediates for backward"));
    }
    Ok(())
}
