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
//! - [`load`]: putting it together from a file or bytes.

#![allow(clippy::needless_range_loop)] // numeric kernels index several arrays in step

pub mod backend;
pub mod chat;
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
    #[error("backend: {0}")]
    Backend(String),
    #[error("I/O: {0}")]
    Io(String),
}
