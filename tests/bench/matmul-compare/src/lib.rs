//! One f32 product `C = A·B` (row-major, A m×k, B k×n) behind a bare C ABI, with the
//! implementation chosen by feature. `alloc` hands out buffers the JS side fills.

#[cfg(feature = "handwritten")]
#[path = "../../one_thread.rs"]
#[allow(dead_code)]
mod one_thread;
#[cfg(feature = "handwritten")]
#[allow(unused_imports)]
use one_thread::{parallel, testing};

#[cfg(feature = "handwritten")]
#[path = "../../../../src/kernels/mod.rs"]
#[allow(dead_code, unused_imports)]
mod kernels;

/// A zeroed buffer of `len` f32 values that lives for the whole instance.
#[no_mangle]
pub extern "C" fn alloc(len: usize) -> *mut f32 {
    Box::leak(vec![0.0f32; len].into_boxed_slice()).as_mut_ptr()
}

/// `C = A·B`.
///
/// # Safety
/// The pointers come from `alloc` with at least m·k, k·n and m·n values.
#[no_mangle]
pub unsafe extern "C" fn matmul(m: usize, k: usize, n: usize, a: *const f32, b: *const f32, c: *mut f32) {
    let (a, b, c) = (std::slice::from_raw_parts(a, m * k), std::slice::from_raw_parts(b, k * n), std::slice::from_raw_parts_mut(c, m * n));
    product(m, k, n, a, b, c);
}

#[cfg(feature = "handwritten")]
fn product(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    let mut panels = kernels::PackedPanels::new();
    panels.pack(b, n, k, n);
    kernels::gemm_packed(m, k, n, a, k, &panels, c, n, false);
}

#[cfg(feature = "with-gemm")]
fn product(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    // row-major: column stride 1, row stride = the row length
    unsafe {
        gemm::gemm(
            m, n, k, c.as_mut_ptr(), 1, n as isize, false, a.as_ptr(), 1, k as isize, b.as_ptr(), 1, n as isize, 0.0, 1.0, false, false, false,
            gemm::Parallelism::None,
        );
    }
}

#[cfg(feature = "with-matrixmultiply")]
fn product(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    unsafe {
        matrixmultiply::sgemm(m, k, n, 1.0, a.as_ptr(), k as isize, 1, b.as_ptr(), n as isize, 1, 0.0, c.as_mut_ptr(), n as isize, 1);
    }
}
