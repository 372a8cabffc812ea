//! Hyper-parameters of a judge model, read from GGUF metadata, for the supported families.
//!
//! | family | GGUF arch | differences from llama |
//! |---|---|---|
//! | Llama (SmolLM2, Llama 3.x) | `llama` | — (RoPE on interleaved pairs; Q/K were permuted by the converter); Llama 3.1+: RoPE frequency factors (`rope_freqs.weight`) |
//! | Qwen2 / 2.5 | `qwen2` | Q/K/V biases, NeoX RoPE |
//! | Qwen3 | `qwen3` | per-head Q/K RMSNorm, head size set apart from the width (`attention.key_length`), NeoX RoPE |
//! | Phi-3 | `phi3` | Q, K, V in one matrix (`attn_qkv`), gate and up in one (`ffn_up`), Q scaled before the product, NeoX RoPE |
//! | Gemma 2 | `gemma2` | embeddings × √d, GELU, post-norms, sliding window on even layers, attention and final logit soft-capping |
//! | Gemma 3 | `gemma3` | embeddings × √d, GELU, post-norms, per-head Q/K RMSNorm, sliding window on 5 of 6 layers with RoPE base 10 000 |

use crate::backend::Activation;
use crate::gguf::{Gguf, Value};
use crate::EngineError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Arch {
    Llama,
    Qwen2,
    Qwen3,
    Phi3,
    Gemma2,
    Gemma3,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub arch: Arch,
    pub n_layer: usize,
    pub n_embd: usize,
    pub n_head: usize,
    pub n_head_kv: usize,
    pub head_dim: usize,
    pub n_ff: usize,
    pub vocab: usize,
    pub context_length: usize,
    pub rms_eps: f32,
    pub rope_base: f32,
    /// Gemma 3's local (sliding-window) layers use their own RoPE base.
    pub rope_base_local: f32,
    /// Linear RoPE scaling factor (positions are divided by it).
    pub rope_scale: f32,
    /// NeoX-style RoPE (rotate halves) instead of interleaved pairs.
    pub rope_neox: bool,
    pub sliding_window: Option<usize>,
    /// Every `swa_pattern`-th layer is global (Gemma 3: 6, Gemma 2: 2); 0 = no sliding layers.
    pub swa_pattern: usize,
    pub attn_softcap: Option<f32>,
    pub final_softcap: Option<f32>,
    pub attn_scale: f32,
    pub embed_scale: Option<f32>,
    pub activation: Activation,
    pub qk_norm: bool,
    /// Scale Q before the product with K (Gemma, Phi-3) instead of the scores after it.
    pub scale_q_first: bool,
}

