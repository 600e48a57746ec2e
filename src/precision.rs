//! The per-precision plumbing, written once, as candle's `with_dtype!` writes its storage's: a value held
//! in whichever precision it was computed in is one [`ByPrecision`] (the layer's kept forward, its
//! gradients, a KV cache's keys, a typed array's values, a group of typed arguments, a model), and
//! [`Precision`], implemented for `f64` and `f32` by one macro, is how generic code puts a value of its
//! own precision in and takes it out. [`by_precision!`](crate::by_precision) is the one match that runs a
//! body written once in the value's precision (candle's `Map2`); the only other code that matches the
//! variants is the layer's `lend` and `reclaim`, which put a model's parameters, lent for one call,
//! where each precision's products read them.
//!
//! A new part written over the precision (a model part, a kept value) needs a [`Family`] naming its
//! type ([`by_precision_type!`](crate::by_precision_type) declares both), and nothing per precision.

use crate::real::Real;

/// A type written once over the precision: `Of<f64>` and `Of<f32>` are what a [`ByPrecision`] holds.
pub trait Family {
    type Of<F: Real>;
}

/// Declares `$alias`, a [`ByPrecision`] of `$of` (written over `F`), and `$family`, the [`Family`]
/// that names `$of`: `by_precision_type!(/// docs \n pub Kept = KeptIn: ForwardCache<F>;)`.
#[macro_export]
macro_rules! by_precision_type {
    ($(#[$doc:meta])* $vis:vis $alias:ident = $family:ident: $of:ty;) => {
        $(#[$doc])*
        $vis type $alias = $crate::precision::ByPrecision<$family>;

        #[doc = concat!("`", stringify!($of), "` as a [`Family`](crate::precision::Family), for `", stringify!($alias), "`.")]
        $vis struct $family;

        impl $crate::precision::Family for $family {
            type Of<F: $crate::real::Real> = $of;
        }
    };
}

/// A value in one of the two precisions.
pub enum ByPrecision<K: Family> {
    F64(K::Of<f64>),
    F32(K::Of<f32>),
}

impl<K: Family> Clone for ByPrecision<K>
where
    K::Of<f64>: Clone,
    K::Of<f32>: Clone,
{
    fn clone(&self) -> Self {
        crate::by_precision!(F in self, value => F::wrap(value.clone()))
    }
}

impl<K: Family> std::fmt::Debug for ByPrecision<K>
where
    K::Of<f64>: std::fmt::Debug,
    K::Of<f32>: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        crate::by_precision!(F in self, value => f.debug_tuple(F::DTYPE).field(value).finish())
    }
}

impl<K: Family> PartialEq for ByPrecision<K>
where
    K::Of<f64>: PartialEq,
    K::Of<f32>: PartialEq,
{
    fn eq(&self, other: &Self) -> bool {
        crate::by_precision!(F in self, value => F::get(other).is_some_and(|o| o == value))
    }
}

impl<K: Family> ByPrecision<K> {
    /// `"float64"` or `"float32"`.
    pub fn dtype(&self) -> &'static str {
        crate::by_precision!(F in self, _value => F::DTYPE)
    }
}

/// Values flattened row-major: a typed array's contents, in its precision.
pub struct Values;

impl Family for Values {
    type Of<F: Real> = Vec<F>;
}

/// A precision without a value: what a caller asked for (`dtype: "float32"`), dispatched like any
/// [`ByPrecision`] (`by_precision!(F in dtype, _ => …)`).
pub type Dtype = ByPrecision<Nothing>;

/// No value, in either precision.
pub struct Nothing;

impl Family for Nothing {
    type Of<F: Real> = ();
}

impl Dtype {
    /// `"float64"` or `"float32"` as a [`Dtype`]; `None` for anything else.
    pub fn parse(name: &str) -> Option<Self> {
        [f64::wrap(()), f32::wrap(())].into_iter().find(|dtype: &Self| dtype.dtype() == name)
    }
}

