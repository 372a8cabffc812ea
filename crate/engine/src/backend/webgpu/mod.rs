//! The WebGPU backend: the same [`Backend`] as the CPU one, on any GPU wgpu reaches — Vulkan, Metal
//! or DX12 natively, the browser's WebGPU on wasm32.
//!
//! How a forward runs:
//! - **Recording, not executing.** Every op allocates its output from a buffer pool and appends a
//!   dispatch to a list; nothing reaches the GPU until a read-back (`logits`), a `sync`, or the next
//!   forward's `embed`. Then one command encoder and one compute pass carry the whole forward in a
//!   single submission. Small per-dispatch data (parameters, token ids, RoPE tables, attention
//!   ranges) goes into one arena buffer written once per submission.
//! - **Weights** are repacked at load ([`repack`]) into planes the kernels read with aligned word
//!   loads, with dequantized values bit-identical to the CPU backend's; a tensor larger than the
//!   device's largest storage binding is split by rows into parts, each dispatched separately.
//! - **Kernels** (`kernels/*.wgsl`): a tiled GEMM that dequantizes weight tiles into workgroup memory
//!   (f16 tiles where `shader-f16` exists, f32 otherwise, always f32 accumulation) for many rows, a
//!   GEMV for few rows, flash-style attention over the f16 cache and the new keys with segment masks,
//!   and RMSNorm, RoPE (host-computed tables), gated activations, adds, row selection, cache appends.
//!   Where the device has subgroup operations (natively where the adapter has them; in a browser
//!   where the page asked for them, which wgpu there does not), the reductions — the GEMV's partial
//!   sums, RMSNorm's sum of squares, the logits' dot products (`reduce.wgsl`, `gemv.wgsl`) and the
//!   attention's per-tile softmax (`attention.wgsl`: a subgroup per query row instead of one
//!   invocation) — combine within a subgroup in registers; without them workgroup memory does it.
//!   Neither a subgroup size nor a layout of invocations into subgroups is assumed (`lane.wgsl`).
//!   Software adapters (lavapipe, SwiftShader: a CPU running invocations as SIMD lanes) get their
//!   own matrix-product and attention kernels ([`KernelSet`]), several times faster there; the
//!   tests check both sets against the CPU backend.
//!
//! The parts: the device (`device.rs`: adapter, limits, failure state), the buffer pool
//! (`pool.rs`), the recorder (`recorder.rs`: passes, pipeline cache, arena, flush, read-back),
//! weights (`weight.rs`), and one file per kernel family under `ops/` with its variants, parameter
//! struct, bindings and grid. This file is the [`Backend`] impl delegating to them; what both
//! backends decide alike (visible keys, RoPE angles, shape checks) is in [`crate::backend::policy`].
//! - **Failures** (device loss, out of memory, validation) are caught by wgpu's error and device-lost
//!   callbacks and remembered; ops after a failure do nothing, and the next call that can return an
//!   error (`load`, `embed`, `append_cache`, `logits`) returns it as [`EngineError::Backend`].
//!
//! ```no_run
//! # use rocketjudge_engine::backend::webgpu::{WebGpu, WebGpuOptions};
//! # async fn f() -> Result<(), rocketjudge_engine::EngineError> {
//! let gpu = WebGpu::new(WebGpuOptions::default()).await?;
//! println!("{}", rocketjudge_engine::backend::Backend::describe(&gpu));
//! # Ok(()) }
//! ```

mod device;
mod ops;
mod options;
mod pool;
mod recorder;
pub mod repack;
mod weight;

use super::policy;
use super::{Activation, AttnLayout, AttnParams, Backend, Rope};
use crate::gguf::TensorInfo;
use crate::EngineError;
use device::Device;
pub use ops::cache::Cache;
use ops::{attention, cache, eltwise, logits, matmul, norm, rope, rows, Ctx};
pub use options::{KernelSet, WebGpuOptions};
use pool::Pool;
pub use pool::Tensor;
use recorder::{finish_readback, Recorder};
pub use weight::Weight;

pub struct WebGpu {
    dev: Device,
    options: WebGpuOptions,
    pool: Pool,
    rec: Recorder,
    /// Bound where a kernel's optional input (a bias) is absent.
    dummy: wgpu::Buffer,
    /// Bytes of weights uploaded so far (for the memory budget).
    uploaded: u64,
}

