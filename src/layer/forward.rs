//! The forward pass of [`MultiHeadAttention`] in either precision, written once over
//! [`LayerKernel`], and what it keeps for the backward pass.
//!
//! Per batch item, in passes numbered as the engine's ([`crate::engine::attend_heads`], passes 1–7),
//! with the layer's own before (0) and after (8):
//! 0. project the inputs: `Q = x_q·W_Q + b_Q`, `K = x_k·W_K + b_K`, `V = x_v·W_V + b_V`, refused
//!    where they overflowed; then, with RoPE, rotate Q and K at their positions;
//! 1. per head, slice its columns out of Q, K and V (K and V packed once per K/V head);
//! 2. `scores = Q_i·K_gᵀ`;
//! 3. refused where a score overflowed;
//! 4. `weights = StableSoftmax(scores · 1/√d_head)` under the mask (a fully masked row is all zeros);
//! 5. the hook: training with `p > 0` only, `used = weights ⊙ keep / (1 − p)` (dropout), and
//!    the weights kept for backward;
//! 6. `context_i = used·V_g`, into head i's columns of `concat` (the concatenation);
//! 7. refused where a context entry overflowed;
//! 8. `output = concat·W_O + b_O`.
//!
//! f64 performs passes 1–7 with the same floating-point operations in the same order as
//! [`crate::multi_head_attention`], so with identity projections, zero biases and no mask the
//! two agree bit for bit; f32 runs the engine's SIMD kernels. What a forward holds is counted in
//! `limits.rs` ([`check_forward`]); when the items run on threads, in [`MultiHeadAttention::forward_items`].

use super::cache::{Held, KvCache};
use super::init::SplitMix64;
use super::kept::{ForwardCache, HeadCache, ItemCache, Positions};
use super::kernel::{LayerKernel, Prepared};
use super::limits::{at_item, check_cached_budget, check_forward};
use super::{LastForward, MultiHeadAttention};
use crate::engine::{Batch, Cols, HeadShape, Hooks, Rope, Workspace};
use crate::error::{shape_text, AttentionError, Result};
use crate::mask::Mask;
use crate::matrix::Matrix;
use crate::multi_head::heads;
use crate::real::Real;

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

/// What [`MultiHeadAttention::forward`] returns (f64 matrices).
#[derive(Clone, Debug, PartialEq)]
pub struct ForwardOutput {
    /// One `(T_q, C)` matrix per batch item.
    pub output: Vec<Matrix>,
    /// With `need_weights`: per item, the weights of every head (`h` matrices `(T_q, T_k)`),
    /// or with `average_weights` their mean (one matrix). In training these are the weights
    /// after dropout, i.e. the ones that multiplied V.
    pub weights: Option<Vec<Vec<Matrix>>>,
}

/// What [`MultiHeadAttention::forward_batch`] returns, flat and row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchOutput<F> {
    /// `[B, T_q, C]`.
    pub output: Vec<F>,
    /// With `need_weights`: `[B, h, T_q, T_k]`, or `[B, T_q, T_k]` with `average_weights`.
    pub weights: Option<Vec<F>>,
}

/// `"query"` or `"query[b]"`.
pub(super) fn item_name(name: &str, batched: bool, b: usize) -> String {
    if batched {
        format!("{name}[{b}]")
    } else {
        name.to_string()
    }
}

/// The `(rows, cols)` of each matrix.
pub(super) fn shapes(items: &[Matrix]) -> Vec<(usize, usize)> {
    items.iter().map(Matrix::shape).collect()
}

/// Matrices one after another, flat, as a batch (`items` empty: no rows).
pub(super) fn flatten<F: Real>(items: &[Matrix<F>]) -> (Vec<F>, usize, usize) {
    let (rows, cols) = items.first().map_or((0, 0), Matrix::shape);
    (items.iter().flat_map(|m| m.data().iter().copied()).collect(), rows, cols)
}

/// A flat `[B, rows, cols]` back into `B` matrices.
pub(super) fn unflatten<F: Real>(data: Vec<F>, rows: usize, cols: usize) -> Result<Vec<Matrix<F>>> {
    let n = (rows * cols).max(1);
    data.chunks(n).map(|item| Matrix::new(rows, cols, item.to_vec())).collect()
}

impl MultiHeadAttention {
    /// Runs the layer on a batch of f64 matrices (a one-item batch for unbatched input) and
    /// remembers what `backward` needs: [`Self::forward_batch`] after checking every item's shape.
    pub fn forward(&mut self, query: &[Matrix], key: &[Matrix], value: &[Matrix], options: &ForwardOptions) -> Result<ForwardOutput> {
        let (t_q, t_k) = self.check_items(&shapes(query), &shapes(key), &shapes(value), options)?;
        let ((q, _, c), (k, ..), (v, ..)) = (flatten(query), flatten(key), flatten(value));
        let b = query.len();
        let result = self.forward_batch(Batch::new(&q, b, t_q, c), Batch::new(&k, b, t_k, c), Batch::new(&v, b, t_k, c), options)?;
        Ok(self.matrices(result, b, t_q, t_k, options)?)
    }

    /// A [`BatchOutput`] as [`ForwardOutput`]'s matrices.
    fn matrices(&self, result: BatchOutput<f64>, b: usize, t_q: usize, t_k: usize, options: &ForwardOptions) -> Result<ForwardOutput> {
        let per_item = if options.average_weights { 1 } else { self.number_of_heads };
        let weights = result.weights.map(|w| unflatten(w, t_q, t_k)).transpose()?;
        let weights = weights.map(|all| all.chunks(per_item).take(b).map(<[Matrix]>::to_vec).collect());
        Ok(ForwardOutput { output: unflatten(result.output, t_q, self.embed_dim)?, weights })
    }

