//! The typed half of the boundary: arguments read as groups of one precision (`Typed<F>`, whether
//! they came as `number[][]` or `{ data, shape }`), so each export runs one body, written once over
//! the precision with [`by_precision!`](crate::by_precision), into the core's `Batch<F>` entry
//! points, and results written back in the form they came in ([`write_in`]); the layer's
//! `number[][]` or `number[][][]` arrives as [`Items`] (each item's shape beside the flat values,
//! for the core's `check_items`). The JS values themselves are walked and checked by [`super::convert`].

use js_sys::{Float32Array, Float64Array, Object, Reflect, Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::{
    check_same_form, copy_exact, copy_in, read_batch_js, write_nested_js, write_number_rows,
    is_typed_candidate, read_matrix, read_small_call_js, read_typed_matrix_js, refused, typed_to_vec,
    MAX_MATRIX_VALUES,
};
use crate::engine::Batch;
use crate::error::{AttentionError, Result};
use crate::layer::LayerKernel;
use crate::matrix::Matrix;
use crate::precision::{ByPrecision, Family, Precision, Values};
use crate::real::Real;

/// Values [`read_small_call`] can take in one JS call (Q, K and V together): 32 KiB of f64, enough
/// for the challenge and the T=16, C=64 case.
const SMALL_CALL_VALUES: usize = 4096;

thread_local! {
    /// The wasm-memory buffer `readSmallCall` writes into, reused across calls.
    static SMALL_CALL: std::cell::RefCell<Vec<f64>> = std::cell::RefCell::new(vec![0.0; 9 + SMALL_CALL_VALUES]);
}

/// What the one-JS-call fast path read besides Q, K and V: the head split (0, 0 for
/// `dotProductAttention`) and `causal`.
#[derive(Clone, Copy, Debug)]
pub struct SmallOptions {
    pub heads: (usize, usize),
    pub causal: bool,
}

/// The fast path of `dotProductAttention` / `multiHeadAttention` (`multi_head`) for small, well-formed
/// `number[][]` calls with no options besides the head split and `causal`: Q, K and V as
/// [`read_group`] gives them (f64, [`Form::Rows`]), and those options; `None` for any other call.
fn read_small_call(q: &JsValue, k: &JsValue, v: &JsValue, options: &JsValue, head_dimensions: &JsValue, multi_head: bool) -> Option<(SamePrecision<3>, SmallOptions)> {
    SMALL_CALL.with(|buffer| {
        let mut buffer = buffer.try_borrow_mut().ok()?;
        let written = read_small_call_js(q, k, v, options, head_dimensions, multi_head, &mut buffer);
        if written < 0.0 {
            return None;
        }
        let header = &buffer[..9];
        let small = SmallOptions { heads: (header[0] as usize, header[1] as usize), causal: header[2] != 0.0 };
        let mut at = 9;
        let mut next = |m: usize| {
            let (rows, cols) = (header[3 + 2 * m] as usize, header[4 + 2 * m] as usize);
            let values = buffer[at..at + rows * cols].to_vec();
            at += rows * cols;
            Typed { values, shape: vec![rows, cols], form: Form::Rows }
        };
        Some((f64::wrap([next(0), next(1), next(2)]), small))
    })
}

/// Q, K and V of `dotProductAttention` / `multiHeadAttention` (`multi_head`), read once: by the
/// one-JS-call fast path when the call is small and plain (then with the options it read), else by
/// [`read_group`] (the options are then the caller's to read, after the matrices).
pub fn read_qkv(q: &JsValue, k: &JsValue, v: &JsValue, options: &JsValue, head_dimensions: &JsValue, multi_head: bool) -> Result<(SamePrecision<3>, Option<SmallOptions>)> {
    if let Some((qkv, small)) = read_small_call(q, k, v, options, head_dimensions, multi_head) {
        return Ok((qkv, Some(small)));
    }
    Ok((read_group([q, k, v], ["Q", "K", "V"], "Q, K and V", true, true)?, None))
}

/// The one reader of a group of matrices that share a form and a precision (Q, K and V; X): all
/// `number[][]` (each read by [`read_matrix`], as f64 `[T, C]`) when the first is not an object,
/// else all `{ data, shape }` of the first's precision and rank (`[T, C]`, or also `[B, T, C]` when
/// `batches`). `group` names them in messages ("Q, K and V"). With `same_form`, an object after a
/// `number[][]` first is refused as a mixed call; without it, [`read_matrix`] refuses it.
pub fn read_group<const N: usize>(values: [&JsValue; N], names: [&str; N], group: &str, batches: bool, same_form: bool) -> Result<SamePrecision<N>> {
    let incomplete = || AttentionError::State("a group was read incompletely".into());
    match read_group_items(&values, &names, group, batches, same_form)? {
        Ok(rows) => Ok(f64::wrap(rows.try_into().map_err(|_| incomplete())?)),
        Err(typed) => SamePrecision::new(typed.try_into().map_err(|_| incomplete())?),
    }
}

/// [`read_group`]'s reading, one body for every group size: the `number[][]` matrices (`Ok`) or the
/// typed ones (`Err`), in order.
fn read_group_items(values: &[&JsValue], names: &[&str], group: &str, batches: bool, same_form: bool) -> Result<std::result::Result<Vec<Typed<f64>>, Vec<TypedMatrix>>> {
    if !is_typed_candidate(values[0]) {
        let mut read = Vec::with_capacity(values.len());
        for (i, (value, &name)) in values.iter().zip(names).enumerate() {
            if i > 0 && same_form {
                refused(check_same_form(value, name, names[0], group, false))?;
            }
            let m = read_matrix(value, name)?;
            let shape = vec![m.rows(), m.cols()];
            read.push(Typed { values: m.into_data(), shape, form: Form::Rows });
        }
        return Ok(Ok(read));
    }
    let first = read_typed_matrix(values[0], names[0], batches)?;
    let mut read = Vec::with_capacity(values.len());
    for (value, &name) in values.iter().zip(names).skip(1) {
        read.push(read_typed(value, name, batches, 0, Some(Like { name: names[0], first: &first, group, same_rank: true }))?);
    }
    read.insert(0, first);
    Ok(Err(read))
}

/// The values of a typed matrix, in the precision they arrived in.
pub type TypedValues = ByPrecision<Values>;

/// A precision JS typed arrays come in: `f32` (Float32Array) or `f64` (Float64Array). What is not JS
/// (wrapping, names) is [`Precision`]'s, written once in the core.
pub trait Element: LayerKernel + Precision {
    /// A fresh typed array of these values.
    fn array(values: &[Self]) -> JsValue;
}

macro_rules! element {
    ($t:ty, $array:ty) => {
        impl Element for $t {
            fn array(values: &[$t]) -> JsValue {
                <$array>::from(values).into()
            }
        }
    };
}

element!(f32, Float32Array);
element!(f64, Float64Array);

/// How a group of matrices arrived: `number[][]` (read as f64 `[T, C]`) or `{ data, shape }`.
/// A result goes back in the form of its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Rows,
    Typed,
}

