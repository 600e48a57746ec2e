//! Work split across threads, in the one way that keeps every bit: a job is cut into tasks that
//! each compute whole output entries (a head's block of query rows, a block of output rows), so
//! no sum is ever divided between threads and the result is the same on any number of threads.
//!
//! Built without the `threads` feature (the default, single-threaded package) every helper
//! runs its tasks in order on the calling thread. With it, tasks run on rayon's pool once
//! [`set_threads`] has been told that the pool has more than one thread (the boundary does so
//! after `initThreadPool` built it); until then, still in order on the calling thread. The short jobs
//! of a decoding step ([`map_hot`]) run on the calling thread and on pool threads kept spinning between jobs.

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

/// [`map`] for the short jobs a decoding step runs back to back (some 70 a token: a one-row product's
/// column groups, the heads of one query row): on the calling thread and on pool threads that keep
/// spinning for the next job (for `hot::IDLE_SPINS` turns of an atomic load) instead of going to sleep, so a job does not wait
/// for a sleeping thread to be woken (rayon's threads sleep as soon as they find no work, and a job
/// handed to them waits for the wake-up twice: the pool's, then the thread that steals half). The parts
/// are claimed one at a time by whichever thread is free, each computed whole by one thread, so the
/// results are the same on any number of threads. Falls back to [`map`] when another such job is open.
pub fn map_hot<R: Send + Sync>(n: usize, split: bool, f: impl Fn(usize) -> R + Sync + Send) -> Vec<R> {
    #[cfg(feature = "threads")]
    if split && n > 1 && threads() > 1 {
        return hot::run(n, &f).unwrap_or_else(|| map(n, true, f));
    }
    map(n, split, f)
}

#[cfg(feature = "threads")]
mod hot {
    //! One job at a time, posted in statics: the poster claims parts itself, and up to `threads() − 1` helpers
    //! (rayon tasks that spin until no job came for [`IDLE_SPINS`] turns) claim the rest. The helpers read the
    //! job only between its post and its close, counted in `INSIDE`; `run` returns only once none is inside,
    //! so every part a helper claimed is finished by then.
    use std::cell::UnsafeCell;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
    use std::sync::OnceLock;

    type Job = &'static (dyn Fn(usize) + Sync);
    struct Slot(UnsafeCell<Option<Job>>);
    // SAFETY: written only by the one poster (OPEN held) while no job is posted and no helper is inside;
    // read by helpers only while one is posted (SEQ odd, checked after entering INSIDE).
    unsafe impl Sync for Slot {}

    static OPEN: AtomicBool = AtomicBool::new(false);
    static JOB: Slot = Slot(UnsafeCell::new(None));
    /// Odd while a job is posted: each post and each close adds one.
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    static PARTS: AtomicUsize = AtomicUsize::new(0);
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    /// Helpers between checking that a job is posted and leaving it (with every part they claimed finished).
    static INSIDE: AtomicUsize = AtomicUsize::new(0);
    /// Helpers running.
    static HELPERS: AtomicUsize = AtomicUsize::new(0);
    /// Turns (an atomic load each) a helper waits for a job before it leaves the pool's thread to rayon
    /// again: long enough for the gaps between a decoding step's jobs (its element-wise work, the next
    /// token's sampling), short enough that a rayon job after the last one soon finds the thread free.
    const IDLE_SPINS: u32 = 1 << 18;

    /// Claims parts of the posted job until none is left.
    fn work(job: &(dyn Fn(usize) + Sync)) {
        let parts = PARTS.load(SeqCst);
        loop {
            let i = NEXT.fetch_add(1, SeqCst);
            if i >= parts {
                return;
            }
            job(i);
        }
    }

    pub(super) fn run<R: Send + Sync>(n: usize, f: &(impl Fn(usize) -> R + Sync)) -> Option<Vec<R>> {
        if OPEN.compare_exchange(false, true, SeqCst, SeqCst).is_err() {
            return None;
        }
        let slots: Vec<OnceLock<R>> = (0..n).map(|_| OnceLock::new()).collect();
        let body = |i: usize| {
            let _ = slots[i].set(f(i));
        };
        let job: &(dyn Fn(usize) + Sync) = &body;
        // SAFETY: the job is read only between the post and the close (`Close`, dropped before `body` and
        // `slots`, also when a part panics), which waits until no helper is inside it.
        unsafe { *JOB.0.get() = Some(std::mem::transmute::<&(dyn Fn(usize) + Sync), Job>(job)) };
        let close = Close;
        PARTS.store(n, SeqCst);
        NEXT.store(0, SeqCst);
        SEQ.fetch_add(1, SeqCst); // posted
        let want = super::threads() - 1;
        let mut running = HELPERS.load(SeqCst);
        while running < want {
            match HELPERS.compare_exchange(running, running + 1, SeqCst, SeqCst) {
                Ok(_) => {
                    rayon::spawn(help);
                    running += 1;
                }
                Err(now) => running = now,
            }
        }
        work(job);
        drop(close);
        Some(slots.into_iter().map(|s| s.into_inner().expect("every part ran")).collect())
    }

    /// Closes the posted job when dropped: no helper enters it after, and the drop returns once none is inside.
    struct Close;

    impl Drop for Close {
        fn drop(&mut self) {
            SEQ.fetch_add(1, SeqCst); // closed
            while INSIDE.load(SeqCst) != 0 {
                std::hint::spin_loop();
            }
            // SAFETY: closed, and no helper inside (see Slot)
            unsafe { *JOB.0.get() = None };
            OPEN.store(false, SeqCst);
        }
    }

    /// A helper: joins each job posted until none came for [`IDLE_SPINS`] turns.
    fn help() {
        let (mut seen, mut idle) = (usize::MAX, 0u32);
        while idle < IDLE_SPINS {
            let s = SEQ.load(SeqCst);
            if s.is_multiple_of(2) || s == seen {
                idle += 1;
                std::hint::spin_loop();
                continue;
            }
            INSIDE.fetch_add(1, SeqCst);
            if SEQ.load(SeqCst) == s {
                // SAFETY: the job is posted and this helper is counted inside it (see Slot)
                if let Some(job) = unsafe { *JOB.0.get() } {
                    work(job);
                }
            }
            INSIDE.fetch_sub(1, SeqCst);
            (seen, idle) = (s, 0);
        }
        HELPERS.fetch_sub(1, SeqCst);
    }
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
