//! Compute kernels for the fast f32 path (Float32Array input) and for anything else that needs a
//! fast product, e.g. the layer's projections: a packed, register-blocked matrix product, a
//! vectorisable `exp`, and a row softmax built on it.
//!
//! These kernels may sum in any order, so they are **not** used by the `f64` path, whose
//! results must match [`crate::Matrix::matmul`] and the trace bit for bit.
//!
//! The loops are written so that LLVM vectorises them: with `+simd128` on wasm32 (see
//! `.cargo/config.toml`) they become `f32x4` code, natively SSE/AVX code. The product is the
//! classic scheme: B is packed once into panels of [`NR`] columns, and an [`MR`]×[`NR`] tile
//! of C is accumulated in registers while walking the shared dimension.

mod exp;
mod few_rows;

pub use exp::{all_finite_f32, exp_f32, exp_shifted_f32, max_f32, softmax_row_f32};
use few_rows::{gemm_transposed_b_unpacked, linear_unpacked_f32, UNPACKED_ROWS};

/// Rows of C one micro-tile computes.
pub const MR: usize = 4;
/// Columns of C one micro-tile computes (the width of a packed panel of B).
pub const NR: usize = 8;
/// Rows of A processed against every panel before moving on (keeps that block of A in cache).
const MC: usize = 64;

/// A `k × n` matrix B packed for [`gemm_packed`]: panel `jb` holds, for every `p < k`, the
/// [`NR`] values `B[p][jb·NR .. jb·NR + NR]` side by side (zero-padded past column `n`).
#[derive(Clone, Debug, Default)]
pub struct PackedPanels {
    data: Vec<f32>,
    k: usize,
    n: usize,
}

impl PackedPanels {
    /// An empty buffer; `pack*` resizes it, reusing its allocation.
    pub fn new() -> Self {
        Self::default()
    }

    /// The shared dimension `k` (rows of B).
    pub fn k(&self) -> usize {
        self.k
    }

    /// The number of columns `n` of B.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Sizes the buffer for a `k × n` B. The values left in it are stale: the `pack*` functions write
    /// every entry, the padding past column `n` included (not zeroing it all first saves a pass over it).
    fn reset(&mut self, k: usize, n: usize) {
        self.k = k;
        self.n = n;
        self.data.resize(n.div_ceil(NR) * k * NR, 0.0);
    }

    /// Packs B = `b[p·ldb + j]` for `p < k`, `j < n` (row-major, row stride `ldb`): each thread's share of the
    /// panels (all of them on one thread, at most [`PACK_GROUP`]) in one pass over B's rows, so each row of B is
    /// read in runs of up to `PACK_GROUP · NR` values (one panel at a time read 32 bytes of each of k rows, then
    /// came back for the next 32; 16 panels at a time, 512 bytes, still left the reads waiting on memory).
    pub fn pack(&mut self, b: &[f32], ldb: usize, k: usize, n: usize) {
        self.reset(k, n);
        if k == 0 || n == 0 {
            return;
        }
        let panel_len = k * NR;
        let panels = n.div_ceil(NR);
        // one group per thread (each its own pass over B's rows), at most PACK_GROUP panels
        let per_group = panels.div_ceil(crate::parallel::threads()).min(PACK_GROUP);
        let split = crate::parallel::worth_splitting(panels.div_ceil(per_group), k * n);
        crate::parallel::for_each_chunk(&mut self.data, panel_len * per_group, split, |g, group| {
            let first = g * per_group * NR; // the group's first column
            for p0 in (0..k).step_by(PACK_ROWS) {
                let rows = p0..(p0 + PACK_ROWS).min(k);
                for (q, panel) in group.chunks_exact_mut(panel_len).enumerate() {
                    let j0 = first + q * NR;
                    let width = NR.min(n - j0);
                    for p in rows.clone() {
                        copy_panel_row(&mut panel[p * NR..(p + 1) * NR], &b[p * ldb + j0..p * ldb + j0 + width]);
                    }
                }
            }
        });
    }

    /// B again, `k × n` row-major: the inverse of [`Self::pack`].
    pub fn unpack(&self) -> Vec<f32> {
        let (k, n) = (self.k, self.n);
        let mut out = vec![0.0; k * n];
        for (jb, panel) in self.data.chunks_exact(k * NR).enumerate() {
            let j0 = jb * NR;
            let width = NR.min(n - j0);
            for (p, src) in panel.chunks_exact(NR).enumerate() {
                out[p * n + j0..p * n + j0 + width].copy_from_slice(&src[..width]);
            }
        }
        out
    }

