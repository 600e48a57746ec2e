//! What differs between the two precisions, and nothing else: how a head's K and V are laid
//! out, the three products of a head (scores, weighted sum, W_O), the softmax of one row, which
//! raw scores are refused, and how an overflow is worded. [`super::attend_heads`] is written
//! once over [`Kernel`].
//!
//! - `f64` (number[][] and Float64Array) sums every product over its shared dimension in
//!   increasing order from zero, exactly as [`crate::matrix::Matrix::matmul`] does, so every
//!   path that runs through the engine gives the bits the spec's ops give one by one (the trace
//!   replays them).
//! - `f32` (Float32Array) uses the packed SIMD kernels of [`crate::kernels`] and their own
//!   order of summation: results agree with f64 to rounding, not bit for bit.

use crate::error::AttentionError;
use crate::limits::{non_finite_name, overflow_error};
use crate::kernels::{gemm_packed, linear_f32, softmax_row_f32, PackedPanels};
use crate::matrix::{matmul_into, Strided};
use crate::real::Real;
use crate::softmax::stable_softmax_row;

use super::Cols;

/// Where an overflow happened, for its message. `head` is `None` for dotProductAttention,
/// whose messages say `scores`, `Q`, `K`, `V` and `output` instead of `scores_1`, `Q_1`, …,
/// `context_1`.
#[derive(Clone, Copy, Debug)]
pub enum Overflow {
    /// A raw score `Q row · K row`.
    Score { head: Option<usize>, query: usize, key: usize },
    /// A head's weighted sum of values, `context[query][column]`.
    Context { head: Option<usize>, query: usize, column: usize },
    /// `concat · W_O`.
    Output { row: usize, column: usize },
}

/// The suffix that names a head in messages (`_1`), empty without heads.
fn suffix(head: Option<usize>) -> String {
    head.map(|h| format!("_{h}")).unwrap_or_default()
}

/// A head's context as messages name it: `context_1`, or `output` without heads.
fn context_name(head: Option<usize>) -> String {
    head.map_or_else(|| "output".into(), |h| format!("context_{h}"))
}

/// The per-precision half of the engine.
pub trait Kernel: Real + Send + Sync {
    /// One head's K (ready for the scores) or V (ready for the weighted sum), reused across heads.
    type Packed: Default + Clone + std::fmt::Debug + Send + Sync;
    /// Whether an overflowing raw score is refused even where the mask hides it. f64 refuses
    /// every one (its contract since the first release); f32 only the allowed ones.
    const REFUSES_MASKED_SCORES: bool;
    /// Whether a causal block may skip the keys after its last query. f32 does; f64 computes
    /// every score, since it refuses masked overflows and its trace records whole rows.
    const SKIPS_FUTURE_KEYS: bool;

    /// Packs K's `t_k` rows so that [`Kernel::scores`] can take `Q·Kᵀ`.
    fn pack_keys(k: Cols<Self>, t_k: usize, out: &mut Self::Packed);
    /// Packs V's `t_k` rows for [`Kernel::weighted_sum`].
    fn pack_values(v: Cols<Self>, t_k: usize, out: &mut Self::Packed);
    /// `out (rows × keys) = Q[first .. first + rows] · K[0 .. keys]ᵀ`.
    fn scores(q: Cols<Self>, first: usize, rows: usize, keys: &Self::Packed, n_keys: usize, out: &mut [Self]);
    /// One row in place: `softmax(scale · row)` over the entries `allowed` says take part; the
    /// others get exactly 0, and a row with none allowed becomes all zeros.
    fn softmax(row: &mut [Self], scale: Self, allowed: impl Fn(usize) -> bool);
    /// `out row i (d_v columns, rows out_stride apart) = weights row i (n_keys) · V[0 .. n_keys]`.
    fn weighted_sum(weights: &[Self], rows: usize, n_keys: usize, values: &Self::Packed, out: &mut [Self], out_stride: usize);
    /// `out (m × n) = x (m × k) · w (k × n) (+ bias, n entries)`, all row-major and contiguous.
    fn linear(x: &[Self], m: usize, k: usize, w: &[Self], n: usize, bias: Option<&[Self]>, out: &mut [Self]);
    /// The `RangeError` for a non-finite `value` at `at`.
    fn overflow(at: Overflow, value: Self) -> AttentionError;
    /// In place: `x = (x − shift).exp()` for every entry, with the bits of [`Real::exp`] (f32: four at a time in wasm).
    fn exp_shifted(values: &mut [Self], shift: Self);
}

