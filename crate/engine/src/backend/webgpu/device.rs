//! The device: adapter, limits, which kernel shapes it gets, and its failure state — the first error
//! wgpu reports (validation, out of memory, device lost) or misuse, kept until a fallible call
//! returns it.

use std::sync::{Arc, Mutex};

use wgpu::util::DeviceExt;

use super::options::{KernelSet, WebGpuOptions};
use crate::backend::policy;
use crate::EngineError;

/// The first failure the device reported (validation, out of memory, device lost).
pub(super) type Status = Arc<Mutex<Option<String>>>;

fn set_status(s: &Status, msg: String, overwrite: bool) {
    let mut g = s.lock().unwrap_or_else(|e| e.into_inner());
    if g.is_none() || overwrite {
        *g = Some(msg);
    }
}

pub(super) fn current(s: &Status) -> Option<String> {
    s.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The engine's device's label: in a browser, the page recognises the device wgpu requests by it
/// (web/lib/loading.js `ENGINE_DEVICE`) to ask for `subgroups` too.
const DEVICE_LABEL: &str = "rocketjudge";

/// Workgroup memory of the cooperative-matrix product (gemm_coop.wgsl: two 64 × 32 f16 tiles and a
/// 64 × 64 f32 one).
const COOP_WORKGROUP_BYTES: u32 = 2 * 64 * 32 * 2 + 64 * 64 * 4;

/// How the cooperative-matrix product runs on a device: `tile` × `tile` f16 matrices multiplied into
/// f32 ones (16, else 8: NVIDIA and AMD offer 16, Metal and Mesa's lavapipe 8), by workgroups of
/// `wg` invocations (8 subgroups).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Coop {
    pub tile: u32,
    pub wg: u32,
}

/// How the cooperative-matrix product runs on this adapter, or why it cannot run there (see
/// [`Device::coop`]); `f16_subgroups`: the device gets shader-f16 and subgroups.
fn coop(adapter: &wgpu::Adapter, info: &wgpu::AdapterInfo, options: &WebGpuOptions, f16_subgroups: bool) -> Result<Coop, String> {
    let limits = adapter.limits();
    let f16_into_f32 = |size: u32| {
        move |p: &wgpu::CooperativeMatrixProperties| {
            (p.m_size, p.n_size, p.k_size) == (size, size, size)
                && p.ab_type == wgpu::CooperativeScalarType::F16
                && p.cr_type == wgpu::CooperativeScalarType::F32
        }
    };
    let wg = 8 * info.subgroup_min_size;
    if cfg!(target_arch = "wasm32") {
        return Err("not in a browser: WebGPU has no cooperative matrices".into());
    }
    if !options.allow_cooperative_matrix {
        return Err("not allowed by the options".into());
    }
    if !adapter.features().contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
        return Err(format!("{} reports no cooperative matrices", info.name));
    }
    let properties = adapter.cooperative_matrix_properties();
    let Some(tile) = [16, 8].into_iter().find(|&s| properties.iter().any(f16_into_f32(s))) else {
        return Err(format!("{} has no 16 × 16 or 8 × 8 f16 product into f32: {properties:?}", info.name));
    };
    if !f16_subgroups {
        Err("the kernel needs shader-f16 and subgroups".into())
    } else if info.subgroup_min_size != info.subgroup_max_size {
        Err(format!("subgroups of {} to {} invocations: the kernel needs one size", info.subgroup_min_size, info.subgroup_max_size))
    } else if wg == 0
        || wg > limits.max_compute_invocations_per_workgroup
        || limits.max_compute_workgroup_storage_size < COOP_WORKGROUP_BYTES
    {
        Err(format!(
            "8 subgroups of {} and {COOP_WORKGROUP_BYTES} bytes of workgroup memory exceed the device's limits",
            info.subgroup_min_size
        ))
    } else {
        Ok(Coop { tile, wg })
    }
}

pub(super) struct Device {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub limits: wgpu::Limits,
    /// `shader-f16` is enabled (and allowed).
    pub f16: bool,
    /// Subgroup operations are enabled (and allowed): natively where the adapter has them, in a
    /// browser where the page asked the device for them.
    pub subgroups: bool,
    /// How the cooperative-matrix product runs, where the device runs it (natively, with 16 × 16 or
    /// 8 × 8 f16 matrices multiplied into f32 ones, shader-f16, subgroups of one fixed size, the
    /// workgroup memory the kernel takes, GPU-shaped kernels, and allowed), else why not.
    pub coop: Result<Coop, String>,
    /// Software-shaped kernels (see [`KernelSet`]).
    pub software: bool,
    /// The adapter is a CPU rasterizer, not a GPU.
    pub software_adapter: bool,
    pub status: Status,
}