/// What a precision is besides its arithmetic: how a [`ByPrecision`] holds it, and how messages and the
/// JS side name it. Implemented for `f64` and `f32` by one macro.
pub trait Precision: Real {
    /// The JS dtype name: `"float64"` or `"float32"`.
    const DTYPE: &'static str;
    /// The JS typed array of this precision, as messages name it.
    const ARRAY: &'static str;
    /// The JS input of this precision, and of the other one, as the layer's messages name them.
    const INPUT: &'static str;
    const OTHER_INPUT: &'static str;
    /// How overflow messages name the precision after "overflows to Infinity" (`" in f32"`), and what
    /// they advise besides scaling down.
    const IN_PRECISION: &'static str;
    const ADVICE: &'static str;
    /// Whether the layer's forward in evaluation mode keeps what `backward` needs. f64 does (its
    /// contract: `backward` after any forward); f32's evaluation keeps nothing (its memory is O(T·C)).
    const EVALUATION_KEEPS: bool;

    /// `value`, tagged with this precision.
    fn wrap<K: Family>(value: K::Of<Self>) -> ByPrecision<K>;
    /// The value if it is in this precision.
    fn get<K: Family>(value: &ByPrecision<K>) -> Option<&K::Of<Self>>;
    fn get_mut<K: Family>(value: &mut ByPrecision<K>) -> Option<&mut K::Of<Self>>;
    fn take<K: Family>(value: ByPrecision<K>) -> Option<K::Of<Self>>;
}

/// Runs `$body` with `$x` bound to the value of a `ByPrecision` (or a reference to one) in its
/// precision: the body is written once and compiled once per precision. With `F in value`, `F` names
/// the precision inside the body (`F::DTYPE`, `F::wrap(…)`).
#[macro_export]
macro_rules! by_precision {
    ($f:ident in $value:expr, $x:pat => $body:expr) => {
        match $value {
            $crate::precision::ByPrecision::F64($x) => {
                #[allow(dead_code)]
                type $f = f64;
                $body
            }
            $crate::precision::ByPrecision::F32($x) => {
                #[allow(dead_code)]
                type $f = f32;
                $body
            }
        }
    };
    ($value:expr, $x:pat => $body:expr) => {
        $crate::by_precision!(_F in $value, $x => $body)
    };
}

macro_rules! with_precision {
    ($t:ty, $variant:ident, $dtype:expr, $array:expr, $input:expr, $other:expr, $in_precision:expr, $advice:expr, $keeps:expr) => {
        impl Precision for $t {
            const DTYPE: &'static str = $dtype;
            const ARRAY: &'static str = $array;
            const INPUT: &'static str = $input;
            const OTHER_INPUT: &'static str = $other;
            const IN_PRECISION: &'static str = $in_precision;
            const ADVICE: &'static str = $advice;
            const EVALUATION_KEEPS: bool = $keeps;

            fn wrap<K: Family>(value: K::Of<Self>) -> ByPrecision<K> {
                ByPrecision::$variant(value)
            }

            fn get<K: Family>(value: &ByPrecision<K>) -> Option<&K::Of<Self>> {
                if let ByPrecision::$variant(v) = value { Some(v) } else { None }
            }

            fn get_mut<K: Family>(value: &mut ByPrecision<K>) -> Option<&mut K::Of<Self>> {
                if let ByPrecision::$variant(v) = value { Some(v) } else { None }
            }

            fn take<K: Family>(value: ByPrecision<K>) -> Option<K::Of<Self>> {
                if let ByPrecision::$variant(v) = value { Some(v) } else { None }
            }
        }
    };
}

with_precision!(f64, F64, "float64", "Float64Array", "number[][] or Float64Array", "Float32Array", "", "", true);
with_precision!(f32, F32, "float32", "Float32Array", "Float32Array", "number[][] or Float64Array", " in f32", ", or train with Float64Array", false);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_comes_back_only_in_its_own_precision() {
        let wide: ByPrecision<Values> = f64::wrap(vec![1.5, 2.0]);
        let narrow: ByPrecision<Values> = f32::wrap(vec![1.5f32]);
        assert_eq!(f64::get(&wide), Some(&vec![1.5, 2.0]));
        assert_eq!(f32::get(&wide), None);
        assert_eq!(f32::take(narrow.clone()), Some(vec![1.5f32]));
        assert_eq!(f64::take(narrow.clone()), None);
        assert_eq!((wide.dtype(), narrow.dtype()), ("float64", "float32"));
        assert_ne!(wide, f64::wrap(vec![1.5]));
        assert_ne!(narrow, f64::wrap(vec![1.5]));
        assert_eq!(by_precision!(&wide, v => v.len()), 2);
    }
}
