//! The f32 exponential (branch-free, so loops over it vectorise), the row softmax built on it, and a
//! finiteness check.

/// Below this, `exp` is returned as exactly 0 (e^-87.3 is near the smallest normal f32).
const EXP_UNDERFLOW: f32 = -87.3;
/// Above this, `exp` is +∞ (e^88.73 is past the largest f32; 2ⁿ past 2¹²⁸ would wrap in the exponent bits).
const EXP_OVERFLOW: f32 = 88.7;
/// 1.5·2²³: adding it rounds to an integer kept in the low mantissa bits.
const ROUND_MAGIC: f32 = 12_582_912.0;

/// `e^x` within about 2 ulp, written without branches or calls so a loop over it vectorises (the
/// f32 [`crate::real::Real::exp`]). `x` below −87.3, including −∞, gives exactly 0 (masked scores
/// become weight 0); above [`EXP_OVERFLOW`], +∞ (from 88.38 on, 2ⁿ is already +∞); NaN gives NaN.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    // 1. x = n·ln2 + r with n = round(x·log2 e) and |r| ≤ ln2/2
    let clamped = if x < -88.0 { -88.0 } else { x };
    let shifted = clamped * std::f32::consts::LOG2_E + ROUND_MAGIC;
    let n = shifted - ROUND_MAGIC;
    let r = clamped - n * 0.693_359_4 - n * -2.121_944_4e-4;
    // 2. e^r by its degree-6 minimax polynomial (Cephes' expf coefficients)
    let mut p = 1.987_569_2e-4f32;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 5.000_000_1e-1;
    let e_r = p * r * r + r + 1.0;
    // 3. times 2^n, built in the exponent bits (n is the integer in shifted's low mantissa bits)
    let n_bits = shifted.to_bits().wrapping_sub(ROUND_MAGIC.to_bits());
    let two_n = f32::from_bits(n_bits.wrapping_add(127) << 23);
    if x < EXP_UNDERFLOW {
        0.0
    } else if x > EXP_OVERFLOW {
        f32::INFINITY
    } else {
        e_r * two_n
    }
}

const LANES: usize = 8;

/// The largest entry of `row` (−∞ for an empty or all −∞ row).
pub fn max_f32(row: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let chunks = row.chunks_exact(LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (m, &x) in lanes.iter_mut().zip(chunk) {
            *m = if x > *m { x } else { *m };
        }
    }
    let mut max = lanes.iter().fold(f32::NEG_INFINITY, |m, &x| if x > m { x } else { m });
    for &x in tail {
        max = if x > max { x } else { max };
    }
    max
}

/// Pass 2 of [`softmax_row_f32`] over whole chunks of [`LANES`]: `x = exp((x − max)·scale)`,
/// lane `l`'s values added into `sums[l]` in order.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline(always)]
fn exp_chunks(chunks: &mut std::slice::ChunksExactMut<f32>, max: f32, scale: f32, sums: &mut [f32; LANES]) {
    for chunk in chunks {
        for (x, s) in chunk.iter_mut().zip(sums.iter_mut()) {
            *x = exp_f32((*x - max) * scale);
            *s += *x;
        }
    }
}

/// The same in wasm SIMD, two `f32x4` at a time (LLVM did not vectorise the loop above: 21% of the
/// T=1024 layer forward was this softmax). Every lane runs [`exp_f32`]'s operations in its order
/// (no fused multiply-add in wasm), and the sums are the same lanes in the same order: the same bits.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn exp_chunks(chunks: &mut std::slice::ChunksExactMut<f32>, max: f32, scale: f32, sums: &mut [f32; LANES]) {
    use core::arch::wasm32::{f32x4_splat, f32x4_add, f32x4_mul, f32x4_sub, v128, v128_load, v128_store};
    let (max, scale) = (f32x4_splat(max), f32x4_splat(scale));
    let (mut low, mut high) = (f32x4_splat(0.0), f32x4_splat(0.0));
    for chunk in chunks {
        // SAFETY: a chunk has LANES = 8 floats: two unaligned v128 loads and stores at 0 and 4.
        unsafe {
            let p = chunk.as_mut_ptr();
            let a = exp_f32x4(f32x4_mul(f32x4_sub(v128_load(p as *const v128), max), scale));
            let b = exp_f32x4(f32x4_mul(f32x4_sub(v128_load(p.add(4) as *const v128), max), scale));
            v128_store(p as *mut v128, a);
            v128_store(p.add(4) as *mut v128, b);
            low = f32x4_add(low, a);
            high = f32x4_add(high, b);
        }
    }
    // SAFETY: sums has 8 floats: two unaligned v128 stores at 0 and 4.
    unsafe {
        let p = sums.as_mut_ptr();
        v128_store(p as *mut v128, f32x4_add(v128_load(p as *const v128), low));
        v128_store(p.add(4) as *mut v128, f32x4_add(v128_load(p.add(4) as *const v128), high));
    }
}