impl Device {
    /// Find an adapter and open a device on it.
    pub async fn new(options: &WebGpuOptions) -> Result<Self, EngineError> {
        let backends = if cfg!(target_arch = "wasm32") { wgpu::Backends::BROWSER_WEBGPU } else { wgpu::Backends::PRIMARY };
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor { backends, ..wgpu::InstanceDescriptor::new_without_display_handle() });
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: if options.low_power { wgpu::PowerPreference::LowPower } else { wgpu::PowerPreference::HighPerformance },
                force_fallback_adapter: false,
                compatible_surface: None,
                apply_limit_buckets: false,
            })
            .await
            .map_err(|e| {
                EngineError::Backend(format!(
                    "no WebGPU adapter found ({e}); natively this needs a Vulkan, Metal or DX12 driver \
                     (on Linux without a GPU: Mesa's lavapipe, package mesa-vulkan-drivers)"
                ))
            })?;
        Self::from_adapter(adapter, options).await
    }

    /// Open a device with the adapter's own limits (not WebGPU's defaults) and `shader-f16` when
    /// offered, with callbacks that remember the first failure.
    pub async fn from_adapter(adapter: wgpu::Adapter, options: &WebGpuOptions) -> Result<Self, EngineError> {
        let mut info = adapter.get_info();
        let report = options.report.as_ref();
        if info.name.trim().is_empty() {
            // wgpu in a browser leaves the name empty: the browser's own words, where it tells them.
            info.name = report.map(|r| r.name()).unwrap_or_default();
        }
        let fallback = report.is_some_and(|r| r.fallback);
        let software_adapter =
            crate::backend::adapter::is_software_adapter(info.device_type == wgpu::DeviceType::Cpu, fallback, &info.name);
        let f16 = options.allow_f16 && adapter.features().contains(wgpu::Features::SHADER_F16);
        // In a browser wgpu neither sees nor requests the `subgroups` feature: the page asks for it on
        // the device wgpu requests (web/lib/loading.js) and says so in its report; natively wgpu
        // requests it where the adapter has it.
        let offered = if cfg!(target_arch = "wasm32") {
            report.is_some_and(|r| r.subgroups)
        } else {
            adapter.features().contains(wgpu::Features::SUBGROUP)
        };
        let subgroups = options.allow_subgroups && offered;
        let coop = coop(&adapter, &info, options, f16 && subgroups);
        let mut required_features = wgpu::Features::empty();
        required_features.set(wgpu::Features::SHADER_F16, f16);
        required_features.set(wgpu::Features::SUBGROUP, subgroups && !cfg!(target_arch = "wasm32"));
        required_features.set(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX, coop.is_ok());
        let experimental_features = if coop.is_ok() {
            // SAFETY: wgpu's experimental cooperative matrices; the kernel that uses them is checked
            // against the tiled one and the CPU engine (tests/webgpu.rs) wherever an adapter has them.
            unsafe { wgpu::ExperimentalFeatures::enabled() }
        } else {
            wgpu::ExperimentalFeatures::disabled()
        };
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some(DEVICE_LABEL),
                required_features,
                required_limits: adapter.limits(),
                experimental_features,
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            })
            .await
            .map_err(|e| EngineError::Backend(format!("cannot open the GPU device {}: {e}", info.name)))?;
        let limits = device.limits();
        let status: Status = Arc::new(Mutex::new(None));
        let s = status.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            let msg = match &e {
                wgpu::Error::OutOfMemory { .. } => format!("GPU out of memory: {e}"),
                _ => format!("GPU error: {e}"),
            };
            set_status(&s, msg, false);
        }));
        let s = status.clone();
        device.set_device_lost_callback(move |reason, msg| {
            set_status(&s, format!("GPU device lost: {msg} ({reason:?})"), true);
        });
        let software = match options.kernels {
            // By device type only: in a browser (where wgpu reports none) the GPU kernels run, on a
            // software adapter too when WebGPU is chosen there.
            KernelSet::Auto => info.device_type == wgpu::DeviceType::Cpu,
            KernelSet::Gpu => false,
            KernelSet::Software => true,
        };
        let coop = coop.and_then(|c| if software { Err("software-shaped kernels chosen".into()) } else { Ok(c) });
        Ok(Device { device, queue, info, limits, f16, subgroups, coop, software, software_adapter, status })
    }

    /// Destroy the device, as a driver reset would lose it.
    pub fn destroy(&self) {
        self.device.destroy();
        let _ = self.device.poll(wgpu::PollType::Poll);
        set_status(&self.status, "GPU device lost: the device was destroyed".into(), false);
    }

    pub fn failure(&self) -> Option<String> {
        current(&self.status)
    }

    /// The first failure as an error.
    pub fn check(&self) -> Result<(), EngineError> {
        match self.failure() {
            Some(m) => Err(EngineError::Backend(m)),
            None => Ok(()),
        }
    }

    /// Record a misuse (wrong shapes) as a failure instead of panicking; the next fallible call
    /// reports it.
    pub fn misuse(&self, msg: String) {
        set_status(&self.status, policy::misuse_message(&msg), false);
    }

    /// The largest buffer one storage binding may cover (the options may lower it).
    pub fn max_binding(&self, options: &WebGpuOptions) -> u64 {
        self.limits.max_storage_buffer_binding_size.min(self.limits.max_buffer_size).min(options.max_binding_bytes.unwrap_or(u64::MAX))
    }

    /// Workgroups for `n` invocations of `wg` threads, folded into 2-D when above the per-dimension
    /// limit (kernels recover the linear index from `num_workgroups`).
    pub fn grid(&self, n: usize, wg: u32) -> [u32; 3] {
        let groups = n.div_ceil(wg as usize) as u64;
        let max = self.limits.max_compute_workgroups_per_dimension as u64;
        if groups <= max {
            [groups as u32, 1, 1]
        } else {
            let y = groups.div_ceil(max);
            [groups.div_ceil(y) as u32, y as u32, 1]
        }
    }

    /// A storage buffer holding `data` (padded to a non-empty multiple of 4 bytes, as storage
    /// bindings need).
    pub fn upload(&self, label: &str, data: &[u8]) -> wgpu::Buffer {
        let mut padded;
        let contents = if data.is_empty() || !data.len().is_multiple_of(4) {
            padded = data.to_vec();
            padded.resize(data.len().max(4).div_ceil(4) * 4, 0);
            &padded[..]
        } else {
            data
        };
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage: wgpu::BufferUsages::STORAGE,
        })
    }
}
