//! What the layer computes differently per precision, and nothing else: how the weights are held
//! for the projections, the backward's products (`A·Bᵀ`, `Aᵀ·B`, `A·B`, `x·Wᵀ`), the finiteness
//! scan and how an overflow is worded (what a pass keeps, in its precision, is
//! [`crate::precision`]'s; a backward across precisions runs in f64, `backward.rs`). The forward
//! (`forward.rs`) and the backward (`backward.rs`) are written once over [`LayerKernel`], as the
//! engine is over [`Kernel`].
//!
//! - `f64` sums every product over its shared dimension in increasing order from zero (the
//!   spec's `MatMul`, [`crate::matrix::matmul_into`]'s order), so the layer's bits are the spec
//!   ops' bits;
//! - `f32` rounds the weights once and packs them into panels for the SIMD kernels of
//!   [`crate::kernels`] (`gemm_packed`), with their own order of summation.

use super::limits::LayerLimits;
use super::{MultiHeadAttention, Weights};
use crate::engine::Kernel;
use crate::kernels::{all_finite_f32, gemm_packed, gemm_transposed_b, linear_f32, linear_prepacked_f32, packed_transpose, with_scratch_panels, PackedPanels};
use crate::matrix::{matmul_into, matmul_transposed_into, transposed_matmul_into, Matrix, Strided};
use std::sync::OnceLock;

