//! The attention engine: the one routine that computes attention heads, behind every path
//! (`dotProductAttention`, `multiHeadAttention`, its trace, `projectedSelfAttention` and the
//! layer, in f64 and f32).
//!
//! For each head `i` (columns `i·d_k .. (i+1)·d_k` of Q and K, `i·d_v .. (i+1)·d_v` of V), one
//! block of [`QUERY_BLOCK`] query rows at a time:
//!
//! 1. Slice: the head's columns of Q, K and V; K and V packed once per head;
//! 2. MatMul: `scores = Q_i·K_iᵀ` for the block (rows × keys);
//! 3. refuse a score that overflowed (finite inputs, so it is a dot product beyond the precision);
//! 4. Mul by `1/√d_k`, then StableSoftmax along each row under the mask;
//! 5. the caller's hook may change the weights in place (dropout) or keep them (trace, backward);
//! 6. MatMul: `context_i = weights·V_i`, written straight into the head's output columns;
//! 7. refuse a context entry that overflowed.
//!
//! Only [`Kernel`] differs per precision. What differs per caller goes through [`Hooks`].
//! Memory: besides the caller's inputs and output, one head's packed K and V and one block of
//! scores ([`workspace_shapes`]): O(T·d + block·T), never O(h·T²) unless a hook keeps it.

pub mod kernel;
pub mod rope;

pub use kernel::{Kernel, Overflow};
pub use rope::Rope;

use crate::error::Result;
use crate::limits::{check_working_set, count_values};
use crate::mask::Mask;
use crate::matrix::Matrix;
use crate::parallel;
use crate::real::Real;

/// Query rows per block: memory O(block·T) for the scores. Blocking changes no bits: every
/// entry is computed by the same operations in the same order whatever the block.
pub const QUERY_BLOCK: usize = 64;

/// The factor scores are multiplied by: `1/√d_k`.
pub fn attention_scale<F: Real>(d_k: usize) -> F {
    F::ONE / F::from_usize(d_k).sqrt()
}

/// A batch: `items` row-major `(rows, cols)` matrices one after another (`[B, T, C]`; B = 1
/// for one matrix). The one batch view of the core, in either precision.
#[derive(Clone, Copy, Debug)]
pub struct Batch<'a, F> {
    pub data: &'a [F],
    pub items: usize,
    pub rows: usize,
    pub cols: usize,
}

impl<'a, F: Real> Batch<'a, F> {
    /// One matrix.
    pub fn of(m: &'a Matrix<F>) -> Self {
        Self { data: m.data(), items: 1, rows: m.rows(), cols: m.cols() }
    }

    /// A `[B, T, C]` batch; `data.len()` must be `items·rows·cols` (checked by the caller).
    pub fn new(data: &'a [F], items: usize, rows: usize, cols: usize) -> Self {
        Self { data, items, rows, cols }
    }

    /// Item `i`, `(rows, cols)` row-major.
    pub fn item(&self, i: usize) -> &'a [F] {
        let n = self.rows * self.cols;
        &self.data[i * n..(i + 1) * n]
    }

    /// The items as matrices (copies), for the paths that keep per-item intermediates.
    pub fn matrices(&self) -> Result<Vec<Matrix<F>>> {
        (0..self.items).map(|i| Matrix::new(self.rows, self.cols, self.item(i).to_vec())).collect()
    }

    /// Item `i` as columns to slice heads from.
    pub fn cols_of(&self, i: usize) -> Cols<'a, F> {
        Cols::all(self.item(i), self.cols)
    }
}

/// Row-major columns `start .. start + width` of a matrix whose rows are `stride` apart.
#[derive(Clone, Copy, Debug)]
pub struct Cols<'a, F> {
    pub data: &'a [F],
    pub stride: usize,
    pub start: usize,
    pub width: usize,
}

impl<'a, F> Cols<'a, F> {
    /// All of a `(rows, cols)` row-major matrix.
    pub fn all(data: &'a [F], cols: usize) -> Self {
        Self { data, stride: cols, start: 0, width: cols }
    }

    /// All columns of a matrix.
    pub fn of(m: &'a Matrix<F>) -> Self
    where
        F: Real,
    {
        Self::all(m.data(), m.cols())
    }

    /// Head `head`'s `width` columns of these columns.
    pub fn head(&self, head: usize, width: usize) -> Self {
        Self { data: self.data, stride: self.stride, start: self.start + head * width, width }
    }

    /// Row `r` of these columns.
    pub fn row(&self, r: usize) -> &'a [F] {
        let s = r * self.stride + self.start;
        &self.data[s..s + self.width]
    }

