//! Which device a judge runs on, chosen and opened in one place for the CLI (`grade`, `direct`,
//! `bench`) and the browser (`crate/wasm`): [`BackendChoice`] (`auto`, `cpu`, `webgpu`, parsed from a
//! flag or a JS string), [`BackendOptions`], [`open_judge`] / [`judge_from_file`], and a typed
//! [`BackendInfo`] of what was opened. A build without the `webgpu` feature answers `webgpu` with an
//! [`EngineError::Unavailable`] (and `auto` with the CPU), so callers have no feature branches.

use std::path::Path;

use rocketjudge_core::named_enum;
use serde::{Deserialize, Serialize};

pub use crate::backend::adapter::{is_software_adapter, AdapterFacts, AdapterReport};
use crate::backend::cpu::{Cpu, Precision};
use crate::backend::Backend;
use crate::gguf::Gguf;
use crate::judge::AnyJudge;
use crate::load::{block_on, judge_from_header, open_file};
use crate::model::{LoadProgress, TensorSource};
use crate::EngineError;

/// Whether this build contains the WebGPU backend.
pub const WEBGPU_BUILT: bool = cfg!(feature = "webgpu");

named_enum!(
    /// The backend a caller asks for.
    pub enum BackendChoice, "backend" {
        /// WebGPU on a hardware adapter, else the CPU.
        Auto = "auto",
        Cpu = "cpu",
        /// WebGPU on any adapter, a software one too.
        WebGpu = "webgpu",
    }
);

named_enum!(
    /// The shape of the WebGPU kernels.
    pub enum GpuKernels, "kernels" {
        /// Software-shaped kernels on CPU adapters (lavapipe, SwiftShader), GPU kernels elsewhere.
        Auto = "auto",
        Gpu = "gpu",
        Software = "software",
    }
);

named_enum!(
    /// The backend a judge runs on.
    pub enum BackendKind, "backend kind" {
        Cpu = "cpu",
        WebGpu = "webgpu",
    }
);

/// How to set up the backend (each backend reads its own fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct BackendOptions {
    /// CPU threads (0: one per core natively; in a browser, the page's worker pool).
    pub threads: usize,
    pub precision: Precision,
    pub kernels: GpuKernels,
    /// CPU, int8: the products' kernels by name ("int8 avx2", …; `None`: the best this CPU has).
    pub cpu_kernels: Option<String>,
    /// WebGPU: f16 workgroup tiles where the adapter has `shader-f16`.
    pub allow_f16: bool,
    /// WebGPU: subgroup operations in reductions where the device has them (in a browser, where the
    /// page asked for them).
    pub allow_subgroups: bool,
    /// WebGPU, natively: the many-row products on cooperative matrices (the GPU's matrix units)
    /// where the adapter has them; off by default until measured on a GPU.
    pub allow_cooperative_matrix: bool,
    /// WebGPU: refuse to upload more than this many bytes of weights.
    pub memory_budget: Option<u64>,
    /// WebGPU in a browser: what the page knows of its adapter (wgpu there does not pass it on).
    pub adapter: Option<AdapterReport>,
}

/// The CPU where `choice` leads there before any device is opened, and why: the CPU was chosen,
/// this build has no WebGPU, or (`auto`) the browser's report shows no adapter or a software one.
/// `None`: WebGPU is tried (natively the adapter is judged once it is open).
pub fn cpu_before_opening(choice: BackendChoice, report: Option<&AdapterReport>) -> Option<String> {
    match choice {
        BackendChoice::Cpu => Some("CPU chosen".into()),
        BackendChoice::WebGpu => None,
        BackendChoice::Auto if !WEBGPU_BUILT => Some("this build has no WebGPU backend".into()),
        BackendChoice::Auto => {
            let r = report?;
            let facts = r.facts();
            if !facts.available {
                Some(facts.why)
            } else if !facts.hardware {
                Some(software_why(&facts.name))
            } else {
                None
            }
        }
    }
}

impl BackendOptions {
    /// The CPU's integer kernels these options name (`cpu_kernels`), or the best this CPU has.
    pub fn cpu_kernel_choice(&self) -> Result<crate::backend::cpu::qmatmul::Kernels, EngineError> {
        match &self.cpu_kernels {
            Some(name) => crate::backend::cpu::qmatmul::Kernels::named(name).map_err(EngineError::Unavailable),
            None => Ok(Default::default()),
        }
    }
}