/// The layer's four weights and biases as one precision's products read them; `transposed` (for the
/// backward's `d_x = d_Q·Wᵀ`) where the precision keeps them apart.
pub(crate) struct Prepared<'a, F: LayerKernel> {
    /// W_Q, W_K, W_V, W_O.
    pub w: [&'a F::Weight; 4],
    /// b_Q, b_K, b_V, b_O.
    pub b: Option<[&'a [F]; 4]>,
    /// W_Qᵀ, …, W_Oᵀ as [`LayerKernel::times_transposed`] reads them.
    pub t: [&'a F::Weight; 4],
}

impl<F: LayerKernel> Prepared<'_, F> {
    pub fn bias(&self, i: usize) -> Option<&[F]> {
        self.b.map(|b| b[i])
    }
}

/// The per-precision half of the layer: implemented for `f64` and `f32` only (its methods take the
/// layer's own types, which are private to the crate, so no other crate can implement it).
#[allow(private_interfaces)]
pub trait LayerKernel: Kernel + LayerLimits {
    /// One weight matrix ready for `x·W` (f64: the matrix itself; f32: rounded and packed).
    type Weight: Send + Sync;
    /// Buffers the backward's products reuse.
    type Scratch: Default;

    /// The weights as the products read them; with `transposed`, [`Prepared::t`] as the backward's
    /// `d_x = d_Q·Wᵀ` reads them (f32: packed at the first pass that needs them, once per set of weights).
    fn prepared(layer: &MultiHeadAttention, transposed: bool) -> Prepared<'_, Self>;
    /// `out (rows × n) = x (rows × k)·W (+ b)`.
    fn project(x: &[Self], rows: usize, w: &Self::Weight, bias: Option<&[Self]>, out: &mut [Self]);
    /// `out (rows × n) = x (rows × k)·W (+ b)` for W kept in the panel layout by a float32 model
    /// (`Transformer::pack_weights`): the bits of [`Self::project`] on the same W row-major. Only f32 models
    /// keep their weights packed (f64's products are `Matrix::matmul`'s, row-major).
    fn project_panels(x: &[Self], rows: usize, w: &PackedPanels, bias: Option<&[Self]>, out: &mut [Self]);
    /// `out (rows × n, rows ldc apart) = x (rows × k)·W` for W `(k × n)` in the panel layout, as
    /// [`Self::project_panels`]: a float32 model's tied unembedding, W_Eᵀ kept packed.
    fn times_panels(x: &[Self], rows: usize, w: &PackedPanels, out: &mut [Self], ldc: usize);
    /// `out (rows × k) = a (rows × n)·Wᵀ`, for W `(k × n)` prepared as [`Prepared::t`].
    fn times_transposed(a: &[Self], rows: usize, w: &Self::Weight, out: &mut [Self]);
    /// `out (m × n, rows ldc apart) = A·Bᵀ`: A `(m × k)` rows `lda` apart, B `(n × k)` rows `ldb` apart.
    #[allow(clippy::too_many_arguments)]
    fn a_bt(m: usize, k: usize, n: usize, a: &[Self], lda: usize, b: &[Self], ldb: usize, out: &mut [Self], ldc: usize, s: &mut Self::Scratch);
    /// `out (m × n) = A·B`: A `(m × k)` rows `lda` apart, B `(k × n)` rows `ldb` apart.
    #[allow(clippy::too_many_arguments)]
    fn a_b(m: usize, k: usize, n: usize, a: &[Self], lda: usize, b: &[Self], ldb: usize, out: &mut [Self], ldc: usize, s: &mut Self::Scratch);
    /// `out (m × n) = Aᵀ·B`, or `+=` with `accumulate`: A `(k × m)` rows `lda` apart, B `(k × n)`.
    #[allow(clippy::too_many_arguments)]
    fn at_b(m: usize, k: usize, n: usize, a: &[Self], lda: usize, b: &[Self], ldb: usize, out: &mut [Self], ldc: usize, accumulate: bool, s: &mut Self::Scratch);
    /// [`Self::at_b`] again with the A of the last `at_b` call (the same values, as `(k × m)`): f32
    /// reuses its transposed copy (self-attention's x_kᵀ and x_vᵀ are the x_qᵀ just written).
    #[allow(clippy::too_many_arguments)]
    fn at_b_same_a(m: usize, k: usize, n: usize, a: &[Self], lda: usize, b: &[Self], ldb: usize, out: &mut [Self], ldc: usize, accumulate: bool, s: &mut Self::Scratch) {
        Self::at_b(m, k, n, a, lda, b, ldb, out, ldc, accumulate, s);
    }
    /// Whether every value is finite.
    fn all_finite(values: &[Self]) -> bool;
}

#[allow(private_interfaces)]
impl LayerKernel for f64 {
    type Weight = Matrix;
    type Scratch = Vec<f64>;

    fn prepared(layer: &MultiHeadAttention, _: bool) -> Prepared<'_, f64> {
        // a layer holding f32 weights lent, run in f64: those widened (exact), once per lending
        let w = layer.weights.as_ref().unwrap_or_else(|| layer.packed_f32.get().expect(super::NOTHING_HELD).widened());
        let all = [&w.w_q, &w.w_k, &w.w_v, &w.w_o];
        Prepared { w: all, b: w.biases.as_ref().map(super::Biases::slices), t: all }
    }

    fn project(x: &[f64], rows: usize, w: &Matrix, bias: Option<&[f64]>, out: &mut [f64]) {
        // Matrix::matmul's loop, then the bias added to the finished sums
        <f64 as Kernel>::linear(x, rows, w.rows(), w.data(), w.cols(), bias, out);
    }

    fn project_panels(_: &[f64], _: usize, _: &PackedPanels, _: Option<&[f64]>, _: &mut [f64]) {
        unreachable!("a float64 model never keeps its weights packed (Transformer::pack_weights packs float32 ones only)")
    }

    fn times_panels(_: &[f64], _: usize, _: &PackedPanels, _: &mut [f64], _: usize) {
        unreachable!("a float64 model never keeps its weights packed (Transformer::pack_weights packs float32 ones only)")
    }

    fn times_transposed(a: &[f64], rows: usize, w: &Matrix, out: &mut [f64]) {
        let (k, n) = (w.rows(), w.cols());
        Self::a_bt(rows, n, k, a, n, w.data(), n, out, k, &mut Vec::new());
    }

    fn a_bt(m: usize, k: usize, n: usize, a: &[f64], lda: usize, b: &[f64], ldb: usize, out: &mut [f64], ldc: usize, _: &mut Vec<f64>) {
        // Matrix::matmul_transposed's loop: each entry summed over k in increasing order from zero
        matmul_transposed_into(Strided { data: a, stride: lda }, m, k, Strided { data: b, stride: ldb }, n, out, ldc);
    }

    fn a_b(m: usize, k: usize, n: usize, a: &[f64], lda: usize, b: &[f64], ldb: usize, out: &mut [f64], ldc: usize, _: &mut Vec<f64>) {
        matmul_into(Strided { data: a, stride: lda }, m, k, Strided { data: b, stride: ldb }, n, out, ldc);
    }

    fn at_b(m: usize, k: usize, n: usize, a: &[f64], lda: usize, b: &[f64], ldb: usize, out: &mut [f64], ldc: usize, accumulate: bool, sums: &mut Vec<f64>) {
        // Matrix::transposed_matmul's sums (each entry over k in increasing order from zero), then
        // written or added (Matrix::add_assign)
        sums.clear();
        sums.resize(m * n, 0.0);
        transposed_matmul_into(Strided { data: a, stride: lda }, m, k, Strided { data: b, stride: ldb }, n, sums);
        for (i, row) in sums.chunks_exact(n.max(1)).take(m).enumerate() {
            let o = &mut out[i * ldc..i * ldc + n];
            if accumulate {
                o.iter_mut().zip(row).for_each(|(o, &x)| *o += x);
            } else {
                o.copy_from_slice(row);
            }
        }
    }

    fn all_finite(values: &[f64]) -> bool {
        values.iter().all(|x| x.is_finite())
    }
}

