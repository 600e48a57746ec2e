//! A dense row-major matrix.
//!
//! Layout: a `rows × cols` matrix stores element `(r, c)` at `data[r * cols + c]`.
//! Shape names used across the crate: T rows (positions), C columns (features).

use crate::error::{shape_text, AttentionError, Result};
use crate::real::Real;

/// Largest number of elements one matrix may hold (2^27, i.e. 1 GiB of f64): anything larger
/// is refused with a `RangeError` before memory is asked for. (2^28 f64 is 2 GiB, more than one
/// `Vec` may hold on wasm32, where a capacity is at most `isize::MAX` bytes.)
pub const MAX_ELEMENTS: usize = crate::limits::MAX_WORKING_VALUES;

/// A dense row-major matrix of `f64` (default) or `f32`.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix<F = f64> {
    rows: usize,
    cols: usize,
    data: Vec<F>,
}

/// `rows * cols`, or a `RangeError` when that is too large to allocate.
pub fn checked_len(rows: usize, cols: usize, what: &str) -> Result<usize> {
    rows.checked_mul(cols)
        .filter(|&n| n <= MAX_ELEMENTS)
        .ok_or_else(|| {
            AttentionError::range_error(format!(
                "{what} would be {rows}×{cols}, more than the {MAX_ELEMENTS} elements one matrix may hold"
            ))
        })
}

/// A row-major matrix whose rows are `stride` apart, starting at `data[0]`.
#[derive(Clone, Copy, Debug)]
pub struct Strided<'a, F> {
    pub data: &'a [F],
    pub stride: usize,
}

/// `out (m × n, rows out_stride apart) = a (m × k) · b (k × n)`, each output row zeroed and then
/// accumulated over `p` in increasing order (`out += a[i][p] · b[p]`): the spec's `MatMul`, the one
/// f64 summation order. [`Matrix::matmul`] and the engine's f64 output projection run it; the
/// engine's f64 scores and weighted sum write the same loop out (for speed), so all agree bit for bit.
/// Blocks of rows are independent, so with threads they are split across them (same bits).
pub fn matmul_into<F: Real>(a: Strided<F>, m: usize, k: usize, b: Strided<F>, n: usize, out: &mut [F], out_stride: usize) {
    const ROWS: usize = 16;
    if m == 0 || n == 0 {
        return;
    }
    let split = crate::parallel::worth_splitting(m.div_ceil(ROWS), m * k * n);
    if !split {
        return matmul_rows(a, m, k, b, n, out, out_stride);
    }
    crate::parallel::for_each_chunk(&mut out[..(m - 1) * out_stride + n], ROWS * out_stride, true, |block, rows| {
        let first = block * ROWS;
        let a = Strided { data: &a.data[first * a.stride..], stride: a.stride };
        matmul_rows(a, ROWS.min(m - first), k, b, n, rows, out_stride);
    });
}

/// `out (m × n, rows out_stride apart) = a (m × k)·b (n × k)ᵀ`, each entry summed over `k` in
/// increasing order from zero: [`Matrix::matmul_transposed`], and the layer's f64 `A·Bᵀ`.
pub fn matmul_transposed_into<F: Real>(a: Strided<F>, m: usize, k: usize, b: Strided<F>, n: usize, out: &mut [F], out_stride: usize) {
    for i in 0..m {
        let a_row = &a.data[i * a.stride..i * a.stride + k];
        for j in 0..n {
            let mut sum = F::ZERO;
            for (&x, &y) in a_row.iter().zip(&b.data[j * b.stride..j * b.stride + k]) {
                sum += x * y;
            }
            out[i * out_stride + j] = sum;
        }
    }
}

