//! The f32 forward pass of [`MultiHeadAttention`] (Float32Array input): the same computation as
//! `forward.rs`, through the same engine ([`crate::engine`]) with its f32 kernels, one head and
//! one block of [`crate::engine::QUERY_BLOCK`] query rows at a time.
//!
//! Per batch item, in passes:
//! 1. project the inputs with the packed weights: `Q = x_q·W_Q + b_Q`, likewise K and V;
//! 2. per head, per block of query rows: `scores = Q_i·K_iᵀ`, masked, `softmax(scores/√d_head)`,
//!    `context_i = weights·V_i`, written straight into its columns of `concat`;
//! 3. `output = concat·W_O + b_O`.
//!
//! Memory, when the weights are not requested: the inputs, Q, K, V, `concat` and the output
//! (O(T·C)), one head's packed Kᵀ and V and one block of scores (O(T·block)); never all heads'
//! `T_q × T_k` weights. The weights W are packed into panels once per set of weights (at the
//! first f32 forward after construction or `set_weights`), not per call.
//!
//! Training: with `options.training` the same passes run in f32 through the same engine, whose
//! hook ([`KeepF32`]) keeps every head's softmax weights and applies dropout (drawing the f64
//! path's stream: the same entries are dropped for the same seed). The pass keeps what
//! [`MultiHeadAttention::backward_f32`] differentiates (`backward_f32.rs`), all in f32: the
//! inputs, Q, K (after RoPE), V, each head's weights and dropout flags, and `concat`.
//! `backward` after an evaluation-mode f32 forward is a `State` error.

use super::{LastForward, MultiHeadAttention};
use crate::engine::{check_budget, Batch, Cols, HeadShape, Hooks, Rope, Workspace};
use super::forward::Positions;
use crate::error::{AttentionError, Result};
use crate::matrix::Matrix;
use crate::kernels::{linear_prepacked_f32, packed_transpose, PackedPanels};
use super::init::SplitMix64;
use crate::limits::refuse_overflow_f32;
use crate::multi_head::heads;

use super::forward::ForwardOptions;
use super::limits::at_item;

/// The layer's weights in f32, packed for [`linear_prepacked_f32`].
#[derive(Clone, Debug)]
pub(super) struct PackedWeightsF32 {
    /// W_Q, W_K, W_V, W_O: `C × C`, or `C × C_kv` for W_K and W_V.
    pub panels: [PackedPanels; 4],
    /// b_Q, b_K, b_V, b_O in f32, when the layer has biases.
    pub biases: Option<[Vec<f32>; 4]>,
    /// W_Qᵀ, W_Kᵀ, W_Vᵀ, W_Oᵀ packed for the backward's `d_x = d_Q·Wᵀ`; built at the first f32
    /// backward after the weights were set.
    pub transposed: Option<[PackedPanels; 4]>,
}

impl PackedWeightsF32 {
    fn new(layer: &MultiHeadAttention) -> Self {
        let w = &layer.weights;
        let pack = |m: &crate::matrix::Matrix| {
            let values: Vec<f32> = m.data().iter().map(|&x| x as f32).collect();
            let mut panels = PackedPanels::new();
            panels.pack(&values, m.cols(), m.rows(), m.cols()); // (C, C) or (C, C_kv)
            panels
        };
        let to_f32 = |b: &[f64]| b.iter().map(|&x| x as f32).collect::<Vec<f32>>();
        Self {
            panels: [pack(&w.w_q), pack(&w.w_k), pack(&w.w_v), pack(&w.w_o)],
            biases: w.biases.as_ref().map(|b| [to_f32(&b.b_q), to_f32(&b.b_k), to_f32(&b.b_v), to_f32(&b.b_o)]),
            transposed: None,
        }
    }

    /// The packed weights of `layer`, built when missing.
    pub(super) fn of(layer: &mut MultiHeadAttention) -> &mut Self {
        if layer.packed_f32.is_none() {
            layer.packed_f32 = Some(Self::new(layer));
        }
        layer.packed_f32.as_mut().expect("packed just above")
    }

    /// The transposed weights, packed when missing: Wᵀ is `(out, in)`, B[p][j] = W[j][p].
    pub(super) fn transposed(&mut self, w: &super::Weights) -> &[PackedPanels; 4] {
        self.transposed.get_or_insert_with(|| {
            [&w.w_q, &w.w_k, &w.w_v, &w.w_o].map(|m| {
                let values: Vec<f32> = m.data().iter().map(|&x| x as f32).collect();
                packed_transpose(&values, m.rows(), m.cols()) // (out, in)
            })
        })
    }

