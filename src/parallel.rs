//! Work split across threads, in the one way that keeps every bit: a job is cut into tasks that
//! each compute whole output entries (a head's block of query rows, a block of output rows), so
//! no sum is ever divided between threads and the result is the same on any number of threads.
//!
//! Built without the `threads` feature (the default, single-threaded package) every helper
//! runs its tasks in order on the calling thread. With it, tasks run on rayon's pool once
//! [`set_threads`] has been told that the pool has more than one thread (the boundary does so
//! after `initThreadPool` built it); until then, still in order on the calling thread.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads in use: 1 until a pool with more is running.
static THREADS: AtomicUsize = AtomicUsize::new(1);

/// Below this many multiply-adds a job is not split: a task's hand-over costs microseconds.
pub const MIN_PARALLEL_WORK: usize = 1 << 16;

/// How many threads the split helpers use: always 1 without the `threads` feature (nothing sets
/// more), which the compiler then knows, dropping the split paths from the single-threaded build.
pub fn threads() -> usize {
    if cfg!(feature = "threads") { THREADS.load(Ordering::Relaxed) } else { 1 }
}

/// Records how many threads the pool runs (1 turns splitting off). Only the code that built the
/// pool calls this.
pub fn set_threads(n: usize) {
    THREADS.store(n.max(1), Ordering::Relaxed);
}

/// Whether a job of `work` multiply-adds in `tasks` tasks is worth splitting.
pub fn worth_splitting(tasks: usize, work: usize) -> bool {
    tasks > 1 && work >= MIN_PARALLEL_WORK && threads() > 1
}

/// `f(0), f(1), …, f(n − 1)`, in that order in the result, computed on the pool's threads when
/// `split` (see [`worth_splitting`]), else in order on this thread.
pub fn map<R: Send>(n: usize, split: bool, f: impl Fn(usize) -> R + Sync + Send) -> Vec<R> {
    #[cfg(feature = "threads")]
    if split {
        use rayon::prelude::*;
        return (0..n).into_par_iter().map(f).collect();
    }
    let _ = split;
    (0..n).map(f).collect()
}

/// `f(i, chunk)` for the consecutive `chunk`-long pieces of `data` (the last may be shorter),
/// on the pool's threads when `split`, else in order.
pub fn for_each_chunk<T: Send>(data: &mut [T], chunk: usize, split: bool, f: impl Fn(usize, &mut [T]) + Sync + Send) {
    #[cfg(feature = "threads")]
    if split {
        use rayon::prelude::*;
        data.par_chunks_mut(chunk).enumerate().for_each(|(i, c)| f(i, c));
        return;
    }
    let _ = split;
    data.chunks_mut(chunk).enumerate().for_each(|(i, c)| f(i, c));
}

/// Runs `f` with `n` threads in use, on a pool of its own (tests and the native benchmark
/// compare thread counts this way; the wasm build uses the global pool `initThreadPool` makes).
#[cfg(all(feature = "threads", not(target_arch = "wasm32")))]
pub fn with_threads<R: Send>(n: usize, f: impl FnOnce() -> R + Send) -> R {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let pool = rayon::ThreadPoolBuilder::new().num_threads(n).build().expect("a native thread pool");
    let before = threads();
    set_threads(n);
    let result = pool.install(f);
    set_threads(before);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_keeps_the_order_and_chunks_cover_everything() {
        assert_eq!(map(5, false, |i| i * i), vec![0, 1, 4, 9, 16]);
        let mut data = vec![0usize; 10];
        for_each_chunk(&mut data, 4, false, |i, c| c.iter_mut().for_each(|x| *x = i));
        assert_eq!(data, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]);
    }

    #[test]
    fn small_jobs_and_one_thread_are_not_split() {
        assert!(!worth_splitting(8, MIN_PARALLEL_WORK - 1));
        assert!(!worth_splitting(1, usize::MAX));
    }
}
