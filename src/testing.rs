//! Helpers shared by the native and the wasm tests. Not part of the public API.

use crate::matrix::Matrix;
use crate::real::Real;

/// Panics unless every entry of `actual` is within `tolerance` of `expected` (absolute).
pub fn assert_close<F: Real>(actual: &Matrix<F>, expected: &[&[f64]], tolerance: f64) {
    assert_eq!(actual.rows(), expected.len(), "row count of {actual:?}");
    for (r, want_row) in expected.iter().enumerate() {
        assert_eq!(actual.cols(), want_row.len(), "column count of {actual:?}");
        for (c, &want) in want_row.iter().enumerate() {
            let got = actual.get(r, c).to_f64();
            assert!(
                (got - want).abs() <= tolerance,
                "entry [{r}][{c}] is {got}, expected {want} within {tolerance}"
            );
        }
    }
}

/// Panics unless the two matrices hold the same bits.
pub fn assert_bitwise_eq(a: &Matrix, b: &Matrix) {
    assert_eq!(a.shape(), b.shape());
    for (i, (x, y)) in a.data().iter().zip(b.data()).enumerate() {
        assert_eq!(x.to_bits(), y.to_bits(), "element {i}: {x} vs {y}");
    }
}

/// The challenge's worked example: Q = K = [[1,2],[3,4]], V = [[5,6],[7,8]].
pub fn challenge_qkv() -> (Matrix, Matrix, Matrix) {
    let q = Matrix::from_rows(&[[1.0, 2.0], [3.0, 4.0]]).expect("2×2");
    let v = Matrix::from_rows(&[[5.0, 6.0], [7.0, 8.0]]).expect("2×2");
    (q.clone(), q, v)
}

/// A deterministic pseudo-random matrix with entries in [-1, 1) (SplitMix64).
pub fn seeded_matrix(rows: usize, cols: usize, seed: u64) -> Matrix {
    let mut state = seed;
    let data = (0..rows * cols)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect();
    Matrix::new(rows, cols, data).expect("length matches")
}

/// Panics unless `|got[i] − want[i]| ≤ bound[i]` for every entry (element-wise bounds, e.g. an
/// error analysis's `γ_K·m`); returns the largest `|got − want| / bound` seen (0 where both are 0).
pub fn assert_within_bounds(label: &str, got: &[f64], want: &[f64], bound: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len(), "{label}: lengths");
    assert_eq!(got.len(), bound.len(), "{label}: bound length");
    let mut worst = 0.0f64;
    for (i, ((&g, &w), &b)) in got.iter().zip(want).zip(bound).enumerate() {
        let error = (g - w).abs();
        assert!(error <= b, "{label}[{i}]: {g} vs {w}, error {error:e} beyond the bound {b:e}");
        if error > 0.0 {
            worst = worst.max(error / b);
        }
    }
    worst
}

/// Panics unless the analytic gradient `grad` of `f` at `x` matches central differences (step 1e-6)
/// within 1e-7·(1 + |g|) per entry.
pub fn check_gradient(x: &[f64], grad: &[f64], f: impl Fn(&[f64]) -> f64) {
    let h = 1e-6;
    let numeric: Vec<f64> = (0..x.len())
        .map(|i| {
            let (mut up, mut down) = (x.to_vec(), x.to_vec());
            up[i] += h;
            down[i] -= h;
            (f(&up) - f(&down)) / (2.0 * h)
        })
        .collect();
    let bound: Vec<f64> = numeric.iter().map(|g| 1e-7 * (1.0 + g.abs())).collect();
    assert_within_bounds("gradient", grad, &numeric, &bound);
}

/// `n` seeded values (a 1 × n `seeded_matrix`'s entries).
pub fn seeded_values(n: usize, seed: u64) -> Vec<f64> {
    seeded_matrix(1, n, seed).into_data()
}
