//! What the engine runs on in this tab: the CPU kernels and their race, the module's memory, whether
//! WebGPU is built, and the engine's judgement of the browser's WebGPU adapter.

use rocketjudge_engine::device::{AdapterReport, BackendChoice, WEBGPU_BUILT};
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::boundary::*;

/// The CPU engine's products: "int8 wasm relaxed-simd 16-bit runs", "int8 wasm simd128", … (the
/// first of this module's kernels until the race between them is decided: see [`cpu_kernel_race`]).
#[wasm_bindgen(js_name = cpuKernels)]
pub fn cpu_kernels() -> String {
    rocketjudge_engine::backend::cpu::qmatmul::kernel_name(Default::default()).to_string()
}

/// The race between the CPU engine's kernels on a judge's first products (`qmatmul::race_kernels`,
/// started when a judge loads): `[{kernel, medianRatio}]` (the median of its time over each raced
/// product's fastest), the winner first, or `null` while it runs.
#[wasm_bindgen(js_name = cpuKernelRace)]
pub fn cpu_kernel_race() -> Result<JsValue, JsValue> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Entrant {
        kernel: &'static str,
        median_ratio: f64,
    }
    let race = rocketjudge_engine::backend::cpu::qmatmul::race_result();
    to_js(&race.map(|r| r.iter().map(|&(kernel, median_ratio)| Entrant { kernel, median_ratio }).collect::<Vec<_>>()))
}

/// The CPU engine's SIMD kernels against the scalar reference, for every weight type, then its f32
/// products against f64 sums: `[{kernel, dtype, shape, maxRelError}]` (tests and diagnostics).
#[wasm_bindgen(js_name = kernelSelfTest)]
pub fn kernel_self_test() -> Result<JsValue, JsValue> {
    use rocketjudge_engine::backend::cpu;
    to_js(&[cpu::qmatmul::self_test(), cpu::f32_self_test()].concat())
}

/// Bytes of this module's linear memory: its peak, since wasm memory only grows (the CPU engine's
/// weights, KV cache and scratch; 32-bit wasm stops at 4 GiB).
#[wasm_bindgen(js_name = wasmMemoryBytes)]
pub fn wasm_memory_bytes() -> f64 {
    #[cfg(target_arch = "wasm32")]
    return (core::arch::wasm32::memory_size::<0>() * 65536) as f64;
    #[cfg(not(target_arch = "wasm32"))]
    0.0
}

/// Whether this build contains the WebGPU backend.
#[wasm_bindgen(js_name = webgpuAvailable)]
pub fn webgpu_available() -> bool {
    WEBGPU_BUILT
}

/// What the page shows of the browser's WebGPU adapter, from its report (`AdapterReport`: `{api,
/// present, vendor, architecture, device, description, fallback, shaderF16}`): `{available, hardware,
/// name, f16, why}`, the engine's rule for software adapters applied.
#[wasm_bindgen(js_name = adapterFacts)]
pub fn adapter_facts(report: JsValue) -> Result<JsValue, JsValue> {
    let report: AdapterReport = from_js(report, "adapter report")?;
    to_js(&report.facts())
}

/// Why `backend` (`auto`, `cpu`, `webgpu`) leads to the CPU before any device is opened, given the
/// browser's adapter report; `undefined` when WebGPU will be tried (the worker then allows models the
/// CPU engine could not hold).
#[wasm_bindgen(js_name = cpuBeforeOpening)]
pub fn cpu_before_opening(backend: &str, report: JsValue) -> Result<Option<String>, JsValue> {
    let choice: BackendChoice = backend.parse().map_err(err)?;
    let report: Option<AdapterReport> = from_js(report, "adapter report")?;
    Ok(rocketjudge_engine::device::cpu_before_opening(choice, report.as_ref()))
}