    /// The forward pass in either precision (see the module docs): `query` is `[B, T_q, C]`, `key`
    /// and `value` `[B, T_k, C]`. Keeps what `backward` needs in training, and in evaluation mode
    /// when the precision does ([`Precision::EVALUATION_KEEPS`](crate::precision::Precision::EVALUATION_KEEPS)); otherwise it forgets the last
    /// forward pass, so a following `backward` is a `State` error. On an error nothing changes.
    pub fn forward_batch<F: LayerKernel>(&mut self, query: Batch<F>, key: Batch<F>, value: Batch<F>, options: &ForwardOptions) -> Result<BatchOutput<F>> {
        let (b, t_q, t_k) = (query.items, query.rows, key.rows);
        self.check_batches(&query, &key, &value, options)?;
        let keep = options.training || F::EVALUATION_KEEPS;
        // pass 5's dropout: (p, 1/(1−p) computed in f64 and rounded once)
        let dropout = (options.training && self.dropout > 0.0).then(|| (self.dropout, F::from_f64(1.0 / (1.0 - self.dropout))));
        check_forward(self, b, t_q, t_k, (options.need_weights, options.average_weights, dropout.is_some()), keep, F::PARAMETER_ROWS)?;
        let positions = Positions::aligned(t_q, t_k);
        let w = F::prepared(self, false);
        // Draw into a copy of the generator and commit it only on success
        let mut rng = self.dropout_rng.clone();
        let run = ItemRun { w: &w, t_q, t_k, options, project_at: positions, positions, dropout, keep };
        let (output, items) = self.forward_items(&run, (query, key, value), None, &mut rng)?;
        self.dropout_rng = rng;
        self.kept = keep.then(|| F::wrap(ForwardCache { batched: options.batched, t_q, t_k, items, positions, keep_scale: dropout.map(|(_, s)| s) }));
        self.last_forward = if keep { LastForward::Kept } else { LastForward::Evaluation };
        Ok(output)
    }

    /// Every batch item's passes 0–8 ([`Self::forward_item`]), each item's K and V appended to its
    /// sequence in `store` when decoding with a KV cache: the output, the weights when asked for and
    /// what the backward needs when the forward keeps; or the first item's error, named.
    fn forward_items<F: LayerKernel>(&self, run: &ItemRun<'_, F>, (query, key, value): (Batch<F>, Batch<F>, Batch<F>), mut store: Option<&mut Held<F>>, rng: &mut SplitMix64) -> Result<(BatchOutput<F>, Vec<ItemCache<F>>)> {
        let (b, c, options) = (query.items, self.embed_dim, run.options);
        let per_item = if options.average_weights { 1 } else { self.number_of_heads };
        // The items are independent: split them across threads (each item's results are the same
        // either way), except with dropout, whose one generator draws through the items in order,
        // with a KV cache, and when the weights are returned (each item's would be held twice, its
        // own and the batch's)
        let split = store.is_none() && run.dropout.is_none() && !options.need_weights && crate::parallel::worth_splitting(b, b * (run.t_q + 2 * run.t_k) * c * c);
        let results = if split {
            let base = rng.clone(); // no draws without dropout
            crate::parallel::map(b, true, |i| self.forward_item(run, (query.item(i), key.item(i), value.item(i)), None, &mut base.clone(), &mut Workspace::new()))
        } else {
            let mut workspace = Workspace::new();
            let mut results = Vec::with_capacity(b);
            for i in 0..b {
                let held = store.as_mut().map(|s| (&mut s.keys[i], &mut s.values[i]));
                results.push(self.forward_item(run, (query.item(i), key.item(i), value.item(i)), held, rng, &mut workspace));
                if results[i].is_err() {
                    break;
                }
            }
            results
        };
        let mut output = Vec::with_capacity(b * run.t_q * c);
        let mut weights = options.need_weights.then(|| Vec::with_capacity(b * per_item * run.t_q * run.t_k));
        let mut items = Vec::with_capacity(if run.keep { b } else { 0 });
        for (i, result) in results.into_iter().enumerate() {
            let item = result.map_err(|e| at_item(e, options.batched, i))?; // the first item that failed, as in order
            output.extend_from_slice(&item.output);
            if let (Some(all), Some(w)) = (weights.as_mut(), item.weights) {
                all.extend_from_slice(&w);
            }
            items.extend(item.cache);
        }
        Ok((BatchOutput { output, weights }, items))
    }