    /// The slice starting at element (0, start).
    pub fn from_origin(&self) -> &'a [F] {
        &self.data[self.start..]
    }
}

/// The sizes of one call of [`attend_heads`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadShape {
    /// Queries, keys (= values).
    pub t_q: usize,
    pub t_k: usize,
    /// h, and each head's Q/K width d_k and V width d_v.
    pub heads: usize,
    pub d_k: usize,
    pub d_v: usize,
    /// The key/value heads: query head `i` reads K/V head `⌊i / (heads / kv_heads)⌋` (grouped-query
    /// attention; `kv_heads = heads` is multi-head attention, 1 is multi-query). Must divide `heads`.
    pub kv_heads: usize,
    /// The position of query 0 minus that of key 0, for the causal rule and the window
    /// ([`Mask::allows`]): `T_k − T_q` (the queries are the last positions), or with a cache the
    /// positions the cache dropped subtracted.
    pub offset: isize,
    /// Whether messages name heads (`scores_1`, `Q_1`, `context_1`) or not (`scores`, `Q`,
    /// and `output` for the one head's context): dotProductAttention has no heads.
    pub named_heads: bool,
}

/// What a caller does besides computing: record the steps, keep the weights for backward,
/// apply dropout, return the weights. Every method has a do-nothing default, and `()` is the
/// caller that does nothing.
pub trait Hooks<F> {
    /// A head starts: its columns of Q, K and V.
    fn head_start(&mut self, _head: usize, _q: Cols<F>, _k: Cols<F>, _v: Cols<F>) -> Result<()> {
        Ok(())
    }
    /// Pass 2's raw scores for query rows `first ..`, `n_keys` per row (finite).
    fn scores(&mut self, _head: usize, _first: usize, _scores: &[F], _n_keys: usize) {}
    /// Pass 4's softmax weights for query rows `first ..`, `n_keys` per row; may change them in
    /// place (dropout), and the weighted sum then uses the changed ones.
    fn weights(&mut self, _head: usize, _first: usize, _weights: &mut [F], _n_keys: usize) -> Result<()> {
        Ok(())
    }
    /// Pass 6's context for query rows `first .. first + rows`: `d_v` columns of `out` starting
    /// at `start`, rows `stride` apart, `out` starting at row `first` (finite).
    fn context(&mut self, _head: usize, _first: usize, _rows: usize, _out: &[F], _stride: usize, _start: usize) {}
    /// A head is done.
    fn head_end(&mut self, _head: usize) -> Result<()> {
        Ok(())
    }
    /// Whether every method does nothing, so that the heads may be computed in any order
    /// (on several threads): only `()` says so.
    fn inert(&self) -> bool {
        false
    }
}

impl<F> Hooks<F> for () {
    fn inert(&self) -> bool {
        true
    }
}

/// Buffers reused across heads and calls: packed K and V, one block of scores.
#[derive(Debug, Default)]
pub struct Workspace<F: Kernel> {
    keys: F::Packed,
    values: F::Packed,
    scores: Vec<F>,
}

impl HeadShape {
    /// `heads` heads of `d` columns for Q, K and V, `kv_heads` of them for K and V, queries the last
    /// `t_q` of `t_k` positions.
    pub fn new(t_q: usize, t_k: usize, heads: usize, kv_heads: usize, d: usize) -> Self {
        Self { t_q, t_k, heads, d_k: d, d_v: d, kv_heads, offset: t_k as isize - t_q as isize, named_heads: true }
    }
}

impl<F: Kernel> Workspace<F> {
    pub fn new() -> Self {
        Self { keys: F::Packed::default(), values: F::Packed::default(), scores: Vec::new() }
    }
}

/// The shapes [`Workspace`] grows to for one call: packed K `(T_k, d_k)`, packed V `(T_k, d_v)`
/// and one block of scores `(block, T_k)` (f32 pads packed columns to 8, counted here). With more
/// than one thread, what [`attend_heads_split`] holds instead: every K/V head packed, a block of
/// scores per thread, and every task's context rows `(T_q, h·d_v)` until they are copied out.
pub fn workspace_shapes(shape: HeadShape) -> [(usize, usize); 4] {
    let HeadShape { t_q, t_k, heads, d_k, d_v, kv_heads, .. } = shape;
    let pad = crate::kernels::NR;
    let block = QUERY_BLOCK.min(t_q);
    match parallel::threads() {
        1 => [(t_k + pad, d_k), (t_k, d_v + pad), (block, t_k), (0, 0)],
        threads => [(t_k + pad, kv_heads * d_k), (t_k, kv_heads * (d_v + pad)), (block * threads, t_k), (t_q, heads * d_v)],
    }
}