fn software_why(name: &str) -> String {
    format!("the WebGPU adapter ({name}) is software, not a GPU: the CPU engine is faster here")
}

impl Default for BackendOptions {
    fn default() -> Self {
        Self {
            threads: 0,
            precision: Precision::default(),
            kernels: GpuKernels::Auto,
            cpu_kernels: None,
            allow_f16: true,
            allow_subgroups: true,
            allow_cooperative_matrix: false,
            memory_budget: None,
            adapter: None,
        }
    }
}

/// What a judge runs on, typed (front-ends show it, `bench` looks up the GPU's peak from it). The same
/// fields whichever backends this build has.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BackendInfo {
    pub kind: BackendKind,
    /// The backend's own one-line description ("cpu (2 threads, int8 avx2)", "webgpu: NAME (...)").
    pub description: String,
    /// Why this backend runs (what was asked for, or why `auto` or a failure chose it).
    pub why: String,
    /// The WebGPU adapter's name; `None` on the CPU, or where the browser keeps it to itself.
    pub adapter: Option<String>,
    /// The adapter's PCI vendor id (0 where unknown); `None` on the CPU.
    pub vendor: Option<u32>,
    /// The adapter's device type (`DiscreteGpu`, `Cpu`, ...); `None` on the CPU.
    pub device_type: Option<String>,
    /// The adapter is a CPU rasterizer (lavapipe, llvmpipe, SwiftShader), not a GPU.
    pub software_adapter: bool,
    /// CPU threads; `None` on WebGPU.
    pub threads: Option<usize>,
    /// The kernels that run: the CPU's products ("int8 avx2", "f32") or WebGPU's ("gpu", "software").
    pub kernels: String,
    /// The CPU's precision; `None` on WebGPU.
    pub precision: Option<Precision>,
    /// WebGPU matrix products use f16 workgroup tiles.
    pub f16: bool,
    /// WebGPU reductions use subgroup operations.
    pub subgroups: bool,
}

impl BackendInfo {
    pub fn of_cpu(cpu: &Cpu) -> Self {
        BackendInfo {
            kind: BackendKind::Cpu,
            description: cpu.describe(),
            why: String::new(),
            adapter: None,
            vendor: None,
            device_type: None,
            software_adapter: false,
            threads: Some(cpu.threads()),
            kernels: cpu.kernel_name().to_string(),
            precision: Some(cpu.precision()),
            f16: false,
            subgroups: false,
        }
    }

    #[cfg(feature = "webgpu")]
    pub fn of_webgpu(gpu: &crate::backend::webgpu::WebGpu) -> Self {
        let info = gpu.adapter_info();
        BackendInfo {
            kind: BackendKind::WebGpu,
            description: gpu.describe(),
            why: String::new(),
            adapter: Some(info.name.trim().to_string()).filter(|n| !n.is_empty()),
            vendor: Some(info.vendor),
            device_type: Some(format!("{:?}", info.device_type)),
            software_adapter: gpu.on_software_adapter(),
            threads: None,
            kernels: if gpu.uses_software_kernels() { GpuKernels::Software } else { GpuKernels::Gpu }.to_string(),
            precision: None,
            f16: gpu.uses_f16(),
            subgroups: gpu.uses_subgroups(),
        }
    }
}

/// The error for a backend this build lacks.
#[cfg_attr(feature = "webgpu", allow(dead_code))]
fn webgpu_not_built() -> EngineError {
    EngineError::Unavailable(
        "backend `webgpu` is not available: this build lacks the WebGPU backend (natively: `cargo build --release -p rocketjudge \
         --features webgpu`; the web build: `scripts/build-web.sh`)"
            .into(),
    )
}

/// Open a CPU backend.
pub fn open_cpu(options: &BackendOptions) -> Result<Cpu, EngineError> {
    Ok(Cpu::with_precision(options.threads, options.precision)?.with_kernels(options.cpu_kernel_choice()?))
}

/// Open the WebGPU device (Vulkan, Metal or DX12 natively; Mesa's lavapipe on a Linux machine without a GPU).
#[cfg(feature = "webgpu")]
pub async fn open_webgpu(options: &BackendOptions) -> Result<crate::backend::webgpu::WebGpu, EngineError> {
    use crate::backend::webgpu::{KernelSet, WebGpu, WebGpuOptions};
    #[cfg(not(target_arch = "wasm32"))]
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        // Some Vulkan loaders complain without it; none of them needs a real one.
        std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir());
    }
    let kernels = match options.kernels {
        GpuKernels::Auto => KernelSet::Auto,
        GpuKernels::Gpu => KernelSet::Gpu,
        GpuKernels::Software => KernelSet::Software,
    };
    let d = WebGpuOptions::default();
    let report = options.adapter.clone();
    WebGpu::new(WebGpuOptions {
        kernels,
        allow_f16: options.allow_f16,
        allow_subgroups: options.allow_subgroups,
        allow_cooperative_matrix: options.allow_cooperative_matrix,
        memory_budget: options.memory_budget,
        report,
        ..d
    })
    .await
}

