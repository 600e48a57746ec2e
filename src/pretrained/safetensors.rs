//! A reader of the safetensors format (Hugging Face's `model.safetensors`), checked as strictly as
//! the reference implementation (huggingface/safetensors, `safetensors/src/tensor.rs`, commit
//! 24b0b28: `SafeTensors::read_metadata` and `Metadata::validate`):
//!
//! ```text
//! bytes 0 … 7        N, the header's length (u64, little-endian), at most 100,000,000
//! bytes 8 … 8+N      the header: JSON starting with '{' (trailing spaces allowed):
//!                    { "__metadata__"?: { string: string },
//!                      name: { "dtype": "F16", "shape": [2, 3], "data_offsets": [begin, end] }, … }
//! the rest           the data; each tensor's bytes are data[begin … end], row-major, little-endian;
//!                    end − begin = numel · size(dtype); the tensors tile the data with no hole,
//!                    no overlap and nothing after the last one
//! ```
//!
//! The file is read through [`Bytes`]: a slice in memory, or at the JS boundary the caller's
//! ArrayBuffer, a range at a time. [`parse`] copies the length and the header; each tensor's values
//! are converted from chunks of [`CHUNK_BYTES`] straight into their own vector, so a checkpoint is
//! never held twice.
//!
//! Every malformed file is refused with an error naming what is wrong (a `RangeError` for lengths
//! and offsets, a `TypeError` for a header that is not the JSON described); nothing here panics.
//! The values of F32, F16 and BF16 tensors convert exactly to f32 and f64; other dtypes are read
//! (their sizes are checked) but refused when converted, naming the tensor.

use super::json::{self, Json};
use crate::error::{AttentionError, Result};
use std::mem::MaybeUninit;
use crate::real::Real;

/// The reference implementation's limit on the header's length.
pub const MAX_HEADER_BYTES: u64 = 100_000_000;

/// Where a file's bytes come from.
pub trait Bytes {
    /// The file's length in bytes.
    fn length(&self) -> usize;
    /// Copies bytes `at … at + out.len()` (within the file) into `out`.
    fn copy_to(&self, at: usize, out: &mut [u8]);
    /// Writes every entry of `out` with the little-endian f32 values starting at byte `at` (the
    /// caller relies on all of them being written): a chunk of bytes at a time here; the JS boundary
    /// copies them straight into `out` when `at` is aligned.
    fn copy_f32(&self, at: usize, out: &mut [MaybeUninit<f32>]) {
        copy_f32_in_chunks(self, at, out);
    }
}

/// [`Bytes::copy_f32`] through [`Bytes::copy_to`], [`CHUNK_BYTES`] at a time.
pub fn copy_f32_in_chunks<B: Bytes + ?Sized>(bytes: &B, at: usize, out: &mut [MaybeUninit<f32>]) {
    let mut chunk = vec![0u8; CHUNK_BYTES.min(4 * out.len())];
    for (i, values) in out.chunks_mut(CHUNK_BYTES / 4).enumerate() {
        let part = &mut chunk[..4 * values.len()];
        bytes.copy_to(at + i * CHUNK_BYTES, part);
        for (x, b) in values.iter_mut().zip(part.chunks_exact(4)) {
            x.write(f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        }
    }
}

/// `n` f32 values read by [`Bytes::copy_f32`] into a vector that is never zeroed first (a 500 MB
/// checkpoint is written once, not twice).
fn read_f32<B: Bytes + ?Sized>(bytes: &B, at: usize, n: usize) -> Vec<f32> {
    read_f32_rows(bytes, at, 1, n, n)
}

/// `rows` runs of `n` little-endian f32 values, the first at byte `at`, each `stride` values after
/// the last, copied into one vector (no zeroing first, no vector per run).
fn read_f32_rows<B: Bytes + ?Sized>(bytes: &B, at: usize, rows: usize, n: usize, stride: usize) -> Vec<f32> {
    let mut values = Vec::with_capacity(rows * n);
    for (r, run) in values.spare_capacity_mut()[..rows * n].chunks_exact_mut(n.max(1)).enumerate() {
        bytes.copy_f32(at + 4 * r * stride, run);
    }
    // SAFETY: copy_f32 writes every entry of each run it is given (its contract; both implementations
    // do), and the runs cover the first rows · n entries
    unsafe { values.set_len(rows * n) };
    values
}

impl Bytes for [u8] {
    fn length(&self) -> usize {
        self.len()
    }

    fn copy_to(&self, at: usize, out: &mut [u8]) {
        out.copy_from_slice(&self[at..at + out.len()]);
    }
}

impl Bytes for Vec<u8> {
    fn length(&self) -> usize {
        self.len()
    }

    fn copy_to(&self, at: usize, out: &mut [u8]) {
        self[..].copy_to(at, out);
    }
}

/// How much of a tensor's data is copied and converted at a time (a multiple of every dtype's size).
pub const CHUNK_BYTES: usize = 1 << 20;

/// A tensor's element type, as the header names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    Bool,
    U8,
    I8,
    F8E5M2,
    F8E4M3,
    I16,
    U16,
    F16,
    BF16,
    I32,
    U32,
    F32,
    F64,
    I64,
    U64,
}

