//! Which keys each query may attend to.
//!
//! Convention (PyTorch's boolean one): `allowed[i][j] == true` means query `i` may attend to
//! key `j`. `causal` additionally forbids every `j > i`. Both combine with AND.

use crate::error::{shape_text, AttentionError, Result};

/// A `T_q × T_k` table of booleans, row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoolMatrix {
    rows: usize,
    cols: usize,
    data: Vec<bool>,
}

impl BoolMatrix {
    /// Wraps row-major `data` of length `rows * cols`.
    pub fn new(rows: usize, cols: usize, data: Vec<bool>) -> Result<Self> {
        if data.len() != rows * cols {
            return Err(AttentionError::range_error(format!(
                "a {} mask needs {} values but {} were given",
                shape_text(rows, cols),
                rows * cols,
                data.len()
            )));
        }
        Ok(Self { rows, cols, data })
    }

    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    pub fn get(&self, r: usize, c: usize) -> bool {
        self.data[r * self.cols + c]
    }

    /// The rows as nested vectors, the shape JS `boolean[][]` takes.
    pub fn to_rows(&self) -> Vec<Vec<bool>> {
        self.data.chunks(self.cols.max(1)).take(self.rows).map(<[bool]>::to_vec).collect()
    }
}

/// The masking applied to attention scores. `Mask::default()` allows everything.
///
/// The causal rule and the window compare positions. Key `j` is at position `j`; query `i` is at
/// position `i + offset`, where `offset` is given with each question ([`Mask::allows`]). The
/// callers use `offset = T_k − T_q`: the queries are the *last* `T_q` positions of the keys
/// (flash-attention's bottom-right alignment, which decoding with a cache needs; PyTorch's
/// `is_causal` aligns top-left instead). With `T_q = T_k` the offset is 0 and query `i` is at `i`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mask {
    /// Forbid every key after the query's position.
    pub causal: bool,
    /// An explicit `T_q × T_k` table of allowed pairs (indexed by query row and key, not position).
    pub allowed: Option<BoolMatrix>,
    /// A sliding window `w`: the query at `p` sees keys with `|p − j| < w` (with `causal`, `p − w < j ≤ p`).
    pub window: Option<usize>,
}

impl Mask {
    /// No masking.
    pub fn none() -> Self {
        Self::default()
    }

    /// Only the causal rule.
    pub fn causal() -> Self {
        Self { causal: true, ..Self::default() }
    }

    /// True when nothing is masked.
    pub fn is_empty(&self) -> bool {
        !self.causal && self.allowed.is_none() && self.window.is_none()
    }

    /// May query `i` (at position `i + offset`) attend to key `j` (at position `j`)?
    #[inline]
    pub fn allows(&self, i: usize, j: usize, offset: isize) -> bool {
        // p − j, the query's distance past the key (negative: the key is in its future)
        let ahead = i as isize + offset - j as isize;
        !(self.causal && ahead < 0)
            && self.window.is_none_or(|w| ahead.unsigned_abs() < w)
            && self.allowed.as_ref().is_none_or(|m| m.get(i, j))
    }

    /// Checks that an explicit mask is `t_q × t_k`.
    pub fn check_shape(&self, t_q: usize, t_k: usize) -> Result<()> {
        match &self.allowed {
            Some(m) if m.shape() != (t_q, t_k) => Err(AttentionError::range_error(format!(
                "mask is {} but the scores are {}: mask[i][j] says whether query i may attend to key j",
                shape_text(m.rows, m.cols),
                shape_text(t_q, t_k)
            ))),
            _ => Ok(()),
        }
    }

    /// The effective table (causal, window and explicit combined) with queries at `i + offset`,
    /// or `None` when nothing is masked.
    pub fn resolve(&self, t_q: usize, t_k: usize, offset: isize) -> Option<BoolMatrix> {
        if self.is_empty() {
            return None;
        }
        let data = (0..t_q).flat_map(|i| (0..t_k).map(move |j| (i, j))).map(|(i, j)| self.allows(i, j, offset)).collect();
        Some(BoolMatrix { rows: t_q, cols: t_k, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causal_forbids_the_future_only() {
        let m = Mask::causal();
        assert!(m.allows(1, 0, 0) && m.allows(1, 1, 0) && !m.allows(1, 2, 0));
        // bottom-right: 2 queries over 4 keys are at positions 2 and 3
        assert!(m.allows(0, 2, 2) && !m.allows(0, 3, 2) && m.allows(1, 3, 2));
    }

    #[test]
    fn the_window_counts_positions_on_both_sides_and_causal_keeps_the_past() {
        let w = Mask { window: Some(2), ..Mask::none() };
        assert_eq!(w.resolve(3, 3, 0).unwrap().to_rows(), vec![vec![true, true, false], vec![true, true, true], vec![false, true, true]]);
        let sliding = Mask { causal: true, window: Some(2), ..Mask::none() };
        assert_eq!(sliding.resolve(3, 3, 0).unwrap().to_rows(), vec![vec![true, false, false], vec![true, true, false], vec![false, true, true]]);
        // a window of 1 keeps the query's own position only
        let own = Mask { causal: true, window: Some(1), ..Mask::none() };
        assert_eq!(own.resolve(2, 3, 1).unwrap().to_rows(), vec![vec![false, true, false], vec![false, false, true]]);
    }

    #[test]
    fn explicit_and_causal_combine_with_and() {
        let table = BoolMatrix::new(2, 2, vec![true, true, false, true]).unwrap();
        let m = Mask { causal: true, allowed: Some(table), window: None };
        assert_eq!(m.resolve(2, 2, 0).unwrap().to_rows(), vec![vec![true, false], vec![false, true]]);
        assert!(m.check_shape(2, 2).is_ok());
        assert!(m.check_shape(3, 2).unwrap_err().message().starts_with("mask is 2×2 but the scores are 3×2"));
    }
}