    /// Passes 0–8 for one batch item (`x_q (T_q, C)`, `x_k` and `x_v (T_k, C)`): its output
    /// `(T_q, C)`, its weights when asked for (`[h, T_q, T_k]` or their mean), and what the backward
    /// needs when the forward keeps. Dropout draws from `rng`. With `held`, the item's keys and
    /// values in a KV cache, K and V are appended to them and the heads attend over all they hold.
    // one body per precision, not one per caller (the threads split and the loop in order)
    #[inline(never)]
    fn forward_item<F: LayerKernel>(&self, run: &ItemRun<'_, F>, (x_q, x_k, x_v): (&[F], &[F], &[F]), held: Option<(&mut Vec<F>, &mut Vec<F>)>, rng: &mut SplitMix64, workspace: &mut Workspace<F>) -> Result<ItemOutput<F>> {
        let (c, h, kv_c) = (self.embed_dim, self.number_of_heads, self.kv_heads * self.head_dimensions);
        let (w, t_q, t_k, options) = (run.w, run.t_q, run.t_k, run.options);
        let per_item = if options.average_weights { 1 } else { h };
        let mut weights = options.need_weights.then(|| vec![F::ZERO; per_item * t_q * t_k]);
        // 0. Q = x_q·W_Q + b_Q (T_q, C) = (T_q, C)·(C, C), K = x_k·W_K + b_K and V = x_v·W_V + b_V
        // (T_k, C_kv) = (T_k, C)·(C, C_kv), each refused where it overflowed (finite inputs and
        // weights, so a non-finite entry is beyond the precision); then Q and K rotated with RoPE
        let inputs = [(x_q, t_q, c), (x_k, x_k.len() / c, kv_c), (x_v, x_k.len() / c, kv_c)];
        let [mut q, mut k, v] = [0, 1, 2].map(|i| {
            let (x, rows, cols) = inputs[i];
            let mut out = vec![F::ZERO; rows * cols];
            F::project(x, rows, w.w[i], w.bias(i), &mut out);
            out
        });
        for (i, (m, (_, _, cols))) in [&q, &k, &v].into_iter().zip(inputs).enumerate() {
            F::refuse_projection(m, cols, i, w.b.is_some())?;
        }
        self.rotate(&mut q, c, run.project_at.query, "Q")?;
        self.rotate(&mut k, kv_c, run.project_at.key, "K")?;
        // 1–7. The engine: per head and block, scores, scale, softmax (kept, and dropped out,
        // by the hook), used·V_g, straight into the head's columns of concat (T_q, C); with a KV
        // cache over every key it holds, K and V appended first: (held + T_new, C_kv)
        let (k_all, v_all) = match held {
            Some((keys, values)) => {
                keys.extend_from_slice(&k);
                values.extend_from_slice(&v);
                (&keys[..], &values[..])
            }
            None => (&k[..], &v[..]),
        };
        let mut hook = Keep { t_q, t_k, dropout: run.dropout, rng, heads: Vec::new(), keep: run.keep, write: weights.as_deref_mut(), average: options.average_weights };
        let mut shape = HeadShape::new(t_q, t_k, h, self.kv_heads, self.head_dimensions);
        shape.offset = run.positions.offset(t_q, t_k);
        let concat = heads(Cols::all(&q, c), Cols::all(k_all, kv_c), Cols::all(v_all, kv_c), shape, &options.mask, workspace, &mut hook)?;
        let kept = hook.heads;
        // their mean: the heads' sum (the hook's, in head order from zero) divided by h
        if let (Some(all), true) = (weights.as_mut(), options.average_weights) {
            all.iter_mut().for_each(|m| *m = *m / F::from_usize(h));
        }
        // 8. output = concat·W_O + b_O
        let mut output = vec![F::ZERO; t_q * c];
        F::project(&concat, t_q, w.w[3], w.bias(3), &mut output); // (T_q, C) = (T_q, C)·(C, C)
        F::refuse_projection(&output, c, 3, w.b.is_some())?;
        if !run.keep {
            return Ok(ItemOutput { output, weights, cache: None });
        }
        // self-attention (the same bits in all three inputs) keeps one copy
        let same = |a: &[F], b: &[F]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_f64().to_bits() == y.to_f64().to_bits());
        let copy = |x: &[F]| (!same(x_q, x)).then(|| x.to_vec());
        let cache = ItemCache { x_q: x_q.to_vec(), x_k: copy(x_k), x_v: copy(x_v), q, k, v, heads: kept, concat };
        Ok(ItemOutput { output, weights, cache: Some(cache) })
    }

    /// `m` (`cols` columns, called `name`) with every head rotated by RoPE, row 0 at `position`
    /// (unchanged without RoPE); a RangeError past position 2^20 or beyond the precision.
    pub(super) fn rotate<F: Real>(&self, m: &mut [F], cols: usize, position: usize, name: &str) -> Result<()> {
        if let Some(rope) = self.rope {
            Rope::check_positions(position, m.len() / cols.max(1), &format!("{name}'s rows"))?;
            rope.check_angles(position, m.len() / cols.max(1), self.head_dimensions, "rope.base")?;
            rope.rotate(m, cols, self.head_dimensions, position, false);
            Rope::refuse_overflow(m, cols, name)?;
        }
        Ok(())
    }

    /// Checks a batch of matrices given by their shapes `(rows, cols)`, every item its own (what a
    /// `number[][]` batch may be before it is one flat [`Batch`]), and returns `(T_q, T_k)`.
    pub fn check_items(&self, query: &[(usize, usize)], key: &[(usize, usize)], value: &[(usize, usize)], options: &ForwardOptions) -> Result<(usize, usize)> {
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
            for (b, &(rows, cols)) in items.iter().enumerate() {
                let here = item_name(name, batched, b);
                if rows == 0 {
                    return Err(AttentionError::range_error(format!("{here} is {}; expected at least one row", shape_text(rows, cols))));
                }
                if cols != c {
                    return Err(AttentionError::range_error(format!(
                        "{here} is {} but the layer's embedDim is {c}: {name} must be T×{c}",
                        shape_text(rows, cols)
                    )));
                }
                if rows != first.0 {
                    return Err(AttentionError::range_error(format!(
                        "{here} is {} but {name}[0] is {}: every item of a batch must have the same T",
                        shape_text(rows, cols),
                        shape_text(first.0, first.1)
                    )));
                }
            }
        }
        let (t_q, t_k) = (query[0].0, key[0].0);
        self.check_rest(t_q, t_k, value[0].0, options)?;
        Ok((t_q, t_k))
    }

    /// Checks three flat batches: `[B, T_q, C]`, `[B, T_k, C]`, `[B, T_k, C]`, `B, T > 0`.
    fn check_batches<F>(&self, query: &Batch<F>, key: &Batch<F>, value: &Batch<F>, options: &ForwardOptions) -> Result<()> {
        let (b, c) = (query.items, self.embed_dim);
        for (name, x) in [("query", query), ("key", key), ("value", value)] {
            if x.items != b || x.rows == 0 || x.cols != c || x.data.len() != x.items * x.rows * c {
                return Err(AttentionError::range_error(format!(
                    "{name} has {} values, which is not [B = {b}, T, C = {c}] with T > 0",
                    x.data.len()
                )));
            }
        }
        if b == 0 {
            return Err(AttentionError::range_error("query is an empty batch; expected at least one item"));
        }
        self.check_rest(query.rows, key.rows, value.rows, options)
    }

    /// The checks after the shapes: T of value, the mask's shape, averageWeights, and with RoPE `T_q ≤ T_k`.
    fn check_rest(&self, t_q: usize, t_k: usize, t_v: usize, options: &ForwardOptions) -> Result<()> {
        if t_v != t_k {
            return Err(AttentionError::range_error(format!(
                "value has T = {t_v} rows but key has T_k = {t_k}: each key position needs one value"
            )));
        }
        options.mask.check_shape(t_q, t_k)?;
        if options.average_weights && !options.need_weights {
            return Err(AttentionError::type_error(
                "options.averageWeights only applies with options.needWeights: true; set both or neither",
            ));
        }
        // with RoPE the queries are the last T_q of the T_k positions
        if self.rope.is_some() && t_q > t_k {
            return Err(AttentionError::range_error(format!(
                "query has T_q = {t_q} rows but key has T_k = {t_k}: with rope the queries are the last T_q of the T_k positions, so T_q ≤ T_k"
            )));
        }
        Ok(())
    }

    /// [`Self::forward_cached_batch`] on f64 matrices (every item's shape checked).
    pub fn forward_cached(&mut self, x: &[Matrix], cache: &mut KvCache, options: &ForwardOptions) -> Result<ForwardOutput> {
        let t_new = self.check_cached_items(&shapes(x), cache, options)?;
        let (data, _, c) = flatten(x);
        let t_all = cache.held() + t_new; // the keys the new rows attend over
        let result = self.forward_cached_batch(Batch::new(&data, x.len(), t_new, c), cache, options)?;
        self.matrices(result, x.len(), t_new, t_all, options)
    }

    /// Checks a cached forward's input given by its items' shapes (see [`Self::check_items`]): the
    /// cache first, then the shapes; returns T_new.
    pub fn check_cached_items(&self, x: &[(usize, usize)], cache: &KvCache, options: &ForwardOptions) -> Result<usize> {
        check_cached(self, cache, x.len(), options)?;
        Ok(self.check_items(x, x, x, options)?.0)
    }

    /// Decoding with a KV cache, in either precision: projects `x` (`[B, T_new, C]`, B as the
    /// cache's once it has one), rotates Q and K at positions `cache.length() …`, appends K and V to
    /// the cache and attends causally over everything it holds (with `mask.window`, the cache then
    /// drops the keys no later query can see). Row for row this is one causal forward over the
    /// whole sequence in the same precision. The cache holds the precision of the forward that
    /// filled it; another precision is a TypeError until `reset()`. Keeps nothing for `backward`.
    /// On an error the cache is unchanged.
    pub fn forward_cached_batch<F: LayerKernel>(&mut self, x: Batch<F>, cache: &mut KvCache, options: &ForwardOptions) -> Result<BatchOutput<F>> {
        check_cached(self, cache, x.items, options)?;
        self.check_batches(&x, &x, &x, options)?;
        let (b, t_new) = (x.items, x.rows);
        let held = cache.held();
        check_cached_budget(self, b, t_new, held + t_new, options.need_weights)?;
        if cache.items == 0 {
            cache.store = Some(F::wrap(Held::new(b, self.kv_heads * self.head_dimensions)));
        }
        let store = cache.store.as_mut().and_then(F::get_mut).ok_or_else(|| {
            AttentionError::type_error(format!(
                "options.cache holds keys and values of {} input but this input is {}: a cache decodes in one precision (reset() it, or use another createCache())",
                F::OTHER_INPUT,
                F::INPUT
            ))
        })?;
        let w = F::prepared(self, false);
        // query i at position length + i, key j at start + j; the new rows projected at length …
        let (length, start) = (cache.length, cache.start);
        let (project_at, positions) = (Positions { query: length, key: length }, Positions { query: length, key: start });
        let run = ItemRun { w: &w, t_q: t_new, t_k: held + t_new, options, project_at, positions, dropout: None, keep: false };
        let mut rng = self.dropout_rng.clone(); // no dropout draws: decoding is evaluation
        let output = match self.forward_items(&run, (x, x, x), Some(&mut *store), &mut rng) {
            Ok((output, _)) => output,
            Err(e) => {
                // every item cut back to what it held
                store.keep_rows(0, held);
                if cache.items == 0 {
                    cache.store = None;
                }
                return Err(e);
            }
        };
        // commit. With a window w no later query sees a position before length + 1 − w; those rows
        // are dropped once they are w or more (so the cache holds fewer than 2·w positions, and
        // dropping costs O(1) per token amortised)
        cache.items = b;
        cache.length += t_new;
        if let Some(w) = options.mask.window {
            let visible_from = (cache.length + 1).saturating_sub(w).max(cache.start);
            if visible_from - cache.start >= w.max(1) {
                store.keep_rows(visible_from - cache.start, held + t_new);
                cache.start = visible_from;
            }
        }
        self.kept = None;
        self.last_forward = LastForward::Cached;
        Ok(output)
    }
}