/// The crate's one working-set check for a call: `parts` are the shapes the caller allocates or
/// holds (inputs, outputs, whatever it keeps), and the engine adds its workspace for `shape`.
/// `what` names the call in the message, e.g. "multiHeadAttention with T = 9000 and C = 64".
pub fn check_budget(shape: HeadShape, parts: &[(usize, usize)], what: impl FnOnce() -> String) -> Result<()> {
    let needed = count_values(parts) + count_values(&workspace_shapes(shape));
    let engine = match parallel::threads() {
        1 => "one head's packed K and V and a block of scores",
        _ => "every K/V head's packed K and V, a block of scores per thread and the heads' context rows",
    };
    check_working_set(needed, || format!("{} (inputs, outputs and what is kept, plus {engine})", what()))
}

/// Passes 1–7 for every head: `out[i][head·d_v .. (head+1)·d_v] = softmax(Q_h·K_gᵀ/√d_k)·V_g`,
/// with `g` the head's K/V head. Q has `heads·d_k` columns, K `kv_heads·d_k`, V `kv_heads·d_v`,
/// `out` (rows `out_stride` apart) `heads·d_v`. Shapes and the mask (`T_q × T_k`) must have been
/// checked by the caller.
#[allow(clippy::too_many_arguments)]
pub fn attend_heads<F: Kernel>(
    q: Cols<F>,
    k: Cols<F>,
    v: Cols<F>,
    shape: HeadShape,
    mask: &Mask,
    out: &mut [F],
    out_stride: usize,
    workspace: &mut Workspace<F>,
    hooks: &mut dyn Hooks<F>,
) -> Result<()> {
    let HeadShape { t_q, t_k, heads, d_k, d_v, kv_heads, .. } = shape;
    let group = heads / kv_heads.max(1);
    let blocks = t_q.div_ceil(QUERY_BLOCK);
    if hooks.inert() && parallel::worth_splitting(heads * blocks, heads * t_q * t_k * (d_k + d_v)) {
        return attend_heads_split(q, k, v, shape, mask, out, out_stride);
    }
    let Workspace { keys, values, scores } = workspace;
    let mut packed = None;
    for head in 0..heads {
        // 1. Slice the head's columns and its K/V head's; pack K (for Q·Kᵀ) and V once per K/V head
        let kv = head / group;
        let (q_h, k_h, v_h) = (q.head(head, d_k), k.head(kv, d_k), v.head(kv, d_v));
        hooks.head_start(head, q_h, k_h, v_h)?;
        if packed != Some(kv) {
            F::pack_keys(k_h, t_k, keys);
            F::pack_values(v_h, t_k, values);
            packed = Some(kv);
        }
        for first in (0..t_q).step_by(QUERY_BLOCK) {
            let at = BlockAt { head, first, start: head * d_v };
            attend_block(q_h, keys, values, shape, mask, at, scores, &mut out[first * out_stride..], out_stride, hooks)?;
        }
        hooks.head_end(head)?;
    }
    Ok(())
}

/// [`attend_heads`] split across threads (see [`crate::parallel`]), for callers without hooks:
/// every K/V head packed once, then one task per head and block of query rows, each into a
/// buffer of its own, copied into `out` in (head, block) order. Every entry is computed by the
/// same operations as on one thread, so the bits are the same; an error is the one the loop
/// above meets first.
fn attend_heads_split<F: Kernel>(q: Cols<F>, k: Cols<F>, v: Cols<F>, shape: HeadShape, mask: &Mask, out: &mut [F], out_stride: usize) -> Result<()> {
    let HeadShape { t_q, t_k, heads, d_k, d_v, kv_heads, .. } = shape;
    let group = heads / kv_heads.max(1);
    let blocks = t_q.div_ceil(QUERY_BLOCK);
    // 1. Pack each K/V head's K and V, (T_k, d_k) and (T_k, d_v)
    let pack = |kv: usize| {
        let (mut keys, mut values) = (F::Packed::default(), F::Packed::default());
        F::pack_keys(k.head(kv, d_k), t_k, &mut keys);
        F::pack_values(v.head(kv, d_v), t_k, &mut values);
        (keys, values)
    };
    // one block of query rows (a decoding step's one row): short jobs, run by threads kept spinning between them
    let packed = if blocks == 1 { parallel::map_hot(kv_heads, kv_heads > 1, pack) } else { parallel::map(kv_heads, kv_heads > 1, pack) };
    // 2–7 per (head, block): context rows (rows, d_v) in a buffer of the task's own
    let attend = |task: usize| {
        let (head, first) = (task / blocks, (task % blocks) * QUERY_BLOCK);
        let rows = QUERY_BLOCK.min(t_q - first);
        let (keys, values) = &packed[head / group];
        let mut context = vec![F::ZERO; rows * d_v];
        let at = BlockAt { head, first, start: 0 };
        attend_block(q.head(head, d_k), keys, values, shape, mask, at, &mut Vec::new(), &mut context, d_v, &mut ())?;
        Ok(context)
    };
    let contexts = if blocks == 1 { parallel::map_hot(heads, true, attend) } else { parallel::map(heads * blocks, true, attend) };
    for (task, context) in contexts.into_iter().enumerate() {
        let (head, first) = (task / blocks, (task % blocks) * QUERY_BLOCK);
        for (i, row) in context?.chunks_exact(d_v).enumerate() {
            let at = (first + i) * out_stride + head * d_v;
            out[at..at + d_v].copy_from_slice(row);
        }
    }
    Ok(())
}