    pub(super) fn bias(&self, i: usize) -> Option<&[f32]> {
        self.biases.as_ref().map(|b| &b[i][..])
    }
}

/// The f32 batch: `[B, T, C]`, one item after another.
pub type BatchF32<'a> = Batch<'a, f32>;

impl Batch<'_, f32> {
    /// The items as f64 matrices `(T, C)` (every f32 is exactly an f64).
    pub(super) fn widen(&self) -> Result<Vec<Matrix>> {
        (0..self.items).map(|i| Matrix::new(self.rows, self.cols, self.item(i).iter().map(|&x| f64::from(x)).collect())).collect()
    }
}

/// The engine's hook that writes every head's softmax weights into `[h, T_q, T_k]`, row-major
/// (keys a causal block skips stay as they are: zeros).
struct WriteWeights<'a> {
    out: &'a mut [f32],
    t_q: usize,
    t_k: usize,
}

impl Hooks<f32> for WriteWeights<'_> {
    fn weights(&mut self, head: usize, first: usize, weights: &mut [f32], n_keys: usize) -> Result<()> {
        for (i, row) in weights.chunks_exact(n_keys).enumerate() {
            let at = (head * self.t_q + first + i) * self.t_k;
            self.out[at..at + n_keys].copy_from_slice(row);
        }
        Ok(())
    }
}

/// What [`MultiHeadAttention::forward_f32`] returns.
#[derive(Clone, Debug, PartialEq)]
pub struct ForwardOutputF32 {
    /// `[B, T_q, C]`, row-major.
    pub output: Vec<f32>,
    /// With `need_weights`: `[B, h, T_q, T_k]`, or `[B, T_q, T_k]` with `average_weights`.
    pub weights: Option<Vec<f32>>,
}