const DTYPES: [(Dtype, &str, usize); 15] = [
    (Dtype::Bool, "BOOL", 1),
    (Dtype::U8, "U8", 1),
    (Dtype::I8, "I8", 1),
    (Dtype::F8E5M2, "F8_E5M2", 1),
    (Dtype::F8E4M3, "F8_E4M3", 1),
    (Dtype::I16, "I16", 2),
    (Dtype::U16, "U16", 2),
    (Dtype::F16, "F16", 2),
    (Dtype::BF16, "BF16", 2),
    (Dtype::I32, "I32", 4),
    (Dtype::U32, "U32", 4),
    (Dtype::F32, "F32", 4),
    (Dtype::F64, "F64", 8),
    (Dtype::I64, "I64", 8),
    (Dtype::U64, "U64", 8),
];

impl Dtype {
    /// From the header's name (`"BF16"`).
    pub fn parse(name: &str) -> Option<Self> {
        DTYPES.iter().find(|d| d.1 == name).map(|d| d.0)
    }

    /// The header's name.
    pub fn name(self) -> &'static str {
        DTYPES.iter().find(|d| d.0 == self).map_or("?", |d| d.1)
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        DTYPES.iter().find(|d| d.0 == self).map_or(1, |d| d.2)
    }
}

/// One tensor of the header: its data is `data[begin … end]`.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorInfo {
    pub name: String,
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    pub begin: usize,
    pub end: usize,
}

impl TensorInfo {
    /// The number of elements (1 for a rank-0 tensor).
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// `[2, 3]`, as messages write a shape.
    pub fn shape_text(&self) -> String {
        shape_text(&self.shape)
    }
}

/// `[2, 3]`.
pub fn shape_text(shape: &[usize]) -> String {
    format!("[{}]", shape.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "))
}

/// A parsed file: the tensors in header order, the metadata, and the file they index.
pub struct SafeTensors<'a, B: Bytes + ?Sized = [u8]> {
    pub tensors: Vec<TensorInfo>,
    pub metadata: Vec<(String, String)>,
    file: &'a B,
    /// Where the data starts in the file: 8 + the header's length.
    data_start: usize,
}

const WHAT: &str = "weights (a .safetensors file)";

fn range(message: String) -> AttentionError {
    AttentionError::range_error(format!("{WHAT}: {message}"))
}

fn kind(message: String) -> AttentionError {
    AttentionError::type_error(format!("{WHAT}: {message}"))
}

