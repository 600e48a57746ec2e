//! The one error type of the core. Each variant says which JS error class the
//! boundary turns it into; the message is complete on its own.

use std::fmt;

/// Everything that can go wrong in attention-lab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttentionError {
    /// A value of the wrong kind: not an array, not a number, a bad option (JS `TypeError`).
    Type(String),
    /// A value of the right kind but an unusable size or content (JS `RangeError`).
    Range(String),
    /// A call made in the wrong order, e.g. `backward` before `forward` (JS `Error`).
    State(String),
}

/// Result alias used throughout the core.
pub type Result<T> = std::result::Result<T, AttentionError>;

impl AttentionError {
    /// Shorthand for a [`AttentionError::Type`] error.
    pub fn type_error(message: impl Into<String>) -> Self {
        Self::Type(message.into())
    }

    /// Shorthand for a [`AttentionError::Range`] error.
    pub fn range_error(message: impl Into<String>) -> Self {
        Self::Range(message.into())
    }

    /// The message without the error class.
    pub fn message(&self) -> &str {
        match self {
            Self::Type(m) | Self::Range(m) | Self::State(m) => m,
        }
    }
}

impl fmt::Display for AttentionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let class = match self {
            Self::Type(_) => "TypeError",
            Self::Range(_) => "RangeError",
            Self::State(_) => "Error",
        };
        write!(f, "{class}: {}", self.message())
    }
}

impl std::error::Error for AttentionError {}

/// `rows×cols`, the way every message writes a shape.
pub fn shape_text(rows: usize, cols: usize) -> String {
    format!("{rows}×{cols}")
}

/// A number for a message. Natively Rust's own `{}`. On wasm32 the float formatter of `core::fmt`
/// (about 18 KB of the module) is avoided: non-finite values are named the JS way, integers are
/// printed exactly, and any other value as its exact binary value to 20 decimal places with
/// trailing zeros dropped (`1.5`, `-0.25`; `1.1` prints as `1.10000000000000008882`). The JS
/// boundary checks user numbers itself and prints them with JS's `Number#toString`, so these
/// messages are only reached by Rust callers.
pub fn number_text(x: f64) -> String {
    #[cfg(not(target_arch = "wasm32"))]
    {
        format!("{x}")
    }
    #[cfg(target_arch = "wasm32")]
    {
        compact_number_text(x)
    }
}

/// A `u128` in decimal for a message (the memory counts of `limits.rs`). Natively Rust's own
/// `{}`; on wasm32 [`push_digits`], which `number_text` needs anyway, instead of `core::fmt`'s `u128`
/// formatter (1.4 KB of the module).
pub fn integer_text(n: u128) -> String {
    #[cfg(not(target_arch = "wasm32"))]
    {
        n.to_string()
    }
    #[cfg(target_arch = "wasm32")]
    {
        let mut text = String::new();
        push_digits(&mut text, n, 1);
        text
    }
}

#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
fn compact_number_text(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let mut text = String::new();
    if x.is_sign_negative() && x != 0.0 {
        text.push('-');
    }
    let magnitude = x.abs();
    if magnitude.fract() == 0.0 && magnitude < 1e38 {
        push_digits(&mut text, magnitude as u128, 1);
        return text;
    }
    // x = mantissa · 2^exponent exactly; 20 decimals of it, rounded half up, when that fits in u128
    let bits = magnitude.to_bits();
    let (raw_exponent, fraction) = ((bits >> 52) as i32, bits & ((1 << 52) - 1));
    if magnitude >= 1e38 {
        // an integer too long for u128: name its power of two (2^e ≤ magnitude < 2^(e+1))
        text.push_str("(a number with magnitude at least 2^");
        push_digits(&mut text, (raw_exponent - 1023) as u128, 1);
        text.push(')');
        return text;
    }
    let (mantissa, exponent) = if raw_exponent == 0 { (fraction, -1074) } else { (fraction | (1 << 52), raw_exponent - 1075) };
    let shift = (-exponent) as u32; // > 0: magnitude has a fraction
    if shift > 127 - 67 {
        // the product would not fit: name the scale instead
        text.push_str("(a number with magnitude below 2^-");
        push_digits(&mut text, shift.saturating_sub(53) as u128, 1);
        text.push(')');
        return text;
    }
    let scaled = mantissa as u128 * 10u128.pow(20); // < 2^53 · 2^67
    let rounded = (scaled + (1u128 << (shift - 1))) >> shift;
    let one = 10u128.pow(20);
    push_digits(&mut text, rounded / one, 1);
    let (mut decimals, mut width) = (rounded % one, 20);
    if decimals != 0 {
        while decimals % 10 == 0 {
            decimals /= 10;
            width -= 1;
        }
        text.push('.');
        push_digits(&mut text, decimals, width);
    }
    text
}

/// Appends `n` in decimal, padded with leading zeros to `width` digits (no `core::fmt`: on wasm32
/// its integer formatting and string slicing would add kilobytes for the messages that need this).
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
fn push_digits(text: &mut String, mut n: u128, width: usize) {
    let mut digits = Vec::new(); // least significant first
    while n > 0 || digits.len() < width {
        digits.push(char::from(b'0' + (n % 10) as u8));
        n /= 10;
    }
    text.extend(digits.iter().rev());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_number_text_is_exact() {
        for (x, want) in [(1.0, "1"), (-3.0, "-3"), (1.5, "1.5"), (-0.25, "-0.25"), (0.0, "0"), (1e21, "1000000000000000000000")] {
            assert_eq!(compact_number_text(x), want);
        }
        assert_eq!(compact_number_text(1.1), "1.10000000000000008882");
        assert_eq!(compact_number_text(f64::NAN), "NaN");
        assert_eq!(compact_number_text(f64::NEG_INFINITY), "-Infinity");
        assert!(compact_number_text(1e-300).starts_with("(a number with magnitude below 2^-"));
        // integers too long for u128 name their power of two (they printed "below 2^-…" before)
        assert_eq!(compact_number_text(1e38), "(a number with magnitude at least 2^126)");
        assert_eq!(compact_number_text(-f64::MAX), "-(a number with magnitude at least 2^1023)");
        assert_eq!(compact_number_text(2f64.powi(200)), "(a number with magnitude at least 2^200)");
        // leading zeros of the decimals are kept, trailing ones dropped
        assert_eq!(compact_number_text(1.0 + 2f64.powi(-10)), "1.0009765625");
        assert_eq!(compact_number_text(-0.0), "0");
        assert_eq!(compact_number_text(2f64.powi(-8)), "0.00390625");
    }

    #[test]
    fn push_digits_writes_any_u128() {
        for n in [0u128, 7, 10, 134_217_729, u128::MAX] {
            let mut text = String::new();
            push_digits(&mut text, n, 1);
            assert_eq!(text, n.to_string());
            assert_eq!(integer_text(n), n.to_string());
        }
    }
}