impl MultiHeadAttention {
    /// The forward pass in f32 (see the module docs). `query` is `[B, T_q, C]`, `key` and
    /// `value` `[B, T_k, C]`. In evaluation mode it forgets the last f64 forward pass, so a
    /// following `backward` is a `State` error; with `options.training` it is the same pass in
    /// f32 keeping what `backward_f32` (or, in f64, `backward`) differentiates.
    pub fn forward_f32(&mut self, query: BatchF32, key: BatchF32, value: BatchF32, options: &ForwardOptions) -> Result<ForwardOutputF32> {
        let (c, h, d_head) = (self.embed_dim, self.number_of_heads, self.head_dimensions);
        let (b, t_q, t_k) = (query.items, query.rows, key.rows);
        // checks: the boundary has named shapes already; these guard the core's own contract
        for (name, x) in [("query", &query), ("key", &key), ("value", &value)] {
            if x.items != b || x.rows == 0 || x.data.len() != x.items * x.rows * c {
                return Err(AttentionError::range_error(format!(
                    "{name} has {} values, which is not [B = {b}, T, C = {c}] with T > 0",
                    x.data.len()
                )));
            }
        }
        if b == 0 {
            return Err(AttentionError::range_error("query is an empty batch; expected at least one item"));
        }
        if value.rows != t_k {
            return Err(AttentionError::range_error(format!(
                "value has T = {} rows but key has T_k = {t_k}: each key position needs one value",
                value.rows
            )));
        }
        options.mask.check_shape(t_q, t_k)?;
        if options.average_weights && !options.need_weights {
            return Err(AttentionError::type_error(
                "options.averageWeights only applies with options.needWeights: true; set both or neither",
            ));
        }
        if options.training {
            return self.forward_f32_training(query, key, value, options);
        }
        // memory: the inputs, Q, K, V, concat, the output, and the weights if asked for
        let weights_len = if !options.need_weights {
            (0, 0)
        } else if options.average_weights {
            (b * (1 + h) * t_q, t_k)
        } else {
            (b * h * t_q, t_k)
        };
        self.check_rope_alignment(t_q, t_k)?;
        let kv_c = self.kv_heads * d_head;
        let positions = Positions::aligned(t_q, t_k);
        let mut shape = HeadShape::new(t_q, t_k, h, self.kv_heads, d_head);
        shape.offset = positions.offset(t_q, t_k);
        let parts = [(b * (t_q + 2 * t_k), c), (2 * t_q + 2 * t_k, c), (b * t_q, c), weights_len];
        check_budget(shape, &parts, || format!("MultiHeadAttention.forward with B = {b}, T_q = {t_q}, T_k = {t_k}, C = {c}"))?;

        if self.packed_f32.is_none() {
            self.packed_f32 = Some(PackedWeightsF32::new(self));
        }
        let packed = self.packed_f32.as_ref().expect("packed just above");
        let mut output = vec![0.0f32; b * t_q * c];
        let mut weights = options.need_weights.then(|| vec![0.0f32; b * if options.average_weights { 1 } else { h } * t_q * t_k]);
        let mut head_weights = (options.need_weights && options.average_weights).then(|| vec![0.0f32; h * t_q * t_k]);
        let (mut q, mut k, mut v) = (vec![0.0f32; t_q * c], vec![0.0f32; t_k * kv_c], vec![0.0f32; t_k * kv_c]);
        let mut workspace = Workspace::new();
        for i in 0..b {
            // 1. project the inputs
            linear_prepacked_f32(query.item(i), t_q, &packed.panels[0], packed.bias(0), &mut q); // (T_q, C)
            linear_prepacked_f32(key.item(i), t_k, &packed.panels[1], packed.bias(1), &mut k); // (T_k, C_kv)
            linear_prepacked_f32(value.item(i), t_k, &packed.panels[2], packed.bias(2), &mut v); // (T_k, C_kv)
            refuse_overflow_f32(&q, c, "Q", "query·W_Q + b_Q")?;
            refuse_overflow_f32(&k, kv_c, "K", "key·W_K + b_K")?;
            refuse_overflow_f32(&v, kv_c, "V", "value·W_V + b_V")?;
            // 1b. RoPE: rotate Q and K at their positions (the angles in f64, rounded once)
            if let Some(rope) = self.rope {
                Rope::check_positions(positions.query.max(positions.key), t_q.max(t_k), "the rows")?;
                rope.rotate(&mut q, c, d_head, positions.query, false);
                rope.rotate(&mut k, kv_c, d_head, positions.key, false);
                Rope::refuse_overflow(&q, c, "Q")?;
                Rope::refuse_overflow(&k, kv_c, "K")?;
            }
            // the weights of this item: straight into the result, or per head for the mean
            let item_weights: Option<&mut [f32]> = match (&mut weights, &mut head_weights) {
                (Some(_), Some(per_head)) => {
                    per_head.fill(0.0);
                    Some(&mut per_head[..])
                }
                (Some(all), None) => Some(&mut all[i * h * t_q * t_k..(i + 1) * h * t_q * t_k]),
                _ => None,
            };
            // 2. the engine: per head, block by block, into the head's columns of concat (T_q, C)
            let (q_, k_, v_) = (Cols::all(&q, c), Cols::all(&k, kv_c), Cols::all(&v, kv_c));
            let concat = match item_weights {
                Some(out) => heads(q_, k_, v_, shape, &options.mask, &mut workspace, &mut WriteWeights { out, t_q, t_k }),
                None => heads(q_, k_, v_, shape, &options.mask, &mut workspace, &mut ()),
            }
            .map_err(|e| at_item(e, options.batched, i))?;
            // the mean over heads, summed in head order and then divided (as the f64 path does)
            if let (Some(all), Some(per_head)) = (&mut weights, &head_weights) {
                let mean = &mut all[i * t_q * t_k..(i + 1) * t_q * t_k];
                for head in per_head.chunks_exact(t_q * t_k) {
                    mean.iter_mut().zip(head).for_each(|(m, &x)| *m += x);
                }
                mean.iter_mut().for_each(|m| *m /= h as f32);
            }
            // 3. output projection
            let out = &mut output[i * t_q * c..(i + 1) * t_q * c];
            linear_prepacked_f32(&concat, t_q, &packed.panels[3], packed.bias(3), out); // (T_q, C)
            refuse_overflow_f32(out, c, "output", "concat·W_O + b_O")?;
        }
        // no intermediates kept: backward after this pass is refused
        self.cache = None;
        self.cache_f32 = None;
        self.last_forward = LastForward::F32;
        Ok(ForwardOutputF32 { output, weights })
    }
}