/// A backend that takes activations from the host: what benchmarks of raw products need beyond [`Backend`].
pub trait HostUpload: Backend {
    fn upload(&mut self, rows: usize, cols: usize, data: Vec<f32>) -> Result<Self::Tensor, EngineError>;
}

impl HostUpload for Cpu {
    fn upload(&mut self, rows: usize, cols: usize, data: Vec<f32>) -> Result<crate::backend::cpu::Tensor, EngineError> {
        Ok(crate::backend::cpu::Tensor { rows, cols, data })
    }
}

#[cfg(feature = "webgpu")]
impl HostUpload for crate::backend::webgpu::WebGpu {
    fn upload(&mut self, rows: usize, cols: usize, data: Vec<f32>) -> Result<Self::Tensor, EngineError> {
        self.tensor(rows, cols, &data)
    }
}

/// Work generic over the backend, for [`with_backend`].
pub trait WithBackend {
    type Output;
    fn run<B: HostUpload>(self, backend: B, info: BackendInfo) -> Self::Output;
}

/// Open exactly the chosen backend (`auto` is refused: a measurement names its backend) and hand it to
/// `work` (natively; `rocketjudge bench`).
pub fn with_backend<W: WithBackend>(choice: BackendChoice, options: &BackendOptions, work: W) -> Result<W::Output, EngineError> {
    match choice {
        BackendChoice::Cpu => {
            let cpu = open_cpu(options)?;
            let info = BackendInfo::of_cpu(&cpu);
            Ok(work.run(cpu, info))
        }
        #[cfg(feature = "webgpu")]
        BackendChoice::WebGpu => {
            let gpu = block_on(open_webgpu(options))?;
            let info = BackendInfo::of_webgpu(&gpu);
            Ok(work.run(gpu, info))
        }
        #[cfg(not(feature = "webgpu"))]
        BackendChoice::WebGpu => Err(webgpu_not_built()),
        BackendChoice::Auto => Err(EngineError::Input("choose the backend to measure: cpu or webgpu, not auto".into())),
    }
}

/// Load a judge whose header is parsed on the chosen backend. `auto` takes WebGPU where it opens on a
/// hardware adapter and loads the model, else the CPU; `webgpu` fails where WebGPU does; the
/// returned [`BackendInfo`] says which runs and why.
pub async fn open_judge(
    name: String,
    g: &Gguf,
    src: &mut impl TensorSource,
    choice: BackendChoice,
    options: &BackendOptions,
    max_tokens: usize,
    progress: LoadProgress<'_>,
) -> Result<(AnyJudge, BackendInfo), EngineError> {
    let why: String = match cpu_before_opening(choice, options.adapter.as_ref()) {
        Some(why) => why,
        #[cfg(feature = "webgpu")]
        None => {
            let gpu = match open_webgpu(options).await {
                Ok(gpu) => Some(gpu),
                Err(e) if choice == BackendChoice::WebGpu => return Err(e),
                Err(_) => None,
            };
            match gpu {
                Some(gpu) if choice == BackendChoice::Auto && gpu.on_software_adapter() => software_why(gpu.adapter_info().name.trim()),
                Some(gpu) => match judge_from_header(name.clone(), g, src, gpu, max_tokens, &mut *progress).await {
                    Ok(j) => {
                        let mut info = BackendInfo::of_webgpu(&j.backend);
                        info.why =
                            if choice == BackendChoice::Auto { "a hardware WebGPU adapter is available" } else { "WebGPU chosen" }.into();
                        return Ok((AnyJudge::WebGpu(j), info));
                    }
                    Err(e) if choice == BackendChoice::Auto => format!("WebGPU could not load this model ({e})"),
                    Err(e) => return Err(e),
                },
                None => "no WebGPU adapter opened".into(),
            }
        }
        #[cfg(not(feature = "webgpu"))]
        None => return Err(webgpu_not_built()),
    };
    let cpu = open_cpu(options)?;
    let j = judge_from_header(name, g, src, cpu, max_tokens, progress).await?;
    let mut info = BackendInfo::of_cpu(&j.backend);
    info.why = why;
    Ok((AnyJudge::Cpu(j), info))
}

