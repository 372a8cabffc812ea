//! The peak a device is measured against: given with --peak-tflops, computed for a CPU from its
//! cores, clock and kernels, looked up for a GPU by name; the FLOPs a workload does; peak memory.

use rocketjudge_engine::device::{BackendInfo, BackendKind};
use rocketjudge_engine::model::config::Config;

/// The device's assumed peak in T(FL)OP/s and where that number comes from.
pub(super) fn assumed_peak(info: &BackendInfo, flag: Option<f64>) -> (Option<f64>, String) {
    if let Some(p) = flag {
        return (Some(p), "given with --peak-tflops".into());
    }
    if info.kind == BackendKind::Cpu {
        let threads = info.threads.unwrap_or(1);
        return match cpu_peak(&info.kernels, threads, &CpuFacts::here()) {
            Some((p, why)) => (Some(p), why),
            None => (None, format!("unknown for {} on this CPU (pass --peak-tflops)", info.kernels)),
        };
    }
    let name = info.adapter.as_deref().unwrap_or("an unnamed adapter");
    let up = name.to_uppercase();
    let known: Option<(f64, &str)> = if up.contains("H200") && up.contains("NVL") {
        Some((60.0, "NVIDIA H200 NVL: 60 TFLOP/s FP32 (datasheet)"))
    } else if up.contains("H200") {
        Some((67.0, "NVIDIA H200 SXM: the H100 SXM's GH100 configuration, 67 TFLOP/s FP32 (datasheet)"))
    } else if up.contains("H100") && up.contains("NVL") {
        Some((60.0, "NVIDIA H100 NVL: 60 TFLOP/s FP32 (datasheet)"))
    } else if up.contains("H100") && up.contains("PCIE") {
        Some((51.0, "NVIDIA H100 PCIe: 114 SMs × 128 FP32 lanes × 2 × 1.755 GHz = 51 TFLOP/s FP32"))
    } else if up.contains("H100") {
        Some((67.0, "NVIDIA H100 SXM: 132 SMs × 128 FP32 lanes × 2 × 1.98 GHz = 67 TFLOP/s FP32"))
    } else if up.contains("A100") {
        Some((19.5, "NVIDIA A100: 19.5 TFLOP/s FP32 (datasheet)"))
    } else {
        None
    };
    match known {
        Some((p, why)) => (Some(p), format!("{why}; FP32 without tensor cores, which WGSL kernels cannot use")),
        None if info.software_adapter => (None, format!("unknown: {name} is a software adapter running on the CPU (pass --peak-tflops)")),
        None => (None, format!("unknown for {name} (pass --peak-tflops)")),
    }
}

/// What the peak of a CPU is computed from: its clock and its physical cores (Linux's
/// `/proc/cpuinfo`; `None` where it does not say), and whether its SIMD units are 128 bits wide.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct CpuFacts {
    mhz: Option<f64>,
    cores: Option<usize>,
    /// AMD Zen and Zen+ (family 23, models below 48): 256-bit instructions run as two 128-bit
    /// halves, and the byte dot product (`vpmaddubsw`) has one unit.
    halves: bool,
}

impl CpuFacts {
    fn here() -> Self {
        Self::parse(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default())
    }

    pub(super) fn parse(cpuinfo: &str) -> Self {
        let field = |line: &str, name: &str| line.split_once(':').filter(|(k, _)| k.trim() == name).map(|(_, v)| v.trim().to_string());
        let mhz = cpuinfo.lines().find_map(|l| field(l, "cpu MHz")).and_then(|v| v.parse::<f64>().ok()).filter(|&m| m > 0.0);
        // Physical cores: distinct (physical id, core id) pairs; SMT siblings share one.
        let (mut package, mut cores) = (String::new(), std::collections::BTreeSet::new());
        for l in cpuinfo.lines() {
            if let Some(p) = field(l, "physical id") {
                package = p;
            } else if let Some(c) = field(l, "core id") {
                cores.insert((package.clone(), c));
            }
        }
        let first = |name: &str| cpuinfo.lines().find_map(|l| field(l, name));
        let number = |name: &str| first(name).and_then(|v| v.parse::<u32>().ok());
        let halves = first("vendor_id").as_deref() == Some("AuthenticAMD")
            && number("cpu family") == Some(23)
            && number("model").is_some_and(|m| m < 48);
        CpuFacts { mhz, cores: (!cores.is_empty()).then_some(cores.len()), halves }
    }
}

