//! Typed errors. Every error that comes from user data names where it came from: the file, the line
//! (1-based) and the field, and says what was expected.

use std::fmt;

/// An input record that could not be used: where it is and what was wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// The file (or upload) name as the user gave it.
    pub file: String,
    /// 1-based line number for JSONL, 0 when the problem concerns the whole file.
    pub line: usize,
    /// The field path inside the record (`checklist[3]`, `output`), empty when it is the record itself.
    pub field: String,
    /// What was expected and what was found.
    pub message: String,
}

impl FormatError {
    pub fn new(file: &str, line: usize, field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { file: file.to_string(), line, field: field.into(), message: message.into() }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        if !self.field.is_empty() {
            write!(f, ": field `{}`", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for FormatError {}

/// Errors of the core library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The inputs are well-formed but cannot be used together (too few models, no comparisons, ...).
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Shorthand for `Err(Error::Invalid(format!(...)))`.
macro_rules! invalid {
    ($($arg:tt)*) => { Err($crate::error::Error::Invalid(format!($($arg)*))) };
}
pub(crate) use invalid;