/// Parses and checks the file's header (copying only its length and the header itself). The
/// tensors' values are not read here.
pub fn parse<B: Bytes + ?Sized>(bytes: &B) -> Result<SafeTensors<'_, B>> {
    let total = bytes.length();
    if total < 8 {
        return Err(range(format!("has {total} bytes; a safetensors file starts with 8 bytes giving its header's length")));
    }
    let mut length = [0u8; 8];
    bytes.copy_to(0, &mut length);
    let n = u64::from_le_bytes(length);
    if n > MAX_HEADER_BYTES {
        return Err(range(format!("the header is {n} bytes long, more than the {MAX_HEADER_BYTES} a safetensors header may be")));
    }
    let available = total as u64 - 8;
    if n > available {
        return Err(range(format!("the header is {n} bytes long but only {available} bytes follow its length: the file is truncated")));
    }
    let n = n as usize; // ≤ 1e8
    let mut header = vec![0u8; n];
    bytes.copy_to(8, &mut header);
    let header = &header[..];
    if header.first() != Some(&b'{') {
        return Err(kind("the header does not start with '{': not a safetensors file".to_string()));
    }
    let text = std::str::from_utf8(header).map_err(|e| kind(format!("the header is not UTF-8 (at byte {})", e.valid_up_to())))?;
    let value = json::parse(text).map_err(|e| kind(format!("the header is not JSON: {e}")))?;
    let Json::Object(entries) = value else { unreachable!("the header starts with '{{'") };
    let mut tensors = Vec::with_capacity(entries.len());
    let mut metadata = Vec::new();
    for (name, entry) in entries {
        if name == "__metadata__" {
            let Json::Object(pairs) = entry else {
                return Err(kind(format!("__metadata__ is {}; expected an object of strings", entry.kind())));
            };
            for (key, value) in pairs {
                match value {
                    Json::String(s) => metadata.push((key, s)),
                    other => return Err(kind(format!("__metadata__.{key} is {}; expected a string", other.kind()))),
                }
            }
            continue;
        }
        tensors.push(tensor_info(name, &entry)?);
    }
    check_layout(&tensors, total - 8 - n)?;
    Ok(SafeTensors { tensors, metadata, file: bytes, data_start: 8 + n })
}

/// One header entry, its fields checked, its byte count matched against dtype and shape.
fn tensor_info(name: String, entry: &Json) -> Result<TensorInfo> {
    if !matches!(entry, Json::Object(_)) {
        return Err(kind(format!("tensor \"{name}\" is {}; expected {{ dtype, shape, data_offsets }}", entry.kind())));
    }
    let dtype = match entry.get("dtype") {
        Some(Json::String(s)) => Dtype::parse(s).ok_or_else(|| {
            kind(format!("tensor \"{name}\" has dtype \"{s}\", which is not a safetensors dtype (F32, F16, BF16, F64, I64, …)"))
        })?,
        Some(other) => return Err(kind(format!("tensor \"{name}\".dtype is {}; expected a string such as \"F16\"", other.kind()))),
        None => return Err(kind(format!("tensor \"{name}\" has no dtype"))),
    };
    let integers = |field: &str| -> Result<Vec<usize>> {
        let Some(Json::Array(items)) = entry.get(field) else {
            return Err(kind(format!("tensor \"{name}\".{field} is missing or not an array")));
        };
        items
            .iter()
            .map(|x| match x {
                Json::Number(v) if v.fract() == 0.0 && *v >= 0.0 && *v <= 9_007_199_254_740_991.0 => Ok(*v as usize),
                _ => Err(kind(format!("tensor \"{name}\".{field} holds {}; expected non-negative integers", x.kind()))),
            })
            .collect()
    };
    let shape = integers("shape")?;
    let offsets = integers("data_offsets")?;
    let [begin, end] = offsets[..] else {
        return Err(kind(format!("tensor \"{name}\".data_offsets has {} entries; expected [begin, end]", offsets.len())));
    };
    let bytes = shape.iter().try_fold(dtype.size(), |a, &b| a.checked_mul(b));
    match bytes {
        Some(bytes) if end >= begin && end - begin == bytes => Ok(TensorInfo { name, dtype, shape, begin, end }),
        Some(bytes) => Err(range(format!(
            "tensor \"{name}\" has data_offsets [{begin}, {end}] but dtype {} and shape {} take {bytes} bytes",
            dtype.name(),
            shape_text(&shape)
        ))),
        None => Err(range(format!("tensor \"{name}\" has shape {}, too many elements to address", shape_text(&shape)))),
    }
}

