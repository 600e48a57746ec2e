//! The products of a few rows of A (a decoding step's one row, a short sequence alone): B read where
//! it lies instead of packed first, each entry the same sum in the same order as [`super::gemm_packed`]'s.

use super::{by_columns, MR};

/// Rows of A up to which [`super::linear_f32`] and [`super::gemm_transposed_b`] read B where it lies instead of
/// packing it first: a decoding step's single row would otherwise pay for packing all of B (an MLP's
/// W, or the transposed unembedding: V × C floats) on every call, more than the product itself. Each
/// entry is the same sum in the same order as [`super::gemm_packed`]'s (from 0, over p in increasing order,
/// each product rounded, then added; the bias added to the finished sum), so the bits are the same.
pub(super) const UNPACKED_ROWS: usize = MR;

/// [`super::linear_f32`] for a few rows, with W read row by row where it lies (see [`UNPACKED_ROWS`]): each
/// row's sums are kept in a buffer while W's rows are walked [`W_ROWS_AT_ONCE`] at a time
/// ([`add_rows`]), every row of x reading the same rows of W while they are in cache.
pub(super) fn linear_unpacked_f32(x: &[f32], rows: usize, k: usize, w: &[f32], n: usize, bias: Option<&[f32]>, out: &mut [f32]) {
    by_columns(rows, n, k * n, out, n, false, |cols, part, width| {
        let mut acc = vec![vec![0.0f32; width]; rows];
        let w_row = |p: usize| &w[p * n + cols.start..p * n + cols.end]; // row p of W, these columns
        let mut p = 0;
        while p + W_ROWS_AT_ONCE <= k {
            let w_rows: [&[f32]; W_ROWS_AT_ONCE] = std::array::from_fn(|r| w_row(p + r));
            for (i, a) in acc.iter_mut().enumerate() {
                let xs: &[f32; W_ROWS_AT_ONCE] = x[i * k + p..i * k + p + W_ROWS_AT_ONCE].try_into().expect("W_ROWS_AT_ONCE values of x");
                add_rows(a, xs, w_rows);
            }
            p += W_ROWS_AT_ONCE;
        }
        for p in p..k {
            for (i, a) in acc.iter_mut().enumerate() {
                add_rows(a, &[x[i * k + p]], [w_row(p)]);
            }
        }
        for (i, a) in acc.iter().enumerate() {
            let row = &mut part[i * width..(i + 1) * width];
            match bias {
                Some(bias) => row.iter_mut().zip(&bias[cols.clone()]).zip(a).for_each(|((o, &b), &s)| *o = b + s),
                None => row.copy_from_slice(a),
            }
        }
    });
}

/// Rows of W that [`linear_unpacked_f32`] adds into the sums at once: one load and store of each sum per
/// this many multiply-adds.
const W_ROWS_AT_ONCE: usize = 8;

/// `acc[j] = ((acc[j] + x₀·w₀[j]) + x₁·w₁[j]) + …`: R steps of the sum over p, in order, each product
/// rounded then added (the packed kernel's sums), `f32x4` at a time.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn add_rows<const R: usize>(acc: &mut [f32], xs: &[f32; R], w: [&[f32]; R]) {
    use core::arch::wasm32::{f32x4_add, f32x4_mul, f32x4_splat, v128, v128_load, v128_store};
    let len = acc.len();
    assert!(w.iter().all(|r| r.len() == len), "add_rows: rows of another length");
    let x: [v128; R] = std::array::from_fn(|r| f32x4_splat(xs[r]));
    let mut j = 0;
    while j + 4 <= len {
        // SAFETY: j + 4 ≤ len = acc.len() = each w row's length (asserted); no alignment is required.
        unsafe {
            let at = acc.as_mut_ptr().add(j) as *mut v128;
            let mut s = v128_load(at);
            for r in 0..R {
                s = f32x4_add(s, f32x4_mul(x[r], v128_load(w[r].as_ptr().add(j) as *const v128)));
            }
            v128_store(at, s);
        }
        j += 4;
    }
    for j in j..len {
        for r in 0..R {
            acc[j] += xs[r] * w[r][j];
        }
    }
}

/// `acc[j] = ((acc[j] + x₀·w₀[j]) + x₁·w₁[j]) + …` (the portable version of the SIMD one above).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline(always)]
fn add_rows<const R: usize>(acc: &mut [f32], xs: &[f32; R], w: [&[f32]; R]) {
    for (j, s) in acc.iter_mut().enumerate() {
        for r in 0..R {
            *s += xs[r] * w[r][j];
        }
    }
}