/// One head's intermediates kept by the f32 training forward.
#[derive(Clone, Debug)]
pub(super) struct HeadCacheF32 {
    /// The softmax result, `(T_q, T_k)` row-major (keys a causal block skipped stay 0, as masked).
    pub weights: Vec<f32>,
    /// With dropout: whether each entry was kept (factor `1/(1−p)` rounded to f32) or dropped (0).
    pub kept: Option<Vec<bool>>,
}

/// One batch item's intermediates kept by the f32 training forward, row-major.
#[derive(Clone, Debug)]
pub(super) struct ItemCacheF32 {
    /// `(T_q, C)`, `(T_k, C)`, `(T_k, C)`; with `shared` (self-attention: the three inputs hold the
    /// same bits) only `x_q`, the others empty (see [`Self::x_k`]).
    pub x_q: Vec<f32>,
    x_k: Vec<f32>,
    x_v: Vec<f32>,
    pub shared: bool,
    /// The projections (Q and K rotated when the layer has RoPE): `(T_q, C)`, `(T_k, C_kv)`, `(T_k, C_kv)`.
    pub q: Vec<f32>,
    pub k: Vec<f32>,
    pub v: Vec<f32>,
    pub heads: Vec<HeadCacheF32>,
    /// `(T_q, C)`.
    pub concat: Vec<f32>,
}

/// What the last f32 training forward kept.
#[derive(Clone, Debug)]
pub(super) struct ForwardCacheF32 {
    pub batched: bool,
    pub t_q: usize,
    pub t_k: usize,
    pub items: Vec<ItemCacheF32>,
    pub positions: Positions,
    /// With dropout: the factor of a kept weight, `1/(1−p)` computed in f64 and rounded to f32.
    pub keep_scale: Option<f32>,
}

impl ItemCacheF32 {
    /// The key input, `(T_k, C)`.
    pub fn x_k(&self) -> &[f32] {
        if self.shared {
            &self.x_q
        } else {
            &self.x_k
        }
    }

    /// The value input, `(T_k, C)`.
    pub fn x_v(&self) -> &[f32] {
        if self.shared {
            &self.x_q
        } else {
            &self.x_v
        }
    }
}

impl HeadCacheF32 {
    /// `used = weights ⊙ factor` into `out` (`T_q × T_k`): the weights that multiplied V, with the
    /// forward's f32 product (the same bits as the hook's).
    pub fn used_into(&self, keep_scale: Option<f32>, out: &mut [f32]) {
        match (&self.kept, keep_scale) {
            (Some(kept), Some(s)) => {
                for ((o, &w), &k) in out.iter_mut().zip(&self.weights).zip(kept) {
                    *o = w * if k { s } else { 0.0 };
                }
            }
            _ => out.copy_from_slice(&self.weights),
        }
    }
}

/// The engine's hook for the f32 training forward: every head's softmax weights are kept for
/// `backward_f32` and, with dropout, pass 6 is applied before the weighted sum. The draws are the
/// f64 path's ([`super::forward`]'s `Keep`): one `next_unit()` per entry of the head's `T_q × T_k`,
/// row-major, including the keys a causal block skips (masked: their weight is 0 either way).
struct KeepF32<'a> {
    t_q: usize,
    t_k: usize,
    /// `(p, 1/(1−p) as f32)`.
    dropout: Option<(f64, f32)>,
    rng: &'a mut SplitMix64,
    heads: Vec<HeadCacheF32>,
}

impl Hooks<f32> for KeepF32<'_> {
    fn head_start(&mut self, _head: usize, _q: Cols<f32>, _k: Cols<f32>, _v: Cols<f32>) -> Result<()> {
        let n = self.t_q * self.t_k; // (T_q, T_k)
        self.heads.push(HeadCacheF32 { weights: vec![0.0; n], kept: self.dropout.map(|_| vec![false; n]) });
        Ok(())
    }

    fn weights(&mut self, _head: usize, first: usize, weights: &mut [f32], n_keys: usize) -> Result<()> {
        let head = self.heads.last_mut().ok_or_else(|| AttentionError::State("weights before any head".into()))?;
        for (i, row) in weights.chunks_exact_mut(n_keys).enumerate() {
            let at = (first + i) * self.t_k;
            head.weights[at..at + n_keys].copy_from_slice(row);
            if let (Some((p, keep_scale)), Some(kept)) = (self.dropout, head.kept.as_mut()) {
                for j in 0..self.t_k {
                    let keep = self.rng.next_unit() >= p; // dropped when the draw is < p
                    kept[at + j] = keep;
                    if j < n_keys {
                        row[j] *= if keep { keep_scale } else { 0.0 };
                    }
                }
            }
        }
        Ok(())
    }
}