    /// Bᵀ `(k × n)` packed, for B = `rows` `(n × k)` row-major whose `n` is a multiple of [`NR`], **in place**:
    /// panel `jb` of Bᵀ holds B's rows `jb·NR … jb·NR + NR`, which are the same `NR·k` floats of `rows`, so each
    /// block of [`NR`] rows is transposed where it lies (through one block's buffer) and no second copy of B is
    /// made. The panels are those of [`Self::pack_transposed`] (`lds = k`). A float32 model's tied W_E
    /// (`V × C`), whose W_Eᵀ the unembedding reads, is kept so.
    pub fn transposed_in_place(mut rows: Vec<f32>, n: usize, k: usize) -> Self {
        assert!(n.is_multiple_of(NR) && rows.len() == n * k, "transposed_in_place: {} values for {n} × {k}, n a multiple of {NR}", rows.len());
        let mut block = vec![0.0f32; NR * k];
        for chunk in rows.chunks_exact_mut((NR * k).max(1)) {
            block.copy_from_slice(chunk);
            for (p, dst) in chunk.chunks_exact_mut(NR).enumerate() {
                for (jj, d) in dst.iter_mut().enumerate() {
                    *d = block[jj * k + p];
                }
            }
        }
        Self { data: rows, k, n }
    }

    /// B's rows `(n × k)` again, in the same memory: the inverse of [`Self::transposed_in_place`].
    pub fn into_transposed_rows(self) -> Vec<f32> {
        let (k, n, mut data) = (self.k, self.n, self.data);
        assert!(n.is_multiple_of(NR) && data.len() == n * k, "into_transposed_rows: not made by transposed_in_place");
        let mut block = vec![0.0f32; NR * k];
        for chunk in data.chunks_exact_mut((NR * k).max(1)) {
            block.copy_from_slice(chunk);
            for (jj, row) in chunk.chunks_exact_mut(k.max(1)).enumerate() {
                for (p, d) in row.iter_mut().enumerate() {
                    *d = block[p * NR + jj];
                }
            }
        }
        data
    }

    /// Column `j < n` of the packed matrix, its `k` values in order: row j of B for [`Self::transposed_in_place`]
    /// (`k` reads [`NR`] floats apart, within one panel).
    pub fn column(&self, j: usize) -> impl Iterator<Item = f32> + '_ {
        assert!(j < self.n, "column {j} of {} columns", self.n);
        let start = j / NR * self.k * NR;
        self.data[start..start + self.k * NR].iter().skip(j % NR).step_by(NR).copied()
    }

    /// Packs the transpose of `src`: B[p][j] = `src[j·lds + p]` for `p < k`, `j < n`.
    /// Attention uses it to pack Kᵀ straight from the rows of K.
    pub fn pack_transposed(&mut self, src: &[f32], lds: usize, k: usize, n: usize) {
        self.reset(k, n);
        let split = crate::parallel::worth_splitting(n.div_ceil(NR), k * n);
        crate::parallel::for_each_chunk(&mut self.data, (k * NR).max(1), split, |jb, panel| {
            let j0 = jb * NR;
            let width = NR.min(n - j0);
            let rows: [&[f32]; NR] = std::array::from_fn(|jj| if jj < width { &src[(j0 + jj) * lds..(j0 + jj) * lds + k] } else { &[] });
            let done = if width == NR { transpose_into_panel(panel, rows) } else { 0 };
            for (jj, row) in rows.iter().enumerate().take(width) {
                for (p, &x) in row.iter().enumerate().skip(done) {
                    panel[p * NR + jj] = x;
                }
            }
            if width < NR {
                panel.chunks_exact_mut(NR).for_each(|dst| dst[width..].fill(0.0));
            }
        });
    }

    /// Panel `jb`, first `kk` rows.
    fn panel(&self, jb: usize, kk: usize) -> &[f32] {
        let start = jb * self.k * NR;
        &self.data[start..start + kk * NR]
    }
}