/// f64's packed form: a matrix's rows, contiguous (K is kept transposed, V as it is).
#[derive(Clone, Debug, Default)]
pub struct Rows {
    data: Vec<f64>,
    cols: usize,
}

impl Rows {
    fn fill(&mut self, m: Cols<f64>, rows: usize) {
        self.cols = m.width;
        self.data.clear();
        for r in 0..rows {
            self.data.extend_from_slice(m.row(r));
        }
    }

}

impl Kernel for f64 {
    type Packed = Rows;
    const REFUSES_MASKED_SCORES: bool = true;
    const SKIPS_FUTURE_KEYS: bool = false;

    fn pack_keys(k: Cols<f64>, t_k: usize, out: &mut Rows) {
        // Kᵀ, (d_k, T_k): the scores are then summed in Matrix::matmul's loop order, which vectorises
        out.cols = t_k;
        out.data.clear();
        out.data.resize(k.width * t_k, 0.0);
        for j in 0..t_k {
            for (p, &x) in k.row(j).iter().enumerate() {
                out.data[p * t_k + j] = x;
            }
        }
    }

    fn pack_values(v: Cols<f64>, t_k: usize, out: &mut Rows) {
        out.fill(v, t_k);
    }

    // scores and weighted_sum write out `matmul_into`'s loop (same order, same bits) instead of
    // calling it: through its generic strides the T=1024 f64 attention took 484–490 ms against
    // 455–461 ms written out (one process, alternating).
    fn scores(q: Cols<f64>, first: usize, rows: usize, keys: &Rows, n_keys: usize, out: &mut [f64]) {
        for (i, o) in out.chunks_exact_mut(n_keys).take(rows).enumerate() {
            o.fill(0.0);
            // each score summed over p in increasing order from zero
            for (p, &a) in q.row(first + i).iter().enumerate() {
                for (x, &b) in o.iter_mut().zip(&keys.data[p * keys.cols..p * keys.cols + n_keys]) {
                    *x += a * b;
                }
            }
        }
    }

    fn softmax(row: &mut [f64], scale: f64, allowed: impl Fn(usize) -> bool) {
        // the spec's Mul by the scale, then its StableSoftmax
        row.iter_mut().for_each(|x| *x *= scale);
        stable_softmax_row(row, allowed);
    }

    fn weighted_sum(weights: &[f64], rows: usize, n_keys: usize, values: &Rows, out: &mut [f64], out_stride: usize) {
        let d_v = values.cols;
        for (i, w_row) in weights.chunks_exact(n_keys).take(rows).enumerate() {
            let o = &mut out[i * out_stride..i * out_stride + d_v];
            o.fill(0.0);
            // over the keys in increasing order, every column at once
            for (p, &w) in w_row.iter().enumerate() {
                for (x, &v) in o.iter_mut().zip(&values.data[p * d_v..(p + 1) * d_v]) {
                    *x += w * v;
                }
            }
        }
    }

    fn linear(x: &[f64], m: usize, k: usize, w: &[f64], n: usize, bias: Option<&[f64]>, out: &mut [f64]) {
        matmul_into(Strided { data: x, stride: k }, m, k, Strided { data: w, stride: n }, n, out, n);
        // the bias added to the finished sums
        if let Some(bias) = bias {
            out.chunks_exact_mut(n).for_each(|o| o.iter_mut().zip(bias).for_each(|(y, &b)| *y += b));
        }
    }