/// The CPU's peak for the kernels in use, in T(FL)OP/s, and how it was computed: the cores the
/// threads occupy × operations per cycle × the clock. Integer kernels count int8 operations (a
/// product and its addition are 2, as the FLOP counts of the weight products are): two 256-bit
/// `vpdpbusd` or `vpmaddubsw` a cycle per core (64 byte products); the f32 path: two 256-bit FMA
/// units (32 FLOP a cycle). AMD Zen and Zen+ ([`CpuFacts::halves`]): one 128-bit `vpmaddubsw` a
/// cycle (16 byte products) and two 128-bit FMA units (16 FLOP), as measured on an EPYC 7001 VM
/// (docs/measurements/speed.md). Other kernels (scalar, NEON, wasm): unknown.
pub(super) fn cpu_peak(kernels: &str, threads: usize, facts: &CpuFacts) -> Option<(f64, String)> {
    let (per_cycle, unit, rate, why) = match (kernels, facts.halves) {
        ("int8 amx", _) => (2048.0, "int8 ops", "TOP/s", "AMX: a 16 × 16 × 64 tile product every 16 cycles, 1,024 byte products"),
        ("int8 avx512-vnni" | "int8 avx-vnni", _) => (128.0, "int8 ops", "TOP/s", "two 256-bit vpdpbusd a cycle, 64 byte products"),
        ("int8 avx2", false) => (128.0, "int8 ops", "TOP/s", "two 256-bit vpmaddubsw a cycle, 64 byte products"),
        ("int8 avx2", true) => (32.0, "int8 ops", "TOP/s", "AMD Zen/Zen+: one 128-bit vpmaddubsw a cycle, 16 byte products"),
        ("f32", false) if cfg!(target_arch = "x86_64") => (32.0, "FLOP", "TFLOP/s", "two 256-bit FMA units"),
        ("f32", true) if cfg!(target_arch = "x86_64") => (16.0, "FLOP", "TFLOP/s", "AMD Zen/Zen+: two 128-bit FMA units"),
        _ => return None,
    };
    let ghz = facts.mhz? / 1e3;
    let cores = facts.cores.map_or(threads, |c| threads.min(c));
    let peak = cores as f64 * per_cycle * ghz / 1e3;
    Some((peak, format!("{cores} cores × {per_cycle} {unit}/cycle ({why}) × {ghz:.2} GHz (cpu MHz in /proc/cpuinfo) = {peak:.3} {rate}")))
}

/// This process's peak resident memory so far (Linux: `VmHWM` in /proc/self/status), `None`
/// elsewhere: the model, the workload's activations and caches, and the runtime.
pub(super) fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()?;
    Some(kb * 1024)
}

/// FLOPs of the prefill of `p` tokens and of the pass over `items` suffixes of `s` tokens each: every
/// layer for every row except the last layer, which computes only each suffix's final row (counted
/// as such: a lower bound, the last layer's keys and values of the other rows are left out).
pub(super) fn flops(c: &Config, p: f64, items: f64, s: f64) -> (f64, f64) {
    let prefill = c.matmul_flops_per_token() * p + c.attention_flops(p * (p + 1.0) / 2.0);
    let per_layer = 1.0 / c.n_layer as f64;
    let rows = items * s;
    // Each suffix row attends to the prefix and causally to its own earlier rows.
    let keys = items * (s * p + s * (s + 1.0) / 2.0);
    let last_keys = items * (p + s);
    let suffixes = c.matmul_flops_per_token() * per_layer * ((c.n_layer as f64 - 1.0) * rows + items)
        + c.attention_flops(keys) * (1.0 - per_layer)
        + c.attention_flops(last_keys) * per_layer;
    (prefill, suffixes)
}

#[cfg(test)]
mod tests {
    use super::{assumed_peak, cpu_peak, CpuFacts};
    use rocketjudge_engine::device::{BackendInfo, BackendKind};

    fn gpu(name: &str, software_adapter: bool) -> BackendInfo {
        BackendInfo {
            kind: BackendKind::WebGpu,
            description: String::new(),
            why: String::new(),
            adapter: Some(name.into()),
            vendor: None,
            device_type: None,
            software_adapter,
            threads: None,
            kernels: String::new(),
            precision: None,
            f16: false,
            subgroups: false,
        }
    }

