//! The compute backends behind one trait: the model ([`crate::model`]) is written once against
//! [`Backend`], and runs on the CPU ([`cpu`]) or on WebGPU ([`crate::backend`]'s `webgpu` module).
//!
//! Activations are row-major `[rows, cols]` f32 matrices (`rows` = tokens). Weight matrices are
//! `[n_out, n_in]` in GGUF's layout and stay quantized on the backend.

pub mod adapter;
pub mod cpu;
pub mod optimes;
pub mod policy;
#[cfg(feature = "webgpu")]
pub mod webgpu;

use crate::gguf::TensorInfo;
use crate::EngineError;

/// The activation of a gated feed-forward block (`act(gate) * up`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    Silu,
    /// GELU, tanh approximation (Gemma's `gelu_pytorch_tanh`).
    GeluTanh,
}

/// How rotary position embedding turns positions into angles: pair `i` of a `head_dim` group at
/// position `pos` turns by `pos / scale · base^(-2i/head_dim) / freq_factors[i]`. Both backends take
/// their cos/sin tables from [`Rope::table`], so they rotate by identical angles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rope<'a> {
    pub base: f32,
    /// Linear position scaling (positions are divided by it).
    pub scale: f32,
    /// NeoX layout (rotate the two halves of a head) instead of interleaved pairs.
    pub neox: bool,
    /// Per-pair frequency divisors, `head_dim / 2` of them (llama.cpp's `rope_freqs.weight`, Llama
    /// 3.1 / 3.2 long-context scaling).
    pub freq_factors: Option<&'a [f32]>,
}

/// Which keys a query row may attend to, besides the cached prefix (which every query sees, subject
/// to the sliding window): new keys of the same segment at positions up to its own.
#[derive(Debug, Clone)]
pub struct AttnLayout {
    /// Position of each new row (token) in the sequence.
    pub positions: Vec<u32>,
    /// Segment of each new row: one for a prefix chunk, one per checklist item for suffixes.
    pub segments: Vec<u32>,
    /// The rows that are queries (all rows except in a pruned last layer).
    pub query_rows: Vec<usize>,
}

/// Per-layer attention parameters.
#[derive(Debug, Clone, Copy)]
pub struct AttnParams {
    pub n_head: usize,
    pub n_head_kv: usize,
    pub head_dim: usize,
    pub scale: f32,
    /// Scale Q before the product (Gemma) instead of the scores after it (llama.cpp's graphs differ).
    pub scale_q_first: bool,
    pub softcap: Option<f32>,
    pub window: Option<usize>,
}

/// The compute operations a model runs on.
///
/// **Misuse** (shapes that do not fit together, a vector where a matrix belongs, RoPE factors of the
/// wrong length) is a bug in the caller, but never a panic, on either backend: the shapes are checked
/// by the shared [`policy`] functions, an infallible op that finds a misuse records the first one and
/// returns a tensor of the expected shape with unspecified contents, and the next fallible call
/// (`load`, `new_cache`, `embed`, `append_cache`, `logits`) returns it as [`EngineError::Backend`]
/// ("backend misuse: …"). Bad input data (token ids outside the vocabulary, a full KV cache, a
/// tensor of the wrong size) is an error of the call that sees it.
pub trait Backend {
    /// Activations `[rows, cols]`.
    type Tensor;
    /// A weight matrix `[n_out, n_in]` (quantized) or vector.
    type Weight;
    /// One layer's cached keys and values of the shared prefix.
    type Cache;

    /// Run `f` (a forward pass) where this backend's operations start fastest. The CPU backend runs
    /// it on a thread of its pool: from outside the pool, every operation's parallel part would be
    /// a crossing of threads and back (~11 µs each on a 2-core VM, ~360 operations to a decoded
    /// token of the 0.5B); from inside, the other threads take their share from the caller's
    /// queue. Others run `f` here.
    ///
    /// # Safety
    /// `f` may run on another thread while the calling thread waits for it: it must not hold
    /// anything tied to the calling thread (a lock's guard it drops, a thread-local).
    unsafe fn enter<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R
    where
        Self: Sized,
    {
        f(self)
    }

    /// Short description for logs and results ("cpu (2 threads)", "webgpu: NVIDIA H100").
    fn describe(&self) -> String;

    /// Time every operation from now on, where this backend can ([`optimes`]; the CPU does);
    /// `None` where it cannot.
    fn time_ops(&mut self) -> Option<std::sync::Arc<optimes::OpTimes>> {
        None
    }