/// A matrix of a known precision, and the form it came in.
#[derive(Clone, Debug, PartialEq)]
pub struct Typed<F> {
    pub values: Vec<F>,
    pub shape: Vec<usize>,
    pub form: Form,
}

impl<F: Element> Typed<F> {
    /// A result of shape `shape` in this matrix's form: `number[][]` for [`Form::Rows`] (always
    /// f64), `{ data, shape }` of this precision otherwise.
    pub fn write(&self, values: Vec<F>, shape: &[usize]) -> JsValue {
        write_in(self.form, F::wrap(values), shape)
    }
}

/// Values of shape `shape` in a form: nested `number[][]…` for [`Form::Rows`] (always f64),
/// `{ data, shape }` of their precision otherwise. Not generic: one body for f32 and f64.
pub fn write_in(form: Form, values: TypedValues, shape: &[usize]) -> JsValue {
    match (form, f64::get(&values)) {
        (Form::Rows, Some(rows)) => write_nested(rows, shape),
        _ => write_typed(&values, shape),
    }
}

impl<F: Element> Typed<F> {
    /// How `readCall` is told the input's form: 0 for `number[][]`, else its precision (32 or 64).
    pub fn kind(&self) -> u32 {
        match self.form {
            Form::Rows => 0,
            Form::Typed => 8 * std::mem::size_of::<F>() as u32,
        }
    }