/// Where one block's context goes: query rows from `first`, head `head`, and the first of its
/// `d_v` columns in the output the block writes (`out` starts at the block's first row).
#[derive(Clone, Copy)]
struct BlockAt {
    head: usize,
    first: usize,
    start: usize,
}

/// Passes 2–7 for one head and one block of at most [`QUERY_BLOCK`] query rows: scores against
/// the packed keys, the overflow check, scale and softmax under the mask, the hook, the weighted
/// sum of the packed values into `out` (row `i` of the block at `out[i·out_stride + at.start ..]`),
/// and its overflow check.
#[allow(clippy::too_many_arguments)]
fn attend_block<F: Kernel>(
    q_h: Cols<F>,
    keys: &F::Packed,
    values: &F::Packed,
    shape: HeadShape,
    mask: &Mask,
    at: BlockAt,
    scores: &mut Vec<F>,
    out: &mut [F],
    out_stride: usize,
    hooks: &mut dyn Hooks<F>,
) -> Result<()> {
    let HeadShape { t_q, t_k, d_k, d_v, offset, .. } = shape;
    let BlockAt { head, first, start } = at;
    let named = shape.named_heads.then_some(head);
    let end = (first + QUERY_BLOCK).min(t_q);
    let rows = end - first;
    // a causal block never looks past its last query's position (where the kernel may skip
    // them); at least one key, so that a row before every key is computed (and masked)
    let n_keys = if F::SKIPS_FUTURE_KEYS && mask.causal { (end as isize + offset).clamp(1, t_k as isize) as usize } else { t_k };
    scores.clear();
    scores.resize(rows * n_keys, F::ZERO);
    // 2. MatMul: scores = Q_h·K_hᵀ for the block, (rows, n_keys)
    F::scores(q_h, first, rows, keys, n_keys, scores);
    // 3. Refuse overflow: finite inputs, so a non-finite score is a dot product beyond the precision
    let bad = scores.iter().enumerate().position(|(n, x)| {
        !x.is_finite() && (F::REFUSES_MASKED_SCORES || mask.allows(first + n / n_keys, n % n_keys, offset))
    });
    if let Some(n) = bad {
        let (query, key) = (first + n / n_keys, n % n_keys);
        return Err(F::overflow(Overflow::Score { head: named, query, key }, scores[n]));
    }
    hooks.scores(head, first, scores, n_keys);
    // 4. Mul by 1/√d_k, then StableSoftmax along each row under the mask
    let scale = attention_scale::<F>(d_k);
    for (i, row) in scores.chunks_exact_mut(n_keys).enumerate() {
        F::softmax(row, scale, |j| mask.allows(first + i, j, offset));
    }
    // 5. The caller's hook: keep, record or drop out the weights
    hooks.weights(head, first, scores, n_keys)?;
    // 6. MatMul: context = weights·V_h, into the head's columns of out, (rows, d_v)
    F::weighted_sum(scores, rows, n_keys, values, &mut out[start..], out_stride);
    // 7. Refuse overflow: a convex combination of finite values passes the range only at its edge
    for i in 0..rows {
        let row = &out[i * out_stride + start..][..d_v];
        if let Some(column) = row.iter().position(|x| !x.is_finite()) {
            return Err(F::overflow(Overflow::Context { head: named, query: first + i, column }, row[column]));
        }
    }
    hooks.context(head, first, rows, out, out_stride, start);
    Ok(())
}