/// A full panel of [`PackedPanels::pack_transposed`]: `panel[p·NR + jj] = rows[jj][p]` for the first p, four at a
/// time (each half of the panel a 4 × 4 transpose of four rows' four values: four loads, eight shuffles, four
/// stores, instead of sixteen single values); returns how many p it filled (the rest are left to the caller).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn transpose_into_panel(panel: &mut [f32], rows: [&[f32]; NR]) -> usize {
    use core::arch::wasm32::{v128, v128_load, v128_store};
    let k = rows[0].len();
    assert!(rows.iter().all(|r| r.len() == k) && panel.len() >= k * NR, "transpose_into_panel: rows or panel of another length");
    let out = panel.as_mut_ptr();
    let mut p = 0;
    while p + 4 <= k {
        for h in 0..2 {
            let [q0, q1, q2, q3] = [rows[4 * h], rows[4 * h + 1], rows[4 * h + 2], rows[4 * h + 3]];
            // SAFETY: p + 4 ≤ k = each row's length, and (p + 3)·NR + 4h + 4 ≤ k·NR ≤ panel.len() (asserted);
            // v128_load/v128_store have no alignment requirement.
            unsafe {
                let (r0, r1) = (v128_load(q0.as_ptr().add(p) as *const v128), v128_load(q1.as_ptr().add(p) as *const v128));
                let (r2, r3) = (v128_load(q2.as_ptr().add(p) as *const v128), v128_load(q3.as_ptr().add(p) as *const v128));
                let at = out.add(p * NR + 4 * h);
                for (q, column) in transpose4(r0, r1, r2, r3).into_iter().enumerate() {
                    v128_store(at.add(q * NR) as *mut v128, column);
                }
            }
        }
        p += 4;
    }
    p
}

/// The 4 × 4 transpose of four rows' four values (`f32x4` each): column q holds `[r0[q], r1[q], r2[q], r3[q]]`.
/// Four shuffles interleave pairs of rows, four more put the halves together. For the packing of Bᵀ
/// ([`transpose_into_panel`]) and the few-row product with Bᵀ (`few_rows::four_sums`).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
pub(crate) fn transpose4(r0: core::arch::wasm32::v128, r1: core::arch::wasm32::v128, r2: core::arch::wasm32::v128, r3: core::arch::wasm32::v128) -> [core::arch::wasm32::v128; 4] {
    use core::arch::wasm32::i32x4_shuffle;
    let (lo01, lo23) = (i32x4_shuffle::<0, 4, 1, 5>(r0, r1), i32x4_shuffle::<0, 4, 1, 5>(r2, r3));
    let (hi01, hi23) = (i32x4_shuffle::<2, 6, 3, 7>(r0, r1), i32x4_shuffle::<2, 6, 3, 7>(r2, r3));
    [
        i32x4_shuffle::<0, 1, 4, 5>(lo01, lo23),
        i32x4_shuffle::<2, 3, 6, 7>(lo01, lo23),
        i32x4_shuffle::<0, 1, 4, 5>(hi01, hi23),
        i32x4_shuffle::<2, 3, 6, 7>(hi01, hi23),
    ]
}

/// The portable build leaves every value to the caller's loop.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline(always)]
fn transpose_into_panel(_panel: &mut [f32], _rows: [&[f32]; NR]) -> usize {
    0
}

/// The most panels [`PackedPanels::pack`] fills per pass over B's rows: [`PACK_COLUMNS`] columns, all that
/// [`linear_f32`] packs at a time (GPT-2 small's weights, T = 128 products: 16 panels per pass packed c_attn, attn
/// c_proj, c_fc and mlp c_proj in 3.0, 1.3, 4.9 and 6.7 ms; all in one pass 2.4, 0.8, 3.6, 3.1 ms; `make bench-gemm`).
const PACK_GROUP: usize = PACK_COLUMNS / NR;

/// Rows of B that [`PackedPanels::pack`] copies into a panel before it moves to the next panel: their
/// values are side by side in the panel (`PACK_ROWS · NR` floats, whole cache lines). One row at a time, the
/// writes of a row of B went to up to 256 panels `k · NR` floats apart (24 KB for GPT-2's k = 768: the same few
/// sets of the L1 cache). `make bench-gemm GEMM_BASE=…` (AMD EPYC, alternating): packing c_attn, attn c_proj, c_fc
/// and mlp c_proj took 0.65, 0.84, 0.71 and 0.96 of the time one row at a time took (4 rows: about 0.9; 32: no
/// better than 16).
const PACK_ROWS: usize = 16;

/// One row of a panel: `src` (at most [`NR`] values) then zeros.
#[inline(always)]
fn copy_panel_row(dst: &mut [f32], src: &[f32]) {
    match <&[f32; NR]>::try_from(src) {
        Ok(full) => {
            let dst: &mut [f32; NR] = dst.try_into().expect("a panel row has NR values");
            *dst = *full;
        }
        Err(_) => {
            dst[..src.len()].copy_from_slice(src);
            dst[src.len()..].fill(0.0);
        }
    }
}