    /// As a core matrix (`[T, C]`).
    pub fn matrix(self) -> Result<Matrix<F>> {
        let (rows, cols) = (self.view().rows, self.view().cols);
        Matrix::new(rows, cols, self.values)
    }
}

impl<F: Real> Typed<F> {
    /// The batch view: `[T, C]` is one item, `[B, T, C]` B items (the reader checked the length).
    pub fn view(&self) -> Batch<'_, F> {
        let n = self.shape.len();
        Batch::new(&self.values, if n == 3 { self.shape[0] } else { 1 }, self.shape[n - 2], self.shape[n - 1])
    }
}

/// Typed matrices read together (Q, K and V; query, key and value; X and W), all of one
/// precision: the precision is dispatched here, once, so a mismatch cannot be represented.
pub type SamePrecision<const N: usize> = ByPrecision<Group<N>>;

/// N [`Typed`] matrices as a [`Family`].
pub struct Group<const N: usize>;

impl<const N: usize> Family for Group<N> {
    type Of<F: Real> = [Typed<F>; N];
}

impl<const N: usize> ByPrecision<Group<N>> {
    /// The group, in the precision of its first matrix (the readers refused any other, `Like`).
    pub fn new(group: [TypedMatrix; N]) -> Result<Self> {
        let first = group[0].array_name();
        if group.iter().any(|m| m.array_name() != first) {
            return Err(AttentionError::State("a group was read in two precisions".into()));
        }
        // every matrix is in `first`'s precision, so `take` gives every one of them its values
        fn all<F: Element, const N: usize>(group: [TypedMatrix; N]) -> SamePrecision<N> {
            F::wrap(group.map(|m| Typed { values: F::take(m.values).unwrap_or_default(), shape: m.shape, form: Form::Typed }))
        }
        let in_first: fn([TypedMatrix; N]) -> SamePrecision<N> = crate::by_precision!(F in &group[0].values, _ => all::<F, N>);
        Ok(in_first(group))
    }

}

/// A `{ data, shape }` argument, checked: `shape` is `[T, C]` or `[B, T, C]` of positive
/// integers, `data.length` is their product and every value is finite.
#[derive(Clone, Debug, PartialEq)]
pub struct TypedMatrix {
    pub values: TypedValues,
    pub shape: Vec<usize>,
}

impl TypedMatrix {
    /// `"Float32Array"` or `"Float64Array"`, as messages name the precision.
    pub fn array_name(&self) -> &'static str {
        crate::by_precision!(F in &self.values, _ => F::ARRAY)
    }

    /// B for `[B, T, C]`, `None` for `[T, C]`.
    pub fn batch(&self) -> Option<usize> {
        (self.shape.len() == 3).then(|| self.shape[0])
    }

    /// `(T, C)`: the last two entries of the shape.
    pub fn rows_cols(&self) -> (usize, usize) {
        let n = self.shape.len();
        (self.shape[n - 2], self.shape[n - 1])
    }
}

/// Reads `{ data: Float32Array | Float64Array, shape }` whose shape is `[T, C]`, or also
/// `[B, T, C]` when `batches`: data of the wrong kind or a shape that is not an array → TypeError;
/// a shape of another rank, a length that does not match, NaN or ±Infinity → RangeError.
pub fn read_typed_matrix(value: &JsValue, name: &str, batches: bool) -> Result<TypedMatrix> {
    read_typed(value, name, batches, 0, None)
}

/// How a typed matrix must agree with a first one (`first`, called `name`; `group` names them all
/// in messages, "Q, K and V"): in form and precision, and with `same_rank` in rank and batch size B.
pub struct Like<'a> {
    pub name: &'a str,
    pub first: &'a TypedMatrix,
    pub group: &'a str,
    pub same_rank: bool,
}

