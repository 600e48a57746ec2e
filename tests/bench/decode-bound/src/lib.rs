//! GPT-2 small's decoding products through the package's own kernels, and a SIMD sum over the same
//! bytes. Exports (no wasm-bindgen): `setup()` allocates the weights (12 layers of c_attn 768×2304,
//! attn c_proj 768×768, c_fc 768×3072, mlp c_proj 3072×768, then the tied unembedding 50257×768:
//! 494 MB, past any cache); `products()` runs one decoding step's products (`linear_f32` for one
//! row, and `gemm_transposed_b` for the unembedding); `read_only()` sums the same bytes.
#![allow(dead_code, unused_imports)]

#[path = "../../one_thread.rs"]
mod one_thread;
use one_thread::{parallel, testing};

#[path = "../../../../src/kernels/mod.rs"]
mod kernels;

const LAYERS: usize = 12;
const SHAPES: [(usize, usize); 4] = [(768, 2304), (768, 768), (768, 3072), (3072, 768)];
const VOCAB: usize = 50257;

fn values(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i.wrapping_mul(2_654_435_761) % 2001) as f32 / 1000.0 - 1.0).collect()
}

struct Weights {
    layers: Vec<Vec<f32>>,
    unembedding: Vec<f32>,
    packed: Vec<kernels::PackedPanels>,
    x: Vec<f32>,
    out: Vec<f32>,
}

static mut WEIGHTS: Option<Weights> = None;

#[allow(static_mut_refs)]
fn weights() -> &'static mut Weights {
    // SAFETY: a single-threaded module; setup() runs first.
    unsafe { WEIGHTS.as_mut().expect("call setup() first") }
}

#[no_mangle]
pub extern "C" fn setup() -> usize {
    let layers: Vec<Vec<f32>> = (0..LAYERS).flat_map(|_| SHAPES.map(|(k, n)| values(k * n))).collect();
    let packed = (0..LAYERS)
        .flat_map(|_| [(768, 2304), (768, 768)])
        .map(|(k, n)| {
            let mut p = kernels::PackedPanels::new();
            p.pack(&values(k * n), n, k, n);
            p
        })
        .collect();
    let w = Weights { layers, unembedding: values(VOCAB * 768), packed, x: values(3072), out: vec![0.0; VOCAB] };
    let bytes = 4 * (w.layers.iter().map(Vec::len).sum::<usize>() + w.unembedding.len());
    // SAFETY: as in weights().
    unsafe { WEIGHTS = Some(w) };
    bytes
}

#[no_mangle]
pub extern "C" fn products() -> f32 {
    layer_products();
    unembedding()
}

/// The layers' products alone (`linear_f32`, one row).
#[no_mangle]
pub extern "C" fn layer_products() -> f32 {
    let w = weights();
    let mut panels = kernels::PackedPanels::new();
    for (i, m) in w.layers.iter().enumerate() {
        let (k, n) = SHAPES[i % 4];
        kernels::linear_f32(&w.x[..k], 1, k, m, n, None, &mut w.out[..n], &mut panels);
    }
    w.out[0]
}

/// The tied unembedding alone (`gemm_transposed_b`, one row against W_E's 50,257 rows).
#[no_mangle]
pub extern "C" fn unembedding() -> f32 {
    let w = weights();
    let mut panels = kernels::PackedPanels::new();
    kernels::gemm_transposed_b(1, 768, VOCAB, &w.x, 768, &w.unembedding, 768, &mut w.out, VOCAB, false, &mut panels);
    w.out[0]
}

/// The packed kernel for one row (`linear_prepacked_f32`, as the layer's prepacked W_Q, W_K, W_V and W_O
/// are used in a decoding step): 12 × 768×2304 and 768×768, packed once in `setup`.
#[no_mangle]
pub extern "C" fn prepacked_products() -> f32 {
    let w = weights();
    for (i, p) in w.packed.iter().enumerate() {
        let n = p.n();
        let _ = i;
        kernels::linear_prepacked_f32(&w.x[..768], 1, p, None, &mut w.out[..n]);
    }
    w.out[0]
}

/// Reads the bytes of the packed weights only (for `prepacked_products`).
#[no_mangle]
pub extern "C" fn prepacked_bytes() -> usize {
    weights().packed.iter().map(|p| 4 * p.k() * p.n()).sum()
}

#[no_mangle]
pub extern "C" fn read_only() -> f32 {
    use core::arch::wasm32::{f32x4_add, f32x4_extract_lane, f32x4_splat, v128, v128_load};
    let w = weights();
    let mut acc = [f32x4_splat(0.0); 4];
    for m in w.layers.iter().chain(std::iter::once(&w.unembedding)) {
        for c in m.chunks_exact(16) {
            for (q, a) in acc.iter_mut().enumerate() {
                // SAFETY: c has 16 floats; v128_load needs no alignment.
                *a = f32x4_add(*a, unsafe { v128_load(c.as_ptr().add(4 * q) as *const v128) });
            }
        }
    }
    acc.iter().map(|&a| f32x4_extract_lane::<0>(a)).sum()
}