/// The output projection of multi-head attention, `output = concat · W_O` (`(T, C)·(C, C)`),
/// with `None` meaning the identity. The identity is not multiplied: each sum would be
/// `0 + x·1 + (±0)…`, which is `x` except that `−0` becomes `+0`, and adding `+0` reproduces
/// exactly that. Refuses an entry beyond the precision.
pub fn project_output<F: Kernel>(concat: &mut Vec<F>, t: usize, c: usize, w_o: Option<&[F]>) -> Result<()> {
    match w_o {
        Some(w_o) => {
            let mut output = vec![F::ZERO; t * c];
            F::linear(concat, t, c, w_o, c, None, &mut output); // (T, C)
            if let Some(n) = output.iter().position(|x| !x.is_finite()) {
                return Err(F::overflow(Overflow::Output { row: n / c, column: n % c }, output[n]));
            }
            *concat = output;
        }
        None => concat.iter_mut().for_each(|x| *x += F::ZERO),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::softmax::stable_softmax;
    use crate::testing::{assert_bitwise_eq, seeded_matrix};

    /// The spec's ops one by one, unblocked: Transpose, MatMul, Mul, StableSoftmax, MatMul.
    fn by_the_spec(q: &Matrix, k: &Matrix, v: &Matrix, mask: &Mask) -> Matrix {
        let scaled = q.matmul(&k.transpose()).unwrap().scale(attention_scale(q.cols()));
        stable_softmax(&scaled, mask).matmul(v).unwrap()
    }

    #[test]
    fn f64_blocks_give_the_spec_ops_bits() {
        // T = 150: three query blocks, the last partial; cross-attention with T_k = 70
        for (t_q, t_k) in [(150, 150), (150, 70), (3, 130)] {
            let (q, k, v) = (seeded_matrix(t_q, 3, 1), seeded_matrix(t_k, 3, 2), seeded_matrix(t_k, 5, 3));
            for mask in [Mask::none(), Mask::causal()] {
                let shape = HeadShape { t_q, t_k, heads: 1, d_k: 3, d_v: 5, kv_heads: 1, offset: t_k as isize - t_q as isize, named_heads: false };
                let mut out = vec![0.0; t_q * 5];
                let (qc, kc, vc) = (Cols::all(q.data(), 3), Cols::all(k.data(), 3), Cols::all(v.data(), 5));
                attend_heads(qc, kc, vc, shape, &mask, &mut out, 5, &mut Workspace::new(), &mut ()).unwrap();
                assert_bitwise_eq(&Matrix::new(t_q, 5, out).unwrap(), &by_the_spec(&q, &k, &v, &mask));
            }
        }
    }

    #[test]
    fn f32_agrees_with_f64_and_skips_no_allowed_key() {
        let (t, h, d) = (130, 2, 4);
        let c = h * d;
        let (q, k, v) = (seeded_matrix(t, c, 4), seeded_matrix(t, c, 5), seeded_matrix(t, c, 6));
        let shape = HeadShape::new(t, t, h, h, d);
        for mask in [Mask::none(), Mask::causal()] {
            let mut want = vec![0.0; t * c];
            attend_heads(Cols::of(&q), Cols::of(&k), Cols::of(&v), shape, &mask, &mut want, c, &mut Workspace::new(), &mut ()).unwrap();
            let (q32, k32, v32) = (q.cast::<f32>(), k.cast::<f32>(), v.cast::<f32>());
            let mut got = vec![0.0f32; t * c];
            attend_heads(Cols::of(&q32), Cols::of(&k32), Cols::of(&v32), shape, &mask, &mut got, c, &mut Workspace::new(), &mut ()).unwrap();
            let worst = got.iter().zip(&want).map(|(&a, &b)| (f64::from(a) - b).abs()).fold(0.0, f64::max);
            assert!(worst < 1e-5, "max |f32 − f64| = {worst}");
        }
    }

    #[test]
    fn hooks_see_every_block_and_can_change_the_weights() {
        struct Zeroing(usize);
        impl Hooks<f64> for Zeroing {
            fn weights(&mut self, _: usize, _: usize, w: &mut [f64], _: usize) -> Result<()> {
                self.0 += 1;
                w.fill(0.0);
                Ok(())
            }
        }
        let x = seeded_matrix(70, 2, 9);
        let shape = HeadShape::new(70, 70, 2, 2, 1);
        let mut out = vec![1.0; 140];
        let mut hooks = Zeroing(0);
        let all = Cols::all(x.data(), 2);
        attend_heads(all, all, all, shape, &Mask::none(), &mut out, 2, &mut Workspace::new(), &mut hooks).unwrap();
        assert_eq!(hooks.0, 4, "two heads of two blocks");
        assert!(out.iter().all(|&x| x == 0.0), "the weighted sum used the hook's weights");
    }
}