/// [`exp_f32`] on four lanes, operation for operation (its overflow to +∞ too: GELU's `e^(2u)` reaches it).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn exp_f32x4(x: core::arch::wasm32::v128) -> core::arch::wasm32::v128 {
    use core::arch::wasm32::*;
    // 1. x = n·ln2 + r with n = round(x·log2 e) and |r| ≤ ln2/2
    let clamped = v128_bitselect(f32x4_splat(-88.0), x, f32x4_lt(x, f32x4_splat(-88.0)));
    let shifted = f32x4_add(f32x4_mul(clamped, f32x4_splat(std::f32::consts::LOG2_E)), f32x4_splat(ROUND_MAGIC));
    let n = f32x4_sub(shifted, f32x4_splat(ROUND_MAGIC));
    let r = f32x4_sub(f32x4_sub(clamped, f32x4_mul(n, f32x4_splat(0.693_359_4))), f32x4_mul(n, f32x4_splat(-2.121_944_4e-4)));
    // 2. e^r by its degree-6 minimax polynomial
    let mut p = f32x4_splat(1.987_569_2e-4);
    for c in [1.398_199_9e-3, 8.333_452e-3, 4.166_579_6e-2, 1.666_666_5e-1, 5.000_000_1e-1] {
        p = f32x4_add(f32x4_mul(p, r), f32x4_splat(c));
    }
    let e_r = f32x4_add(f32x4_add(f32x4_mul(f32x4_mul(p, r), r), r), f32x4_splat(1.0));
    // 3. times 2^n, built in the exponent bits
    let n_bits = i32x4_sub(shifted, i32x4_splat(ROUND_MAGIC.to_bits() as i32));
    let two_n = i32x4_shl(i32x4_add(n_bits, i32x4_splat(127)), 23);
    let value = f32x4_mul(e_r, two_n);
    let value = v128_bitselect(f32x4_splat(f32::INFINITY), value, f32x4_gt(x, f32x4_splat(EXP_OVERFLOW)));
    v128_bitselect(f32x4_splat(0.0), value, f32x4_lt(x, f32x4_splat(EXP_UNDERFLOW)))
}

/// In place: `x = exp_f32(x − shift)` for every entry, with [`exp_f32`]'s bits (the cross-entropy's `e^(x − max)`
/// over a row of logits, GELU's `e^(2u)`). In wasm SIMD four at a time: the scalar loop over 50,257 logits per
/// row did not vectorise.
pub fn exp_shifted_f32(values: &mut [f32], shift: f32) {
    let mut chunks = values.chunks_exact_mut(4);
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::{f32x4_splat, f32x4_sub, v128, v128_load, v128_store};
        let shift4 = f32x4_splat(shift);
        for chunk in &mut chunks {
            // SAFETY: a chunk has 4 floats: one unaligned v128 load and store.
            unsafe {
                let p = chunk.as_mut_ptr() as *mut v128;
                v128_store(p, exp_f32x4(f32x4_sub(v128_load(p), shift4)));
            }
        }
    }
    for chunk in &mut chunks {
        chunk.iter_mut().for_each(|x| *x = exp_f32(*x - shift));
    }
    chunks.into_remainder().iter_mut().for_each(|x| *x = exp_f32(*x - shift));
}