/// The tensors must tile `0 … data_len` exactly: no overlap, no hole, nothing past the end.
fn check_layout(tensors: &[TensorInfo], data_len: usize) -> Result<()> {
    let mut order: Vec<&TensorInfo> = tensors.iter().collect();
    order.sort_by_key(|t| (t.begin, t.end));
    let mut at = 0;
    let mut previous: Option<&TensorInfo> = None;
    for t in order {
        if t.end > data_len {
            return Err(range(format!(
                "tensor \"{}\" has data_offsets [{}, {}], past the end of the data ({data_len} bytes after the header): the file is truncated or its header is wrong",
                t.name, t.begin, t.end
            )));
        }
        if t.begin < at {
            let p = previous.expect("at > 0 only after a tensor");
            return Err(range(format!(
                "tensors \"{}\" (bytes {} … {}) and \"{}\" (bytes {} … {}) overlap",
                p.name, p.begin, p.end, t.name, t.begin, t.end
            )));
        }
        if t.begin > at {
            return Err(range(format!("bytes {at} … {} of the data belong to no tensor (before \"{}\"); a safetensors file has no holes", t.begin, t.name)));
        }
        at = t.end;
        previous = Some(t);
    }
    if at != data_len {
        return Err(range(format!("the data has {data_len} bytes but its tensors end at byte {at}; a safetensors file has nothing after its last tensor")));
    }
    Ok(())
}

/// An IEEE half's bits as f32 (exact).
pub fn f16_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits >> 15) << 31;
    let exponent = u32::from((bits >> 10) & 0x1f);
    let mantissa = u32::from(bits & 0x3ff);
    let magnitude = match (exponent, mantissa) {
        (0, 0) => 0,
        // subnormal: m · 2^-24, exact in f32
        (0, m) => (m as f32 * f32::from_bits(0x3380_0000)).to_bits(),
        (31, 0) => 0x7f80_0000,
        (31, m) => 0x7fc0_0000 | (m << 13),
        (e, m) => ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(sign | magnitude)
}

/// A bfloat16's bits as f32 (its upper half: exact).
pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