/// What every item of one `forward_batch` shares.
struct ItemRun<'a, F: LayerKernel> {
    w: &'a Prepared<'a, F>,
    t_q: usize,
    t_k: usize,
    options: &'a ForwardOptions,
    /// Where Q's and K's rows are rotated (the new rows' positions, with a KV cache).
    project_at: Positions,
    /// Where the queries and the keys attended over are.
    positions: Positions,
    /// `(p, 1/(1−p) in F)` in training with `p > 0`.
    dropout: Option<(f64, F)>,
    /// Whether the forward keeps what the backward needs.
    keep: bool,
}

/// One item's results (see [`MultiHeadAttention::forward_item`]).
struct ItemOutput<F> {
    output: Vec<F>,
    weights: Option<Vec<F>>,
    cache: Option<ItemCache<F>>,
}

/// The engine's hook of the layer's forward. With `keep`, every head's softmax weights are kept for
/// `backward` and, in training with `p > 0`, pass 5's dropout is applied to them before the weighted
/// sum: one `next_unit()` per entry of the head's `T_q × T_k`, row-major (the blocks come in row
/// order), including the keys a causal block skips (masked: their weight is 0 either way); an entry
/// is dropped when its draw is `< p`, `used = weights ⊙ factor`, `factor ∈ {0, 1/(1−p)}`. With
/// `write`, the weights that multiply V are written into it, every head's `[h, T_q, T_k]` row-major,
/// or with `average` added up over the heads in order, `[T_q, T_k]` (keys a causal block skips stay
/// as they are: zeros); with neither it is inert, and the engine may run the heads on threads.
struct Keep<'a, F> {
    t_q: usize,
    t_k: usize,
    /// `(p, 1/(1−p) in F)`.
    dropout: Option<(f64, F)>,
    rng: &'a mut SplitMix64,
    heads: Vec<HeadCache<F>>,
    keep: bool,
    write: Option<&'a mut [F]>,
    average: bool,
}

impl<F: Real> Hooks<F> for Keep<'_, F> {
    fn head_start(&mut self, _head: usize, _q: Cols<F>, _k: Cols<F>, _v: Cols<F>) -> Result<()> {
        let n = self.t_q * self.t_k; // (T_q, T_k)
        if self.keep {
            self.heads.push(HeadCache { weights: vec![F::ZERO; n], kept: self.dropout.map(|_| vec![false; n]), used: None });
        }
        Ok(())
    }

    fn weights(&mut self, head: usize, first: usize, weights: &mut [F], n_keys: usize) -> Result<()> {
        if self.keep {
            let cache = self.heads.last_mut().ok_or_else(|| AttentionError::State("weights before any head".into()))?;
            for (i, row) in weights.chunks_exact_mut(n_keys).enumerate() {
                let at = (first + i) * self.t_k;
                cache.weights[at..at + n_keys].copy_from_slice(row);
                if let (Some((p, keep_scale)), Some(kept)) = (self.dropout, cache.kept.as_mut()) {
                    for j in 0..self.t_k {
                        let keep = self.rng.next_unit() >= p; // dropped when the draw is < p
                        kept[at + j] = keep;
                        if j < n_keys {
                            row[j] = row[j] * if keep { keep_scale } else { F::ZERO };
                        }
                    }
                }
            }
        }
        if let Some(out) = self.write.as_deref_mut() {
            let head_row = if self.average { 0 } else { head * self.t_q };
            for (i, row) in weights.chunks_exact(n_keys).enumerate() {
                let at = (head_row + first + i) * self.t_k;
                if self.average {
                    out[at..at + n_keys].iter_mut().zip(row).for_each(|(m, &x)| *m += x);
                } else {
                    out[at..at + n_keys].copy_from_slice(row);
                }
            }
        }
        Ok(())
    }

    fn inert(&self) -> bool {
        !self.keep && self.write.is_none()
    }
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