/// [`read_typed_matrix`], beside `like` and with `cols` columns when not 0 (`readTypedMatrix` checks both).
pub fn read_typed(value: &JsValue, name: &str, batches: bool, cols: usize, like: Option<Like>) -> Result<TypedMatrix> {
    let mut out = [0u32; 5]; // [rank, 32 | 64, ...shape]
    let (like_name, kind, shape, group, same_rank) = match &like {
        Some(l) => (l.name, if l.first.array_name() == f32::ARRAY { 32 } else { 64 }, l.first.shape.iter().map(|&n| n as u32).collect(), l.group, l.same_rank),
        None => ("", 0, Vec::new(), "", false),
    };
    let data = refused(read_typed_matrix_js(value, name, batches, MAX_MATRIX_VALUES, &mut out, cols as u32, like_name, kind, &shape, group, same_rank))?;
    let rank = (out[0] as usize).clamp(2, 3);
    let shape: Vec<usize> = out[2..2 + rank].iter().map(|&n| n as usize).collect();
    let values = if out[1] == 32 {
        f32::wrap(typed_to_vec(&data.unchecked_into::<Float32Array>()))
    } else {
        f64::wrap(typed_to_vec(&data.unchecked_into::<Float64Array>()))
    };
    Ok(TypedMatrix { values, shape })
}

/// A fresh `{ data: Float32Array, shape }` (or Float64Array) for JS.
pub fn write_typed(values: &TypedValues, shape: &[usize]) -> JsValue {
    let object = Object::new();
    let data = crate::by_precision!(values, v => Element::array(v));
    let shape: Array = shape.iter().map(|&n| JsValue::from(n as u32)).collect();
    // setting own data properties on a fresh plain object cannot throw
    let _ = Reflect::set(&object, &JsValue::from_str("data"), &data);
    let _ = Reflect::set(&object, &JsValue::from_str("shape"), &shape);
    object.into()
}

/// A `number[][]` `[T, C]` or a batch `number[][][]` `[B, T, C]`, read once at the edge (by
/// `readBatch`, each matrix as [`read_matrix`] reads it): every item may have its own shape until the
/// core's `check_items` has checked them, so the shapes come with the values.
#[derive(Clone)]
pub struct Items {
    pub values: Vec<f64>,
    /// `(rows, cols)` of each item.
    pub shapes: Vec<(usize, usize)>,
    pub batched: bool,
}

/// Reads [`Items`]; an unbatched matrix is a batch of one. Items are named `name[b]` in messages. With
/// `like` 0 or 1 it must be batched as `like_name` is (1: a batch); with `like` 2 it must be one matrix.
pub fn read_items(value: &JsValue, name: &str, like: i32, like_name: &str) -> Result<Items> {
    let parts: Array = refused(read_batch_js(value, name, MAX_MATRIX_VALUES, like, like_name))?.unchecked_into();
    let (values, shapes): (Float64Array, js_sys::Uint32Array) = (parts.get(0).unchecked_into(), parts.get(1).unchecked_into());
    let shapes = typed_to_vec(&shapes);
    let first = (shapes.get(1).copied().unwrap_or(0), shapes.get(2).copied().unwrap_or(0));
    let data = copy_in(values.length(), name, first, |out| copy_exact(&values, out))?;
    Ok(Items { values: data, shapes: shapes[1..].chunks(2).map(|s| (s[0] as usize, s[1] as usize)).collect(), batched: shapes[0] == 1 })
}

/// Row-major values as fresh nested arrays of `shape` (`[rows, cols]` is a `number[][]`).
pub fn write_nested(data: &[f64], shape: &[usize]) -> JsValue {
    match shape {
        [.., cols] if shape.len() <= 2 => write_number_rows(data, (*cols).max(1) as u32),
        _ => write_nested_js(data, &shape.iter().map(|&n| n as u32).collect::<Vec<_>>()),
    }
}
