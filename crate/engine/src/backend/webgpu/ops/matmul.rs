//! `x · Wᵀ (+ bias)`: a tiled GEMM (`gemm.wgsl`) for many rows — on the GPU's matrix units
//! (`gemm_coop.wgsl`) where the device has cooperative matrices —, a GEMV (`gemv.wgsl`) for few, and
//! on software adapters a product reading activations through uniform bindings (`matmul_ubo.wgsl`,
//! after `pack_x.wgsl` lays them out), each dispatched once per weight part.

use bytemuck::{Pod, Zeroable};

use super::super::options::WebGpuOptions;
use super::super::pool::{bufs, Tensor};
use super::super::recorder::{Bind, Shader};
use super::super::repack::Format;
use super::super::weight::{Part, Weight};
use super::{dq_section, lane, module, planes, subgroup_section, xload, Ctx};

const MATMUL_IO: &str = include_str!("../kernels/matmul_io.wgsl");
const GEMM: &str = include_str!("../kernels/gemm.wgsl");
const GEMM_COOP: &str = include_str!("../kernels/gemm_coop.wgsl");
const GEMV: &str = include_str!("../kernels/gemv.wgsl");
const MATMUL_UBO: &str = include_str!("../kernels/matmul_ubo.wgsl");
const PACK_X: &str = include_str!("../kernels/pack_x.wgsl");

/// Output rows × columns of a GEMM workgroup (`BM`, `BN` in gemm.wgsl, fixed by its 16 × 16
/// threads with 4 × 4 register tiles; in gemm_coop.wgsl by its 8 subgroups' 16 × 32 shares).
const GEMM_TILE: usize = 64;
/// Weight rows (`NR`) and activation rows (`MB`) of a GEMV workgroup (gemv.wgsl; `MB` also sizes a
/// function-scope array there, so it stays a WGSL constant).
const GEMV_ROWS: u32 = 8;
const GEMV_MB: usize = 8;
/// Weight rows per software-product workgroup (two per invocation of 64).
const UBO_ROWS: usize = 128;

/// The parameters of `matmul_io.wgsl` (GEMM and GEMV).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    m: u32,
    k: u32,
    k_padded: u32,
    part_row0: u32,
    part_rows: u32,
    y_cols: u32,
    has_bias: u32,
    pad: u32,
}

/// The parameters of `matmul_ubo.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct UboParams {
    m: u32,
    m0: u32,
    k8n: u32,
    k8_0: u32,
    k_padded: u32,
    part_row0: u32,
    part_rows: u32,
    y_cols: u32,
    has_bias: u32,
    accumulate: u32,
    pad0: u32,
    pad1: u32,
}

/// The parameters of `pack_x.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct PackParams {
    n: u32,
    m: u32,
    k: u32,
    kc: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(in super::super) enum Variant {
    /// Tiled matrix product; `f16`: workgroup tiles in f16; `bk`: k-depth of a tile (16 or 32);
    /// `xvec`: activation rows are 16-byte aligned.
    Gemm { fmt: Format, f16: bool, bk: u32, xvec: bool },
    /// Tiled matrix product on cooperative matrices (f16 × f16 → f32, `tile` × `tile`), `wg`
    /// invocations: 8 subgroups.
    GemmCoop { fmt: Format, xvec: bool, tile: u32, wg: u32 },
    /// `subgroups`: a subgroup per (weight row, part of k), summing in registers.
    Gemv { fmt: Format, xvec: bool, subgroups: bool },
    /// The product for software adapters: `mb` rows × `kc` columns of activations per dispatch.
    Ubo { fmt: Format, mb: u32, kc: u32 },
    /// Activations into `[k-chunk][row][kc]` blocks for [`Variant::Ubo`].
    PackX,
}