#[cfg(test)]
mod tests {
    //! The f32 forward against the f64 one, and its errors.
    use super::*;
    use crate::error::AttentionError;
    use crate::layer::{ForwardOutput, LayerConfig, Weights};
    use crate::precision::Precision;
    use crate::mask::{BoolMatrix, Mask};
    use crate::matrix::Matrix;
    use crate::testing::seeded_matrix;

    type BatchF32<'a> = Batch<'a, f32>;

    fn layer(c: usize, h: usize, bias: bool, seed: u64) -> MultiHeadAttention {
        let mut layer = MultiHeadAttention::new(&LayerConfig { bias, seed, ..LayerConfig::new(c, h) }).unwrap();
        // non-zero biases, so that a bias mistake shows
        let mut weights = layer.weights().into_owned();
        if let Some(b) = &mut weights.biases {
            for (i, v) in [&mut b.b_q, &mut b.b_k, &mut b.b_v, &mut b.b_o].into_iter().enumerate() {
                *v = seeded_matrix(1, c, seed + 50 + i as u64).into_data();
            }
        }
        layer.set_weights(weights).unwrap();
        layer
    }

    /// A batch as f64 matrices (rounded through f32, so both paths see the same inputs) and as flat f32.
    fn batch(b: usize, t: usize, c: usize, seed: u64) -> (Vec<Matrix>, Vec<f32>) {
        let items: Vec<Matrix> = (0..b).map(|i| seeded_matrix(t, c, seed + 100 * i as u64).cast::<f32>().cast()).collect();
        let flat = items.iter().flat_map(|m| m.data().iter().map(|&x| x as f32)).collect();
        (items, flat)
    }