impl MultiHeadAttention {
    /// The training forward on f32 input: passes 1–9 in f32 (the evaluation forward's kernels), the
    /// engine's hook keeping the weights and applying dropout, and everything `backward_f32` needs kept.
    fn forward_f32_training(&mut self, query: BatchF32, key: BatchF32, value: BatchF32, options: &ForwardOptions) -> Result<ForwardOutputF32> {
        let (c, h, d_head) = (self.embed_dim, self.number_of_heads, self.head_dimensions);
        let (b, t_q, t_k) = (query.items, query.rows, key.rows);
        let kv_c = self.kv_heads * d_head;
        self.check_rope_alignment(t_q, t_k)?;
        let positions = Positions::aligned(t_q, t_k);
        let mut shape = HeadShape::new(t_q, t_k, h, self.kv_heads, d_head);
        shape.offset = positions.offset(t_q, t_k);
        let dropout = (self.dropout > 0.0).then(|| (self.dropout, (1.0 / (1.0 - self.dropout)) as f32));
        // memory, per item: the inputs, Q, K, V, concat and the output; per head the weights (and
        // with dropout the flags, counted as values); the returned weights; the parameters packed
        // both ways (8·C², counting W_K and W_V as C × C)
        let kept = 1 + usize::from(dropout.is_some());
        let returned = if !options.need_weights {
            0
        } else if options.average_weights {
            1 + h
        } else {
            h
        };
        let rows = |n: u128| usize::try_from(n).unwrap_or(usize::MAX);
        let (b_, h_, t_q_, t_k_) = (b as u128, h as u128, t_q as u128, t_k as u128);
        let parts = [
            (rows(b_ * (3 * t_q_ + 3 * t_k_)), c),
            (rows(b_ * 2 * t_k_), kv_c),
            (rows(b_ * h_ * (kept + returned) as u128 * t_q_), t_k),
            (8 * c, c),
        ];
        check_budget(shape, &parts, || {
            format!("MultiHeadAttention.forward (training) with B = {b}, T_q = {t_q}, T_k = {t_k}, C = {c} ({h} heads of {t_q}×{t_k} weights per item, kept for backward)")
        })?;

        let rope = self.rope;
        // Draw into a copy of the generator and commit it only on success (as the f64 forward)
        let mut rng = self.dropout_rng.clone();
        let packed = PackedWeightsF32::of(self);
        let mut output = vec![0.0f32; b * t_q * c];
        let mut weights = options.need_weights.then(|| vec![0.0f32; b * if options.average_weights { 1 } else { h } * t_q * t_k]);
        let mut workspace = Workspace::new();
        let mut items = Vec::with_capacity(b);
        let mut used = vec![0.0f32; if options.need_weights { t_q * t_k } else { 0 }];
        for i in 0..b {
            let mut step = || -> Result<ItemCacheF32> {
                let (mut q, mut k, mut v) = (vec![0.0f32; t_q * c], vec![0.0f32; t_k * kv_c], vec![0.0f32; t_k * kv_c]);
                // 1. Q = x_q·W_Q + b_Q, K = x_k·W_K + b_K, V = x_v·W_V + b_V
                linear_prepacked_f32(query.item(i), t_q, &packed.panels[0], packed.bias(0), &mut q); // (T_q, C) = (T_q, C)·(C, C)
                linear_prepacked_f32(key.item(i), t_k, &packed.panels[1], packed.bias(1), &mut k); // (T_k, C_kv) = (T_k, C)·(C, C_kv)
                linear_prepacked_f32(value.item(i), t_k, &packed.panels[2], packed.bias(2), &mut v); // (T_k, C_kv) = (T_k, C)·(C, C_kv)
                refuse_overflow_f32(&q, c, "Q", "query·W_Q + b_Q")?;
                refuse_overflow_f32(&k, kv_c, "K", "key·W_K + b_K")?;
                refuse_overflow_f32(&v, kv_c, "V", "value·W_V + b_V")?;
                // 1b. RoPE: rotate Q and K at their positions (the angles in f64, cos and sin rounded once)
                if let Some(rope) = rope {
                    Rope::check_positions(positions.query.max(positions.key), t_q.max(t_k), "the rows")?;
                    rope.rotate(&mut q, c, d_head, positions.query, false);
                    rope.rotate(&mut k, kv_c, d_head, positions.key, false);
                    Rope::refuse_overflow(&q, c, "Q")?;
                    Rope::refuse_overflow(&k, kv_c, "K")?;
                }
                // 2–8. The engine: per head and block, scores, scale, softmax (kept, and dropped out, by
                // the hook), used·V_g, straight into the head's columns of concat (T_q, C)
                let mut keep = KeepF32 { t_q, t_k, dropout, rng: &mut rng, heads: Vec::with_capacity(h) };
                let concat = heads(Cols::all(&q, c), Cols::all(&k, kv_c), Cols::all(&v, kv_c), shape, &options.mask, &mut workspace, &mut keep)?;
                let kept_heads = keep.heads;
                // the weights that multiplied V, per head or their mean (summed in head order, then divided)
                if let Some(all) = &mut weights {
                    for (head, cache) in kept_heads.iter().enumerate() {
                        cache.used_into(dropout.map(|(_, s)| s), &mut used);
                        if options.average_weights {
                            let mean = &mut all[i * t_q * t_k..(i + 1) * t_q * t_k];
                            mean.iter_mut().zip(&used).for_each(|(m, &x)| *m += x);
                        } else {
                            all[(i * h + head) * t_q * t_k..(i * h + head + 1) * t_q * t_k].copy_from_slice(&used);
                        }
                    }
                    if options.average_weights {
                        all[i * t_q * t_k..(i + 1) * t_q * t_k].iter_mut().for_each(|m| *m /= h as f32);
                    }
                }
                // 9. output = concat·W_O + b_O
                let out = &mut output[i * t_q * c..(i + 1) * t_q * c];
                linear_prepacked_f32(&concat, t_q, &packed.panels[3], packed.bias(3), out); // (T_q, C) = (T_q, C)·(C, C)
                refuse_overflow_f32(out, c, "output", "concat·W_O + b_O")?;
                // self-attention (the same bits in all three inputs) keeps one copy
                let same = |a: &[f32], b: &[f32]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
                let shared = same(query.item(i), key.item(i)) && same(query.item(i), value.item(i));
                let copy = |x: &[f32]| if shared { Vec::new() } else { x.to_vec() };
                Ok(ItemCacheF32 {
                    x_q: query.item(i).to_vec(),
                    x_k: copy(key.item(i)),
                    x_v: copy(value.item(i)),
                    shared,
                    q,
                    k,
                    v,
                    heads: kept_heads,
                    concat,
                })
            };
            items.push(step().map_err(|e| at_item(e, options.batched, i))?);
        }
        self.dropout_rng = rng;
        self.cache = None;
        self.cache_f32 = Some(ForwardCacheF32 { batched: options.batched, t_q, t_k, items, positions, keep_scale: dropout.map(|(_, s)| s) });
        self.last_forward = LastForward::KeptF32;
        Ok(ForwardOutputF32 { output, weights })
    }
}