/// A judge from a GGUF file on disk, on the chosen backend. The judge's name is the file stem.
pub fn open_judge_file(
    path: &Path,
    choice: BackendChoice,
    options: &BackendOptions,
    max_tokens: usize,
    progress: LoadProgress<'_>,
) -> Result<(AnyJudge, BackendInfo), EngineError> {
    let (name, g, mut src) = open_file(path)?;
    // Reading a file never waits on anything but the disk: drive the async loader to completion here.
    block_on(open_judge(name, &g, &mut src, choice, options, max_tokens, progress))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_parse_and_display_as_their_flag() {
        for s in BackendChoice::NAMES {
            assert_eq!(s.parse::<BackendChoice>().unwrap().to_string(), *s);
        }
        assert_eq!("webgpu".parse::<BackendChoice>().unwrap(), BackendChoice::WebGpu);
        let e = EngineError::from("gpu".parse::<BackendChoice>().unwrap_err());
        assert_eq!(e.kind(), crate::ErrorKind::Input);
        assert!(e.to_string().contains("auto, cpu, webgpu"), "{e}");
        assert_eq!(serde_json::to_string(&BackendKind::WebGpu).unwrap(), "\"webgpu\"");
        assert_eq!(serde_json::from_str::<GpuKernels>("\"software\"").unwrap(), GpuKernels::Software);
    }

    #[test]
    fn software_adapters_are_told_by_device_type_flag_or_name() {
        assert!(is_software_adapter(true, false, "NVIDIA H200"));
        assert!(is_software_adapter(false, true, "nvidia"));
        for name in ["google swiftshader", "llvmpipe (LLVM 17.0.6, 256 bits)", "Lavapipe", "Microsoft Basic Render Driver"] {
            assert!(is_software_adapter(false, false, name), "{name}");
        }
        for name in ["nvidia hopper NVIDIA H200", "apple metal-3", "AMD Radeon RX 7900", ""] {
            assert!(!is_software_adapter(false, false, name), "{name}");
        }
    }

    #[test]
    fn auto_takes_the_cpu_before_opening_where_the_browser_reports_no_gpu() {
        let gpu = AdapterReport { api: true, present: true, vendor: "nvidia".into(), architecture: "hopper".into(), ..Default::default() };
        let swiftshader = AdapterReport { vendor: "google".into(), architecture: "swiftshader".into(), ..gpu.clone() };
        let none = AdapterReport { api: true, ..Default::default() };
        let no_api = AdapterReport::default();
        assert_eq!(cpu_before_opening(BackendChoice::Cpu, Some(&gpu)).as_deref(), Some("CPU chosen"));
        // `webgpu` always tries; natively (no report) `auto` judges the adapter once it is open.
        assert_eq!(cpu_before_opening(BackendChoice::WebGpu, Some(&swiftshader)), None);
        if WEBGPU_BUILT {
            assert_eq!(cpu_before_opening(BackendChoice::Auto, None), None);
            assert_eq!(cpu_before_opening(BackendChoice::Auto, Some(&gpu)), None);
            let why = cpu_before_opening(BackendChoice::Auto, Some(&swiftshader)).unwrap();
            assert_eq!(why, "the WebGPU adapter (google swiftshader) is software, not a GPU: the CPU engine is faster here");
            assert!(cpu_before_opening(BackendChoice::Auto, Some(&none)).unwrap().contains("found no WebGPU adapter"));
            assert!(cpu_before_opening(BackendChoice::Auto, Some(&no_api)).unwrap().contains("navigator.gpu is missing"));
        } else {
            assert!(cpu_before_opening(BackendChoice::Auto, Some(&gpu)).unwrap().contains("no WebGPU backend"));
        }
        let f = swiftshader.facts();
        assert!(f.available && !f.hardware && f.name == "google swiftshader" && f.why.is_empty(), "{f:?}");
        assert!(gpu.facts().hardware);
        assert!(!no_api.facts().available);
    }

    #[cfg(not(feature = "webgpu"))]
    #[test]
    fn a_build_without_webgpu_refuses_it_by_kind() {
        let e = webgpu_not_built();
        assert_eq!(e.kind(), crate::ErrorKind::Unavailable);
    }
}
