//! The kernel families. Each file owns its variants (the choices a pipeline is built with: tile
//! sizes, workgroup sizes, weight format), its `#[repr(C)]` parameter struct — field for field the
//! WGSL `Params` struct of its kernel, under the same names (`tests/wgsl_params.rs` holds each pair
//! together) —, its bindings and its grid.
//!
//! A variant is the pipeline-cache key (it implements the recorder's `Shader`) and carries every
//! number both sides must agree on: the host computes the grid from it and hands the same numbers
//! to the shader as WGSL `override` constants (`Shader::constants`), so the two cannot drift apart. Text generation is
//! left only where an override cannot express the shader (types, function-scope and uniform array
//! sizes, unrolled code); each such place says so.

pub(super) mod attention;
pub(super) mod cache;
pub(super) mod eltwise;
pub(super) mod logits;
pub(super) mod matmul;
pub(super) mod norm;
pub(super) mod rope;
pub(super) mod rows;

use super::device::Device;
use super::pool::{Pool, Tensor};
use super::recorder::{Bind, Recorder, Shader};
use super::repack::Format;
use super::weight::Part;

const COMMON: &str = include_str!("../kernels/common.wgsl");
const DQ: &str = include_str!("../kernels/dq.wgsl");
const XLOAD: &str = include_str!("../kernels/xload.wgsl");
const LANE: &str = include_str!("../kernels/lane.wgsl");
const REDUCE: &str = include_str!("../kernels/reduce.wgsl");

/// A kernel's WGSL module: its `enable` directives, the common helpers, then the family's text.
fn module(body: String) -> String {
    module_for(body, cfg!(target_arch = "wasm32"))
}

/// [`module`] for a browser's WGSL compiler (`browser`) or wgpu's own (naga). `enable` directives
/// stand where a section needs them (`enable subgroups;` in `lane.wgsl`'s, `enable f16;` in the
/// product's) and must come before any declaration, so they move to the top, each once. A browser
/// needs `enable subgroups;` before a subgroup builtin; naga does not parse it (wgpu 30 lists it as
/// unimplemented) and needs no directive for them, so natively it is left out.
fn module_for(body: String, browser: bool) -> String {
    let mut directives = String::new();
    let mut rest = String::with_capacity(body.len());
    for line in body.split_inclusive('\n') {
        let directive = line.trim();
        if !directive.starts_with("enable ") {
            rest.push_str(line);
        } else if (browser || directive != "enable subgroups;") && !directives.contains(directive) {
            directives.push_str(directive);
            directives.push('\n');
        }
    }
    format!("{directives}{COMMON}\n{rest}")
}

/// The text of section `//#name` of a multi-section file (up to the next section).
fn section<'a>(src: &'a str, name: &str) -> &'a str {
    let tag = format!("//#{name}\n");
    let start = src.find(&tag).unwrap_or_else(|| panic!("WGSL section {name} is missing")) + tag.len();
    let end = src[start..].find("\n//#").map_or(src.len(), |e| start + e + 1);
    &src[start..end]
}

/// A file's text before its first section, then its section with subgroup operations (`SUBGROUP`:
/// where the device has them, natively or as the page asked for them in a browser) or without
/// (`PLAIN`): a kernel whose variants differ in more than an override can say.
fn subgroup_section(src: &str, subgroups: bool) -> String {
    let head = &src[..src.find("//#").unwrap_or(src.len())];
    format!("{head}{}", section(src, if subgroups { "SUBGROUP" } else { "PLAIN" }))
}

/// The `Lane` ids a kernel's entry point takes (`lane.wgsl`).
fn lane(subgroups: bool) -> String {
    subgroup_section(LANE, subgroups)
}

/// `workgroup_sum` (with subgroup operations, or a tree in workgroup memory) and the `Lane` ids it
/// takes.
fn reduce(subgroups: bool) -> String {
    format!("{}\n{}", lane(subgroups), subgroup_section(REDUCE, subgroups))
}

/// The `dq8` weight decoder of a device format (a type of bindings and code, not a value: chosen
/// by text).
fn dq_section(fmt: Format) -> &'static str {
    section(
        DQ,
        match fmt {
            Format::F32 => "F32",
            Format::F16 => "F16",
            Format::BF16 => "BF16",
            Format::Q8_0 => "Q8_0",
            Format::Q4 => "Q4",
            Format::Q5 => "Q5",
            Format::Q4K => "Q4K",
            Format::Q5K => "Q5K",
            Format::Q6K => "Q6K",
        },
    )
}

/// The activation loader: vector loads (binding type `array<vec4<f32>>`) when rows are 16-byte
/// aligned, scalar ones otherwise.
fn xload(xvec: bool) -> &'static str {
    section(XLOAD, if xvec { "XVEC" } else { "XSCALAR" })
}

/// What an op records with: the device, the pool its outputs come from, and the recorder.
pub(super) struct Ctx<'a> {
    pub dev: &'a Device,
    pub pool: &'a Pool,
    pub rec: &'a mut Recorder,
}

impl Ctx<'_> {
    pub fn alloc(&self, rows: usize, cols: usize) -> Tensor {
        self.pool.alloc(self.dev, rows, cols)
    }

    pub fn dispatch<P: bytemuck::Pod, S: Shader>(&mut self, k: &S, params: &P, binds: Vec<(u32, Bind)>, groups: [u32; 3]) {
        self.rec.dispatch(self.dev, k, params, binds, groups);
    }

    /// Record a misuse; `false` when `checked` is one.
    pub fn ok<T>(&self, checked: Result<T, String>) -> Option<T> {
        checked.map_err(|m| self.dev.misuse(m)).ok()
    }
}

/// The bindings of a weight part's planes (8, 9, … in every kernel that decodes weights).
fn planes(part: &Part) -> impl Iterator<Item = (u32, Bind)> + '_ {
    part.planes.iter().enumerate().map(|(i, p)| (8 + i as u32, Bind::Buf(p.clone())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The directives of a module: its leading `enable` lines.
    fn directives(module: &str) -> Vec<&str> {
        module.lines().take_while(|l| l.starts_with("enable ")).collect()
    }

    #[test]
    fn enable_directives_lead_the_module_once_and_subgroups_only_for_a_browser() {
        // A subgroup product with f16 tiles: `enable f16;` at the body's head, `enable subgroups;` in
        // the lane section, twice over here (as two sections that both bring the lane would).
        let body = format!("enable f16;\nalias tile_t = f16;\n{}\n{}", lane(true), reduce(true));
        let browser = module_for(body.clone(), true);
        assert_eq!(directives(&browser), ["enable f16;", "enable subgroups;"]);
        let native = module_for(body, false);
        assert_eq!(directives(&native), ["enable f16;"]);
        for text in [&browser, &native] {
            let after = &text[directives(text).iter().map(|d| d.len() + 1).sum::<usize>()..];
            assert!(!after.lines().any(|l| l.trim().starts_with("enable ")), "a directive after a declaration:\n{text}");
            assert!(after.contains("subgroupAdd") && after.contains("struct Lane"));
        }
        // Without subgroups a browser's module asks for none.
        assert_eq!(directives(&module_for(reduce(false), true)), Vec::<&str>::new());
    }
}
