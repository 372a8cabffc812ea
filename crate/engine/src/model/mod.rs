//! One transformer implementation for every supported family, written against [`Backend`].
//!
//! The forward pass takes new tokens with their positions and segments, attends to the cached
//! prefix plus the new tokens (segment-masked), optionally stores their keys and values, and — when
//! only some rows are read — computes the last layer for those rows only.

pub mod config;

use crate::backend::{AttnLayout, AttnParams, Backend, Rope};
use crate::gguf::{Gguf, TensorInfo};
use crate::quant::GgmlType;
use crate::EngineError;
use config::{Arch, Config};

/// Where tensor bytes come from: a file, an HTTP stream, a browser Blob. Asynchronous, because in a
/// browser a tensor's bytes are read from a `Blob` slice with a promise; one tensor is in memory at a
/// time.
pub trait TensorSource {
    fn read(&mut self, info: &TensorInfo) -> impl std::future::Future<Output = Result<Vec<u8>, EngineError>>;
}

pub struct Layer<W> {
    attn_norm: W,
    wq: W,
    wk: W,
    wv: W,
    wo: W,
    bq: Option<W>,
    bk: Option<W>,
    bv: Option<W>,
    q_norm: Option<W>,
    k_norm: Option<W>,
    post_attn_norm: Option<W>,
    ffn_norm: W,
    gate: W,
    up: W,
    down: W,
    post_ffn_norm: Option<W>,
}

pub struct Model<B: Backend> {
    pub config: Config,
    embed: B::Weight,
    /// The output head; `None` when tied to the embeddings.
    output: Option<B::Weight>,
    output_norm: B::Weight,
    /// RoPE frequency divisors per pair of head dimensions (Llama 3.1+: `rope_freqs.weight`).
    rope_factors: Option<Vec<f32>>,
    layers: Vec<Layer<B::Weight>>,
}

/// Progress callback while loading: (bytes loaded, total bytes).
pub type LoadProgress<'a> = &'a mut dyn FnMut(u64, u64);

