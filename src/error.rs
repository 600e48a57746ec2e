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