    fn exp_shifted(values: &mut [f64], shift: f64) {
        values.iter_mut().for_each(|x| *x = (*x - shift).exp());
    }

    fn overflow(at: Overflow, value: f64) -> AttentionError {
        let (name, r, c, cause) = match at {
            Overflow::Score { head, query, key } => {
                let s = suffix(head);
                (format!("scores{s}"), query, key, format!("the dot product of Q{s} row {query} and K{s} row {key} is too large"))
            }
            Overflow::Context { head, query, column } => {
                let s = suffix(head);
                (context_name(head), query, column, format!("the weighted sum of V{s} column {column} for query {query} is too large"))
            }
            Overflow::Output { row, column } => ("output".to_string(), row, column, format!("concat row {row} · W_O column {column} is too large")),
        };
        overflow_error(&name, r, c, value, &cause)
    }
}

impl Kernel for f32 {
    type Packed = PackedPanels;
    const REFUSES_MASKED_SCORES: bool = false;
    const SKIPS_FUTURE_KEYS: bool = true;

    fn pack_keys(k: Cols<f32>, t_k: usize, out: &mut PackedPanels) {
        out.pack_transposed(k.from_origin(), k.stride, k.width, t_k); // Kᵀ: (d_k, T_k)
    }

    fn pack_values(v: Cols<f32>, t_k: usize, out: &mut PackedPanels) {
        out.pack(v.from_origin(), v.stride, t_k, v.width); // (T_k, d_v)
    }

    fn scores(q: Cols<f32>, first: usize, rows: usize, keys: &PackedPanels, n_keys: usize, out: &mut [f32]) {
        gemm_packed(rows, q.width, n_keys, &q.from_origin()[first * q.stride..], q.stride, keys, out, n_keys, false);
    }

    fn softmax(row: &mut [f32], scale: f32, allowed: impl Fn(usize) -> bool) {
        // masked keys → −∞, which the SIMD softmax gives weight exactly 0
        for (j, x) in row.iter_mut().enumerate() {
            if !allowed(j) {
                *x = f32::NEG_INFINITY;
            }
        }
        softmax_row_f32(row, scale);
    }

    fn weighted_sum(weights: &[f32], rows: usize, n_keys: usize, values: &PackedPanels, out: &mut [f32], out_stride: usize) {
        gemm_packed(rows, n_keys, values.n(), weights, n_keys, values, out, out_stride, false);
    }

    fn linear(x: &[f32], m: usize, k: usize, w: &[f32], n: usize, bias: Option<&[f32]>, out: &mut [f32]) {
        crate::kernels::with_scratch_panels(|panels| linear_f32(x, m, k, w, n, bias, out, panels));
    }

    fn exp_shifted(values: &mut [f32], shift: f32) {
        crate::kernels::exp_shifted_f32(values, shift);
    }

    fn overflow(at: Overflow, value: f32) -> AttentionError {
        let shown = non_finite_name(f64::from(value));
        AttentionError::range_error(match at {
            Overflow::Score { head, query, key } => {
                let s = suffix(head);
                format!(
                    "scores{s}[{query}][{key}] overflows to {shown} in f32: computing the dot product of Q{s} row {query} and K{s} row {key} went beyond the largest f32 (about 3.4e38); scale the inputs down or pass Float64Array"
                )
            }
            Overflow::Context { head, query, column } => {
                let (s, context) = (suffix(head), context_name(head));
                format!(
                "{context}[{query}][{column}] overflows to {shown} in f32: the weighted sum of V{s} column {column} for query {query} is beyond the largest f32 (about 3.4e38); scale the inputs down or pass Float64Array"
                )
            }
            Overflow::Output { row, column } => format!(
                "output[{row}][{column}] overflows to {shown} in f32: concat row · W_O column is beyond the largest f32 (about 3.4e38); scale the inputs down or pass Float64Array"
            ),
        })
    }
}