    fn assert_near(got: &[f32], want: impl IntoIterator<Item = f64>, tolerance: f64) {
        let want: Vec<f64> = want.into_iter().collect();
        assert_eq!(got.len(), want.len());
        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
            assert!((*a as f64 - b).abs() <= tolerance, "element {i}: {a} vs {b}");
        }
    }

    fn flat(output: &ForwardOutput) -> Vec<f64> {
        output.output.iter().flat_map(|m| m.data().to_vec()).collect()
    }

    #[test]
    fn agrees_with_the_f64_forward_across_blocks_masks_batches_and_cross_attention() {
        // T_q = 70 spans two query blocks; T_k = 90 differs (cross-attention)
        let (b, t_q, t_k, c, h) = (2, 70, 90, 12, 3);
        let (xq, fq) = batch(b, t_q, c, 1);
        let (xk, fk) = batch(b, t_k, c, 2);
        let (xv, fv) = batch(b, t_k, c, 3);
        let table: Vec<bool> = (0..t_q * t_k).map(|n| (n * 7919) % 5 != 0).collect();
        let explicit = BoolMatrix::new(t_q, t_k, table).unwrap();
        let masks = [Mask::none(), Mask::causal(), Mask { causal: false, allowed: Some(explicit.clone()), window: None }, Mask { causal: true, allowed: Some(explicit), window: None }];
        for bias in [true, false] {
            let mut layer = layer(c, h, bias, 7);
            for mask in &masks {
                for (need_weights, average_weights) in [(false, false), (true, false), (true, true)] {
                    let options = ForwardOptions { mask: mask.clone(), need_weights, average_weights, training: false, batched: true };
                    let want = layer.forward(&xq, &xk, &xv, &options).unwrap();
                    let (q, k, v) = (BatchF32::new(&fq, b, t_q, c), BatchF32::new(&fk, b, t_k, c), BatchF32::new(&fv, b, t_k, c));
                    let got = layer.forward_batch(q, k, v, &options).unwrap();
                    assert_near(&got.output, flat(&want), 1e-4);
                    match (&got.weights, &want.weights) {
                        (None, None) => {}
                        (Some(got), Some(want)) => assert_near(got, want.iter().flatten().flat_map(|m| m.data().to_vec()), 1e-5),
                        _ => panic!("weights present in one path only"),
                    }
                }
            }
        }
    }

    #[test]
    fn f32_decoding_through_the_cache_is_one_causal_f32_pass() {
        // grouped heads, RoPE, a batch; with and without a window. Without a window, chunks of whole
        // query blocks give the pass's bits; other chunks, and a window's dropped keys, move keys in
        // and out of the f32 softmax's 8-lane tail, which changes the order of its row sum: the last
        // bits, within the f32 bound
        let (b, t, c, h) = (2, 75, 16, 4);
        let config = LayerConfig { kv_heads: 2, rope: Some(crate::engine::Rope::default()), seed: 9, ..LayerConfig::new(c, h) };
        let mut layer = MultiHeadAttention::new(&config).unwrap();
        let (x, fx) = batch(b, t, c, 4);
        for window in [None, Some(7)] {
            let mask = Mask { causal: true, allowed: None, window };
            let options = ForwardOptions { mask, batched: true, ..ForwardOptions::default() };
            let whole = layer.forward_batch(BatchF32::new(&fx, b, t, c), BatchF32::new(&fx, b, t, c), BatchF32::new(&fx, b, t, c), &options).unwrap().output;
            for (chunks, bits) in [(&[(0, 64), (64, t)][..], true), (&[(0, 1), (1, 66), (66, 70), (70, t)][..], false)] {
                let mut cache = layer.create_cache();
                let mut decoded = vec![Vec::new(); b];
                for &(from, to) in chunks {
                    let chunk: Vec<f32> = (0..b).flat_map(|i| fx[(i * t + from) * c..(i * t + to) * c].to_vec()).collect();
                    let out = layer.forward_cached_batch(BatchF32::new(&chunk, b, to - from, c), &mut cache, &options).unwrap().output;
                    for (i, d) in decoded.iter_mut().enumerate() {
                        d.extend_from_slice(&out[i * (to - from) * c..(i + 1) * (to - from) * c]);
                    }
                }
                let decoded: Vec<f32> = decoded.concat();
                if bits && window.is_none() {
                    assert!(decoded.iter().zip(&whole).all(|(a, w)| a.to_bits() == w.to_bits()), "window {window:?}: block-aligned cached f32 decoding differs from one causal f32 pass");
                } else {
                    assert_near(&decoded, whole.iter().map(|&x| f64::from(x)), 2e-7);
                }
                // and it is the f64 decoding to f32 rounding
                let want = layer.forward(&x, &x, &x, &options).unwrap();
                assert_near(&decoded, flat(&want), 1e-5);
                if let Some(w) = window {
                    assert!(cache.held() < 2 * w, "a window of {w} holds {} positions", cache.held());
                }
            }
        }
    }

    #[test]
    fn a_cache_decodes_in_one_precision_until_reset() {
        let (c, t) = (8, 3);
        let mut layer = layer(c, 2, true, 5);
        let (x, fx) = batch(1, t, c, 2);
        let options = ForwardOptions { mask: Mask::causal(), ..ForwardOptions::default() };
        let mut cache = layer.create_cache();
        layer.forward_cached_batch(BatchF32::new(&fx, 1, t, c), &mut cache, &options).unwrap();
        let before = cache.clone();
        let err = layer.forward_cached(&x, &mut cache, &options).unwrap_err();
        assert!(matches!(err, AttentionError::Type(_)) && err.message().starts_with("options.cache holds keys and values of Float32Array input but this input is number[][] or Float64Array"), "{err}");
        assert_eq!(cache, before, "a refused forward leaves the cache as it was");
        cache.reset();
        layer.forward_cached(&x, &mut cache, &options).unwrap();
        assert_eq!(cache.length(), t);
    }

    #[test]
    fn weights_are_packed_per_set_of_weights() {
        let (c, t) = (8, 5);
        let mut layer = layer(c, 2, true, 3);
        let (x, fx) = batch(1, t, c, 9);
        let input = BatchF32::new(&fx, 1, t, c);
        let options = ForwardOptions::default();
        let before = layer.forward_batch(input, input, input, &options).unwrap();
        assert!(layer.packed_f32.get().is_some());
        // new weights must be used by the next f32 forward (the packed ones are dropped)
        let mut weights = layer.weights().into_owned();
        weights.w_o = seeded_matrix(c, c, 77);
        layer.set_weights(weights).unwrap();
        assert!(layer.packed_f32.get().is_none());
        let after = layer.forward_batch(input, input, input, &options).unwrap();
        assert_ne!(before.output, after.output);
        let want = layer.forward(&x, &x, &x, &options).unwrap();
        assert_near(&after.output, flat(&want), 1e-5);
    }

    #[test]
    fn a_layer_with_f32_weights_lent_computes_what_it_computes_with_its_own() {
        let (c, t) = (8, 5);
        let mut own = layer(c, 2, true, 3);
        // weights that are f32 values already, as a float32 model's parameters are
        let weights: Weights<f32> = own.weights_in::<f32>().unwrap().into_owned();
        own.set_weights(weights.cast()).unwrap();
        let mut lent = own.clone();
        lent.hold_nothing();
        assert!(lent.reclaim::<f32>().is_none() && lent.has_bias());
        lent.lend(weights.clone());
        assert_eq!(*lent.weights_in::<f32>().unwrap(), weights);
        assert_eq!(*lent.weights(), *own.weights());
        let (x, fx) = batch(1, t, c, 9);
        let (_, fg) = batch(1, t, c, 10);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        // 5 rows (packed as they go) and 1 row (read in place): the bits of the layer's own packed weights
        for rows in [t, 1] {
            let (input, grad) = (BatchF32::new(&fx[..rows * c], 1, rows, c), BatchF32::new(&fg[..rows * c], 1, rows, c));
            let training = ForwardOptions { training: true, ..ForwardOptions::default() };
            let want = own.forward_batch(input, input, input, &training).unwrap();
            let got = lent.forward_batch(input, input, input, &training).unwrap();
            assert_eq!(bits(&got.output), bits(&want.output));
            // the backward's transposed products read the lent weights as they lie
            let (want, got) = (own.backward_batch(grad, false).unwrap(), lent.backward_batch(grad, false).unwrap());
            assert_eq!((bits(&got.query), bits(&got.key), bits(&got.value)), (bits(&want.query), bits(&want.key), bits(&want.value)));
            assert_eq!(*lent.grads_in::<f32>().unwrap(), *own.grads_in::<f32>().unwrap());
        }
        // an f64 pass widens the lent weights (exactly)
        let options = ForwardOptions::default();
        assert_eq!(lent.forward(&x, &x, &x, &options).unwrap().output, own.forward(&x, &x, &x, &options).unwrap().output);
        // reclaimed: the same values, moved back
        assert_eq!(lent.reclaim::<f32>(), Some(weights));
        assert!(lent.reclaim::<f32>().is_none());
    }

    #[test]
    fn backward_after_an_f32_forward_is_refused_and_an_f64_forward_restores_it() {
        let (c, t) = (4, 3);
        let mut layer = layer(c, 2, true, 1);
        let (x, fx) = batch(1, t, c, 2);
        let input = BatchF32::new(&fx, 1, t, c);
        layer.forward(&x, &x, &x, &ForwardOptions::default()).unwrap();
        layer.forward_batch(input, input, input, &ForwardOptions::default()).unwrap();
        assert_eq!(layer.last_forward, LastForward::Evaluation);
        let err = layer.backward(&x, false).unwrap_err();
        assert!(matches!(err, AttentionError::State(_)));
        assert!(err.message().starts_with("backward cannot differentiate a Float32Array forward"), "{err}");
        layer.forward(&x, &x, &x, &ForwardOptions::default()).unwrap();
        assert_ne!(layer.last_forward, LastForward::Evaluation);
        layer.backward(&x, false).unwrap();
    }

    #[test]
    fn training_without_dropout_is_the_evaluation_forward_bit_for_bit() {
        // blocks past 64 rows, cross-attention, GQA, RoPE, masks, a batch: the hook keeps, changes nothing
        let (b, t_q, t_k, c, h) = (2, 70, 90, 16, 4);
        let config = LayerConfig { kv_heads: 2, rope: Some(crate::engine::Rope::default()), seed: 5, ..LayerConfig::new(c, h) };
        let mut layer = MultiHeadAttention::new(&config).unwrap();
        let (_, fq) = batch(b, t_q, c, 1);
        let (_, fk) = batch(b, t_k, c, 2);
        let (_, fv) = batch(b, t_k, c, 3);
        let (q, k, v) = (BatchF32::new(&fq, b, t_q, c), BatchF32::new(&fk, b, t_k, c), BatchF32::new(&fv, b, t_k, c));
        for mask in [Mask::none(), Mask::causal(), Mask { causal: true, allowed: None, window: Some(9) }] {
            for average_weights in [false, true] {
                let eval = ForwardOptions { mask: mask.clone(), need_weights: true, average_weights, batched: true, ..ForwardOptions::default() };
                let train = ForwardOptions { training: true, ..eval.clone() };
                let want = layer.forward_batch(q, k, v, &eval).unwrap();
                let got = layer.forward_batch(q, k, v, &train).unwrap();
                assert_eq!(got, want);
                assert!(layer.kept.as_ref().is_some_and(|kept| kept.dtype() == "float32") && layer.last_forward != LastForward::Evaluation);
            }
        }
    }

    #[test]
    fn training_drops_the_f64_paths_entries_and_agrees_with_its_output() {
        let (c, t, b) = (8, 70, 2);
        let config = LayerConfig { dropout: 0.25, seed: 4, ..LayerConfig::new(c, 2) };
        let (x, fx) = batch(b, t, c, 6);
        let options = ForwardOptions { training: true, need_weights: true, mask: Mask::causal(), batched: true, ..ForwardOptions::default() };
        let (mut f64_layer, mut f32_layer) = (MultiHeadAttention::new(&config).unwrap(), MultiHeadAttention::new(&config).unwrap());
        let input = BatchF32::new(&fx, b, t, c);
        // two passes: the generators advance alike
        for _ in 0..2 {
            let want = f64_layer.forward(&x, &x, &x, &options).unwrap();
            let got = f32_layer.forward_batch(input, input, input, &options).unwrap();
            let (Some(f64_cache), Some(f32_cache)) = (f64_layer.kept.as_ref().and_then(f64::get), f32_layer.kept.as_ref().and_then(f32::get)) else { panic!("both kept") };
            let mut dropped = 0;
            for (want, got) in f64_cache.items.iter().zip(&f32_cache.items) {
                for (want, got) in want.heads.iter().zip(&got.heads) {
                    for (&want, &kept) in want.kept.as_ref().unwrap().iter().zip(got.kept.as_ref().unwrap()) {
                        assert_eq!(want, kept);
                        dropped += usize::from(!kept);
                    }
                }
            }
            assert!(dropped > 0);
            // the same weights dropped: the f32 results are the f64 ones to f32 rounding
            assert_near(&got.output, flat(&want), 1e-4);
            assert_near(&got.weights.unwrap(), want.weights.unwrap().iter().flatten().flat_map(|m| m.data().to_vec()), 1e-5);
        }
    }

    #[test]
    fn backward_of_either_precision_after_an_f32_training_forward() {
        let (c, t, b) = (8, 5, 2);
        let mut layer = layer(c, 2, true, 3);
        let (_, fx) = batch(b, t, c, 6);
        let (g, fg) = batch(b, t, c, 7);
        let input = BatchF32::new(&fx, b, t, c);
        let options = ForwardOptions { training: true, batched: true, ..ForwardOptions::default() };
        layer.forward_batch(input, input, input, &options).unwrap();
        let got = layer.backward_batch(BatchF32::new(&fg, b, t, c), true).unwrap();
        let f32_grads = layer.grads().unwrap().into_owned();
        // f64 gradOutput: the f64 derivative of the same kept values, which the f32 one rounds
        let want = layer.backward(&g, true).unwrap();
        for (got, want) in [(&got.query, &want.query), (&got.key, &want.key), (&got.value, &want.value)] {
            assert_near(got, want.iter().flat_map(|m| m.data().to_vec()), 1e-5);
        }
        let f64_grads = layer.grads().unwrap().into_owned();
        for ((name, got), (_, want)) in f32_grads.tensors().into_iter().zip(f64_grads.tensors()) {
            // grads() widens the f32 gradients exactly
            assert!(got.iter().all(|&x| f64::from(x as f32) == x), "{name} is not an f32 widened");
            let got: Vec<f32> = got.iter().map(|&x| x as f32).collect();
            assert_near(&got, want.iter().copied(), 1e-4);
        }
        // the wrong layout is refused by either
        assert!(layer.backward_batch(BatchF32::new(&fg, b, t, c), false).unwrap_err().message().starts_with("gradOutput is one [T, C] matrix"));
        assert!(layer.backward_batch(BatchF32::new(&fg[..t * c], 1, t, c), true).unwrap_err().message().starts_with("gradOutput has a batch of 1"));
    }

    #[test]
    fn a_gradient_beyond_f32_is_refused_by_name_and_not_stored() {
        let (c, t) = (4, 3);
        let mut layer = layer(c, 2, true, 1);
        let mut weights = layer.weights().into_owned();
        weights.w_o = Matrix::new(c, c, vec![1e30; c * c]).unwrap();
        layer.set_weights(weights).unwrap();
        let (_, fx) = batch(1, t, c, 2);
        let input = BatchF32::new(&fx, 1, t, c);
        layer.forward_batch(input, input, input, &ForwardOptions { training: true, ..ForwardOptions::default() }).unwrap();
        // gradOutput·W_Oᵀ: 4·1e10·1e30 passes 3.4e38 (and is finite in f64)
        let huge = vec![1e10f32; t * c];
        let err = layer.backward_batch(BatchF32::new(&huge, 1, t, c), false).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)) && err.message().starts_with("d_concat[0][0] overflows to Infinity in f32"), "{err}");
        assert!(layer.grads().is_err(), "a refused backward must not store gradients");
        // a parameter gradient summed past f32: C = 1, W_Q = 0 (uniform weights), the rest 1; with
        // x = gradOutput = 1e19 every entry of the pass stays finite but Σ_t x_v·d_V = 5e38
        let mut layer = layer_with_identity(1);
        let mut weights = layer.weights().into_owned();
        weights.w_q = Matrix::zeros(1, 1);
        layer.set_weights(weights).unwrap();
        let big = vec![1e19f32; 5];
        let big = BatchF32::new(&big, 1, 5, 1);
        layer.forward_batch(big, big, big, &ForwardOptions { training: true, ..ForwardOptions::default() }).unwrap();
        let err = layer.backward_batch(big, false).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)) && err.message().starts_with("grads().W_V[0][0] overflows to Infinity in f32"), "{err}");
        assert!(layer.grads().is_err());
        // in f64 the same backward is finite
        assert!(layer.backward(&[Matrix::new(5, 1, vec![1e19; 5]).unwrap()], false).is_ok());
    }

    #[test]
    fn a_training_forward_beyond_the_working_set_is_refused_before_allocating() {
        // 8 heads of 2^14 × 2^14 weights kept for backward (2^31 values): refused; evaluation mode keeps none
        let (c, t) = (8, 1 << 14);
        let mut layer = layer(c, 8, true, 1);
        let x = vec![0.5f32; t * c];
        let input = BatchF32::new(&x, 1, t, c);
        let err = layer.forward_batch(input, input, input, &ForwardOptions { training: true, ..ForwardOptions::default() }).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)) && err.message().starts_with("MultiHeadAttention.forward with a batch of 1, T_q = 16384"), "{err}");
        assert!(layer.kept.is_none());
        // a smaller training pass fits
        let small = BatchF32::new(&x[..128 * c], 1, 128, c);
        assert!(layer.forward_batch(small, small, small, &ForwardOptions { training: true, ..ForwardOptions::default() }).is_ok());
    }

    /// A layer with identity projections and no bias (`output = attention(x, x, x)`).
    fn layer_with_identity(c: usize) -> MultiHeadAttention {
        let mut layer = MultiHeadAttention::new(&LayerConfig { bias: false, ..LayerConfig::new(c, 1) }).unwrap();
        let identity = Matrix::new(c, c, (0..c * c).map(|i| if i % (c + 1) == 0 { 1.0 } else { 0.0 }).collect()).unwrap();
        layer.set_weights(Weights { w_q: identity.clone(), w_k: identity.clone(), w_v: identity.clone(), w_o: identity, biases: None }).unwrap();
        layer
    }

    #[test]
    fn a_training_result_beyond_f32_is_refused() {
        let (c, t) = (4, 3);
        let mut layer = layer(c, 2, true, 1);
        let huge = vec![3e38f32; t * c];
        let huge = BatchF32::new(&huge, 1, t, c);
        let training = ForwardOptions { training: true, ..ForwardOptions::default() };
        let err = layer.forward_batch(huge, huge, huge, &training).unwrap_err();
        // the projection 3e38·Σ|W| passes the largest f32, as in evaluation mode
        assert!(matches!(err, AttentionError::Range(_)) && err.message().contains("overflows to") && err.message().contains("in f32: query·W_Q + b_Q"), "{err}");
        assert!(layer.backward_batch(huge, false).is_err(), "nothing kept by a refused forward");
    }

    #[test]
    fn a_score_beyond_f32_is_refused_not_taken_for_a_masked_key() {
        // identity projections: Q = query, K = key; Q row 0 · K row 0 overflows f32 on the way (the
        // products −3.5e38, 3e38, 3e38), which a softmax would read as a masked key
        let c = 3;
        let mut layer = MultiHeadAttention::new(&LayerConfig { bias: false, ..LayerConfig::new(c, 1) }).unwrap();
        let identity = Matrix::new(c, c, (0..c * c).map(|i| if i % (c + 1) == 0 { 1.0 } else { 0.0 }).collect()).unwrap();
        layer.set_weights(Weights { w_q: identity.clone(), w_k: identity.clone(), w_v: identity.clone(), w_o: identity, biases: None }).unwrap();
        let query = [1e19f32, 1e19, 1e19];
        let key = [-3.5e19f32, 3e19, 3e19, 1.0, 1.0, 1.0];
        let value = [1.0f32, 0.0, 0.0, 0.0, 1.0, 0.0];
        let (q, k, v) = (BatchF32::new(&query, 1, 1, c), BatchF32::new(&key, 1, 2, c), BatchF32::new(&value, 1, 2, c));
        let err = layer.forward_batch(q, k, v, &ForwardOptions::default()).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)) && err.message().starts_with("scores_0[0][0] overflows to -Infinity in f32"), "{err}");
        // training runs the same f32 kernels: the same refusal
        let training = ForwardOptions { training: true, ..ForwardOptions::default() };
        let err = layer.forward_batch(q, k, v, &training).unwrap_err();
        assert!(err.message().starts_with("scores_0[0][0] overflows to -Infinity in f32"), "{err}");
    }

    #[test]
    fn overflow_and_shapes_are_refused() {
        let (c, t) = (4, 3);
        let mut layer = MultiHeadAttention::new(&LayerConfig { dropout: 0.5, ..LayerConfig::new(c, 2) }).unwrap();
        let (_, fx) = batch(1, t, c, 2);
        let input = BatchF32::new(&fx, 1, t, c);
        // without training the dropout does not apply
        layer.forward_batch(input, input, input, &ForwardOptions::default()).unwrap();
        // finite f32 inputs whose projection passes 3.4e38
        let huge = vec![3e38f32; t * c];
        let huge = BatchF32::new(&huge, 1, t, c);
        let err = layer.forward_batch(huge, huge, huge, &ForwardOptions::default()).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)) && err.message().contains("overflows to"), "{err}");
        // value rows ≠ key rows, a mask of the wrong shape
        let (_, fv) = batch(1, t + 1, c, 3);
        let value = BatchF32::new(&fv, 1, t + 1, c);
        assert!(layer.forward_batch(input, input, value, &ForwardOptions::default()).unwrap_err().message().starts_with("value has T = 4 rows"));
        let masked = ForwardOptions { mask: Mask { causal: false, allowed: Some(BoolMatrix::new(2, 2, vec![true; 4]).unwrap()), window: None }, ..ForwardOptions::default() };
        assert!(layer.forward_batch(input, input, input, &masked).is_err());
    }
}