impl<B: Backend> Model<B> {
    /// Load every tensor the architecture needs, one at a time (peak extra memory: one tensor).
    pub async fn load(b: &mut B, g: &Gguf, src: &mut impl TensorSource, progress: LoadProgress<'_>) -> Result<Self, EngineError> {
        let config = Config::from_gguf(g)?;
        let total: u64 = g.tensors.iter().map(|t| t.n_bytes).sum();
        let mut done = 0u64;
        let mut loader = Loader { b, g, src, progress, total, done: &mut done };
        let c = &config;
        let (e, hd, q_dim, kv_dim) = (c.n_embd, c.head_dim, c.n_head * c.head_dim, c.n_head_kv * c.head_dim);
        let vec = |n| Some((1, n));
        // The embeddings are also the output head where the model has none of its own (tied).
        let tied = loader.g.tensor("output.weight").is_none();
        let embed = loader.load_as("token_embd.weight", Some((c.vocab.max(1), e)), Use::Table { head: tied }).await?;
        let output = loader.optional("output.weight", Some((c.vocab.max(1), e))).await?;
        let output_norm = loader.load("output_norm.weight", vec(e)).await?;
        let rope_factors = loader.host_f32("rope_freqs.weight", hd / 2).await?;
        let gemma = matches!(c.arch, Arch::Gemma2 | Arch::Gemma3);
        let mut layers = Vec::with_capacity(c.n_layer);
        for il in 0..c.n_layer {
            let n = |s: &str| format!("blk.{il}.{s}.weight");
            let bias = |s: &str| format!("blk.{il}.{s}.bias");
            // Q, K and V come as three matrices or as one (`attn_qkv`, Phi-3), gate and up as two or
            // as one of twice the rows (Phi-3's `ffn_up`); fused ones are split by rows as they load.
            let (wq, wk, wv) = if loader.g.tensor(&n("attn_qkv")).is_some() {
                let [q, k, v] = loader.load_split(&n("attn_qkv"), [q_dim, kv_dim, kv_dim], e).await?;
                (q, k, v)
            } else {
                (
                    loader.load(&n("attn_q"), Some((q_dim, e))).await?,
                    loader.load(&n("attn_k"), Some((kv_dim, e))).await?,
                    loader.load(&n("attn_v"), Some((kv_dim, e))).await?,
                )
            };
            let (gate, up) = if loader.g.tensor(&n("ffn_gate")).is_none() && c.arch == Arch::Phi3 {
                let [gate, up] = loader.load_split(&n("ffn_up"), [c.n_ff, c.n_ff], e).await?;
                (gate, up)
            } else {
                (loader.load(&n("ffn_gate"), Some((c.n_ff, e))).await?, loader.load(&n("ffn_up"), Some((c.n_ff, e))).await?)
            };
            let layer = Layer {
                attn_norm: loader.load(&n("attn_norm"), vec(e)).await?,
                wq,
                wk,
                wv,
                wo: loader.load(&n("attn_output"), Some((e, q_dim))).await?,
                bq: loader.optional(&bias("attn_q"), vec(q_dim)).await?,
                bk: loader.optional(&bias("attn_k"), vec(kv_dim)).await?,
                bv: loader.optional(&bias("attn_v"), vec(kv_dim)).await?,
                q_norm: if c.qk_norm { Some(loader.load(&n("attn_q_norm"), vec(hd)).await?) } else { None },
                k_norm: if c.qk_norm { Some(loader.load(&n("attn_k_norm"), vec(hd)).await?) } else { None },
                post_attn_norm: if gemma { Some(loader.load(&n("post_attention_norm"), vec(e)).await?) } else { None },
                ffn_norm: loader.load(&n("ffn_norm"), vec(e)).await?,
                gate,
                up,
                down: loader.load(&n("ffn_down"), Some((e, c.n_ff))).await?,
                post_ffn_norm: if gemma { Some(loader.load(&n("post_ffw_norm"), vec(e)).await?) } else { None },
            };
            layers.push(layer);
        }
        Ok(Model { config, embed, output, output_norm, rope_factors, layers })
    }

    /// Fresh per-layer caches for `capacity` tokens.
    pub fn new_caches(&self, b: &mut B, capacity: usize) -> Result<Vec<B::Cache>, EngineError> {
        let kv = self.config.n_head_kv * self.config.head_dim;
        (0..self.config.n_layer).map(|_| b.new_cache(capacity, kv)).collect()
    }

    fn attn_params(&self, il: usize) -> AttnParams {
        let c = &self.config;
        AttnParams {
            n_head: c.n_head,
            n_head_kv: c.n_head_kv,
            head_dim: c.head_dim,
            scale: c.attn_scale,
            scale_q_first: c.scale_q_first,
            softcap: c.attn_softcap,
            window: if c.is_local(il) { c.sliding_window } else { None },
        }
    }

