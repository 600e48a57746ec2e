//! The f32 kernels' SIMD paths in wasm (`wasm-pack test --node`): `cargo test` on the host runs their portable
//! versions, so the 4 × 4 transposes of `PackedPanels::pack_transposed`, the few-row products that read B where
//! it lies (`gemm_transposed_b` and `linear_f32` for up to 4 rows) and the packed kernel are checked here against a
//! scalar sum in the kernels' order: each entry from 0 (or from the bias, added to the finished sum), over p in
//! increasing order, each product rounded, then added. Every entry must have those bits.

#![cfg(target_arch = "wasm32")]

use attention_lab::kernels::{gemm_packed, gemm_transposed_b, linear_f32, linear_prepacked_f32, packed_transpose, PackedPanels};
use wasm_bindgen_test::wasm_bindgen_test;

/// Values with many significant bits, so a sum in another order or with a fused multiply-add shows.
fn values(len: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s as f32 / u32::MAX as f32) * 2.0 - 1.0
        })
        .collect()
}

/// `Σ_p a[i][p]·b(p, j)` in the kernels' order.
fn ordered(m: usize, k: usize, n: usize, a: &[f32], lda: usize, b: impl Fn(usize, usize) -> f32) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut s = 0.0f32;
            for p in 0..k {
                s += a[i * lda + p] * b(p, j);
            }
            c[i * n + j] = s;
        }
    }
    c
}

fn same_bits(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (e, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "{what}: entry {e} is {g}, expected {w}");
    }
}

// Shapes: k below, at and past a multiple of 4 (the transposes' tail), n across several groups of rows of B
// with a ragged end, and the decoding step's one row up to the few-row limit (4) and past it (5, packed).
const SHAPES: [(usize, usize, usize); 8] = [(1, 4, 8), (1, 7, 13), (1, 64, 40), (2, 33, 70), (3, 768, 37), (4, 9, 129), (5, 17, 23), (1, 130, 257)];

#[wasm_bindgen_test]
fn a_times_b_transposed_has_the_ordered_bits_on_every_path() {
    for (s, &(m, k, n)) in SHAPES.iter().enumerate() {
        let (lda, ldb) = (k + 3, k + 5); // rows further apart than k: only the first k of each are read
        let a = values(m * lda, 10 + s as u32);
        let b = values(n * ldb, 20 + s as u32);
        let want = ordered(m, k, n, &a, lda, |p, j| b[j * ldb + p]);
        // as the model's tied unembedding and the layer's backward take it (few rows: B where it lies)
        let mut got = vec![0.0f32; m * n];
        gemm_transposed_b(m, k, n, &a, lda, &b, ldb, &mut got, n, false, &mut PackedPanels::new());
        same_bits(&format!("gemm_transposed_b {m}×{k}×{n}"), &got, &want);
        // B transposed into panels by the 4 × 4 SIMD transposes, then the packed kernel
        let dense: Vec<f32> = (0..n).flat_map(|j| b[j * ldb..j * ldb + k].to_vec()).collect();
        let panels = packed_transpose(&dense, n, k);
        let mut packed = vec![0.0f32; m * n];
        gemm_packed(m, k, n, &a, lda, &panels, &mut packed, n, false);
        same_bits(&format!("packed_transpose + gemm_packed {m}×{k}×{n}"), &packed, &want);
        // accumulating into what C holds
        let mut more = want.clone();
        gemm_transposed_b(m, k, n, &a, lda, &b, ldb, &mut more, n, true, &mut PackedPanels::new());
        let twice: Vec<f32> = want.iter().map(|&x| x + x).collect();
        same_bits(&format!("gemm_transposed_b accumulating {m}×{k}×{n}"), &more, &twice);
    }
}

#[wasm_bindgen_test]
fn x_times_w_plus_bias_has_the_ordered_bits_on_every_path() {
    for (s, &(m, k, n)) in SHAPES.iter().enumerate() {
        let x = values(m * k, 30 + s as u32);
        let w = values(k * n, 40 + s as u32);
        let bias = values(n, 50 + s as u32);
        let sums = ordered(m, k, n, &x, k, |p, j| w[p * n + j]);
        let want: Vec<f32> = sums.iter().enumerate().map(|(e, &v)| bias[e % n] + v).collect();
        let mut got = vec![0.0f32; m * n];
        linear_f32(&x, m, k, &w, n, Some(&bias), &mut got, &mut PackedPanels::new());
        same_bits(&format!("linear_f32 {m}×{k}×{n}"), &got, &want);
        let mut panels = PackedPanels::new();
        panels.pack(&w, n, k, n);
        let mut prepacked = vec![0.0f32; m * n];
        linear_prepacked_f32(&x, m, &panels, Some(&bias), &mut prepacked);
        same_bits(&format!("linear_prepacked_f32 {m}×{k}×{n}"), &prepacked, &want);
    }
}

#[wasm_bindgen_test]
fn exp_over_a_slice_has_the_scalar_exp_bits_everywhere() {
    use attention_lab::kernels::{exp_f32, exp_shifted_f32};
    // every range the exponential treats apart: deep underflow, the clamp at −88, the normal range, the
    // overflow to +∞ (from about 88.38 through 88.7 by the exponent bits, past 88.7 by the select), ±∞, ±0
    let mut values: Vec<f32> = values(4001, 7).iter().map(|&x| x * 100.0).collect();
    values.extend([-1e30, -88.5, -88.0, -87.3, -87.2, 0.0, -0.0, 1e-30, 88.3, 88.38, 88.5, 88.7, 88.71, 1e30, f32::INFINITY, f32::NEG_INFINITY, f32::MIN_POSITIVE]);
    values.extend((0..2000).map(|i| 87.0 + i as f32 * 0.001)); // across the overflow boundary, 4 at a time
    for shift in [0.0f32, 1.5, -3.25] {
        let mut got = values.clone();
        exp_shifted_f32(&mut got, shift);
        let want: Vec<f32> = values.iter().map(|&x| exp_f32(x - shift)).collect();
        same_bits(&format!("exp_shifted_f32 shift {shift}"), &got, &want);
    }
}

#[wasm_bindgen_test]
fn all_finite_sees_any_infinity_or_nan_wherever_it_is() {
    use attention_lab::kernels::all_finite_f32;
    let clean = values(37, 9); // 9 chunks of 4 and a tail of 1
    assert!(all_finite_f32(&clean) && all_finite_f32(&[]) && all_finite_f32(&[f32::MAX, f32::MIN, f32::MIN_POSITIVE, -0.0]));
    for bad in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN] {
        for at in 0..clean.len() {
            let mut v = clean.clone();
            v[at] = bad;
            assert!(!all_finite_f32(&v), "{bad} at {at} of {} went unseen", v.len());
        }
    }
}