/// `C = A·B` (or `C += A·B` when `accumulate`), over the first `kk ≤ b.k()` rows of B and the
/// first `n ≤ b.n()` columns. A row `i` is `a[i·lda .. i·lda + kk]`; C row `i` is
/// `c[i·ldc .. i·ldc + n]`. The slices start at element (0, 0) and may be longer.
///
/// On more than one thread the product is cut into blocks of rows, or of columns (see [`by_columns`]),
/// so each entry is the same sum in the same order on any thread count.
#[allow(clippy::too_many_arguments)]
pub fn gemm_packed(m: usize, kk: usize, n: usize, a: &[f32], lda: usize, b: &PackedPanels, c: &mut [f32], ldc: usize, accumulate: bool) {
    assert!(kk <= b.k && n <= b.n, "gemm_packed: {kk}×{n} does not fit the packed {}×{}", b.k, b.n);
    if m == 0 || n == 0 {
        return;
    }
    assert!(a.len() >= (m - 1) * lda + kk && c.len() >= (m - 1) * ldc + n, "gemm_packed: A or C is too short");
    let blocks = m.div_ceil(MC);
    let c = &mut c[..(m - 1) * ldc + n];
    // row blocks for every thread twice over, or as many for each thread (T = 128 on 2 threads): each block
    // of MC rows of C written in place (split by columns instead, each thread would write a part of its own,
    // copied into C after)
    let threads = crate::parallel::threads();
    if blocks >= 2 * threads || (threads > 1 && blocks.is_multiple_of(threads)) {
        let split = crate::parallel::worth_splitting(blocks, m * kk * n);
        crate::parallel::for_each_chunk(c, MC * ldc, split, |block, c_block| {
            let i0 = block * MC;
            gemm_block(&a[i0 * lda..], lda, MC.min(m - i0), kk, 0..n, b, c_block, ldc, accumulate);
        });
        return;
    }
    // fewer (a short sequence): split by column groups instead, each over every row block
    by_columns(m, n, m * kk * n, c, ldc, accumulate, |cols, part, width| {
        for i0 in (0..m).step_by(MC) {
            gemm_block(&a[i0 * lda..], lda, MC.min(m - i0), kk, cols.clone(), b, &mut part[i0 * width..], width, accumulate);
        }
    });
}

/// [`gemm_packed`] for one block of at most [`MC`] rows of A (starting at `a`) and the columns `cols` of
/// B (starting at a panel boundary) into `c`, whose element (0, 0) is C's entry (first row, `cols.start`).
#[allow(clippy::too_many_arguments)]
fn gemm_block(a: &[f32], lda: usize, m: usize, kk: usize, cols: std::ops::Range<usize>, b: &PackedPanels, c: &mut [f32], ldc: usize, accumulate: bool) {
    debug_assert!(cols.start.is_multiple_of(NR), "a column group starts at a panel");
    let (first, n) = (cols.start / NR, cols.len());
    let panels = n.div_ceil(NR);
    PACKED_A.with(|packed_a| {
        let mut packed_a = packed_a.borrow_mut();
        // 1. pack this block of A into strips of MR rows, interleaved: strip[p·R + r]
        packed_a.clear();
        let mut strips = Vec::with_capacity(MC.div_ceil(MR));
        let mut i = 0;
        while i < m {
            let rows = MR.min(m - i);
            let start = packed_a.len();
            for p in 0..kk {
                packed_a.extend((0..rows).map(|r| a[(i + r) * lda + p]));
            }
            strips.push((i, rows, start));
            i += rows;
        }
        // 2. every panel of B against every strip, one register tile at a time
        for jb in 0..panels {
            let panel = b.panel(first + jb, kk);
            let j0 = jb * NR;
            let width = NR.min(n - j0);
            for &(i, rows, start) in &strips {
                let strip = &packed_a[start..start + rows * kk];
                let c_tile = &mut c[i * ldc + j0..];
                match rows {
                    4 => store(micro::<4>(strip, panel), c_tile, ldc, width, accumulate),
                    3 => store(micro::<3>(strip, panel), c_tile, ldc, width, accumulate),
                    2 => store(micro::<2>(strip, panel), c_tile, ldc, width, accumulate),
                    _ => store(micro::<1>(strip, panel), c_tile, ldc, width, accumulate),
                }
            }
        }
    });
}