impl<B: Bytes + ?Sized> SafeTensors<'_, B> {
    /// The tensor called `name`.
    pub fn get(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// The bytes of a tensor (a copy).
    pub fn bytes(&self, info: &TensorInfo) -> Vec<u8> {
        let mut out = vec![0; info.end - info.begin];
        self.file.copy_to(self.data_start + info.begin, &mut out);
        out
    }

    /// Calls `put(i, value)` for every element of a float tensor, in order, as f32 (exact for F32,
    /// F16 and BF16), copying [`CHUNK_BYTES`] of the file at a time; one loop per dtype.
    fn each(&self, info: &TensorInfo, mut put: impl FnMut(usize, f32)) {
        let size = info.dtype.size();
        let mut chunk = vec![0u8; CHUNK_BYTES.min(info.end - info.begin)];
        let mut at = info.begin;
        while at < info.end {
            let bytes = &mut chunk[..CHUNK_BYTES.min(info.end - at)];
            self.file.copy_to(self.data_start + at, bytes);
            let first = (at - info.begin) / size;
            match info.dtype {
                Dtype::F32 => bytes.chunks_exact(4).enumerate().for_each(|(i, b)| put(first + i, f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
                Dtype::F16 => bytes.chunks_exact(2).enumerate().for_each(|(i, b)| put(first + i, f16_to_f32(u16::from_le_bytes([b[0], b[1]])))),
                _ => bytes.chunks_exact(2).enumerate().for_each(|(i, b)| put(first + i, bf16_to_f32(u16::from_le_bytes([b[0], b[1]])))),
            }
            at += bytes.len();
        }
    }

    /// A TypeError unless the tensor is F32, F16 or BF16.
    pub fn check_float(info: &TensorInfo) -> Result<()> {
        match info.dtype {
            Dtype::F32 | Dtype::F16 | Dtype::BF16 => Ok(()),
            other => Err(AttentionError::type_error(format!(
                "{WHAT}: tensor \"{}\" is stored as {}; expected F32, F16 or BF16",
                info.name,
                other.name()
            ))),
        }
    }

    /// The values of a float tensor in `F`, row-major as stored (F32 read as f32: copied as they are).
    pub fn read<F: Real>(&self, info: &TensorInfo) -> Result<Vec<F>> {
        Self::check_float(info)?;
        if info.dtype == Dtype::F32 && std::any::TypeId::of::<F>() == std::any::TypeId::of::<f32>() {
            let values: Box<dyn std::any::Any> = Box::new(read_f32(self.file, self.data_start + info.begin, info.numel()));
            return Ok(*values.downcast::<Vec<F>>().expect("F is f32"));
        }
        let mut out = vec![F::ZERO; info.numel()];
        self.each(info, |i, x| out[i] = F::from_f64(f64::from(x)));
        Ok(out)
    }

    /// Columns `from … to` of a 2-D float tensor `[rows, cols]`, row-major (GPT-2's fused c_attn
    /// split into W_Q, W_K and W_V as it is read).
    pub fn read_columns<F: Real>(&self, info: &TensorInfo, from: usize, to: usize) -> Result<Vec<F>> {
        Self::check_float(info)?;
        let [rows, cols] = info.shape[..] else {
            return Err(AttentionError::range_error(format!("{WHAT}: tensor \"{}\" has shape {}; expected 2 dimensions", info.name, info.shape_text())));
        };
        let (from, to) = (from.min(cols), to.min(cols));
        let width = to.saturating_sub(from);
        if info.dtype == Dtype::F32 && std::any::TypeId::of::<F>() == std::any::TypeId::of::<f32>() {
            // F32 read as f32: each row's columns copied as they are
            let values: Box<dyn std::any::Any> = Box::new(read_f32_rows(self.file, self.data_start + info.begin + 4 * from, rows, width, cols));
            return Ok(*values.downcast::<Vec<F>>().expect("F is f32"));
        }
        let mut out = vec![F::ZERO; rows * width];
        self.each(info, |i, x| {
            let (r, c) = (i / cols, i % cols);
            if (from..to).contains(&c) {
                out[r * width + c - from] = F::from_f64(f64::from(x));
            }
        });
        Ok(out)
    }

    /// The values of a 2-D float tensor `[rows, cols]`, transposed to `[cols, rows]` (PyTorch's
    /// Linear `[out, in]` to the `[in, out]` the core multiplies by).
    pub fn read_transposed<F: Real>(&self, info: &TensorInfo) -> Result<Vec<F>> {
        Self::check_float(info)?;
        let [rows, cols] = info.shape[..] else {
            return Err(AttentionError::range_error(format!("{WHAT}: tensor \"{}\" has shape {}; expected 2 dimensions", info.name, info.shape_text())));
        };
        let mut out = vec![F::ZERO; rows * cols];
        self.each(info, |i, x| out[(i % cols) * rows + i / cols] = F::from_f64(f64::from(x)));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file from `(name, dtype, shape, bytes)`, the header padded like the reference writer's.
    pub(crate) fn file(tensors: &[(&str, &str, &[usize], Vec<u8>)]) -> Vec<u8> {
        let mut header = String::from("{");
        let mut offset = 0;
        let mut data = Vec::new();
        for (i, (name, dtype, shape, bytes)) in tensors.iter().enumerate() {
            let shape: Vec<String> = shape.iter().map(|s| s.to_string()).collect();
            if i > 0 {
                header.push(',');
            }
            header.push_str(&format!("\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":[{}],\"data_offsets\":[{offset},{}]}}", shape.join(","), offset + bytes.len()));
            offset += bytes.len();
            data.extend_from_slice(bytes);
        }
        header.push('}');
        while header.len() % 8 != 0 {
            header.push(' ');
        }
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(&data);
        out
    }

    fn raw(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    fn f32_bytes(values: &[f32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn reads_f32_f16_bf16_exactly() {
        let halves: Vec<u8> = [0x3c00u16, 0xc100, 0x0001, 0x7bff, 0x8000, 0x3555].iter().flat_map(|b| b.to_le_bytes()).collect();
        let brains: Vec<u8> = [0x3f80u16, 0xc020, 0x3eab, 0x0001].iter().flat_map(|b| b.to_le_bytes()).collect();
        let bytes = file(&[
            ("a", "F32", &[2, 3], f32_bytes(&[1.0, -2.0, 0.5, 3.25, 1e-30, -0.0])),
            ("h", "F16", &[6], halves),
            ("b", "BF16", &[2, 2], brains),
            ("mask", "BOOL", &[1, 1, 2, 2], vec![1, 0, 1, 1]),
            ("scalar", "F32", &[], f32_bytes(&[-1e4])),
            ("empty", "F16", &[0, 4], vec![]),
        ]);
        let st = parse(&bytes).unwrap();
        assert_eq!(st.tensors.len(), 6);
        let a = st.get("a").unwrap();
        assert_eq!(st.read::<f64>(a).unwrap(), vec![1.0, -2.0, 0.5, 3.25, f64::from(1e-30f32), -0.0]);
        assert_eq!(st.read_transposed::<f32>(a).unwrap(), vec![1.0, 3.25, -2.0, 1e-30, 0.5, -0.0]);
        // F32 read as f32 is copied as it is (whole, and a row's columns at a time); as f64, converted
        assert_eq!(st.read::<f32>(a).unwrap(), vec![1.0, -2.0, 0.5, 3.25, 1e-30, -0.0]);
        assert_eq!(st.read_columns::<f32>(a, 1, 3).unwrap(), vec![-2.0, 0.5, 1e-30, -0.0]);
        assert_eq!(st.read_columns::<f64>(a, 1, 3).unwrap(), vec![-2.0, 0.5, f64::from(1e-30f32), -0.0]);
        let h: Vec<f64> = st.read(st.get("h").unwrap()).unwrap();
        assert_eq!(h, vec![1.0, -2.5, 2f64.powi(-24), 65504.0, -0.0, 0.333251953125]);
        assert!(h[4].is_sign_negative());
        let b: Vec<f64> = st.read(st.get("b").unwrap()).unwrap();
        assert_eq!(b, vec![1.0, -2.5, 0.333984375, 2f64.powi(-133)]);
        assert_eq!(st.read::<f64>(st.get("scalar").unwrap()).unwrap(), vec![-1e4]);
        assert!(st.read::<f64>(st.get("empty").unwrap()).unwrap().is_empty());
        let err = st.read::<f64>(st.get("mask").unwrap()).unwrap_err();
        assert_eq!(err, AttentionError::Type("weights (a .safetensors file): tensor \"mask\" is stored as BOOL; expected F32, F16 or BF16".into()));
    }

    #[test]
    fn f16_conversion_matches_its_definition_for_every_pattern() {
        for bits in 0..=u16::MAX {
            let (s, e, m) = (bits >> 15, (bits >> 10) & 0x1f, bits & 0x3ff);
            let magnitude = match e {
                0 => f64::from(m) * 2f64.powi(-24),
                31 if m == 0 => f64::INFINITY,
                31 => f64::NAN,
                _ => (1.0 + f64::from(m) / 1024.0) * 2f64.powi(i32::from(e) - 15),
            };
            let want = if s == 1 { -magnitude } else { magnitude };
            let got = f64::from(f16_to_f32(bits));
            assert!(got == want || (got.is_nan() && want.is_nan()), "{bits:#06x}: {got} vs {want}");
            if want == 0.0 {
                assert_eq!(got.is_sign_negative(), s == 1);
            }
        }
    }

    fn refused(bytes: &[u8]) -> String {
        parse(bytes).map(|_| ()).unwrap_err().to_string()
    }

    #[test]
    fn refuses_every_malformed_file_by_name() {
        let good = file(&[("x", "F32", &[2], f32_bytes(&[1.0, 2.0])), ("y", "F16", &[1], vec![0, 0x3c])]);
        assert!(parse(&good).is_ok());
        // truncated: inside the length, inside the header, inside the data
        assert!(refused(&good[..5]).contains("has 5 bytes; a safetensors file starts with 8 bytes"));
        assert!(refused(&good[..20]).contains("the file is truncated"));
        assert!(refused(&good[..good.len() - 1]).contains("past the end of the data"));
        // too long
        let mut huge = good.clone();
        huge[..8].copy_from_slice(&(MAX_HEADER_BYTES + 1).to_le_bytes());
        assert!(refused(&huge).contains("more than the 100000000"));
        let mut wrapped = good.clone();
        wrapped[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(refused(&wrapped).starts_with("RangeError"));
        // not JSON, not an object, not UTF-8
        assert!(refused(&raw("{\"x\": ", &[])).starts_with("TypeError: weights (a .safetensors file): the header is not JSON"));
        assert!(refused(&raw("[1, 2]  ", &[])).contains("does not start with '{'"));
        assert!(refused(&raw("{\"\u{e9}\":1}", &[])).contains("is a number; expected { dtype, shape, data_offsets }"));
        assert!(refused(&[2, 0, 0, 0, 0, 0, 0, 0, b'{', 0xff]).contains("not UTF-8"));
        // fields
        assert!(refused(&raw(r#"{"x":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}}"#, &[0; 4])).contains("tensor \"x\" has dtype \"F99\""));
        assert!(refused(&raw(r#"{"x":{"shape":[1],"data_offsets":[0,4]}}"#, &[0; 4])).contains("tensor \"x\" has no dtype"));
        assert!(refused(&raw(r#"{"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}"#, &[0; 4])).contains("non-negative integers"));
        assert!(refused(&raw(r#"{"x":{"dtype":"F32","shape":[1],"data_offsets":[0]}}"#, &[0; 4])).contains("expected [begin, end]"));
        assert!(refused(&raw(r#"{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#, &[0; 4])).contains("take 8 bytes"));
        assert!(refused(&raw(r#"{"x":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}}"#, &[0; 4])).contains("take 4 bytes"));
        assert!(refused(&raw(r#"{"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}}"#, &[0; 4])).contains("too many elements"));
        assert!(refused(&raw(r#"{"__metadata__":{"a":1}}"#, &[])).contains("__metadata__.a is a number"));
        // overlap, hole, past the end, something after the last tensor
        let two = |a: [usize; 2], b: [usize; 2], len: usize| {
            raw(&format!(r#"{{"x":{{"dtype":"U8","shape":[{}],"data_offsets":[{},{}]}},"y":{{"dtype":"U8","shape":[{}],"data_offsets":[{},{}]}}}}"#, a[1] - a[0], a[0], a[1], b[1] - b[0], b[0], b[1]), &vec![0; len])
        };
        assert!(refused(&two([0, 4], [2, 6], 6)).contains("tensors \"x\" (bytes 0 … 4) and \"y\" (bytes 2 … 6) overlap"));
        assert!(refused(&two([0, 2], [3, 6], 6)).contains("bytes 2 … 3 of the data belong to no tensor"));
        assert!(refused(&two([0, 2], [2, 9], 6)).contains("tensor \"y\" has data_offsets [2, 9], past the end"));
        assert!(refused(&two([0, 2], [2, 4], 6)).contains("nothing after its last tensor"));
        // duplicate names (the format disallows them)
        assert!(refused(&raw(r#"{"x":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"x":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}"#, &[])).contains("appears twice"));
        // in any order: the tensors may be listed out of offset order
        assert!(parse(&two([2, 4], [0, 2], 4)).is_ok());
    }

    #[test]
    fn never_panics_on_cut_or_flipped_bytes() {
        let good = file(&[("x", "F32", &[2], f32_bytes(&[1.0, 2.0])), ("y", "BF16", &[3], vec![0; 6])]);
        for cut in 0..good.len() {
            assert!(parse(&good[..cut]).is_err());
        }
        for i in 0..good.len() {
            for bit in 0..8 {
                let mut bytes = good.clone();
                bytes[i] ^= 1 << bit;
                if let Ok(st) = parse(&bytes) {
                    for t in &st.tensors {
                        let _ = st.read::<f32>(t);
                    }
                }
            }
        }
    }
}
