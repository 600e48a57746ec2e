//! GPT-2 small's products at T = 128 rows through the package's own kernels, as the model runs them:
//! `linear_f32` with a bias (W packed as it goes: c_attn 768×2304, attn c_proj 768×768, c_fc 768×3072,
//! mlp c_proj 3072×768) and the tied unembedding `gemm_transposed_b` (x·W_Eᵀ, W_E 50257×768, packed
//! transposed as it goes). Exports (no wasm-bindgen): `setup()`; `product(s)` runs shape `s` once and
//! returns a hash of its output's bits (to check that two builds give the same bits); `packed(s)` the
//! product alone on B packed once by `setup` (no packing in the time); `madds(s)` its multiply-adds.
#![allow(dead_code, unused_imports)]

#[path = "../../one_thread.rs"]
mod one_thread;
use one_thread::{parallel, testing};

#[path = "../../../../src/kernels/mod.rs"]
mod kernels;

const T: usize = 128;
/// (k, n): c_attn, attn c_proj, c_fc, mlp c_proj, the unembedding (transposed).
const SHAPES: [(usize, usize); 5] = [(768, 2304), (768, 768), (768, 3072), (3072, 768), (768, 50257)];

fn values(n: usize, seed: usize) -> Vec<f32> {
    (0..n).map(|i| ((i + seed).wrapping_mul(2_654_435_761) % 2001) as f32 / 1000.0 - 1.0).collect()
}

struct State {
    w: Vec<Vec<f32>>,
    bias: Vec<f32>,
    x: Vec<f32>,
    out: Vec<f32>,
    packed: Vec<kernels::PackedPanels>,
    scratch: kernels::PackedPanels,
}

static mut STATE: Option<State> = None;

#[allow(static_mut_refs)]
fn state() -> &'static mut State {
    // SAFETY: a single-threaded module; setup() runs first.
    unsafe { STATE.as_mut().expect("call setup() first") }
}

#[no_mangle]
pub extern "C" fn setup() {
    let w: Vec<Vec<f32>> = SHAPES.iter().enumerate().map(|(s, &(k, n))| values(k * n, s)).collect();
    let packed = SHAPES
        .iter()
        .zip(&w)
        .enumerate()
        .map(|(s, (&(k, n), w))| {
            let mut p = kernels::PackedPanels::new();
            if s == 4 {
                p.pack_transposed(w, k, k, 2048); // the unembedding's first 2,048 columns, as it is packed
            } else {
                p.pack(w, n, k, n);
            }
            p
        })
        .collect();
    let s = State { w, bias: values(50257, 7), x: values(T * 3072, 9), out: vec![0.0; T * 50257], packed, scratch: kernels::PackedPanels::new() };
    // SAFETY: as in state().
    unsafe { STATE = Some(s) };
}

fn hash(out: &[f32]) -> u32 {
    out.iter().fold(0x811c_9dc5u32, |h, x| (h ^ x.to_bits()).wrapping_mul(0x0100_0193))
}

#[no_mangle]
pub extern "C" fn product(s: usize) -> u32 {
    let st = state();
    let (k, n) = SHAPES[s];
    let out = &mut st.out[..T * n];
    if s == 4 {
        kernels::gemm_transposed_b(T, k, n, &st.x, k, &st.w[4], k, out, n, false, &mut st.scratch);
    } else {
        kernels::linear_f32(&st.x[..T * k], T, k, &st.w[s], n, Some(&st.bias[..n]), out, &mut st.scratch);
    }
    hash(out)
}

#[no_mangle]
pub extern "C" fn packed(s: usize) -> u32 {
    let st = state();
    let (k, n) = SHAPES[s];
    let n = if s == 4 { 2048 } else { n };
    let out = &mut st.out[..T * n];
    kernels::gemm_packed(T, k, n, &st.x, k, &st.packed[s], out, n, false);
    hash(out)
}

#[no_mangle]
pub extern "C" fn madds(s: usize, prepacked: bool) -> f64 {
    let (k, n) = SHAPES[s];
    T as f64 * k as f64 * if prepacked && s == 4 { 2048.0 } else { n as f64 }
}

/// `reps` products of `m × k × n` on B packed once (small sizes stay in L1/L2: the kernel's own speed).
#[no_mangle]
pub extern "C" fn small(m: usize, k: usize, n: usize, reps: usize) -> u32 {
    let st = state();
    let mut p = kernels::PackedPanels::new();
    p.pack(&st.w[0], n, k, n);
    let out = &mut st.out[..m * n];
    for _ in 0..reps {
        kernels::gemm_packed(m, k, n, &st.x, k, &p, out, n, false);
    }
    hash(out)
}

/// Packing alone, as `product(s)` packs: shape `s`'s W packed (the unembedding transposed), in the
/// same column blocks ([`kernels::PACK_COLUMNS`]).
#[no_mangle]
pub extern "C" fn pack(s: usize) -> u32 {
    let st = state();
    let (k, n) = SHAPES[s];
    let mut h = 0;
    for j0 in (0..n).step_by(kernels::PACK_COLUMNS) {
        let width = kernels::PACK_COLUMNS.min(n - j0);
        if s == 4 {
            st.scratch.pack_transposed(&st.w[4][j0 * k..], k, k, width);
        } else {
            st.scratch.pack(&st.w[s][j0..], n, k, width);
        }
        h ^= st.scratch.n() as u32;
    }
    h
}

/// In wasm (the native unit tests take the portable path): every value `pack_transposed` puts in its panels,
/// against the transpose read one value at a time, on ragged sizes (k not a multiple of 4, a last panel
/// narrower than NR, rows `lds` apart with `lds > k`). Returns the number of values that differ.
#[no_mangle]
pub extern "C" fn check_pack_transposed() -> usize {
    let mut wrong = 0;
    for &(k, n, lds) in &[(1, 1, 1), (3, 8, 3), (4, 8, 5), (7, 9, 7), (16, 16, 20), (33, 21, 40), (768, 2048, 768), (64, 131, 70)] {
        let src = values(n * lds, k + n);
        let mut p = kernels::PackedPanels::new();
        p.pack_transposed(&src, lds, k, n);
        let b = p.unpack(); // (k, n) row-major
        wrong += (0..k).flat_map(|r| (0..n).map(move |j| (r, j))).filter(|&(r, j)| b[r * n + j].to_bits() != src[j * lds + r].to_bits()).count();
    }
    wrong
}