thread_local! {
    /// The packed block of A, reused across calls.
    static PACKED_A: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// One `R × NR` tile of A·B in wasm SIMD: two `f32x4` accumulators per row, one splat of A and
/// two loads of B per step. Same contract as the portable version below.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn micro<const R: usize>(strip: &[f32], panel: &[f32]) -> [[f32; NR]; R] {
    use core::arch::wasm32::{f32x4_add, f32x4_mul, f32x4_splat, v128, v128_load, v128_store};
    let kk = panel.len() / NR;
    assert!(strip.len() >= kk * R && panel.len() == kk * NR, "micro: strip or panel too short");
    let mut low = [f32x4_splat(0.0); R];
    let mut high = [f32x4_splat(0.0); R];
    let (a, b) = (strip.as_ptr(), panel.as_ptr());
    for p in 0..kk {
        // SAFETY: p < kk, so p·NR + 8 ≤ panel.len() and p·R + r < strip.len() (asserted above);
        // v128_load/v128_store have no alignment requirement.
        unsafe {
            let b_low = v128_load(b.add(p * NR) as *const v128);
            let b_high = v128_load(b.add(p * NR + 4) as *const v128);
            for r in 0..R {
                let x = f32x4_splat(*a.add(p * R + r));
                low[r] = f32x4_add(low[r], f32x4_mul(x, b_low));
                high[r] = f32x4_add(high[r], f32x4_mul(x, b_high));
            }
        }
    }
    let mut acc = [[0.0f32; NR]; R];
    for r in 0..R {
        // SAFETY: acc[r] has NR = 8 floats: two v128 stores at offsets 0 and 4.
        unsafe {
            v128_store(acc[r].as_mut_ptr() as *mut v128, low[r]);
            v128_store(acc[r].as_mut_ptr().add(4) as *mut v128, high[r]);
        }
    }
    acc
}

/// One `R × NR` tile of A·B, kept in registers over the whole shared dimension. `strip` holds
/// the tile's rows of A interleaved (`strip[p·R + r]`), `panel` the tile's columns of B.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline(always)]
fn micro<const R: usize>(strip: &[f32], panel: &[f32]) -> [[f32; NR]; R] {
    let mut acc = [[0.0f32; NR]; R];
    for (a, b) in strip.chunks_exact(R).zip(panel.chunks_exact(NR)) {
        let a: &[f32; R] = a.try_into().expect("chunks_exact gives R values");
        let b: &[f32; NR] = b.try_into().expect("chunks_exact gives NR values");
        for r in 0..R {
            for j in 0..NR {
                acc[r][j] += a[r] * b[j];
            }
        }
    }
    acc
}

#[inline(always)]
fn store<const R: usize>(acc: [[f32; NR]; R], c: &mut [f32], ldc: usize, width: usize, accumulate: bool) {
    for (r, tile_row) in acc.iter().enumerate() {
        let out = &mut c[r * ldc..r * ldc + width];
        if accumulate {
            out.iter_mut().zip(tile_row).for_each(|(o, &x)| *o += x);
        } else {
            out.copy_from_slice(&tile_row[..width]);
        }
    }
}

/// `out = x·W (+ bias)`: x is `(rows, k)` row-major, W is `(k, n)` row-major ("[in, out]"),
/// bias has `n` entries. `w_panels` is a reusable packing buffer.
pub fn linear_f32(x: &[f32], rows: usize, k: usize, w: &[f32], n: usize, bias: Option<&[f32]>, out: &mut [f32], w_panels: &mut PackedPanels) {
    if rows <= UNPACKED_ROWS {
        linear_unpacked_f32(x, rows, k, w, n, bias, out);
        return;
    }
    // W packed PACK_COLUMNS columns at a time: a block's panels are the whole matrix's, so each
    // entry is the same sum (the unembedding's V columns are never packed at once)
    let accumulate = match bias {
        Some(bias) => {
            out[..rows * n].chunks_exact_mut(n).for_each(|row| row.copy_from_slice(bias));
            true
        }
        None => false,
    };
    for j0 in (0..n).step_by(PACK_COLUMNS) {
        let width = PACK_COLUMNS.min(n - j0);
        w_panels.pack(&w[j0..], n, k, width); // (k, width): columns j0 … j0 + width of W
        gemm_packed(rows, k, width, x, k, w_panels, &mut out[j0..], n, accumulate);
    }
}

thread_local! {
    /// This thread's packing buffer for products whose B is packed as they go (one weight matrix, or
    /// [`PACK_COLUMNS`] of its columns): allocated once and reused, not per call.
    static SCRATCH_PANELS: std::cell::RefCell<PackedPanels> = std::cell::RefCell::new(PackedPanels::new());
}

/// `f` with this thread's reusable packing buffer. The buffer is moved out for the call, not borrowed:
/// while `f` waits for its product's tasks, this thread may run another task that calls this too
/// (it then gets an empty buffer of its own).
pub fn with_scratch_panels<R>(f: impl FnOnce(&mut PackedPanels) -> R) -> R {
    let mut panels = SCRATCH_PANELS.take();
    let result = f(&mut panels);
    SCRATCH_PANELS.set(panels);
    result
}

