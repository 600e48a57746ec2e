//! The KV cache for decoding: the keys (already rotated by RoPE) and values of every position a
//! layer has seen, per batch item, so that a new token costs O(T) instead of recomputing O(T²).
//! With a sliding window the cache keeps only the positions a later query can still see, so its
//! memory is O(window). See [`super::MultiHeadAttention::forward_cached`].

use super::MultiHeadAttention;
use crate::matrix::Matrix;

/// Keys and values of the positions seen so far, for one layer.
#[derive(Clone, Debug, PartialEq)]
pub struct KvCache {
    /// The layer it belongs to ([`MultiHeadAttention::id`]).
    pub(super) layer: u64,
    /// B, once the first forward set it (0 before).
    pub(super) items: usize,
    /// Per item, `(held, C_kv)`: the keys (rotated) and values of positions `start …`.
    pub(super) keys: Vec<Matrix>,
    pub(super) values: Vec<Matrix>,
    /// The position of the first held row (positions before it were dropped by a window).
    pub(super) start: usize,
    /// The positions seen: the next token is at `length`.
    pub(super) length: usize,
}

impl KvCache {
    /// An empty cache for `layer`.
    pub(super) fn new(layer: u64) -> Self {
        Self { layer, items: 0, keys: Vec::new(), values: Vec::new(), start: 0, length: 0 }
    }

    /// The positions seen so far.
    pub fn length(&self) -> usize {
        self.length
    }

    /// The positions held in memory (fewer than `length` once a window dropped some).
    pub fn held(&self) -> usize {
        self.keys.first().map_or(0, Matrix::rows)
    }

    /// Forgets everything, batch size included.
    pub fn reset(&mut self) {
        *self = Self::new(self.layer);
    }
}

impl MultiHeadAttention {
    /// A new, empty cache for this layer's [`MultiHeadAttention::forward_cached`].
    pub fn create_cache(&self) -> KvCache {
        KvCache::new(self.id)
    }
}
