//! What is known of a WebGPU adapter before a model is loaded: whether it is software (a CPU
//! drawing for a missing GPU) and, in a browser, what the page tells of it. Below both the WebGPU
//! backend and the device choice (`crate::device`), which use it.

use serde::{Deserialize, Serialize};

/// What a browser tells of its WebGPU adapter (`navigator.gpu`, `GPUAdapterInfo`), which wgpu in a
/// browser does not pass on. Natively the adapter speaks for itself and there is no report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct AdapterReport {
    /// The browser has `navigator.gpu`.
    pub api: bool,
    /// It gave an adapter.
    pub present: bool,
    pub vendor: String,
    pub architecture: String,
    pub device: String,
    pub description: String,
    /// `GPUAdapterInfo.isFallbackAdapter` (the browser's own software adapter).
    pub fallback: bool,
    pub shader_f16: bool,
    /// The page asks the engine's device for `subgroups` (the adapter offers them and the browser's
    /// WGSL has the `subgroup_id` builtins the kernels take): wgpu in a browser does not request them.
    pub subgroups: bool,
}

impl AdapterReport {
    /// The adapter's name as the browser tells it (it may withhold the description), or "".
    pub fn name(&self) -> String {
        [&self.vendor, &self.architecture, &self.description]
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// What the page shows before a judge is loaded: `{available, hardware, name, f16, why}`.
    pub fn facts(&self) -> AdapterFacts {
        let why = if !self.api {
            "this browser has no WebGPU (navigator.gpu is missing)"
        } else if !self.present {
            "the browser found no WebGPU adapter"
        } else {
            ""
        };
        AdapterFacts {
            available: self.present,
            hardware: self.present && !is_software_adapter(false, self.fallback, &self.name()),
            name: Some(self.name()).filter(|n| !n.is_empty()).unwrap_or_else(|| "unnamed adapter".into()),
            f16: self.shader_f16,
            why: why.into(),
        }
    }
}

/// A browser's WebGPU adapter as the page shows it (see [`AdapterReport::facts`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdapterFacts {
    pub available: bool,
    /// A GPU, not a software adapter.
    pub hardware: bool,
    pub name: String,
    pub f16: bool,
    /// Why WebGPU is not available ("" when it is).
    pub why: String,
}

/// Names of CPU rasterizers that offer WebGPU or Vulkan (SwiftShader, Mesa's llvmpipe and lavapipe,
/// softpipe, Windows' WARP).
const SOFTWARE_ADAPTERS: [&str; 6] = ["swiftshader", "llvmpipe", "lavapipe", "softpipe", "software", "microsoft basic render"];

/// Whether an adapter is software, a CPU drawing for a missing GPU: its device type says so
/// (natively), the browser flags it as its fallback adapter, or its name is a known rasterizer's.
/// WebGPU there runs slower than the CPU engine, so `auto` takes the CPU.
pub fn is_software_adapter(device_type_cpu: bool, fallback: bool, name: &str) -> bool {
    let name = name.to_lowercase();
    device_type_cpu || fallback || SOFTWARE_ADAPTERS.iter().any(|s| name.contains(s))
}