/// The most columns of B that [`linear_f32`] and [`gemm_transposed_b`] pack at a time (a multiple of
/// [`NR`]): packing a product's whole B would hold a second copy of it (the unembedding, V × C, is
/// most of a language model's weights) for the length of the call.
pub const PACK_COLUMNS: usize = 256 * NR;

/// The fewest multiply-adds for which [`by_columns`] splits a product across threads. A
/// decoding step makes some 70 such products per token, each waking the pool's threads: in Node (AMD EPYC,
/// 2 threads) splitting every one of them at [`crate::parallel::MIN_PARALLEL_WORK`] made a GPT-2-small
/// decoding step slower (71 against 58 ms, on a loaded machine). At 2¹⁹ every GPT-2-small product of a decoding step is split (768 × 768
/// is 589,824), and the step took 0.91 of its time at 2²² (only the unembedding split; `tests/bench/gpt2-decode-ab.mjs
/// --threads 2`, 21 rounds alternating, load 2.3–2.5).
const MIN_COLUMN_SPLIT_WORK: usize = 1 << 19;

/// Runs `f(columns, part, width)` for the columns of an `m × n` product (`work` multiply-adds) whose
/// `m` rows are too few to split (a few rows, or fewer row blocks than twice the threads): on one thread once over all `n` columns, writing `out` (rows `ldc`
/// apart) in place; on more, once per column group (one per thread, a multiple of [`NR`] wide), each into a part of
/// its own (`m × width`, holding `out`'s values first when `accumulate`), copied into `out` after.
/// Every entry is computed by one call either way, so the bits do not depend on the thread count.
pub(super) fn by_columns(m: usize, n: usize, work: usize, out: &mut [f32], ldc: usize, accumulate: bool, f: impl Fn(std::ops::Range<usize>, &mut [f32], usize) + Sync + Send) {
    let panels = n.div_ceil(NR);
    let threads = crate::parallel::threads();
    if m == 0 || n == 0 {
        return;
    }
    if work < MIN_COLUMN_SPLIT_WORK || !crate::parallel::worth_splitting(panels, work) {
        if ldc == n {
            f(0..n, &mut out[..m * n], n);
        } else {
            let mut part: Vec<f32> = if accumulate { (0..m).flat_map(|i| out[i * ldc..i * ldc + n].iter().copied()).collect() } else { vec![0.0; m * n] };
            f(0..n, &mut part, n);
            part.chunks_exact(n).enumerate().for_each(|(i, row)| out[i * ldc..i * ldc + n].copy_from_slice(row));
        }
        return;
    }
    // one group per thread: each reads the longest runs of W's rows it can (a decoding step's products read W
    // where it lies; two groups per thread made GPT-2 small's decoding step on 2 threads 1.1× slower:
    // tests/bench/gpt2-decode-ab.mjs, three runs alternating, AMD EPYC)
    let per_group = panels.div_ceil(threads) * NR;
    let groups = n.div_ceil(per_group);
    let parts = crate::parallel::map_hot(groups, true, |g| {
        let cols = g * per_group..((g + 1) * per_group).min(n);
        let width = cols.len();
        let mut part: Vec<f32> = if accumulate { (0..m).flat_map(|i| out[i * ldc + cols.start..i * ldc + cols.end].iter().copied()).collect() } else { vec![0.0; m * width] };
        f(cols, &mut part, width);
        part
    });
    for (g, part) in parts.iter().enumerate() {
        let j0 = g * per_group;
        let width = part.len() / m;
        part.chunks_exact(width).enumerate().for_each(|(i, row)| out[i * ldc + j0..i * ldc + j0 + width].copy_from_slice(row));
    }
}

/// `out = x·W (+ bias)` with W already packed (`k = w_panels.k()` rows, `n = w_panels.n()`
/// columns): for weights that are used many times, like the layer's, packed once.
pub fn linear_prepacked_f32(x: &[f32], rows: usize, w_panels: &PackedPanels, bias: Option<&[f32]>, out: &mut [f32]) {
    let (k, n) = (w_panels.k(), w_panels.n());
    let accumulate = match bias {
        Some(bias) => {
            out[..rows * n].chunks_exact_mut(n).for_each(|row| row.copy_from_slice(bias));
            true
        }
        None => false,
    };
    gemm_packed(rows, k, n, x, k, w_panels, out, n, accumulate);
}