/// One of the layer's f32 weight matrices (`k × n`, `[in, out]`) as its products read it.
#[derive(Clone, Debug)]
pub enum WeightF32 {
    /// Rounded once and packed: the layer's own weights.
    Packed(PackedPanels),
    /// Row-major, as a model lends its parameters for one call ([`MultiHeadAttention::lend`]):
    /// a product of a few rows reads it in place, a larger one packs it as it goes
    /// ([`crate::kernels::linear_f32`], the same bits as the packed product).
    Plain(Matrix<f32>),
}

/// A float32 model's W_Q, W_K, W_V, W_O in the panel layout and its biases, as [`PackedWeights::lent_panels`] takes them.
pub(crate) type LentPanels = ([PackedPanels; 4], Option<[Vec<f32>; 4]>);

/// The layer's weights in f32: its own, packed for [`linear_prepacked_f32`] (built at the first f32
/// pass after construction or `set_weights`), or a model's parameters, lent for one call.
#[derive(Clone, Debug)]
pub(crate) struct PackedWeights {
    /// W_Q, W_K, W_V, W_O: `C × C`, or `C × C_kv` for W_K and W_V.
    panels: [WeightF32; 4],
    /// b_Q, b_K, b_V, b_O in f32, when the layer has biases.
    biases: Option<[Vec<f32>; 4]>,
    /// W_Qᵀ, W_Kᵀ, W_Vᵀ, W_Oᵀ, packed at the first f32 backward (own weights only).
    transposed: OnceLock<[WeightF32; 4]>,
    /// Lent weights widened to f64, at the first f64 pass that reads them.
    widened: OnceLock<Weights>,
    /// Whether these are a model's parameters, lent for one call ([`Self::lent`], [`Self::lent_panels`]).
    pub lent: bool,
}

impl PackedWeights {
    /// The weights again, `[in, out]` row-major, in f32.
    pub fn unpack(&self) -> Weights<f32> {
        let matrix = |w: &WeightF32| match w {
            WeightF32::Packed(p) => Matrix::new(p.k(), p.n(), p.unpack()).unwrap_or_else(|e| panic!("k × n values: {e}")),
            WeightF32::Plain(m) => m.clone(),
        };
        Weights::from_parts(self.panels.each_ref().map(matrix), self.biases.clone())
    }

    /// The weights widened to f64 (exact), kept while they are held.
    fn widened(&self) -> &Weights {
        self.widened.get_or_init(|| self.unpack().cast())
    }