    #[test]
    fn peaks_come_from_the_flag_or_the_gpu_name_or_are_unknown() {
        let cpu = BackendInfo { kind: BackendKind::Cpu, adapter: None, kernels: "int8 scalar".into(), ..gpu("", false) };
        assert_eq!(assumed_peak(&cpu, Some(1.5)).0, Some(1.5));
        assert_eq!(assumed_peak(&cpu, None).0, None);
        assert_eq!(assumed_peak(&gpu("NVIDIA H100 80GB HBM3", false), None).0, Some(67.0));
        assert_eq!(assumed_peak(&gpu("NVIDIA H100 PCIe", false), None).0, Some(51.0));
        assert_eq!(assumed_peak(&gpu("NVIDIA H200", false), None).0, Some(67.0));
        let (p, why) = assumed_peak(&gpu("llvmpipe (LLVM 19.1.7, 256 bits)", true), None);
        assert_eq!(p, None);
        assert!(why.contains("llvmpipe (LLVM 19.1.7, 256 bits)") && why.contains("software adapter"), "{why}");
    }

    /// A CPU's peak: the cores the threads occupy (SMT siblings share one) × the kernels' operations
    /// per cycle × the clock from /proc/cpuinfo.
    #[test]
    fn a_cpu_peak_comes_from_its_cores_clock_and_kernels() {
        // Two packages of two cores, each core with two SMT threads (8 logical CPUs).
        let mut info = String::new();
        for (p, c) in [(0, 0), (0, 0), (0, 1), (0, 1), (1, 0), (1, 0), (1, 1), (1, 1)] {
            info += &format!("processor\t: x\ncpu MHz\t\t: 2500.000\nphysical id\t: {p}\ncore id\t\t: {c}\n\n");
        }
        let facts = CpuFacts::parse(&info);
        assert_eq!(facts, CpuFacts { mhz: Some(2500.0), cores: Some(4), halves: false });
        // 2 threads: 2 cores × 128 int8 ops × 2.5 GHz; 8 threads still occupy only 4 cores.
        assert!((cpu_peak("int8 avx512-vnni", 2, &facts).unwrap().0 - 0.64).abs() < 1e-12);
        assert!((cpu_peak("int8 avx2", 8, &facts).unwrap().0 - 1.28).abs() < 1e-12);
        // AMX: 2,048 int8 ops a cycle a core (Intel's figure for one tile unit).
        assert!((cpu_peak("int8 amx", 2, &facts).unwrap().0 - 10.24).abs() < 1e-12);
        if cfg!(target_arch = "x86_64") {
            let (f32_peak, why) = cpu_peak("f32", 1, &facts).unwrap();
            assert!((f32_peak - 0.08).abs() < 1e-12 && why.contains("2.50 GHz"), "{why}");
        }
        assert_eq!(cpu_peak("int8 scalar", 2, &facts), None);
        // No clock given: unknown; no core ids: the threads count as cores.
        assert_eq!(cpu_peak("int8 avx2", 2, &CpuFacts::parse("processor\t: 0\n")), None);
        let (p, _) = cpu_peak("int8 avx2", 3, &CpuFacts::parse("cpu MHz\t: 1000\n")).unwrap();
        assert!((p - 0.384).abs() < 1e-12);
    }

    /// AMD Zen and Zen+ (family 23, models below 48) run 256-bit instructions as two halves: a
    /// quarter of the int8 peak, half the f32 one. Zen 2 (model 49) and Intel keep the full peak.
    #[test]
    fn zen_and_zen_plus_have_a_128_bit_peak() {
        let info = |vendor: &str, family: u32, model: u32| {
            format!("processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\ncpu MHz\t\t: 2000.000\n")
        };
        let zen = CpuFacts::parse(&info("AuthenticAMD", 23, 1));
        assert!(zen.halves);
        assert!((cpu_peak("int8 avx2", 2, &zen).unwrap().0 - 0.128).abs() < 1e-12);
        if cfg!(target_arch = "x86_64") {
            assert!((cpu_peak("f32", 2, &zen).unwrap().0 - 0.064).abs() < 1e-12);
        }
        for (vendor, family, model) in [("AuthenticAMD", 23, 49), ("AuthenticAMD", 25, 1), ("GenuineIntel", 6, 1)] {
            let facts = CpuFacts::parse(&info(vendor, family, model));
            assert!(!facts.halves, "{vendor} family {family} model {model}");
            assert!((cpu_peak("int8 avx2", 2, &facts).unwrap().0 - 0.512).abs() < 1e-12);
        }
    }
}