/// `out (m × n, rows ldc apart) = A·Bᵀ` (`+=` with `accumulate`): A `(m × k)` rows `lda` apart, B
/// `(n × k)` rows `ldb` apart, packed transposed into the reusable `panels` first. For the layer's
/// f32 backward, whose products take transposes (`d_context·V_hᵀ`, `d_Q·W_Qᵀ`).
#[allow(clippy::too_many_arguments)]
pub fn gemm_transposed_b(m: usize, k: usize, n: usize, a: &[f32], lda: usize, b: &[f32], ldb: usize, out: &mut [f32], ldc: usize, accumulate: bool, panels: &mut PackedPanels) {
    if m <= UNPACKED_ROWS {
        gemm_transposed_b_unpacked(m, k, n, a, lda, b, ldb, out, ldc, accumulate);
        return;
    }
    for j0 in (0..n).step_by(PACK_COLUMNS) {
        let width = PACK_COLUMNS.min(n - j0);
        panels.pack_transposed(&b[j0 * ldb..], ldb, k, width); // rows j0 … j0 + width of B, as (k, width)
        gemm_packed(m, k, width, a, lda, panels, &mut out[j0..], ldc, accumulate);
    }
}

/// `W` (`rows × cols`, row-major) transposed and packed once: Wᵀ `(cols × rows)` as B of [`gemm_packed`].
pub fn packed_transpose(w: &[f32], rows: usize, cols: usize) -> PackedPanels {
    let mut panels = PackedPanels::new();
    panels.pack_transposed(w, cols, cols, rows);
    panels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_products_packed_in_blocks_have_the_bits_of_one_packing() {
        // n spans three blocks of PACK_COLUMNS (the last partial, not a multiple of NR)
        let (m, k, n) = (9, 37, 2 * PACK_COLUMNS + 13);
        let values = |len: usize, seed: u64| -> Vec<f32> { crate::testing::seeded_values(len, seed).iter().map(|&x| x as f32).collect() };
        let (x, w, bias) = (values(m * k, 1), values(k * n, 2), values(n, 3));
        let mut whole = PackedPanels::new();
        whole.pack(&w, n, k, n);
        let mut want = vec![0.0f32; m * n];
        linear_prepacked_f32(&x, m, &whole, Some(&bias), &mut want);
        let mut got = vec![0.0f32; m * n];
        linear_f32(&x, m, k, &w, n, Some(&bias), &mut got, &mut PackedPanels::new());
        assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()));
        // A·Bᵀ with B (n × k): against B transposed and packed whole
        let b = values(n * k, 4);
        let wt = packed_transpose(&b, n, k);
        let mut want = vec![0.0f32; m * n];
        gemm_packed(m, k, n, &x, k, &wt, &mut want, n, false);
        let mut got = vec![0.0f32; m * n];
        gemm_transposed_b(m, k, n, &x, k, &b, k, &mut got, n, false, &mut PackedPanels::new());
        assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    fn naive(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).map(|p| a[i * k + p] as f64 * b[p * n + j] as f64).sum::<f64>() as f32;
            }
        }
        c
    }

    fn values(len: usize, seed: u32) -> Vec<f32> {
        (0..len).map(|i| (((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) >> 8) % 2001) as f32 / 1000.0 - 1.0).collect()
    }

    #[test]
    fn gemm_matches_naive_on_ragged_sizes() {
        for &(m, k, n) in &[(1, 1, 1), (3, 5, 7), (4, 8, 8), (5, 9, 17), (70, 33, 19), (130, 64, 130)] {
            let (a, b) = (values(m * k, 1), values(k * n, 2));
            let mut panels = PackedPanels::new();
            panels.pack(&b, n, k, n);
            let mut c = vec![f32::NAN; m * n];
            gemm_packed(m, k, n, &a, k, &panels, &mut c, n, false);
            for (x, y) in c.iter().zip(naive(&a, &b, m, k, n)) {
                assert!((x - y).abs() <= 1e-4 * (k as f32), "{m}×{k}×{n}: {x} vs {y}");
            }
        }
    }

    #[test]
    fn transposed_packing_and_accumulate() {
        let (m, k, n) = (6, 5, 11);
        let a = values(m * k, 3);
        let bt = values(n * k, 4); // (n, k): B = btᵀ
        let b: Vec<f32> = (0..k * n).map(|idx| bt[(idx % n) * k + idx / n]).collect();
        let mut panels = PackedPanels::new();
        panels.pack_transposed(&bt, k, k, n);
        let mut c = vec![1.0; m * n];
        gemm_packed(m, k, n, &a, k, &panels, &mut c, n, true);
        for (x, y) in c.iter().zip(naive(&a, &b, m, k, n)) {
            assert!((x - (y + 1.0)).abs() <= 1e-5, "{x} vs {}", y + 1.0);
        }
    }

    /// Packing over more than one pass of [`PACK_GROUP`] panels and of [`PACK_ROWS`] rows (a ragged last panel and block, rows `ldb > n` apart) and
    /// transposed packing (k not a multiple of 4, a ragged last panel) put every value where it belongs.
    #[test]
    fn packing_in_groups_and_transposed_puts_every_value_in_place() {
        let (k, n, ldb) = (2 * PACK_ROWS + 5, PACK_GROUP * NR + 3 * NR + 5, PACK_GROUP * NR + 40);
        let b = values(k * ldb, 5);
        let mut panels = PackedPanels::new();
        panels.pack(&b, ldb, k, n);
        let expected: Vec<f32> = (0..k).flat_map(|p| b[p * ldb..p * ldb + n].iter().copied()).collect();
        assert_eq!(panels.unpack(), expected);
        let (k, n, lds) = (7, 21, 9);
        let src = values(n * lds, 6);
        panels.pack_transposed(&src, lds, k, n);
        let expected: Vec<f32> = (0..k).flat_map(|p| (0..n).map(move |j| (p, j))).map(|(p, j)| src[j * lds + p]).collect();
        assert_eq!(panels.unpack(), expected);
    }

    /// Transposing in place gives [`PackedPanels::pack_transposed`]'s panels and its columns are B's rows; the inverse
    /// gives B back bit for bit.
    #[test]
    fn transposing_in_place_is_pack_transposed_and_back() {
        let (n, k) = (3 * NR, 13);
        let b = values(n * k, 7);
        let mut want = PackedPanels::new();
        want.pack_transposed(&b, k, k, n);
        let packed = PackedPanels::transposed_in_place(b.clone(), n, k);
        assert_eq!((packed.k(), packed.n()), (k, n));
        assert_eq!(packed.data, want.data);
        for j in 0..n {
            assert_eq!(packed.column(j).collect::<Vec<_>>(), b[j * k..(j + 1) * k]);
        }
        assert_eq!(packed.into_transposed_rows(), b);
        assert_eq!(PackedPanels::transposed_in_place(Vec::new(), 0, k).into_transposed_rows(), Vec::<f32>::new());
    }

    /// The unpacked path for a few rows gives the packed kernel's bits (the same sums in the same order).
    #[test]
    fn few_rows_unpacked_are_the_packed_bits() {
        for (rows, k, n) in [(1, 37, 19), (2, 8, 8), (3, 64, 70), (4, 5, 3), (1, 768, 33)] {
            let (x, w, bias) = (values(rows * k, 11), values(k * n, 12), values(n, 13));
            let mut packed = vec![0.0; rows * n];
            let mut panels = PackedPanels::new();
            panels.pack(&w, n, k, n);
            linear_prepacked_f32(&x, rows, &panels, Some(&bias), &mut packed);
            let mut direct = vec![0.0; rows * n];
            linear_f32(&x, rows, k, &w, n, Some(&bias), &mut direct, &mut PackedPanels::new());
            assert_eq!(packed.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), direct.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), "linear {rows}×{k}×{n}");
            // A·Bᵀ, B (n × k), with and without accumulate
            let b = values(n * k, 14);
            for accumulate in [false, true] {
                let (mut via_panels, mut direct) = (values(rows * n, 15), values(rows * n, 15));
                let mut panels = PackedPanels::new();
                panels.pack_transposed(&b, k, k, n);
                gemm_packed(rows, k, n, &x, k, &panels, &mut via_panels, n, accumulate);
                gemm_transposed_b(rows, k, n, &x, k, &b, k, &mut direct, n, accumulate, &mut PackedPanels::new());
                assert_eq!(via_panels.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), direct.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), "a·bᵀ {rows}×{k}×{n}");
            }
        }
    }

    #[test]
    fn linear_adds_the_bias() {
        let (x, w, bias) = (values(3 * 4, 5), values(4 * 2, 6), [10.0, -10.0]);
        let mut out = vec![0.0; 6];
        linear_f32(&x, 3, 4, &w, 2, Some(&bias), &mut out, &mut PackedPanels::new());
        let want = naive(&x, &w, 3, 4, 2);
        for (i, (o, y)) in out.iter().zip(want).enumerate() {
            assert!((o - (y + bias[i % 2])).abs() <= 1e-5);
        }
    }
}