impl Variant {
    fn body(&self) -> String {
        match *self {
            Variant::Gemm { fmt, f16, xvec, .. } => {
                // The tile element type is a type, which no override can set: an alias before the file.
                let head = if f16 { "enable f16;\nalias tile_t = f16;\n" } else { "alias tile_t = f32;\n" };
                format!("{head}{MATMUL_IO}\n{GEMM}\n{}\n{}", xload(xvec), dq_section(fmt))
            }
            Variant::GemmCoop { fmt, xvec, tile, .. } => {
                // The matrices' size is part of their types, which no override can set.
                let mat = |t: &str, role: &str| format!("alias mat_{role} = coop_mat{tile}x{tile}<{t}, {}>;\n", role.to_uppercase());
                let head = format!("const S: u32 = {tile}u;\n{}{}{}", mat("f16", "a"), mat("f16", "b"), mat("f32", "c"));
                format!(
                    "enable f16;\nenable wgpu_cooperative_matrix;\n{head}{MATMUL_IO}\n{GEMM_COOP}\n{}\n{}",
                    xload(xvec),
                    dq_section(fmt)
                )
            }
            Variant::Gemv { fmt, xvec, subgroups } => {
                let gemv = subgroup_section(GEMV, subgroups);
                format!("{MATMUL_IO}\n{}\n{gemv}\n{}\n{}", lane(subgroups), xload(xvec), dq_section(fmt))
            }
            Variant::Ubo { fmt, mb, kc } => format!("{}\n{}", ubo_source(mb, kc), dq_section(fmt)),
            Variant::PackX => PACK_X.to_string(),
        }
    }

    fn overrides(&self) -> Vec<(&'static str, f64)> {
        match *self {
            Variant::Gemm { bk, .. } => vec![("BK", bk as f64)],
            Variant::GemmCoop { wg, .. } => vec![("WG", wg as f64)],
            Variant::PackX => vec![("WG", super::eltwise::WG as f64)],
            Variant::Gemv { .. } | Variant::Ubo { .. } => Vec::new(),
        }
    }
}

/// The software product's text: one accumulator pair per activation row, unrolled (WGSL has no
/// arrays of registers that LLVM keeps in registers), and a uniform array whose size — `mb × kc`
/// values — must be a constant, not an override.
fn ubo_source(mb: u32, kc: u32) -> String {
    let (mut decl, mut body, mut store, mut store2) = (String::new(), String::new(), String::new(), String::new());
    for i in 0..mb {
        let at = i * kc / 4;
        decl.push_str(&format!("    var a{i} = 0.0;\n    var c{i} = 0.0;\n"));
        body.push_str(&format!(
            "        let x{i}a = xu[{at}u + b];\n        let x{i}b = xu[{at}u + b + 1u];\n        \
             a{i} += dot(w.a, x{i}a) + dot(w.b, x{i}b);\n        c{i} += dot(v.a, x{i}a) + dot(v.b, x{i}b);\n"
        ));
        for (acc, col, out) in [("a", "n", &mut store), ("c", "n2", &mut store2)] {
            out.push_str(&format!(
                "        if ({i}u < P.m) {{\n            let at = (P.m0 + {i}u) * P.y_cols + P.part_row0 + {col};\n            \
                 if (P.accumulate != 0u) {{ y[at] += {acc}{i}; }} else {{ y[at] = {acc}{i} + bi; }}\n        }}\n"
            ));
        }
    }
    MATMUL_UBO
        .replace("{{XV}}", &(mb * kc / 4).to_string())
        .replace("{{DECL}}", &decl)
        .replace("{{BODY}}", &body)
        .replace("{{STORE}}", &store)
        .replace("{{STORE2}}", &store2)
}

