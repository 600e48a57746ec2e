//! The heap the module allocates from, counted: [`Counting`] wraps the wasm build's global
//! allocator and keeps the bytes allocated and not yet freed, so that a call whose working set
//! cannot fit in what wasm32's 4 GiB has left is refused with a `RangeError` (the limits module's
//! working-set check asks [`capacity_and_use`]) instead of aborting the module on a failed allocation
//! (`RuntimeError: unreachable`, after which every call fails).
//!
//! Wasm memory only grows: what `free()` releases goes back to the allocator and is reused by
//! later allocations, but the memory is never returned to the JavaScript engine, and the garbage
//! collector does not see it (a dropped layer holds its weights until it is freed, or until its
//! FinalizationRegistry callback runs, if ever).

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes allocated through [`Counting`] and not yet freed.
static IN_USE: AtomicUsize = AtomicUsize::new(0);

/// A global allocator that counts the bytes in use ([`bytes_in_use`]) and otherwise is `A`.
pub struct Counting<A>(pub A);

// SAFETY: every call is forwarded to `A` unchanged; the counter only observes sizes.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc(layout);
        if !p.is_null() {
            IN_USE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc_zeroed(layout);
        if !p.is_null() {
            IN_USE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.0.dealloc(ptr, layout);
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = self.0.realloc(ptr, layout, new_size);
        if !p.is_null() {
            IN_USE.fetch_add(new_size, Ordering::Relaxed);
            IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

/// Bytes allocated and not yet freed (0 where the global allocator is not [`Counting`]: natively).
pub fn bytes_in_use() -> usize {
    IN_USE.load(Ordering::Relaxed)
}

/// The most a wasm32 memory can hold: 65,536 pages of 64 KiB.
pub const WASM32_BYTES: u64 = 1 << 32;

/// Bytes the heap can still hand out, `(capacity, in use)`: on wasm32 the 4 GiB less the stack and
/// static data below the heap; `None` natively, where memory is not the module's to count.
pub fn capacity_and_use() -> Option<(u64, u64)> {
    #[cfg(target_arch = "wasm32")]
    {
        extern "C" {
            static __heap_base: u8;
        }
        // the linker's symbol for where the heap starts; only its address is taken
        let base = core::ptr::addr_of!(__heap_base) as usize as u64;
        Some((WASM32_BYTES - base, bytes_in_use() as u64))
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        None
    }
}

/// Grows the heap once to have `bytes` free in one piece, ahead of many large allocations that will
/// use it (a model's parameters as it loads): an allocation of that size, freed at once, which the
/// allocator hands out again piece by piece. Without it the heap grows once per tensor, and each
/// `memory.grow` costs about 2 ms in V8 (150 of them were a third of loading GPT-2 small). Does
/// nothing where the allocation cannot be made (the allocations themselves will say so) or natively.
pub fn reserve(bytes: usize) {
    #[cfg(target_arch = "wasm32")]
    if let Ok(layout) = Layout::from_size_align(bytes, 16) {
        if bytes > 0 {
            // SAFETY: the layout has a non-zero size; the block, if any, is freed with the same layout.
            unsafe {
                let p = std::alloc::alloc(layout);
                if !p.is_null() {
                    std::alloc::dealloc(std::hint::black_box(p), layout);
                }
            }
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = bytes;
}

/// `bytes` as a message says it: "16.8 MB", "4.29 GB", "512 bytes" (integer arithmetic only: the
/// release build has no float formatting, see `error::number_text`).
pub fn bytes_text(bytes: u64) -> String {
    let rounded = |unit: u64, decimals: u32| {
        let step = unit / 10u64.pow(decimals);
        let n = (bytes + step / 2) / step;
        let scale = 10u64.pow(decimals);
        format!("{}.{:0width$}", n / scale, n % scale, width = decimals as usize)
    };
    match bytes {
        0..1_000 => format!("{bytes} bytes"),
        1_000..1_000_000 => format!("{} kB", rounded(1_000, 1)),
        1_000_000..1_000_000_000 => format!("{} MB", rounded(1_000_000, 1)),
        _ => format!("{} GB", rounded(1_000_000_000, 2)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_as_people_say_them() {
        assert_eq!(bytes_text(512), "512 bytes");
        assert_eq!(bytes_text(16_777_216), "16.8 MB");
        assert_eq!(bytes_text(WASM32_BYTES), "4.29 GB");
        assert_eq!(bytes_text(15_449_999), "15.4 MB");
        assert_eq!(bytes_text(1_950), "2.0 kB");
    }

    #[test]
    fn the_counter_follows_allocations_through_the_wrapper() {
        let counting = Counting(std::alloc::System);
        let before = bytes_in_use();
        let layout = Layout::from_size_align(4096, 8).unwrap();
        // SAFETY: a fresh allocation of `layout`, grown, then freed with its current layout.
        unsafe {
            let p = counting.alloc(layout);
            assert!(!p.is_null());
            let q = counting.realloc(p, layout, 8192);
            assert!(!q.is_null());
            // other tests allocate natively through System, not through this wrapper
            assert_eq!(bytes_in_use() - before, 8192);
            counting.dealloc(q, Layout::from_size_align(8192, 8).unwrap());
        }
        assert_eq!(bytes_in_use(), before);
    }
}