/// `items` (one f64 matrix per batch item) rounded to f32, flat `[B, rows, cols]`; a RangeError
/// names the first entry beyond the largest f32 (about 3.4e38), as `name[r][c]`.
pub(super) fn narrow_items_f32(items: &[Matrix], batched: bool, name: &str) -> Result<Vec<f32>> {
    let mut out = Vec::with_capacity(items.iter().map(|m| m.data().len()).sum());
    for (b, m) in items.iter().enumerate() {
        let start = out.len();
        out.extend(m.data().iter().map(|&x| x as f32));
        refuse_overflow_f32(&out[start..], m.cols(), name, "its value, computed in f64,").map_err(|e| at_item(e, batched, b))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::AttentionError;
    use crate::layer::{ForwardOutput, LayerConfig, Weights};
    use crate::mask::{BoolMatrix, Mask};
    use crate::matrix::Matrix;
    use crate::testing::seeded_matrix;

    fn layer(c: usize, h: usize, bias: bool, seed: u64) -> MultiHeadAttention {
        let mut layer = MultiHeadAttention::new(&LayerConfig { bias, seed, ..LayerConfig::new(c, h) }).unwrap();
        // non-zero biases, so that a bias mistake shows
        let mut weights = layer.weights().clone();
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
                    let got = layer.forward_f32(q, k, v, &options).unwrap();
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
    fn weights_are_packed_per_set_of_weights() {
        let (c, t) = (8, 5);
        let mut layer = layer(c, 2, true, 3);
        let (x, fx) = batch(1, t, c, 9);
        let input = BatchF32::new(&fx, 1, t, c);
        let options = ForwardOptions::default();
        let before = layer.forward_f32(input, input, input, &options).unwrap();
        assert!(layer.packed_f32.is_some());
        // new weights must be used by the next f32 forward (the packed ones are dropped)
        let mut weights = layer.weights().clone();
        weights.w_o = seeded_matrix(c, c, 77);
        layer.set_weights(weights).unwrap();
        assert!(layer.packed_f32.is_none());
        let after = layer.forward_f32(input, input, input, &options).unwrap();
        assert_ne!(before.output, after.output);
        let want = layer.forward(&x, &x, &x, &options).unwrap();
        assert_near(&after.output, flat(&want), 1e-5);
    }

    #[test]
    fn backward_after_an_f32_forward_is_refused_and_an_f64_forward_restores_it() {
        let (c, t) = (4, 3);
        let mut layer = layer(c, 2, true, 1);
        let (x, fx) = batch(1, t, c, 2);
        let input = BatchF32::new(&fx, 1, t, c);
        layer.forward(&x, &x, &x, &ForwardOptions::default()).unwrap();
        layer.forward_f32(input, input, input, &ForwardOptions::default()).unwrap();
        assert!(layer.last_forward_f32());
        let err = layer.backward(&x, false).unwrap_err();
        assert!(matches!(err, AttentionError::State(_)));
        assert!(err.message().starts_with("backward cannot differentiate a Float32Array forward"), "{err}");
        layer.forward(&x, &x, &x, &ForwardOptions::default()).unwrap();
        assert!(!layer.last_forward_f32());
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
                let want = layer.forward_f32(q, k, v, &eval).unwrap();
                let got = layer.forward_f32(q, k, v, &train).unwrap();
                assert_eq!(got, want);
                assert!(layer.cache_f32.is_some() && !layer.last_forward_f32());
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
            let got = f32_layer.forward_f32(input, input, input, &options).unwrap();
            let f64_cache = f64_layer.cache.as_ref().unwrap();
            let f32_cache = f32_layer.cache_f32.as_ref().unwrap();
            let mut dropped = 0;
            for (want, got) in f64_cache.items.iter().zip(&f32_cache.items) {
                for (want, got) in want.heads.iter().zip(&got.heads) {
                    let (factor, _) = want.dropout.as_ref().unwrap();
                    for (&f, &kept) in factor.data().iter().zip(got.kept.as_ref().unwrap()) {
                        assert_eq!(f != 0.0, kept);
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
        layer.forward_f32(input, input, input, &options).unwrap();
        let got = layer.backward_f32(BatchF32::new(&fg, b, t, c), true).unwrap();
        let f32_grads = layer.grads().unwrap().clone();
        // f64 gradOutput: the f64 derivative of the same kept values, which the f32 one rounds
        let want = layer.backward(&g, true).unwrap();
        for (got, want) in [(&got.query, &want.query), (&got.key, &want.key), (&got.value, &want.value)] {
            assert_near(got, want.iter().flat_map(|m| m.data().to_vec()), 1e-5);
        }
        let f64_grads = layer.grads().unwrap().clone();
        for ((name, got), (_, want)) in f32_grads.tensors().into_iter().zip(f64_grads.tensors()) {
            // grads() widens the f32 gradients exactly
            assert!(got.iter().all(|&x| f64::from(x as f32) == x), "{name} is not an f32 widened");
            let got: Vec<f32> = got.iter().map(|&x| x as f32).collect();
            assert_near(&got, want.iter().copied(), 1e-4);
        }
        // the wrong layout is refused by either
        assert!(layer.backward_f32(BatchF32::new(&fg, b, t, c), false).unwrap_err().message().starts_with("gradOutput is one [T, C] matrix"));
        assert!(layer.backward_f32(BatchF32::new(&fg[..t * c], 1, t, c), true).unwrap_err().message().starts_with("gradOutput has a batch of 1"));
    }

    #[test]
    fn a_gradient_beyond_f32_is_refused_by_name_and_not_stored() {
        let (c, t) = (4, 3);
        let mut layer = layer(c, 2, true, 1);
        let mut weights = layer.weights().clone();
        weights.w_o = Matrix::new(c, c, vec![1e30; c * c]).unwrap();
        layer.set_weights(weights).unwrap();
        let (_, fx) = batch(1, t, c, 2);
        let input = BatchF32::new(&fx, 1, t, c);
        layer.forward_f32(input, input, input, &ForwardOptions { training: true, ..ForwardOptions::default() }).unwrap();
        // gradOutput·W_Oᵀ: 4·1e10·1e30 passes 3.4e38 (and is finite in f64)
        let huge = vec![1e10f32; t * c];
        let err = layer.backward_f32(BatchF32::new(&huge, 1, t, c), false).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)) && err.message().starts_with("d_concat[0][0] overflows to Infinity in f32"), "{err}");
        assert!(layer.grads().is_err(), "a refused backward must not store gradients");
        // a parameter gradient summed past f32: C = 1, W_Q = 0 (uniform weights), the rest 1; with
        // x = gradOutput = 1e19 every entry of the pass stays finite but Σ_t x_v·d_V = 5e38
        let mut layer = layer_with_identity(1);
        let mut weights = layer.weights().clone();
        weights.w_q = Matrix::zeros(1, 1);
        layer.set_weights(weights).unwrap();
        let big = vec![1e19f32; 5];
        let big = BatchF32::new(&big, 1, 5, 1);
        layer.forward_f32(big, big, big, &ForwardOptions { training: true, ..ForwardOptions::default() }).unwrap();
        let err = layer.backward_f32(big, false).unwrap_err();
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
        let err = layer.forward_f32(input, input, input, &ForwardOptions { training: true, ..ForwardOptions::default() }).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)) && err.message().starts_with("MultiHeadAttention.forward (training) with B = 1, T_q = 16384"), "{err}");
        assert!(layer.cache_f32.is_none());
        // a smaller training pass fits
        let small = BatchF32::new(&x[..128 * c], 1, 128, c);
        assert!(layer.forward_f32(small, small, small, &ForwardOptions { training: true, ..ForwardOptions::default() }).is_ok());
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
        let err = layer.forward_f32(huge, huge, huge, &training).unwrap_err();
        // the projection 3e38·Σ|W| passes the largest f32, as in evaluation mode
        assert!(matches!(err, AttentionError::Range(_)) && err.message().contains("overflows to") && err.message().contains("in f32: query·W_Q + b_Q"), "{err}");
        assert!(layer.backward_f32(huge, false).is_err(), "nothing kept by a refused forward");
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
        let err = layer.forward_f32(q, k, v, &ForwardOptions::default()).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)) && err.message().starts_with("scores_0[0][0] overflows to -Infinity in f32"), "{err}");
        // training runs the same f32 kernels: the same refusal
        let training = ForwardOptions { training: true, ..ForwardOptions::default() };
        let err = layer.forward_f32(q, k, v, &training).unwrap_err();
        assert!(err.message().starts_with("scores_0[0][0] overflows to -Infinity in f32"), "{err}");
    }

    #[test]
    fn overflow_and_shapes_are_refused() {
        let (c, t) = (4, 3);
        let mut layer = MultiHeadAttention::new(&LayerConfig { dropout: 0.5, ..LayerConfig::new(c, 2) }).unwrap();
        let (_, fx) = batch(1, t, c, 2);
        let input = BatchF32::new(&fx, 1, t, c);
        // without training the dropout does not apply
        layer.forward_f32(input, input, input, &ForwardOptions::default()).unwrap();
        // finite f32 inputs whose projection passes 3.4e38
        let huge = vec![3e38f32; t * c];
        let huge = BatchF32::new(&huge, 1, t, c);
        let err = layer.forward_f32(huge, huge, huge, &ForwardOptions::default()).unwrap_err();
        assert!(matches!(err, AttentionError::Range(_)) && err.message().contains("overflows to"), "{err}");
        // value rows ≠ key rows, a mask of the wrong shape
        let (_, fv) = batch(1, t + 1, c, 3);
        let value = BatchF32::new(&fv, 1, t + 1, c);
        assert!(layer.forward_f32(input, input, value, &ForwardOptions::default()).unwrap_err().message().starts_with("value has T = 4 rows"));
        let masked = ForwardOptions { mask: Mask { causal: false, allowed: Some(BoolMatrix::new(2, 2, vec![true; 4]).unwrap()), window: None }, ..ForwardOptions::default() };
        assert!(layer.forward_f32(input, input, input, &masked).is_err());
    }
}