/// How a product of `m` rows runs on this device.
fn choose(cx: &Ctx, options: &WebGpuOptions, fmt: Format, m: usize, k: usize) -> Variant {
    let xvec = k.is_multiple_of(4);
    if cx.dev.software {
        // WebGPU guarantees uniform bindings of 64 KiB: 32 rows × 512 columns.
        let kc = ((cx.dev.limits.max_uniform_buffer_binding_size / 4 / 32) as u32).min(512) / 8 * 8;
        // The kernel computes all `mb` of its unrolled rows whatever the product's row count, so
        // `mb` follows that count up to 32 (a power of two: few variants). At 32 always, a decoded
        // token's products did 32 times their work.
        let mb = (m.clamp(1, 32) as u32).next_power_of_two();
        return Variant::Ubo { fmt, mb, kc };
    }
    if m <= options.gemv_max_rows {
        return Variant::Gemv { fmt, xvec, subgroups: cx.dev.subgroups };
    }
    if let Ok(c) = cx.dev.coop {
        return Variant::GemmCoop { fmt, xvec, tile: c.tile, wg: c.wg };
    }
    let bk = if cx.dev.f16 || cx.dev.limits.max_compute_workgroup_storage_size >= 2 * 64 * 9 * 16 { 32 } else { 16 };
    Variant::Gemm { fmt, f16: cx.dev.f16, bk, xvec }
}

/// Record `y = x · Wᵀ (+ bias)` into `y` (`x.rows × w.rows`).
pub(in super::super) fn record(
    cx: &mut Ctx,
    options: &WebGpuOptions,
    dummy: &wgpu::Buffer,
    x: &Tensor,
    w: &Weight,
    bias: Option<&Weight>,
    y: &Tensor,
) {
    let Some((fmt, kp, parts)) = cx.ok(w.matrix("matmul")) else { return };
    let bias_buf = match bias {
        Some(b) => match cx.ok(b.vector("matmul bias")) {
            Some(b) => b.clone(),
            None => return,
        },
        None => dummy.clone(),
    };
    let Some([xb, yb]) = bufs([x, y]) else { return };
    let (m, k) = (x.rows, x.cols);
    let variant = choose(cx, options, fmt, m, k);
    if let Variant::Ubo { mb, kc, .. } = variant {
        ubo(cx, x, &xb, variant, (mb as usize, kc as usize), kp, parts, &bias_buf, bias.is_some(), &yb, w.rows);
        return;
    }
    for part in parts {
        let params = Params {
            m: m as u32,
            k: k as u32,
            k_padded: kp as u32,
            part_row0: part.row0 as u32,
            part_rows: part.rows as u32,
            y_cols: w.rows as u32,
            has_bias: bias.is_some() as u32,
            pad: 0,
        };
        let mut binds = vec![(1, Bind::Buf(xb.clone())), (2, Bind::Buf(bias_buf.clone())), (3, Bind::Buf(yb.clone()))];
        binds.extend(planes(part));
        let groups = match variant {
            Variant::Gemv { .. } => {
                let mut g = cx.dev.grid(part.rows, GEMV_ROWS);
                g[2] = m.div_ceil(GEMV_MB) as u32;
                g
            }
            _ => [part.rows.div_ceil(GEMM_TILE) as u32, m.div_ceil(GEMM_TILE) as u32, 1],
        };
        cx.dispatch(&variant, &params, binds, groups);
    }
}