/// [`super::gemm_transposed_b`] for a few rows of A, with B's rows read where they lie: [`B_ROWS`] rows of B
/// ([`B_ROWS`] entries of a row of C) at a time, each entry its own sum over p in increasing order (see
/// [`UNPACKED_ROWS`]). The rows of A are the inner loop, so the rows of B stay in cache for them.
#[allow(clippy::too_many_arguments)]
pub(super) fn gemm_transposed_b_unpacked(m: usize, k: usize, n: usize, a: &[f32], lda: usize, b: &[f32], ldb: usize, out: &mut [f32], ldc: usize, accumulate: bool) {
    by_columns(m, n, k * n, out, ldc, accumulate, |cols, part, width| {
        let mut j0 = cols.start;
        while j0 < cols.end {
            let w = B_ROWS.min(cols.end - j0);
            for i in 0..m {
                let a_row = &a[i * lda..i * lda + k];
                // rows of B past the end are stood in for by a_row (their sums are not stored)
                let rows: [&[f32]; B_ROWS] = std::array::from_fn(|jj| if jj < w { &b[(j0 + jj) * ldb..(j0 + jj) * ldb + k] } else { a_row });
                let acc = dot_rows(a_row, rows);
                let c = &mut part[i * width + j0 - cols.start..][..w];
                if accumulate {
                    c.iter_mut().zip(&acc).for_each(|(o, &x)| *o += x);
                } else {
                    c.copy_from_slice(&acc[..w]);
                }
            }
            j0 += w;
        }
    });
}

/// Rows of B that [`gemm_transposed_b_unpacked`] sums against a row of A at once: four `f32x4` of sums, whose
/// chains of adds the CPU runs side by side. GPT-2 small's tied unembedding (one row against W_E's 50,257 rows,
/// `make bench-decode-bound`, AMD EPYC): 13.5 ms with the 8 of [`super::NR`] as before, 11.2 ms with 16; 32 spilled
/// registers and took 16.8 ms.
const B_ROWS: usize = 16;

/// The [`B_ROWS`] sums `Σ_p a[p]·rows[jj][p]`, each over p in increasing order (each product rounded, then
/// added): four p at a time, each four rows' four values turned into columns (a 4 × 4 transpose, [`four_sums`]),
/// so that every step is one `f32x4` multiply-add for four of the sums. The four `f32x4` of sums are
/// separate locals, not an array walked by a loop: so they stay in registers, and the CPU works on the four
/// chains of adds side by side (as an array they went through memory and ran one after another).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn dot_rows(a: &[f32], rows: [&[f32]; B_ROWS]) -> [f32; B_ROWS] {
    use core::arch::wasm32::{f32x4_splat, v128, v128_load, v128_store};
    const { assert!(B_ROWS == 16, "dot_rows keeps four f32x4 of sums") };
    let k = a.len();
    assert!(rows.iter().all(|r| r.len() == k), "dot_rows: rows of another length");
    let (mut s0, mut s1, mut s2, mut s3) = (f32x4_splat(0.0), f32x4_splat(0.0), f32x4_splat(0.0), f32x4_splat(0.0));
    let mut p = 0;
    while p + 4 <= k {
        // SAFETY: p + 4 ≤ k = a.len().
        let x = unsafe { v128_load(a.as_ptr().add(p) as *const v128) };
        s0 = four_sums(s0, x, &rows[0..4], p);
        s1 = four_sums(s1, x, &rows[4..8], p);
        s2 = four_sums(s2, x, &rows[8..12], p);
        s3 = four_sums(s3, x, &rows[12..16], p);
        p += 4;
    }
    let mut sums = [0.0f32; B_ROWS];
    // SAFETY: sums has 16 floats: four v128 stores at offsets 0, 4, 8 and 12.
    unsafe {
        let at = sums.as_mut_ptr();
        v128_store(at as *mut v128, s0);
        v128_store(at.add(4) as *mut v128, s1);
        v128_store(at.add(8) as *mut v128, s2);
        v128_store(at.add(12) as *mut v128, s3);
    }
    for p in p..k {
        for (s, r) in sums.iter_mut().zip(&rows) {
            *s += a[p] * r[p];
        }
    }
    sums
}

/// `acc + column 0 + column 1 + column 2 + column 3` (in that order), where column q holds the four products
/// `a[p + q]·rows[0..4][p + q]`: each row's four products in one `f32x4` multiply, then turned into columns by
/// [`super::transpose4`].
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn four_sums(acc: core::arch::wasm32::v128, x: core::arch::wasm32::v128, rows: &[&[f32]], p: usize) -> core::arch::wasm32::v128 {
    use core::arch::wasm32::{f32x4_add, f32x4_mul, v128, v128_load};
    debug_assert!(rows.len() == 4 && rows.iter().all(|r| p + 4 <= r.len()));
    // SAFETY: the caller (dot_rows) has p + 4 ≤ k, the length of each row (asserted there); no alignment is required.
    let load = |r: usize| unsafe { v128_load(rows[r].as_ptr().add(p) as *const v128) };
    let [c0, c1, c2, c3] = super::transpose4(f32x4_mul(x, load(0)), f32x4_mul(x, load(1)), f32x4_mul(x, load(2)), f32x4_mul(x, load(3)));
    f32x4_add(f32x4_add(f32x4_add(f32x4_add(acc, c0), c1), c2), c3)
}

/// The [`B_ROWS`] sums `Σ_p a[p]·rows[jj][p]`, each over p in increasing order (the portable version of the SIMD one above).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline(always)]
fn dot_rows(a: &[f32], rows: [&[f32]; B_ROWS]) -> [f32; B_ROWS] {
    let mut sums = [0.0f32; B_ROWS];
    for (p, &x) in a.iter().enumerate() {
        for (s, r) in sums.iter_mut().zip(&rows) {
            *s += x * r[p];
        }
    }
    sums
}
