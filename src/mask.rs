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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mask {
    /// Forbid every key after the query (`j > i`).
    pub causal: bool,
    /// An explicit `T_q × T_k` table of allowed pairs.
    pub allowed: Option<BoolMatrix>,
}

impl Mask {
    /// No masking.
    pub fn none() -> Self {
        Self::default()
    }

    /// Only the causal rule.
    pub fn causal() -> Self {
        Self { causal: true, allowed: None }
    }

    /// True when nothing is masked.
    pub fn is_empty(&self) -> bool {
        !self.causal && self.allowed.is_none()
    }

    /// May query `i` attend to key `j`?
    #[inline]
    pub fn allows(&self, i: usize, j: usize) -> bool {
        !(self.causal && j > i) && self.allowed.as_ref().is_none_or(|m| m.get(i, j))
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

    /// The effective table (causal and explicit combined), or `None` when nothing is masked.
    pub fn resolve(&self, t_q: usize, t_k: usize) -> Option<BoolMatrix> {
        if self.is_empty() {
            return None;
        }
        let data = (0..t_q).flat_map(|i| (0..t_k).map(move |j| (i, j))).map(|(i, j)| self.allows(i, j)).collect();
        Some(BoolMatrix { rows: t_q, cols: t_k, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causal_forbids_the_future_only() {
        let m = Mask::causal();
        assert!(m.allows(1, 0) && m.allows(1, 1) && !m.allows(1, 2));
    }

    #[test]
    fn explicit_and_causal_combine_with_and() {
        let table = BoolMatrix::new(2, 2, vec![true, true, false, true]).unwrap();
        let m = Mask { causal: true, allowed: Some(table) };
        assert_eq!(m.resolve(2, 2).unwrap().to_rows(), vec![vec![true, false], vec![false, true]]);
        assert!(m.check_shape(2, 2).is_ok());
        assert!(m.check_shape(3, 2).unwrap_err().message().starts_with("mask is 2×2 but the scores are 3×2"));
    }
}