/// `out (m × n, row-major, zeros) += a (k × m)ᵀ·b (k × n)`, each entry summed over `k` in increasing
/// order from zero: [`Matrix::transposed_matmul`], and the layer's f64 `Aᵀ·B`.
pub fn transposed_matmul_into<F: Real>(a: Strided<F>, m: usize, k: usize, b: Strided<F>, n: usize, out: &mut [F]) {
    for p in 0..k {
        let (a_row, b_row) = (&a.data[p * a.stride..p * a.stride + m], &b.data[p * b.stride..p * b.stride + n]);
        for (i, &x) in a_row.iter().enumerate() {
            for (o, &y) in out[i * n..(i + 1) * n].iter_mut().zip(b_row) {
                *o += x * y;
            }
        }
    }
}

/// [`matmul_into`]'s loop.
fn matmul_rows<F: Real>(a: Strided<F>, m: usize, k: usize, b: Strided<F>, n: usize, out: &mut [F], out_stride: usize) {
    for i in 0..m {
        let out_row = &mut out[i * out_stride..i * out_stride + n];
        out_row.fill(F::ZERO);
        for (p, &x) in a.data[i * a.stride..i * a.stride + k].iter().enumerate() {
            for (o, &y) in out_row.iter_mut().zip(&b.data[p * b.stride..p * b.stride + n]) {
                *o += x * y;
            }
        }
    }
}

impl<F: Real> Matrix<F> {
    /// Wraps row-major `data` of length `rows * cols`.
    pub fn new(rows: usize, cols: usize, data: Vec<F>) -> Result<Self> {
        if data.len() != rows * cols {
            return Err(AttentionError::range_error(format!(
                "a {} matrix needs {} values but {} were given",
                shape_text(rows, cols),
                rows * cols,
                data.len()
            )));
        }
        Ok(Self { rows, cols, data })
    }