    /// Run `tokens` through the model. Returns the final-normed hidden states of `out_rows` (if any).
    /// With `store`, the tokens' keys and values are appended to `caches`.
    #[allow(clippy::too_many_arguments)] // the backend, its caches, and a forward's six inputs
    pub fn forward(
        &self,
        b: &mut B,
        caches: &mut [B::Cache],
        tokens: &[u32],
        positions: &[u32],
        segments: &[u32],
        store: bool,
        out_rows: Option<&[usize]>,
    ) -> Result<Option<B::Tensor>, EngineError> {
        let pass = |b: &mut B, caches: &mut [B::Cache]| -> Result<Option<B::Tensor>, EngineError> {
            let c = &self.config;
            let all: Vec<usize> = (0..tokens.len()).collect();
            let mut x = b.embed(&self.embed, tokens, c.embed_scale.unwrap_or(1.0))?;
            for (il, w) in self.layers.iter().enumerate() {
                let last = il + 1 == self.layers.len();
                let pruned = if last { out_rows } else { None };
                let h = b.rms_norm(&x, &w.attn_norm, c.rms_eps, None);
                let (mut q, mut k, v) = match pruned {
                    Some(rows) => {
                        let h_rows = b.select_rows(&h, rows);
                        let q = b.matmul(&h_rows, &w.wq, w.bq.as_ref());
                        let [k, v] = b.matmuls(&h, [(&w.wk, w.bk.as_ref()), (&w.wv, w.bv.as_ref())]);
                        (q, k, v)
                    }
                    None => {
                        let [q, k, v] = b.matmuls(&h, [(&w.wq, w.bq.as_ref()), (&w.wk, w.bk.as_ref()), (&w.wv, w.bv.as_ref())]);
                        (q, k, v)
                    }
                };
                if let (Some(qn), Some(kn)) = (&w.q_norm, &w.k_norm) {
                    q = b.rms_norm(&q, qn, c.rms_eps, Some(c.head_dim));
                    k = b.rms_norm(&k, kn, c.rms_eps, Some(c.head_dim));
                }
                let query_rows: Vec<usize> = pruned.map(<[usize]>::to_vec).unwrap_or_else(|| all.clone());
                let q_pos: Vec<u32> = query_rows.iter().map(|&r| positions[r]).collect();
                let base = if c.is_local(il) { c.rope_base_local } else { c.rope_base };
                let rope = Rope { base, scale: c.rope_scale, neox: c.rope_neox, freq_factors: self.rope_factors.as_deref() };
                b.rope(&mut q, &q_pos, c.head_dim, &rope);
                b.rope(&mut k, positions, c.head_dim, &rope);
                let layout = AttnLayout { positions: positions.to_vec(), segments: segments.to_vec(), query_rows };
                let a = b.attention(&q, &k, &v, &caches[il], &layout, &self.attn_params(il));
                if store {
                    b.append_cache(&mut caches[il], &k, &v)?;
                }
                let mut o = b.matmul(&a, &w.wo, None);
                if let Some(pn) = &w.post_attn_norm {
                    o = b.rms_norm(&o, pn, c.rms_eps, None);
                }
                if let Some(rows) = pruned {
                    x = b.select_rows(&x, rows);
                }
                x = b.add(&x, &o);
                let h = b.rms_norm(&x, &w.ffn_norm, c.rms_eps, None);
                let [gate, up] = b.matmuls(&h, [(&w.gate, None), (&w.up, None)]);
                let f = b.gated_activation(&gate, up, c.activation);
                let mut d = b.matmul(&f, &w.down, None);
                if let Some(pn) = &w.post_ffn_norm {
                    d = b.rms_norm(&d, pn, c.rms_eps, None);
                }
                x = b.add(&x, &d);
            }
            if out_rows.is_none() {
                return Ok(None);
            }
            Ok(Some(b.rms_norm(&x, &self.output_norm, c.rms_eps, None)))
        };
        // SAFETY: the pass holds the model, the caches and the token lists, plain data (no lock
        // guard, no thread-local), and this thread waits for it.
        unsafe { b.enter(|b| pass(b, caches)) }
    }

    /// Every id of the output head, for whole-vocabulary logits (generation, perplexity).
    pub fn vocabulary(&self) -> Vec<u32> {
        (0..self.config.vocab as u32).collect()
    }

    /// Logits of vocabulary `ids` for each row of final hidden states `x`.
    pub async fn logits(&self, b: &mut B, x: &B::Tensor, ids: &[u32]) -> Result<Vec<Vec<f32>>, EngineError> {
        b.logits(x, self.output.as_ref().unwrap_or(&self.embed), ids, self.config.final_softcap).await
    }
}

/// What a tensor is loaded as: a weight (vectors and matrices), or the embedding table, whose rows
/// are looked up and which is also the output head where `head` (tied embeddings).
#[derive(Clone, Copy)]
enum Use {
    Weight,
    Table { head: bool },
}

/// Loads tensors by name, checking shapes and reporting progress.
struct Loader<'a, B: Backend, S: TensorSource> {
    b: &'a mut B,
    g: &'a Gguf,
    src: &'a mut S,
    progress: LoadProgress<'a>,
    total: u64,
    done: &'a mut u64,
}