    /// Whether these are lent weights already in the panel layout ([`Self::lent_panels`]).
    pub fn is_lent_panels(&self) -> bool {
        self.lent && matches!(self.panels[0], WeightF32::Packed(_))
    }

    /// `panels` and `biases`; `lent` for a model's parameters.
    fn with(panels: [WeightF32; 4], biases: Option<[Vec<f32>; 4]>, lent: bool) -> Self {
        Self { panels, biases, transposed: OnceLock::new(), widened: OnceLock::new(), lent }
    }

    /// A model's f32 parameters, moved in (not copied) for one call.
    pub fn lent(w: Weights<f32>) -> Self {
        let biases = w.biases.map(|b| [b.b_q, b.b_k, b.b_v, b.b_o]);
        Self::with([w.w_q, w.w_k, w.w_v, w.w_o].map(WeightF32::Plain), biases, true)
    }

    /// A float32 model's W_Q, W_K, W_V, W_O kept in the panel layout between inference calls, and its
    /// biases, moved in (not copied) for one call: the products read the panels with no packing. Not for a
    /// backward (no Wᵀ is made of them: the model switches its weights back to row-major first).
    pub fn lent_panels(panels: [PackedPanels; 4], biases: Option<[Vec<f32>; 4]>) -> Self {
        Self::with(panels.map(WeightF32::Packed), biases, true)
    }

    /// The panels and biases [`Self::lent_panels`] lent, moved back out.
    pub fn into_lent_panels(self) -> LentPanels {
        let panels = self.panels.map(|w| match w {
            WeightF32::Packed(p) => p,
            WeightF32::Plain(_) => unreachable!("into_lent_panels is called on weights lent as panels only"),
        });
        (panels, self.biases)
    }

    /// The lent parameters, moved back out.
    pub fn into_lent(self) -> Weights<f32> {
        let panels = self.panels.map(|w| match w {
            WeightF32::Plain(m) => m,
            WeightF32::Packed(_) => unreachable!("into_lent is called on weights lent row-major only"),
        });
        Weights::from_parts(panels, self.biases)
    }

    /// The layer's own f64 weights rounded once to f32, packed.
    fn new(w: &Weights) -> Self {
        let pack = |m: &Matrix| {
            let mut panels = PackedPanels::new();
            panels.pack(m.cast::<f32>().data(), m.cols(), m.rows(), m.cols()); // (C, C) or (C, C_kv)
            WeightF32::Packed(panels)
        };
        let to_f32 = |b: &[f64]| b.iter().map(|&x| x as f32).collect::<Vec<f32>>();
        Self::with([&w.w_q, &w.w_k, &w.w_v, &w.w_o].map(pack), w.biases.as_ref().map(|b| b.slices().map(to_f32)), false)
    }
}

/// `out (m × n) = A·B` (`+=` with `accumulate`), B packed into `panels` first.
#[allow(clippy::too_many_arguments)]
fn mul(m: usize, k: usize, n: usize, a: &[f32], lda: usize, b: &[f32], ldb: usize, out: &mut [f32], ldc: usize, accumulate: bool, panels: &mut PackedPanels) {
    panels.pack(b, ldb, k, n);
    gemm_packed(m, k, n, a, lda, panels, out, ldc, accumulate);
}

/// The f32 products' buffers: one packing of B and one transposed A.
#[derive(Default)]
pub struct ScratchF32 {
    panels: PackedPanels,
    transposed: Vec<f32>,
}

#[allow(private_interfaces)]
impl LayerKernel for f32 {
    type Weight = WeightF32;
    type Scratch = ScratchF32;

