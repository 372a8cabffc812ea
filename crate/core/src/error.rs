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
    #[error(transparent)]
    UnknownName(#[from] UnknownName),
}

/// A name that is none of an enum's spellings (see [`crate::named_enum`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} must be one of {}, not `{found}`", names.join(", "))]
pub struct UnknownName {
    pub what: &'static str,
    pub names: &'static [&'static str],
    pub found: String,
}

/// An enum with one spelling per variant, parsed (`FromStr`, serde) and displayed as that spelling:
/// the one definition of a choice that CLI flags, JSON and JavaScript strings all use.
#[macro_export]
macro_rules! named_enum {
    ($(#[$m:meta])* pub enum $name:ident, $what:literal { $($(#[$vm:meta])* $v:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, ::serde::Serialize, ::serde::Deserialize)]
        pub enum $name { $($(#[$vm])* #[serde(rename = $s)] $v),+ }

        impl $name {
            /// Every spelling, in order (a CLI's possible values, a page's options).
            pub const NAMES: &'static [&'static str] = &[$($s),+];
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$v => $s),+ }
            }
        }
        impl ::std::str::FromStr for $name {
            type Err = $crate::error::UnknownName;
            fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                match s {
                    $($s => Ok(Self::$v),)+
                    _ => Err($crate::error::UnknownName { what: $what, names: Self::NAMES, found: s.to_string() }),
                }
            }
        }
        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Shorthand for `Err(Error::Invalid(format!(...)))`.
macro_rules! invalid {
    ($($arg:tt)*) => { Err($crate::error::Error::Invalid(format!($($arg)*))) };
}
pub(crate) use invalid;