impl Config {
    pub fn from_gguf(g: &Gguf) -> Result<Self, EngineError> {
        let arch_name = g.architecture().ok_or_else(|| EngineError::Model("GGUF has no general.architecture".into()))?.to_string();
        let arch = match arch_name.as_str() {
            "llama" => Arch::Llama,
            "qwen2" => Arch::Qwen2,
            "qwen3" => Arch::Qwen3,
            "phi3" => Arch::Phi3,
            "gemma2" => Arch::Gemma2,
            "gemma3" => Arch::Gemma3,
            other => {
                return Err(EngineError::Unsupported(format!(
                    "model architecture `{other}` is not supported (llama, qwen2, qwen3, phi3, gemma2 and gemma3 are)"
                )))
            }
        };
        let key = |k: &str| format!("{arch_name}.{k}");
        let num = |k: &str| g.get(&key(k)).and_then(Value::as_f64);
        let req = |k: &str| num(k).ok_or_else(|| EngineError::Model(format!("GGUF lacks `{}`", key(k))));
        let usize_of = |k: &str, max: f64| -> Result<usize, EngineError> {
            let v = req(k)?;
            if v >= 1.0 && v <= max && v.fract() == 0.0 {
                Ok(v as usize)
            } else {
                Err(EngineError::Model(format!("`{}` = {v} is out of range", key(k))))
            }
        };
        let n_embd = usize_of("embedding_length", 65536.0)?;
        let n_head = usize_of("attention.head_count", 1024.0)?;
        let n_head_kv = if num("attention.head_count_kv").is_some() { usize_of("attention.head_count_kv", 1024.0)? } else { n_head };
        if n_head % n_head_kv != 0 {
            return Err(EngineError::Model(format!("{n_head} attention heads cannot be grouped over {n_head_kv} KV heads")));
        }
        let head_dim = if num("attention.key_length").is_some() { usize_of("attention.key_length", 4096.0)? } else { n_embd / n_head };
        if head_dim % 2 != 0 {
            return Err(EngineError::Model(format!("head dimension {head_dim} must be even for RoPE")));
        }
        if let Some(n_rot) = num("rope.dimension_count").filter(|&r| r as usize != head_dim) {
            return Err(EngineError::Unsupported(format!("RoPE on {n_rot} of {head_dim} head dimensions is not supported (all are)")));
        }
        if let Some(t) = ["blk.0.rope_factors_long.weight", "blk.0.rope_factors_short.weight"].into_iter().find(|t| g.tensor(t).is_some()) {
            return Err(EngineError::Unsupported(format!("LongRoPE (`{t}`, Phi-3 128k) is not supported")));
        }
        let vocab = g.get("tokenizer.ggml.tokens").and_then(Value::as_array).map(|a| a.len()).unwrap_or(0);
        let gemma = matches!(arch, Arch::Gemma2 | Arch::Gemma3);
        let rope_scale = match g.get(&key("rope.scaling.type")).and_then(Value::as_str) {
            None | Some("none") => 1.0,
            Some("linear") => num("rope.scaling.factor").unwrap_or(1.0) as f32,
            Some(other) => return Err(EngineError::Unsupported(format!("RoPE scaling `{other}` is not supported (linear is)"))),
        };
        let sliding_window = num("attention.sliding_window").map(|w| w as usize).filter(|&w| w > 0);
        Ok(Config {
            arch,
            n_layer: usize_of("block_count", 1024.0)?,
            n_embd,
            n_head,
            n_head_kv,
            head_dim,
            n_ff: usize_of("feed_forward_length", 1_000_000.0)?,
            vocab,
            context_length: num("context_length").map(|v| v as usize).unwrap_or(4096),
            rms_eps: num("attention.layer_norm_rms_epsilon").unwrap_or(1e-6) as f32,
            rope_base: num("rope.freq_base").unwrap_or(10000.0) as f32,
            rope_base_local: if arch == Arch::Gemma3 { 10000.0 } else { num("rope.freq_base").unwrap_or(10000.0) as f32 },
            rope_scale,
            rope_neox: arch != Arch::Llama,
            sliding_window: if gemma { sliding_window } else { None },
            swa_pattern: match arch {
                Arch::Gemma2 => 2,
                Arch::Gemma3 => 6,
                _ => 0,
            },
            attn_softcap: if arch == Arch::Gemma2 { Some(num("attn_logit_softcapping").unwrap_or(50.0) as f32) } else { None },
            final_softcap: if arch == Arch::Gemma2 { Some(num("final_logit_softcapping").unwrap_or(30.0) as f32) } else { None },
            attn_scale: num("attention.scale").map(|s| s as f32).unwrap_or(1.0 / (head_dim as f32).sqrt()),
            embed_scale: gemma.then(|| (n_embd as f32).sqrt()),
            activation: if gemma { Activation::GeluTanh } else { Activation::Silu },
            qk_norm: matches!(arch, Arch::Gemma3 | Arch::Qwen3),
            scale_q_first: gemma || arch == Arch::Phi3,
        })
    }

    /// Whether layer `il` attends within the sliding window only (llama.cpp's SWA pattern: the last
    /// layer of every group of `swa_pattern` is global).
    pub fn is_local(&self, il: usize) -> bool {
        self.sliding_window.is_some() && self.swa_pattern > 0 && !(il + 1).is_multiple_of(self.swa_pattern)
    }
}

impl Config {
    /// Multiply-add FLOPs (×2) of the weight matrices per token, all layers (no output head).
    pub fn matmul_flops_per_token(&self) -> f64 {
        let (e, q, kv, ff) =
            (self.n_embd as f64, (self.n_head * self.head_dim) as f64, (self.n_head_kv * self.head_dim) as f64, self.n_ff as f64);
        2.0 * self.n_layer as f64 * (e * (q + 2.0 * kv) + q * e + 3.0 * e * ff)
    }
    /// Attention FLOPs (QKᵀ and PV) for one query attending to `keys` keys, all layers.
    pub fn attention_flops(&self, keys: f64) -> f64 {
        4.0 * self.n_layer as f64 * (self.n_head * self.head_dim) as f64 * keys
    }
}