    fn prepared(layer: &MultiHeadAttention, transposed: bool) -> Prepared<'_, f32> {
        let own = || layer.weights.as_ref().expect("a layer holds its weights in f64, or f32 weights lent");
        let packed = layer.packed_f32.get_or_init(|| PackedWeights::new(own()));
        let w = packed.panels.each_ref();
        assert!(!(transposed && packed.is_lent_panels()), "a backward with a model's weights lent as panels: the model makes them row-major first");
        // lent weights are read as they lie: their transposed products pack as they go
        let t = match transposed && !packed.lent {
            false => w,
            true => packed.transposed.get_or_init(|| {
                // Wᵀ (out, in) of the weights rounded once to f32
                [&own().w_q, &own().w_k, &own().w_v, &own().w_o].map(|m| WeightF32::Packed(packed_transpose(m.cast::<f32>().data(), m.rows(), m.cols())))
            }).each_ref(),
        };
        Prepared { w, b: packed.biases.as_ref().map(|b| b.each_ref().map(|b| &b[..])), t }
    }

    fn project(x: &[f32], rows: usize, w: &WeightF32, bias: Option<&[f32]>, out: &mut [f32]) {
        match w {
            WeightF32::Packed(panels) => linear_prepacked_f32(x, rows, panels, bias, out),
            WeightF32::Plain(m) => with_scratch_panels(|p| linear_f32(x, rows, m.rows(), m.data(), m.cols(), bias, out, p)),
        }
    }

    fn project_panels(x: &[f32], rows: usize, w: &PackedPanels, bias: Option<&[f32]>, out: &mut [f32]) {
        linear_prepacked_f32(x, rows, w, bias, out);
    }

    fn times_panels(x: &[f32], rows: usize, w: &PackedPanels, out: &mut [f32], ldc: usize) {
        gemm_packed(rows, w.k(), w.n(), x, w.k(), w, out, ldc, false);
    }

    fn times_transposed(a: &[f32], rows: usize, w: &WeightF32, out: &mut [f32]) {
        match w {
            // the packed Wᵀ (k × n)
            WeightF32::Packed(panels) => {
                let (k, n) = (panels.k(), panels.n());
                gemm_packed(rows, k, n, a, k, panels, out, n, false);
            }
            // W (k × n) as it lies: out (rows × k) = a (rows × n)·Wᵀ
            WeightF32::Plain(m) => {
                let (k, n) = m.shape();
                with_scratch_panels(|p| gemm_transposed_b(rows, n, k, a, n, m.data(), n, out, k, false, p));
            }
        }
    }

    fn a_bt(m: usize, k: usize, n: usize, a: &[f32], lda: usize, b: &[f32], ldb: usize, out: &mut [f32], ldc: usize, s: &mut ScratchF32) {
        gemm_transposed_b(m, k, n, a, lda, b, ldb, out, ldc, false, &mut s.panels);
    }

    fn a_b(m: usize, k: usize, n: usize, a: &[f32], lda: usize, b: &[f32], ldb: usize, out: &mut [f32], ldc: usize, s: &mut ScratchF32) {
        mul(m, k, n, a, lda, b, ldb, out, ldc, false, &mut s.panels);
    }

    fn at_b(m: usize, k: usize, n: usize, a: &[f32], lda: usize, b: &[f32], ldb: usize, out: &mut [f32], ldc: usize, accumulate: bool, s: &mut ScratchF32) {
        // Aᵀ written out row-major first (a copy of m × k values, small next to the product), in
        // 8 × 8 tiles, so that the writes of a tile stay within eight cache lines
        let at = &mut s.transposed;
        at.clear();
        at.resize(m * k, 0.0);
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
        mul(m, k, n, at, k, b, ldb, out, ldc, accumulate, &mut s.panels);
    }

    fn at_b_same_a(m: usize, k: usize, n: usize, _a: &[f32], _lda: usize, b: &[f32], ldb: usize, out: &mut [f32], ldc: usize, accumulate: bool, s: &mut ScratchF32) {
        // Aᵀ (m × k) is in s.transposed from the last at_b
        let at = std::mem::take(&mut s.transposed);
        mul(m, k, n, &at, k, b, ldb, out, ldc, accumulate, &mut s.panels);
        s.transposed = at;
    }

    fn all_finite(values: &[f32]) -> bool {
        all_finite_f32(values)
    }
}
