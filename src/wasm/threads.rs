//! Exports: `initThreadPool(threads?)` and `threadsInfo()`.
//!
//! The package has two builds of the same code. The default one has no threads: its
//! `initThreadPool` checks its argument and resolves to 1, and `threadsInfo` says why. The
//! threads build (feature `threads`, `+atomics` through nightly's `-Z build-std`; Node's entry
//! loads it, and `attention-lab/web`'s `init()` on a cross-origin isolated page) starts
//! `threads − 1` workers on the module's shared memory: each runs one of
//! rayon's threads, the calling thread is the pool's thread 0 (rayon's `use_current_thread`),
//! and `web_spin_lock` makes it spin instead of block where a browser's main thread may not.
//! The workers are spawned by `threads.js` (the same scheme as wasm-bindgen-rayon, which has no
//! Node support and resolves the package's files by fixed relative paths that this package's
//! layout does not have). Work is split by [`crate::parallel`], so results are the same bits
//! on any number of threads.

use wasm_bindgen::prelude::*;

use super::convert::{js_result, read_threads_js, refused};
use crate::error::Result;

/// The most threads `initThreadPool` starts.
pub const MAX_THREADS: u32 = 64;

#[wasm_bindgen(typescript_custom_section)]
const TYPESCRIPT: &str = include_str!("types/threads.d.ts");

/// `threads` checked by `readThreads`: `None` for the default (undefined), else an integer in 1..=MAX_THREADS.
fn read_threads(value: &JsValue) -> Result<Option<u32>> {
    let n = refused(read_threads_js(value, MAX_THREADS))?.as_f64().unwrap_or(0.0) as u32;
    Ok((n > 0).then_some(n))
}

/// `threadsInfo()`'s object.
fn info(threads_build: bool, reason: Option<&str>) -> JsValue {
    let object = js_sys::Object::new();
    // setting a key of a new plain object cannot fail (no setter, not frozen)
    let set = |key: &str, value: JsValue| {
        let _ = js_sys::Reflect::set(&object, &key.into(), &value);
    };
    set("threads", (crate::parallel::threads() as f64).into());
    set("threadsBuild", threads_build.into());
    set("reason", reason.map_or(JsValue::NULL, JsValue::from));
    object.into()
}

#[cfg(not(all(feature = "threads", target_feature = "atomics")))]
mod build {
    use super::*;

    const REASON: &str = "this is attention-lab's single-threaded build, which the bundler entry loads, and attention-lab/web on a page that is not cross-origin isolated (COOP/COEP headers); Node's entry and attention-lab/web on an isolated page load the threads build";

    /// Checks `threads` and resolves to 1: this build has no threads.
    #[wasm_bindgen(js_name = initThreadPool, skip_typescript)]
    pub fn init_thread_pool(threads: JsValue) -> std::result::Result<js_sys::Promise, JsValue> {
        js_result(|| read_threads(&threads).map(|_| js_sys::Promise::resolve(&JsValue::from_f64(1.0))))
    }

    /// 1 thread, and why.
    #[wasm_bindgen(js_name = threadsInfo, skip_typescript)]
    pub fn threads_info() -> JsValue {
        info(false, Some(REASON))
    }
}

#[cfg(all(feature = "threads", target_feature = "atomics"))]
mod build {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use wasm_sync::Mutex;

    /// Whether an `initThreadPool` has begun: the pool is started once.
    static BEGUN: AtomicBool = AtomicBool::new(false);
    /// Why the pool was not started, when `threads.js` declined.
    static DECLINED: Mutex<Option<String>> = Mutex::new(None);
    /// rayon's threads waiting for a worker to run them. Handed over by spinning on
    /// [`POSTED`], not through a channel or a timed sleep: in Node workers std's channel (a
    /// park) and `thread::sleep` (a timed `memory.atomic.wait32`) at times never woke, which hung
    /// about half of the pool starts. `threads.js` lets the workers spin only once the main
    /// thread is about to build the pool.
    static WAITING: Mutex<Vec<rayon::ThreadBuilder>> = Mutex::new(Vec::new());
    /// How many are in [`WAITING`]: the workers look at it before they take the lock.
    static POSTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    // (`Mutex` is wasm_sync's: it spins where a browser's main thread may not block.)

    #[wasm_bindgen(module = "/src/wasm/threads.js")]
    extern "C" {
        #[wasm_bindgen(js_name = startWorkers)]
        fn start_workers(module: JsValue, memory: JsValue, requested: u32, builder: PoolBuilder) -> js_sys::Promise;
    }

    /// The pool under construction, handed to `threads.js`, which builds it once the workers
    /// are listening.
    #[wasm_bindgen(skip_typescript)]
    pub struct PoolBuilder {}

    #[wasm_bindgen]
    impl PoolBuilder {
        /// Builds the global pool of `threads` (this thread and `threads − 1` workers, which
        /// must be running `__attentionLabThreadsWorker`); returns the threads in use.
        pub fn build(&mut self, threads: usize) -> std::result::Result<usize, JsValue> {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .use_current_thread()
                .spawn_handler(|thread| {
                    WAITING.lock().unwrap_or_else(|e| e.into_inner()).push(thread);
                    POSTED.fetch_add(1, Ordering::SeqCst);
                    Ok(())
                })
                .build_global()
                .map_err(|e| JsValue::from_str(&format!("the thread pool did not start: {e}")))?;
            crate::parallel::set_threads(threads);
            Ok(threads)
        }

        /// Records why the pool did not start (the threads stay 1).
        pub fn decline(&mut self, reason: String) {
            *DECLINED.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
        }
    }

    /// A worker's life: wait for one of rayon's threads and run it (until the program ends).
    #[wasm_bindgen(js_name = __attentionLabThreadsWorker, skip_typescript)]
    pub fn threads_worker() {
        loop {
            let posted = POSTED.load(Ordering::SeqCst);
            if posted > 0 && POSTED.compare_exchange(posted, posted - 1, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                let thread = WAITING.lock().unwrap_or_else(|e| e.into_inner()).pop();
                if let Some(thread) = thread {
                    return thread.run();
                }
            }
            core::hint::spin_loop();
        }
    }

    /// Starts the pool (see the TypeScript declaration).
    #[wasm_bindgen(js_name = initThreadPool, skip_typescript)]
    pub fn init_thread_pool(threads: JsValue) -> std::result::Result<js_sys::Promise, JsValue> {
        js_result(|| {
            let requested = read_threads(&threads)?;
            if BEGUN.swap(true, Ordering::SeqCst) {
                return Ok(js_sys::Promise::resolve(&JsValue::from_f64(crate::parallel::threads() as f64)));
            }
            let builder = PoolBuilder {};
            Ok(start_workers(wasm_bindgen::module(), wasm_bindgen::memory(), requested.unwrap_or(0), builder))
        })
    }

    /// The threads in use and, when 1, why.
    #[wasm_bindgen(js_name = threadsInfo, skip_typescript)]
    pub fn threads_info() -> JsValue {
        let declined = DECLINED.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let reason = match (crate::parallel::threads(), declined) {
            (n, _) if n > 1 => None,
            (_, Some(reason)) => Some(reason),
            (_, None) if BEGUN.load(Ordering::SeqCst) => Some("initThreadPool has not finished starting the pool".to_string()),
            _ => Some("initThreadPool has not been called".to_string()),
        };
        info(true, reason.as_deref())
    }
}