/// The software-adapter product (see `kernels/matmul_ubo.wgsl`): activations repacked into
/// `[k-chunk][row][kc]`, then one dispatch per (part, k-chunk, block of `mb` rows).
#[allow(clippy::too_many_arguments)]
fn ubo(
    cx: &mut Ctx,
    x: &Tensor,
    xb: &wgpu::Buffer,
    variant: Variant,
    (mb, kc): (usize, usize),
    kp: usize,
    parts: &[Part],
    bias: &wgpu::Buffer,
    has_bias: bool,
    yb: &wgpu::Buffer,
    n: usize,
) {
    let (m, k) = (x.rows, x.cols);
    let chunks = kp.div_ceil(kc);
    // Slack of one row block: the last block's uniform binding reads past the last row.
    let packed = cx.alloc(chunks * m + mb, kc);
    let Some([pb]) = bufs([&packed]) else { return };
    let total = chunks * m * kc;
    let g = cx.dev.grid(total, super::eltwise::WG);
    let params = PackParams { n: total as u32, m: m as u32, k: k as u32, kc: kc as u32 };
    cx.dispatch(&Variant::PackX, &params, vec![(1, Bind::Buf(xb.clone())), (2, Bind::Buf(pb.clone()))], g);
    for part in parts {
        for c in 0..chunks {
            let k8n = (kc.min(kp - c * kc) / 8) as u32;
            for m0 in (0..m).step_by(mb) {
                let params = UboParams {
                    m: mb.min(m - m0) as u32,
                    m0: m0 as u32,
                    k8n,
                    k8_0: (c * kc / 8) as u32,
                    k_padded: kp as u32,
                    part_row0: part.row0 as u32,
                    part_rows: part.rows as u32,
                    y_cols: n as u32,
                    has_bias: has_bias as u32,
                    accumulate: (c > 0) as u32,
                    pad0: 0,
                    pad1: 0,
                };
                let offset = ((c * m + m0) * kc * 4) as u64;
                let mut binds = vec![
                    (1, Bind::Range(pb.clone(), offset, (mb * kc * 4) as u64)),
                    (2, Bind::Buf(bias.clone())),
                    (3, Bind::Buf(yb.clone())),
                ];
                binds.extend(planes(part));
                cx.dispatch(&variant, &params, binds, [part.rows.div_ceil(UBO_ROWS) as u32, 1, 1]);
            }
        }
    }
}

impl Shader for Variant {
    fn source(&self) -> String {
        module(self.body())
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        self.overrides()
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use wgpu::naga;

    /// The cooperative-matrix product runs only where an adapter has cooperative matrices (in the
    /// suite, Mesa 26's lavapipe, whose are 8 × 8; GPUs': 16 × 16): here its text at both sizes, for
    /// every weight format, goes through what wgpu does before a driver sees it — naga's WGSL front
    /// end, its validator with the capabilities the device would have, and the SPIR-V writer. Its
    /// numbers are checked against the tiled product and the CPU engine on an adapter that has them
    /// (tests/webgpu.rs).
    #[test]
    fn the_cooperative_product_is_valid_wgsl_and_spirv_for_every_weight_format() {
        use naga::valid::{Capabilities, ValidationFlags, Validator};
        let caps = Capabilities::SHADER_FLOAT16
            | Capabilities::SHADER_FLOAT16_IN_FLOAT32
            | Capabilities::SUBGROUP
            | Capabilities::COOPERATIVE_MATRIX;
        for fmt in [Format::F32, Format::F16, Format::BF16, Format::Q8_0, Format::Q4, Format::Q5, Format::Q4K, Format::Q5K, Format::Q6K] {
            for (xvec, tile) in [(true, 16), (false, 16), (true, 8)] {
                let variant = Variant::GemmCoop { fmt, xvec, tile, wg: 256 };
                let text = variant.source();
                let module = naga::front::wgsl::parse_str(&text).unwrap_or_else(|e| panic!("{fmt:?}: {}", e.emit_to_string(&text)));
                let info = Validator::new(ValidationFlags::all(), caps)
                    .subgroup_stages(naga::valid::ShaderStages::COMPUTE)
                    .subgroup_operations(naga::valid::SubgroupOperationSet::all())
                    .validate(&module)
                    .unwrap_or_else(|e| panic!("{fmt:?}: {}", e.emit_to_string(&text)));
                let constants: naga::back::PipelineConstants = variant.constants().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                let (module, info) = naga::back::pipeline_constants::process_overrides(
                    &module,
                    &info,
                    Some((naga::ShaderStage::Compute, "main")),
                    &constants,
                )
                .unwrap_or_else(|e| panic!("{fmt:?}: overrides: {e}"));
                let options = naga::back::spv::Options { lang_version: (1, 6), ..Default::default() };
                let pipeline = naga::back::spv::PipelineOptions { shader_stage: naga::ShaderStage::Compute, entry_point: "main".into() };
                naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline)).unwrap_or_else(|e| panic!("{fmt:?}: SPIR-V: {e}"));
            }
        }
    }
}
