//! # rocketjudge-engine
//!
//! Runs a GGUF judge model and grades checklist items: everything between a prompt and a p(Yes).
//!
//! - [`gguf`]: a hardened GGUF reader (header from a byte prefix, tensors by offset).
//! - [`quant`]: ggml block formats → f32.
//! - [`tokenizer`], [`chat`]: token ids identical to llama.cpp's, chat templates with minijinja.
//! - [`model`]: one transformer for llama / qwen2 / gemma2 / gemma3, generic over [`backend::Backend`].
//! - [`backend`]: CPU (f32 GEMM over dequantized panels, rayon) and WebGPU (wgpu + WGSL).
//! - [`judge`]: prefix-shared, all-items-in-one-pass grading; p(Yes) = σ(logit_yes − logit_no).
//! - [`generate`]: text generation (greedy or sampled) on top of the same model and KV cache.
//! - [`designs`]: two responses compared in both orders, Direct scores, with the checklist always,
//!   never or selectively (seeds 001–004): the records every front-end writes.
//! - [`load`]: putting it together from a file or a header and a tensor source.
//! - [`device`]: which backend a judge runs on (`auto`, `cpu`, `webgpu`), one loader for every front-end.

#![allow(clippy::needless_range_loop)] // numeric kernels index several arrays in step

pub mod backend;
pub mod chat;
pub mod designs;
pub mod device;
pub mod generate;
pub mod gguf;
pub mod judge;
pub mod load;
pub mod model;
pub mod quant;
pub mod tokenizer;

/// Errors of the engine. Every one is a value; nothing in the engine panics on a model file or input.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Gguf(#[from] gguf::GgufError),
    /// The model file is well-formed GGUF but not a usable judge (missing tensors, bad shapes).
    #[error("model: {0}")]
    Model(String),
    /// The model uses something we do not implement (an architecture, a quantization, a tokenizer).
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    #[error("chat template: {0}")]
    Template(String),
    /// The input cannot be graded (no checklist, a prompt longer than the context).
    #[error("{0}")]
    Input(String),
    /// The device failed or refused (a lost GPU, out of memory, a model over the device's limits).
    #[error("backend: {0}")]
    Backend(String),
    /// A backend this build or this machine does not have.
    #[error("{0}")]
    Unavailable(String),
    #[error("I/O: {0}")]
    Io(String),
}

/// What kind of error an [`EngineError`] is, for callers that act on it (the browser worker falls back
/// to the CPU on `backend`, reads more of the file on `header-incomplete`) instead of matching text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// The GGUF header needs more bytes than were given.
    HeaderIncomplete,
    /// The model file is malformed or not a usable judge.
    Model,
    Unsupported,
    /// The input cannot be graded (or an option is invalid).
    Input,
    Backend,
    Unavailable,
    Io,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::HeaderIncomplete => "header-incomplete",
            ErrorKind::Model => "model",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Input => "input",
            ErrorKind::Backend => "backend",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Io => "io",
        }
    }
}

impl From<rocketjudge_core::error::UnknownName> for EngineError {
    fn from(e: rocketjudge_core::error::UnknownName) -> Self {
        EngineError::Input(e.to_string())
    }
}

impl EngineError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            EngineError::Gguf(gguf::GgufError::NeedMore(_)) => ErrorKind::HeaderIncomplete,
            EngineError::Gguf(_) | EngineError::Model(_) | EngineError::Tokenizer(_) | EngineError::Template(_) => ErrorKind::Model,
            EngineError::Unsupported(_) => ErrorKind::Unsupported,
            EngineError::Input(_) => ErrorKind::Input,
            EngineError::Backend(_) => ErrorKind::Backend,
            EngineError::Unavailable(_) => ErrorKind::Unavailable,
            EngineError::Io(_) => ErrorKind::Io,
        }
    }
}
