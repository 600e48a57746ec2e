//! Export: class `KvCache`, a layer's keys and values for decoding (see [`crate::layer::KvCache`]).
//! The caches live in a registry here, by id; a `KvCache` object holds its id, and the layer's
//! `forward` finds the cache through it (`options.cache`).

use wasm_bindgen::prelude::*;

use crate::error::{AttentionError, Result};
use crate::layer;

thread_local! {
    /// The caches `createCache()` made, by slot: `(generation, cache)`, `None` once freed. A freed
    /// slot is reused with the next generation, so a stale handle never reaches a newer cache.
    static CACHES: std::cell::RefCell<Vec<(u32, Option<layer::KvCache>)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A cache's id: its slot in the low 16 bits, the slot's generation above.
const SLOT_BITS: u32 = 16;

/// Stores `cache` in a free slot (or a new one); returns its id.
pub(super) fn store_cache(cache: layer::KvCache) -> Result<u32> {
    CACHES.with(|caches| {
        let mut caches = caches.borrow_mut();
        let slot = match caches.iter().position(|(_, c)| c.is_none()) {
            Some(slot) => slot,
            None if caches.len() < 1 << SLOT_BITS => {
                caches.push((0, None));
                caches.len() - 1
            }
            None => return Err(AttentionError::range_error("65536 KV caches are alive at once; free() the ones you no longer use")),
        };
        let (generation, entry) = &mut caches[slot];
        *generation = (*generation + 1) & 0xFFFF;
        *entry = Some(cache);
        Ok(slot as u32 | *generation << SLOT_BITS)
    })
}

/// Runs `f` on cache `id` (an Error when it was freed).
pub(super) fn with_cache<T>(id: u32, f: impl FnOnce(&mut layer::KvCache) -> Result<T>) -> Result<T> {
    CACHES.with(|caches| match caches.borrow_mut().get_mut((id & 0xFFFF) as usize) {
        Some((generation, Some(cache))) if *generation == id >> SLOT_BITS => f(cache),
        _ => Err(AttentionError::State("options.cache was freed: create a new one with layer.createCache()".into())),
    })
}

/// A KV cache for decoding (see the layer's `forward` option `cache`).
#[wasm_bindgen(js_name = KvCache)]
pub struct JsKvCache {
    pub(super) id: u32,
}

#[wasm_bindgen(js_class = KvCache)]
impl JsKvCache {
    /// The positions seen so far: the next token is at this position.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> f64 {
        with_cache(self.id, |cache| Ok(cache.length() as f64)).unwrap_or(0.0)
    }

    /// Forgets every position (and the batch size): the next forward starts at position 0.
    pub fn reset(&self) {
        let _ = with_cache(self.id, |cache| {
            cache.reset();
            Ok(())
        });
    }
}

impl Drop for JsKvCache {
    fn drop(&mut self) {
        CACHES.with(|caches| {
            if let Some((generation, cache)) = caches.borrow_mut().get_mut((self.id & 0xFFFF) as usize) {
                if *generation == self.id >> SLOT_BITS {
                    *cache = None;
                }
            }
        });
    }
}