/// Whether every value is finite, on the bits, eight lanes at a time (no exponent field of all ones: ±Infinity or NaN): a max
/// over integer lanes vectorises where a `position` scan does not (the scan over the `4·C²`
/// parameter gradients took about 1.2 ms of a 27 ms backward at C = 768).
pub fn all_finite_f32(values: &[f32]) -> bool {
    const EXPONENT: u32 = 0x7f80_0000;
    // wasm SIMD: four lanes' exponent fields compared with all ones at a time, the comparisons or-ed (the loop
    // below was not vectorised there: 10 ms of a GPT-2-small T = 128 forward's 6.4M logits)
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::{i32x4_eq, i32x4_splat, v128, v128_and, v128_any_true, v128_load, v128_or};
        let (exponent, mut seen) = (i32x4_splat(EXPONENT as i32), i32x4_splat(0));
        let chunks = values.chunks_exact(4);
        let tail = chunks.remainder();
        for chunk in chunks {
            // SAFETY: a chunk has 4 floats: one unaligned v128 load.
            let x = unsafe { v128_load(chunk.as_ptr() as *const v128) };
            seen = v128_or(seen, i32x4_eq(v128_and(x, exponent), exponent));
        }
        return !v128_any_true(seen) && tail.iter().all(|x| x.to_bits() & EXPONENT != EXPONENT);
    }
    #[allow(unreachable_code)]
    let mut lanes = [0u32; 8];
    let chunks = values.chunks_exact(8);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (lane, &x) in lanes.iter_mut().zip(chunk) {
            *lane = (*lane).max(x.to_bits() & EXPONENT);
        }
    }
    lanes.iter().copied().chain(tail.iter().map(|x| x.to_bits() & EXPONENT)).all(|e| e != EXPONENT)
}

/// In place: `row = softmax(scale · row)` (scale > 0). Entries equal to −∞ are masked and get
/// weight exactly 0; a row with nothing but −∞ becomes all zeros (never NaN).
pub fn softmax_row_f32(row: &mut [f32], scale: f32) {
    // 1. the row maximum (scaling by a positive factor keeps it the maximum)
    let max = max_f32(row);
    if max == f32::NEG_INFINITY {
        row.fill(0.0);
        return;
    }
    // 2. shifted exponentials and their sum
    let mut sums = [0.0f32; LANES];
    let mut chunks = row.chunks_exact_mut(LANES);
    exp_chunks(&mut chunks, max, scale, &mut sums);
    let mut sum: f32 = sums.iter().sum();
    for x in chunks.into_remainder() {
        *x = exp_f32((*x - max) * scale);
        sum += *x;
    }
    // 3. normalise (sum ≥ 1: the maximum contributes e^0)
    let inverse = 1.0 / sum;
    row.iter_mut().for_each(|x| *x *= inverse);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_accurate_and_underflows_to_exact_zero() {
        let mut x = -87.0f32;
        while x <= 88.0 {
            let (got, want) = (exp_f32(x) as f64, (x as f64).exp());
            assert!(((got - want) / want).abs() < 4e-7, "exp({x}) = {got}, expected {want}");
            x += 0.0137;
        }
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32(-100.0), 0.0);
        // past the largest f32: +∞, never a wrapped exponent; NaN stays NaN
        for x in [88.4f32, 88.7, 88.8, 100.0, 1e10, f32::INFINITY] {
            assert_eq!(exp_f32(x), f32::INFINITY, "exp({x})");
        }
        assert!(exp_f32(88.3).is_finite() && exp_f32(f32::NAN).is_nan());
    }

    #[test]
    fn softmax_masks_and_sums_to_one() {
        let mut row = [1000.0, 1000.0, f32::NEG_INFINITY, 999.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
        softmax_row_f32(&mut row, 0.5);
        assert_eq!(row[2], 0.0);
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!((row[0] - row[1]).abs() < 1e-7 && row[0] > row[3]);
        let mut masked = [f32::NEG_INFINITY; 3];
        softmax_row_f32(&mut masked, 1.0);
        assert_eq!(masked, [0.0; 3]);
    }
}
