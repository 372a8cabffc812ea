//! How the WebGPU backend is asked to set up its device and choose its kernels.

use crate::backend::adapter::AdapterReport;

/// Which shape of matrix-product and attention kernels to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelSet {
    /// Software kernels on CPU adapters (lavapipe, SwiftShader), GPU kernels elsewhere.
    Auto,
    /// Workgroup-tiled kernels for GPUs.
    Gpu,
    /// One weight row (matmul) or query row (attention) per invocation, activations and keys read
    /// through uniform bindings: for adapters that run invocations as the SIMD lanes of a CPU, where
    /// a storage load inside a loop costs one scalar load per lane but a uniform load costs one.
    Software,
}

/// How to set up the device.
#[derive(Debug, Clone)]
pub struct WebGpuOptions {
    /// Use f16 workgroup tiles in the matrix product when the adapter has `shader-f16`.
    pub allow_f16: bool,
    /// Use subgroup operations in reductions when the adapter has them (in a browser: when the page
    /// asked the device for them, `AdapterReport::subgroups`).
    pub allow_subgroups: bool,
    /// Run the many-row products on cooperative matrices (the GPU's matrix units) where the adapter
    /// has them (natively only; see `Device::coop`). Off by default until the kernel has been
    /// measured on a GPU: its numbers are checked on Mesa 26's lavapipe (8 × 8 matrices, in the
    /// suite), its speed and its 16 × 16 form on no GPU yet. `bench --cooperative-matrix` and the
    /// WebGPU tests ask for it.
    pub allow_cooperative_matrix: bool,
    /// Refuse to upload more than this many bytes of weights (WebGPU cannot tell how much memory a
    /// device has; a caller that knows can say so and get a clear error instead of an allocation
    /// failure).
    pub memory_budget: Option<u64>,
    /// Products with at most this many rows use the matrix-vector kernel.
    pub gemv_max_rows: usize,
    /// Prefer a low-power (integrated) adapter.
    pub low_power: bool,
    /// Treat storage bindings as at most this large even where the device allows more: tensors are
    /// then split as on a smaller device (tests use it to exercise splitting).
    pub max_binding_bytes: Option<u64>,
    pub kernels: KernelSet,
    /// In a browser: what the page knows of the adapter (its name, the fallback flag), which wgpu
    /// there does not pass on.
    pub report: Option<AdapterReport>,
}

impl Default for WebGpuOptions {
    fn default() -> Self {
        WebGpuOptions {
            allow_f16: true,
            allow_subgroups: true,
            allow_cooperative_matrix: false,
            memory_budget: None,
            gemv_max_rows: 16,
            low_power: false,
            max_binding_bytes: None,
            kernels: KernelSet::Auto,
            report: None,
        }
    }
}