    /// As [`Backend::time_ops`], and each operation's parallel steps beside its time
    /// ([`optimes::Split`]: its tasks' work, its busiest worker), where this backend can (the CPU
    /// does). `split_as` (a backend on one thread only): the work split as for that many threads,
    /// every task run on the one, their times replayed on that many workers.
    fn time_splits(&mut self, split_as: Option<usize>) -> Result<std::sync::Arc<optimes::OpTimes>, String> {
        let _ = split_as;
        Err(format!("{} does not time its parallel steps; the CPU backend does", self.describe()))
    }

    /// Upload one tensor from its GGUF bytes.
    fn load(&mut self, info: &TensorInfo, bytes: &[u8]) -> Result<Self::Weight, EngineError>;

    /// Upload the embedding table, whose rows [`Backend::embed`] looks up; where `head`, it is also
    /// the output head (tied embeddings) and multiplied as [`Backend::load`]'s weights are. As
    /// [`Backend::load`] unless the backend keeps something else for lookups.
    fn load_table(&mut self, info: &TensorInfo, bytes: &[u8], head: bool) -> Result<Self::Weight, EngineError> {
        let _ = head;
        self.load(info, bytes)
    }

    /// An empty cache for `capacity` tokens of `kv_dim` keys and values.
    fn new_cache(&mut self, capacity: usize, kv_dim: usize) -> Result<Self::Cache, EngineError>;
    /// Forget everything after the first `len` cached tokens.
    fn truncate_cache(&mut self, cache: &mut Self::Cache, len: usize);

    /// Rows of the embedding table for `tokens`, times `scale`.
    fn embed(&mut self, table: &Self::Weight, tokens: &[u32], scale: f32) -> Result<Self::Tensor, EngineError>;
    /// RMSNorm over each row (`head_dim`-sized groups when `group` is given: per-head Q/K norm).
    fn rms_norm(&mut self, x: &Self::Tensor, w: &Self::Weight, eps: f32, group: Option<usize>) -> Self::Tensor;
    /// `x · Wᵀ (+ bias)`.
    fn matmul(&mut self, x: &Self::Tensor, w: &Self::Weight, bias: Option<&Self::Weight>) -> Self::Tensor;
    /// [`Backend::matmul`] of the same `x` with each weight (and bias): Q, K and V, or the FFN's
    /// gate and up. A backend may prepare `x` once for all of them (the CPU rounds it to 8 bits
    /// once per rounding the weights need).
    fn matmuls<const N: usize>(&mut self, x: &Self::Tensor, ws: [(&Self::Weight, Option<&Self::Weight>); N]) -> [Self::Tensor; N] {
        ws.map(|(w, bias)| self.matmul(x, w, bias))
    }
    /// Rotary position embedding applied in place to each `head_dim` group of each row.
    fn rope(&mut self, x: &mut Self::Tensor, positions: &[u32], head_dim: usize, rope: &Rope);
    /// `x + y`.
    fn add(&mut self, x: &Self::Tensor, y: &Self::Tensor) -> Self::Tensor;
    /// `act(gate) * up`, written over `up` where the backend can (the FFN's largest activation:
    /// a new one would be as many values to allocate and write).
    fn gated_activation(&mut self, gate: &Self::Tensor, up: Self::Tensor, act: Activation) -> Self::Tensor;
    /// The given rows of `x`.
    fn select_rows(&mut self, x: &Self::Tensor, rows: &[usize]) -> Self::Tensor;
    /// Append keys and values (one row per token) to the cache.
    fn append_cache(&mut self, cache: &mut Self::Cache, k: &Self::Tensor, v: &Self::Tensor) -> Result<(), EngineError>;
    /// Attention of the query rows `q` over the cached prefix and the new keys `k`/`v` (all new rows),
    /// masked by `layout`. Returns one row per query.
    fn attention(
        &mut self,
        q: &Self::Tensor,
        k: &Self::Tensor,
        v: &Self::Tensor,
        cache: &Self::Cache,
        layout: &AttnLayout,
        p: &AttnParams,
    ) -> Self::Tensor;
    /// Wait until all submitted work has finished (for timing; a no-op on the CPU).
    fn sync(&mut self) {}
    /// Logits of the given vocabulary rows for each row of `x`: the only read-back of a forward. A
    /// future, because on WebGPU in a browser the read-back can only be awaited, never blocked on.
    fn logits(
        &mut self,
        x: &Self::Tensor,
        head: &Self::Weight,
        ids: &[u32],
        softcap: Option<f32>,
    ) -> impl std::future::Future<Output = Result<Vec<Vec<f32>>, EngineError>>;
}
