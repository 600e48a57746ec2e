//! What `src/kernels/` needs from the rest of the crate, for the bare wasm benches that include it by
//! path (tests/bench/matmul-compare, tests/bench/decode-bound): `crate::parallel` as a build without the
//! `threads` feature has it (one thread, nothing split), and the `crate::testing` helper its tests name.

pub mod parallel {
    pub const MIN_PARALLEL_WORK: usize = 1 << 16;
    pub fn threads() -> usize {
        1
    }
    pub fn worth_splitting(_tasks: usize, _work: usize) -> bool {
        false
    }
    pub fn map<R: Send>(n: usize, _split: bool, f: impl Fn(usize) -> R + Sync + Send) -> Vec<R> {
        (0..n).map(f).collect()
    }
    pub fn for_each_chunk<T: Send>(data: &mut [T], size: usize, _split: bool, f: impl Fn(usize, &mut [T]) + Sync + Send) {
        data.chunks_mut(size).enumerate().for_each(|(i, c)| f(i, c))
    }
}

/// The kernels' tests use it; they are not compiled here.
pub mod testing {
    pub fn seeded_values(len: usize, _seed: u64) -> Vec<f64> {
        vec![0.5; len]
    }
}
