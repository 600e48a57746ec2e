//! The KV cache for decoding: the keys (already rotated by RoPE) and values of every position a
//! layer has seen, per batch item, so that a new token costs O(T) instead of recomputing O(T²).
//! With a sliding window the cache keeps only the positions a later query can still see, so its
//! memory is O(window). It holds the precision of the forward that filled it (f64 for number[][]
//! and Float64Array, f32 for Float32Array). See [`super::MultiHeadAttention::forward_cached_batch`].

use super::MultiHeadAttention;

/// Keys and values of the positions seen so far, for one layer.
#[derive(Clone, Debug, PartialEq)]
pub struct KvCache {
    /// The layer it belongs to ([`MultiHeadAttention::id`]).
    pub(super) layer: u64,
    /// B, once the first forward set it (0 before).
    pub(super) items: usize,
    /// The keys and values, in the precision of the forward that filled them (`None` before it).
    pub(super) store: Option<Store>,
    /// The position of the first held row (positions before it were dropped by a window).
    pub(super) start: usize,
    /// The positions seen: the next token is at `length`.
    pub(super) length: usize,
}

crate::by_precision_type! {
    /// What a cache holds, in one precision.
    pub(crate) Store = HeldIn: Held<F>;
}

/// Per batch item, `(held, C_kv)` row-major: the keys (rotated) and values of positions `start …`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Held<F> {
    pub keys: Vec<Vec<F>>,
    pub values: Vec<Vec<F>>,
    /// C_kv.
    pub cols: usize,
}

impl<F> Held<F> {
    /// `items` empty sequences of `cols` columns.
    pub fn new(items: usize, cols: usize) -> Self {
        Self { keys: (0..items).map(|_| Vec::new()).collect(), values: (0..items).map(|_| Vec::new()).collect(), cols }
    }

    /// The positions held.
    pub fn rows(&self) -> usize {
        self.keys.first().map_or(0, |k| k.len() / self.cols.max(1))
    }

    /// Keeps rows `start .. end` of every item.
    pub fn keep_rows(&mut self, start: usize, end: usize) {
        let cols = self.cols;
        for m in self.keys.iter_mut().chain(self.values.iter_mut()) {
            m.truncate(end * cols);
            m.drain(..(start * cols).min(m.len()));
        }
    }
}

impl KvCache {
    /// An empty cache for `layer`.
    pub(super) fn new(layer: u64) -> Self {
        Self { layer, items: 0, store: None, start: 0, length: 0 }
    }

    /// The positions seen so far.
    pub fn length(&self) -> usize {
        self.length
    }

    /// The positions held in memory (fewer than `length` once a window dropped some).
    pub fn held(&self) -> usize {
        self.store.as_ref().map_or(0, |store| crate::by_precision!(store, held => held.rows()))
    }

    /// Forgets everything, batch size and precision included.
    pub fn reset(&mut self) {
        *self = Self::new(self.layer);
    }
}

impl MultiHeadAttention {
    /// A new, empty cache for this layer's [`MultiHeadAttention::forward_cached_batch`].
    pub fn create_cache(&self) -> KvCache {
        KvCache::new(self.id)
    }
}