    /// All zeros.
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Self { rows, cols, data: vec![F::ZERO; rows * cols] }
    }

    /// The `n × n` identity.
    pub fn identity(n: usize) -> Self {
        let mut m = Self::zeros(n, n);
        for i in 0..n {
            m.data[i * n + i] = F::ONE;
        }
        m
    }

    /// Builds a matrix from equal-length rows. Meant for fixtures; JS input goes through the boundary.
    pub fn from_rows<R: AsRef<[F]>>(rows: &[R]) -> Result<Self> {
        let cols = rows.first().map_or(0, |r| r.as_ref().len());
        let mut data = Vec::with_capacity(rows.len() * cols);
        for (i, row) in rows.iter().enumerate() {
            let row = row.as_ref();
            if row.len() != cols {
                return Err(AttentionError::range_error(format!(
                    "row {i} has {} entries but row 0 has {cols}",
                    row.len()
                )));
            }
            data.extend_from_slice(row);
        }
        Ok(Self { rows: rows.len(), cols, data })
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    /// `(rows, cols)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// `"rows×cols"`, as error messages print it.
    pub fn shape_text(&self) -> String {
        shape_text(self.rows, self.cols)
    }

    /// The row-major values.
    pub fn data(&self) -> &[F] {
        &self.data
    }

    pub fn data_mut(&mut self) -> &mut [F] {
        &mut self.data
    }

    pub fn into_data(self) -> Vec<F> {
        self.data
    }

    /// Row `r` as a slice.
    pub fn row(&self, r: usize) -> &[F] {
        &self.data[r * self.cols..(r + 1) * self.cols]
    }

    pub fn row_mut(&mut self, r: usize) -> &mut [F] {
        &mut self.data[r * self.cols..(r + 1) * self.cols]
    }

    /// Element `(r, c)`.
    pub fn get(&self, r: usize, c: usize) -> F {
        self.data[r * self.cols + c]
    }

    /// The rows as nested vectors, the shape JS `number[][]` takes.
    pub fn to_rows(&self) -> Vec<Vec<F>> {
        (0..self.rows).map(|r| self.row(r).to_vec()).collect()
    }

    /// The spec's `Transpose`: `(rows, cols) → (cols, rows)`.
    pub fn transpose(&self) -> Self {
        let mut out = Self::zeros(self.cols, self.rows);
        for r in 0..self.rows {
            for c in 0..self.cols {
                out.data[c * self.rows + r] = self.data[r * self.cols + c];
            }
        }
        out
    }

    /// The spec's `MatMul`: `(m, k) · (k, n) → (m, n)`.
    ///
    /// Every output element is summed over `k` in increasing order, starting from zero; the
    /// fused kernels elsewhere keep exactly this order so their results match bit for bit.
    pub fn matmul(&self, other: &Self) -> Result<Self> {
        if self.cols != other.rows {
            return Err(AttentionError::range_error(format!(
                "cannot multiply a {} matrix by a {} matrix",
                self.shape_text(),
                other.shape_text()
            )));
        }
        let (m, k, n) = (self.rows, self.cols, other.cols);
        let mut out = Self::zeros(m, n);
        matmul_into(Strided { data: &self.data, stride: k }, m, k, Strided { data: &other.data, stride: n }, n, &mut out.data, n);
        Ok(out)
    }

    /// The spec's `Mul` by a scalar.
    pub fn scale(&self, s: F) -> Self {
        Self {
            rows: self.rows,
            cols: self.cols,
            data: self.data.iter().map(|&x| x * s).collect(),
        }
    }

    /// The spec's `Slice` along columns: columns `start .. end`, all rows.
    pub fn slice_columns(&self, start: usize, end: usize) -> Result<Self> {
        if start > end || end > self.cols {
            return Err(AttentionError::range_error(format!(
                "columns {start}..{end} do not fit a {} matrix",
                self.shape_text()
            )));
        }
        let width = end - start;
        let mut data = Vec::with_capacity(self.rows * width);
        for r in 0..self.rows {
            data.extend_from_slice(&self.row(r)[start..end]);
        }
        Ok(Self { rows: self.rows, cols: width, data })
    }

    /// Rows `start .. end`, all columns (a block of query rows).
    pub fn slice_rows(&self, start: usize, end: usize) -> Result<Self> {
        if start > end || end > self.rows {
            return Err(AttentionError::range_error(format!(
                "rows {start}..{end} do not fit a {} matrix",
                self.shape_text()
            )));
        }
        Ok(Self { rows: end - start, cols: self.cols, data: self.data[start * self.cols..end * self.cols].to_vec() })
    }

    /// Appends `other`'s rows below `self`'s, in place (amortised O(new rows)): a KV cache growing
    /// by new positions.
    pub fn append_rows(&mut self, other: &Self) -> Result<()> {
        if self.cols != other.cols {
            return Err(AttentionError::range_error(format!(
                "cannot place a {} matrix below a {} one",
                other.shape_text(),
                self.shape_text()
            )));
        }
        self.data.extend_from_slice(&other.data);
        self.rows += other.rows;
        Ok(())
    }

    /// Keeps rows `start .. end` only (`start ≤ end ≤ rows`), in place.
    pub fn keep_rows(&mut self, start: usize, end: usize) {
        let (start, end) = (start.min(self.rows), end.min(self.rows).max(start.min(self.rows)));
        self.data.truncate(end * self.cols);
        self.data.drain(..start * self.cols);
        self.rows = end - start;
    }

    /// The spec's `Concat` along the last axis: the parts side by side, left to right.
    pub fn concat_columns(parts: &[Self]) -> Result<Self> {
        let rows = parts.first().map_or(0, |p| p.rows);
        if let Some(bad) = parts.iter().find(|p| p.rows != rows) {
            return Err(AttentionError::range_error(format!(
                "cannot place a {} matrix beside one with {rows} rows",
                bad.shape_text()
            )));
        }
        let cols = parts.iter().map(|p| p.cols).sum();
        let mut data = Vec::with_capacity(rows * cols);
        for r in 0..rows {
            for p in parts {
                data.extend_from_slice(p.row(r));
            }
        }
        Ok(Self { rows, cols, data })
    }

    /// `self · otherᵀ`: `(m, k) · (n, k)ᵀ → (m, n)`, without building the transpose.
    ///
    /// Each output element is summed over `k` in increasing order from zero, exactly as
    /// `self.matmul(&other.transpose())` sums it, so the two agree bit for bit.
    pub fn matmul_transposed(&self, other: &Self) -> Result<Self> {
        if self.cols != other.cols {
            return Err(AttentionError::range_error(format!(
                "cannot multiply a {} matrix by the transpose of a {} matrix",
                self.shape_text(),
                other.shape_text()
            )));
        }
        let (m, n) = (self.rows, other.rows);
        let mut out = Self::zeros(m, n);
        let (a, b) = (Strided { data: &self.data, stride: self.cols }, Strided { data: &other.data, stride: other.cols });
        matmul_transposed_into(a, m, self.cols, b, n, &mut out.data, n);
        Ok(out)
    }

    /// `selfᵀ · other`: `(k, m)ᵀ · (k, n) → (m, n)`, without building the transpose.
    ///
    /// Summed over `k` in increasing order from zero, like `self.transpose().matmul(other)`.
    pub fn transposed_matmul(&self, other: &Self) -> Result<Self> {
        if self.rows != other.rows {
            return Err(AttentionError::range_error(format!(
                "cannot multiply the transpose of a {} matrix by a {} matrix",
                self.shape_text(),
                other.shape_text()
            )));
        }
        let (m, n) = (self.cols, other.cols);
        let mut out = Self::zeros(m, n);
        let (a, b) = (Strided { data: &self.data, stride: m }, Strided { data: &other.data, stride: n });
        transposed_matmul_into(a, m, self.rows, b, n, &mut out.data);
        Ok(out)
    }

    /// Adds the row vector `bias` (length `cols`) to every row: the `+ b` of `x·W + b`.
    pub fn add_row(&mut self, bias: &[F]) -> Result<()> {
        if bias.len() != self.cols {
            return Err(AttentionError::range_error(format!(
                "cannot add a bias of length {} to the rows of a {} matrix",
                bias.len(),
                self.shape_text()
            )));
        }
        for row in self.data.chunks_exact_mut(self.cols.max(1)) {
            for (x, &b) in row.iter_mut().zip(bias) {
                *x += b;
            }
        }
        Ok(())
    }

    /// The sum of each column (rows added in increasing order): the gradient of a bias.
    pub fn column_sums(&self) -> Vec<F> {
        let mut sums = vec![F::ZERO; self.cols];
        for r in 0..self.rows {
            for (s, &x) in sums.iter_mut().zip(self.row(r)) {
                *s += x;
            }
        }
        sums
    }

    /// Element-wise `self += other` (same shape), used to accumulate gradients.
    pub fn add_assign(&mut self, other: &Self) -> Result<()> {
        if self.shape() != other.shape() {
            return Err(AttentionError::range_error(format!(
                "cannot add a {} matrix to a {} matrix",
                other.shape_text(),
                self.shape_text()
            )));
        }
        for (x, &y) in self.data.iter_mut().zip(&other.data) {
            *x += y;
        }
        Ok(())
    }

    /// Element-wise product (same shape).
    pub fn hadamard(&self, other: &Self) -> Result<Self> {
        if self.shape() != other.shape() {
            return Err(AttentionError::range_error(format!(
                "cannot multiply a {} matrix element-wise by a {} matrix",
                self.shape_text(),
                other.shape_text()
            )));
        }
        let data = self.data.iter().zip(&other.data).map(|(&x, &y)| x * y).collect();
        Ok(Self { rows: self.rows, cols: self.cols, data })
    }

    /// Converts every entry to another scalar type.
    pub fn cast<G: Real>(&self) -> Matrix<G> {
        Matrix {
            rows: self.rows,
            cols: self.cols,
            data: self.data.iter().map(|&x| G::from_f64(x.to_f64())).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_by_three() -> Matrix {
        Matrix::from_rows(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).unwrap()
    }

    #[test]
    fn transpose_swaps_axes() {
        let t = two_by_three().transpose();
        assert_eq!(t.shape(), (3, 2));
        assert_eq!(t.to_rows(), vec![vec![1.0, 4.0], vec![2.0, 5.0], vec![3.0, 6.0]]);
    }

    #[test]
    fn matmul_small_known_product() {
        let a = two_by_three();
        let product = a.matmul(&a.transpose()).unwrap(); // (2, 2)
        assert_eq!(product.to_rows(), vec![vec![14.0, 32.0], vec![32.0, 77.0]]);
        assert!(a.matmul(&a).is_err());
    }

    #[test]
    fn identity_is_exact() {
        let a: Matrix = Matrix::from_rows(&[[-0.0, 1e-310, 3.5]]).unwrap();
        let same = a.matmul(&Matrix::identity(3)).unwrap();
        assert_eq!(same.data()[1].to_bits(), 1e-310f64.to_bits());
        assert_eq!(same.data()[2], 3.5);
    }

    #[test]
    fn slice_then_concat_round_trips() {
        let a = two_by_three();
        let parts = [a.slice_columns(0, 1).unwrap(), a.slice_columns(1, 3).unwrap()];
        assert_eq!(parts[1].to_rows(), vec![vec![2.0, 3.0], vec![5.0, 6.0]]);
        assert_eq!(Matrix::concat_columns(&parts).unwrap(), a);
        assert!(a.slice_columns(2, 4).is_err());
    }

    #[test]
    fn transposed_products_match_explicit_transposes_bit_for_bit() {
        let a = crate::testing::seeded_matrix(4, 5, 21);
        let b = crate::testing::seeded_matrix(3, 5, 22);
        let c = crate::testing::seeded_matrix(4, 3, 23);
        assert_eq!(a.matmul_transposed(&b).unwrap(), a.matmul(&b.transpose()).unwrap());
        assert_eq!(a.transposed_matmul(&c).unwrap(), a.transpose().matmul(&c).unwrap());
        assert_eq!(a.matmul_transposed(&b).unwrap().shape(), (4, 3));
        assert_eq!(a.transposed_matmul(&c).unwrap().shape(), (5, 3));
        assert!(a.matmul_transposed(&c).is_err());
        assert!(a.transposed_matmul(&b).is_err());
    }

    #[test]
    fn bias_rows_column_sums_and_elementwise() {
        let mut a = two_by_three();
        a.add_row(&[10.0, 20.0, 30.0]).unwrap();
        assert_eq!(a.to_rows(), vec![vec![11.0, 22.0, 33.0], vec![14.0, 25.0, 36.0]]);
        assert!(a.add_row(&[1.0]).is_err());
        assert_eq!(two_by_three().column_sums(), vec![5.0, 7.0, 9.0]);
        let mut b = two_by_three();
        b.add_assign(&two_by_three()).unwrap();
        assert_eq!(b, two_by_three().scale(2.0));
        assert_eq!(two_by_three().hadamard(&two_by_three()).unwrap().to_rows(), vec![vec![1.0, 4.0, 9.0], vec![16.0, 25.0, 36.0]]);
        assert!(b.add_assign(&Matrix::zeros(3, 2)).is_err());
        assert!(b.hadamard(&Matrix::zeros(3, 2)).is_err());
    }

    #[test]
    fn ragged_rows_are_refused() {
        let err = Matrix::from_rows(&[vec![1.0, 2.0], vec![3.0]]).unwrap_err();
        assert_eq!(err.message(), "row 1 has 1 entries but row 0 has 2");
    }

    #[test]
    fn oversized_shapes_are_refused_before_allocating() {
        assert!(checked_len(1 << 20, 1 << 20, "Q").is_err());
        assert!(checked_len(usize::MAX, 2, "Q").is_err());
        assert_eq!(checked_len(3, 4, "Q").unwrap(), 12);
    }
}
