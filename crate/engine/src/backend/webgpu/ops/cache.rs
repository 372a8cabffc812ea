//! The KV cache: keys and values as f16 pairs packed in u32 words (the CPU backend's f16 cache,
//! bit for bit), and `append.wgsl`, which rounds new rows into it.

use bytemuck::{Pod, Zeroable};

use super::super::device::Device;
use super::super::pool::{bufs, Tensor};
use super::super::recorder::{Bind, Shader};
use super::super::weight::human;
use super::{eltwise, module, Ctx};
use crate::backend::policy;
use crate::EngineError;

const SOURCE: &str = include_str!("../kernels/append.wgsl");

/// Rows of slack past a cache's capacity: the software attention binds whole blocks of up to this
/// many keys past the last one.
pub(super) const SLACK_ROWS: usize = 256;

/// Keys and values as f16 pairs packed in u32 words, like the CPU backend's f16 cache.
pub struct Cache {
    pub(super) k: wgpu::Buffer,
    pub(super) v: wgpu::Buffer,
    pub(super) len: usize,
    capacity: usize,
    pub(super) kv_dim: usize,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "webgpu::Cache({}/{} × {})", self.len, self.capacity, self.kv_dim)
    }
}

/// The parameters of `append.wgsl`: `n` words from each input to word `dst` on.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    n: u32,
    dst: u32,
    pad1: u32,
    pad2: u32,
}

impl Cache {
    pub(in super::super) fn new(dev: &Device, capacity: usize, kv_dim: usize) -> Result<Cache, EngineError> {
        dev.check()?;
        if !kv_dim.is_multiple_of(2) {
            return Err(EngineError::Backend(format!("KV width {kv_dim} must be even for the f16-pair cache")));
        }
        let bytes = (policy::cache_values(capacity.saturating_add(SLACK_ROWS), kv_dim)? as u64).saturating_mul(2).max(4);
        if bytes > dev.limits.max_storage_buffer_binding_size.min(dev.limits.max_buffer_size) {
            return Err(EngineError::Backend(format!(
                "a KV cache of {capacity} tokens × {kv_dim} needs {} per layer, more than {} allows in one buffer ({})",
                human(bytes),
                dev.info.name,
                human(dev.limits.max_storage_buffer_binding_size)
            )));
        }
        let mk = |label| {
            dev.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes.div_ceil(4) * 4,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::UNIFORM,
                mapped_at_creation: false,
            })
        };
        let (k, v) = (mk("k cache"), mk("v cache"));
        dev.check()?;
        Ok(Cache { k, v, len: 0, capacity, kv_dim })
    }

    pub(in super::super) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }
}

/// Append keys and values (one row per token) to the cache.
pub(in super::super) fn append(cx: &mut Ctx, cache: &mut Cache, k: &Tensor, v: &Tensor) -> Result<(), EngineError> {
    cx.dev.check()?;
    policy::check_append(cache.len, cache.capacity, cache.kv_dim, (k.rows, k.cols), (v.rows, v.cols))?;
    let Some([kb, vb]) = bufs([k, v]) else {
        return cx.dev.check();
    };
    let (kc, vc) = (cache.k.clone(), cache.v.clone());
    record_append(cx, &kb, &vb, &kc, &vc, k.rows * cache.kv_dim / 2, cache.len * cache.kv_dim / 2);
    cache.len += k.rows;
    Ok(())
}

/// Round `n` pairs of `k` and `v` to f16 pairs into `kc` and `vc` from word `dst` on.
pub(super) fn record_append(cx: &mut Ctx, k: &wgpu::Buffer, v: &wgpu::Buffer, kc: &wgpu::Buffer, vc: &wgpu::Buffer, n: usize, dst: usize) {
    let g = cx.dev.grid(n, super::eltwise::WG);
    let binds = vec![(1, Bind::Buf(k.clone())), (2, Bind::Buf(v.clone())), (3, Bind::Buf(kc.clone())), (4, Bind::Buf(vc.clone()))];
    cx.dispatch(&Append, &Params { n: n as u32, dst: dst as u32, pad1: 0, pad2: 0 }, binds, g);
}

/// The append kernel (one variant).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Append;

impl Shader for Append {
    fn source(&self) -> String {
        module(SOURCE.to_string())
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        vec![("WG", eltwise::WG as f64)]
    }
}