impl<'a, B: Backend, S: TensorSource> Loader<'a, B, S> {
    /// The tensor `name`, checked to be `rows × cols` when a shape is given.
    fn info(&self, name: &str, shape: Option<(usize, usize)>) -> Result<&'a TensorInfo, EngineError> {
        let info = self.g.tensor(name).ok_or_else(|| EngineError::Model(format!("tensor `{name}` is missing")))?;
        if let Some((rows, cols)) = shape {
            let got = info.rows_cols();
            if got != (rows, cols) {
                return Err(EngineError::Model(format!("tensor `{name}` is {}×{}, expected {rows}×{cols}", got.0, got.1)));
            }
        }
        Ok(info)
    }

    /// Count `info` as loaded and report progress.
    fn loaded(&mut self, info: &TensorInfo) {
        *self.done += info.n_bytes;
        (self.progress)(*self.done, self.total);
    }

    async fn load(&mut self, name: &str, shape: Option<(usize, usize)>) -> Result<B::Weight, EngineError> {
        self.load_as(name, shape, Use::Weight).await
    }

    /// [`Loader::load`] for what the tensor is used as.
    async fn load_as(&mut self, name: &str, shape: Option<(usize, usize)>, used: Use) -> Result<B::Weight, EngineError> {
        let info = self.info(name, shape)?;
        let bytes = self.src.read(info).await?;
        let w = match used {
            Use::Weight => self.b.load(info, &bytes)?,
            Use::Table { head } => self.b.load_table(info, &bytes, head)?,
        };
        self.loaded(info);
        Ok(w)
    }

    /// A small F32 vector the model uses on the host (not uploaded to the backend), if present.
    async fn host_f32(&mut self, name: &str, len: usize) -> Result<Option<Vec<f32>>, EngineError> {
        if self.g.tensor(name).is_none() {
            return Ok(None);
        }
        let info = self.info(name, Some((1, len)))?;
        if info.dtype != GgmlType::F32 {
            return Err(EngineError::Model(format!("tensor `{name}` is {:?}, expected F32", info.dtype)));
        }
        let bytes = self.src.read(info).await?;
        let v: Vec<f32> = bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        if let Some(bad) = v.iter().find(|f| !(f.is_finite() && **f > 0.0)) {
            return Err(EngineError::Model(format!("tensor `{name}` holds {bad}, not a positive frequency factor")));
        }
        self.loaded(info);
        Ok(Some(v))
    }

    /// A matrix stored as `rows.len()` matrices stacked by rows (fused Q/K/V, gate/up), loaded as
    /// separate weights.
    async fn load_split<const N: usize>(&mut self, name: &str, rows: [usize; N], cols: usize) -> Result<[B::Weight; N], EngineError> {
        let info = self.info(name, Some((rows.iter().sum(), cols)))?;
        let bytes = self.src.read(info).await?;
        let row_bytes = info.dtype.row_bytes(cols);
        let mut parts = Vec::with_capacity(N);
        let mut at = 0;
        for (k, &r) in rows.iter().enumerate() {
            let part = TensorInfo {
                name: format!("{name} (part {} of {N})", k + 1),
                dims: vec![cols as u64, r as u64],
                dtype: info.dtype,
                offset: info.offset + at as u64,
                n_bytes: (r * row_bytes) as u64,
            };
            parts.push(self.b.load(&part, &bytes[at..at + r * row_bytes])?);
            at += r * row_bytes;
        }
        self.loaded(info);
        Ok(parts.try_into().unwrap_or_else(|_| unreachable!("N parts were loaded")))
    }

    async fn optional(&mut self, name: &str, shape: Option<(usize, usize)>) -> Result<Option<B::Weight>, EngineError> {
        if self.g.tensor(name).is_some() {
            self.load(name, shape).await.map(Some)
        } else {
            Ok(None)
        }
    }
}