impl WebGpu {
    /// Find an adapter and open a device with the adapter's own limits (not WebGPU's defaults) and
    /// `shader-f16` when offered.
    pub async fn new(options: WebGpuOptions) -> Result<Self, EngineError> {
        let dev = Device::new(&options).await?;
        Ok(Self::with_device(dev, options))
    }

    /// Open a device on a given adapter (tests and tools that pick their own).
    pub async fn from_adapter(adapter: wgpu::Adapter, options: WebGpuOptions) -> Result<Self, EngineError> {
        let dev = Device::from_adapter(adapter, &options).await?;
        Ok(Self::with_device(dev, options))
    }

    fn with_device(dev: Device, options: WebGpuOptions) -> Self {
        let dummy = dev.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("dummy"),
            size: 256,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        WebGpu { dev, options, pool: Pool::default(), rec: Recorder::default(), dummy, uploaded: 0 }
    }

    /// The adapter the device came from (name, backend, device type).
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.dev.info
    }

    /// Whether matrix-product tiles are f16 in workgroup memory (GPU kernels only).
    pub fn uses_f16(&self) -> bool {
        self.dev.f16 && !self.dev.software
    }

    /// Whether reductions (GEMV, norms, logits) use subgroup operations.
    pub fn uses_subgroups(&self) -> bool {
        self.dev.subgroups
    }

    /// Whether the many-row products run on cooperative matrices, else why not.
    pub fn cooperative_matrix(&self) -> Result<(), String> {
        self.dev.coop.clone().map(|_| ())
    }

    /// Whether the software-shaped kernels are in use.
    pub fn uses_software_kernels(&self) -> bool {
        self.dev.software
    }

    /// Whether the adapter is software, not a GPU ([`crate::backend::adapter::is_software_adapter`]).
    pub fn on_software_adapter(&self) -> bool {
        self.dev.software_adapter
    }

    /// Command submissions so far (one per forward pass, plus read-backs).
    pub fn submissions(&self) -> u64 {
        self.rec.submissions
    }

    /// Destroy the device, as a driver reset or a browser reclaiming the GPU would lose it. Every
    /// later call then fails with "GPU device lost". For testing that path.
    pub fn destroy_device(&mut self) {
        self.dev.destroy();
    }

    /// What the ops record with.
    fn cx(&mut self) -> Ctx<'_> {
        Ctx { dev: &self.dev, pool: &self.pool, rec: &mut self.rec }
    }

    /// Copy a tensor back to the host: for tests and debugging (a forward never needs it; its only
    /// read-back is `logits`).
    pub fn read(&mut self, t: &Tensor) -> impl std::future::Future<Output = Result<Vec<f32>, EngineError>> {
        let started = match (self.dev.check(), t.buffer().cloned()) {
            (Err(e), _) => Err(e),
            (Ok(()), None) => Err(EngineError::Backend("the tensor has no device buffer".into())),
            (Ok(()), Some(b)) => Ok(self.rec.start_readback(&self.dev, &b, (t.rows * t.cols * 4) as u64)),
        };
        let (device, status) = (self.dev.device.clone(), self.dev.status.clone());
        let n = t.rows * t.cols;
        async move { finish_readback(device, status, started?, n).await }
    }

    /// Upload host values as a tensor (tests and tools).
    pub fn tensor(&mut self, rows: usize, cols: usize, data: &[f32]) -> Result<Tensor, EngineError> {
        self.dev.check()?;
        if data.len() != rows * cols {
            return Err(EngineError::Backend(format!("{} values for a {rows}×{cols} tensor", data.len())));
        }
        let t = self.pool.alloc(&self.dev, rows, cols);
        if let (Some(b), false) = (t.buffer(), data.is_empty()) {
            // Ordered before the next submission, hence before any dispatch that reads it; a pooled
            // buffer is only reused by dispatches recorded after this write.
            self.rec.flush(&self.dev, None);
            self.dev.queue.write_buffer(b, 0, bytemuck::cast_slice(data));
        }
        Ok(t)
    }
}

impl Backend for WebGpu {
    type Tensor = Tensor;
    type Weight = Weight;
    type Cache = Cache;

