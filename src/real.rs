//! The scalar types the core computes in: `f64` (JS numbers) and `f32` (Float32Array input).

use std::fmt::{Debug, Display};
use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub};

/// A floating-point scalar. Only what attention needs, so `f32` and `f64` share one code path.
pub trait Real:
    Copy
    + Default
    + Debug
    + Display
    + PartialOrd
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
{
    const ZERO: Self;
    const ONE: Self;
    const NEG_INFINITY: Self;
    /// The largest finite value.
    const MAX: Self;
    /// The largest finite value, as messages say it: "f64 (about 1.8e308)".
    const LARGEST: &'static str;
    /// `e^self`: for f64 the library's, for f32 [`crate::kernels::exp_f32`] (within about 2 ulp).
    fn exp(self) -> Self;
    fn sqrt(self) -> Self;
    fn is_finite(self) -> bool;
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
    fn from_usize(n: usize) -> Self;
}

macro_rules! impl_real {
    ($t:ty, $largest:expr, $exp:expr) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const NEG_INFINITY: Self = <$t>::NEG_INFINITY;
            const MAX: Self = <$t>::MAX;
            const LARGEST: &'static str = $largest;
            #[inline]
            fn exp(self) -> Self {
                $exp(self)
            }
            #[inline]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn from_usize(n: usize) -> Self {
                n as $t
            }
        }
    };
}

// f32: the kernels' branch-free exp (about 2 ulp; loops over it vectorise), f64: the library's
impl_real!(f32, "f32 (about 3.4e38)", crate::kernels::exp_f32);
impl_real!(f64, "f64 (about 1.8e308)", f64::exp);