    fn describe(&self) -> String {
        let info = &self.dev.info;
        let products = if self.dev.software {
            "software-shaped kernels".to_string()
        } else if let Ok(c) = self.dev.coop {
            format!("cooperative-matrix products ({0} × {0} f16, f32 accumulation)", c.tile)
        } else if self.dev.f16 {
            "f16 workgroup tiles".to_string()
        } else {
            "f32 workgroup tiles".to_string()
        };
        let subgroups = if self.dev.subgroups { ", subgroups" } else { "" };
        format!("webgpu: {} ({:?}, {:?}; {products}{subgroups})", info.name, info.backend, info.device_type)
    }

    fn load(&mut self, info: &TensorInfo, bytes: &[u8]) -> Result<Weight, EngineError> {
        self.dev.check()?;
        policy::check_tensor_bytes(info, bytes)?;
        weight::load(&self.dev, &self.options, &mut self.uploaded, info, bytes)
    }

    fn new_cache(&mut self, capacity: usize, kv_dim: usize) -> Result<Cache, EngineError> {
        Cache::new(&self.dev, capacity, kv_dim)
    }

    fn truncate_cache(&mut self, cache: &mut Cache, len: usize) {
        cache.truncate(len);
    }

    fn embed(&mut self, table: &Weight, tokens: &[u32], scale: f32) -> Result<Tensor, EngineError> {
        self.dev.check()?;
        // A new forward begins: send the previous one on its way.
        self.rec.flush(&self.dev, None);
        rows::embed(&mut self.cx(), table, tokens, scale)
    }

    fn rms_norm(&mut self, x: &Tensor, w: &Weight, eps: f32, group: Option<usize>) -> Tensor {
        norm::record(&mut self.cx(), x, w, eps, group)
    }

    fn matmul(&mut self, x: &Tensor, w: &Weight, bias: Option<&Weight>) -> Tensor {
        let (options, dummy) = (self.options.clone(), self.dummy.clone());
        let mut cx = self.cx();
        let y = cx.alloc(x.rows, w.rows);
        if cx.ok(policy::check_matmul((x.rows, x.cols), (w.rows, w.cols))).is_some() {
            matmul::record(&mut cx, &options, &dummy, x, w, bias, &y);
        }
        y
    }

    fn rope(&mut self, x: &mut Tensor, positions: &[u32], head_dim: usize, r: &Rope) {
        rope::record(&mut self.cx(), x, positions, head_dim, r);
    }

    fn add(&mut self, x: &Tensor, y: &Tensor) -> Tensor {
        eltwise::add(&mut self.cx(), x, y)
    }

    fn gated_activation(&mut self, gate: &Tensor, up: Tensor, act: Activation) -> Tensor {
        eltwise::gated_activation(&mut self.cx(), gate, &up, act)
    }

    fn select_rows(&mut self, x: &Tensor, rows: &[usize]) -> Tensor {
        rows::select(&mut self.cx(), x, rows)
    }

    fn append_cache(&mut self, cache: &mut Cache, k: &Tensor, v: &Tensor) -> Result<(), EngineError> {
        cache::append(&mut self.cx(), cache, k, v)
    }

    fn attention(&mut self, q: &Tensor, k: &Tensor, v: &Tensor, cache: &Cache, layout: &AttnLayout, p: &AttnParams) -> Tensor {
        attention::record(&mut self.cx(), q, k, v, cache, layout, p)
    }

    fn sync(&mut self) {
        self.rec.flush(&self.dev, None);
        let _ = self.dev.device.poll(wgpu::PollType::wait_indefinitely());
    }

    fn logits(
        &mut self,
        x: &Tensor,
        head: &Weight,
        ids: &[u32],
        softcap: Option<f32>,
    ) -> impl std::future::Future<Output = Result<Vec<Vec<f32>>, EngineError>> {
        let (options, dummy) = (self.options.clone(), self.dummy.clone());
        let started = logits::record(&mut self.cx(), (&options, &dummy), x, head, ids, softcap);
        let (device, status) = (self.dev.device.clone(), self.dev.status.clone());
        let (rows, n_ids) = (x.rows, ids.len());
        async move {
            let values = finish_readback(device, status, started?, rows * n_ids).await?;
            Ok(values.chunks(n_ids.max(1)).take(rows).map(<[f32]>::to_vec).collect())
        }
    }
}
