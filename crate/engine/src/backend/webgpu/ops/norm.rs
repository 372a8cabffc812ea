//! RMSNorm over rows or per-head groups (`norm.wgsl`): one workgroup per group.

use bytemuck::{Pod, Zeroable};

use super::super::pool::{bufs, Tensor};
use super::super::recorder::{Bind, Shader};
use super::super::weight::Weight;
use super::{module, reduce, Ctx};
use crate::backend::policy;

const SOURCE: &str = include_str!("../kernels/norm.wgsl");

/// The parameters of `norm.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    n_groups: u32,
    group: u32,
    eps: f32,
    pad: u32,
}

/// Threads per group (the `WG` override): fewer for per-head groups; `subgroups`: the sum of squares
/// through subgroup operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(in super::super) struct Variant {
    pub wg: u32,
    pub subgroups: bool,
}

pub(in super::super) fn record(cx: &mut Ctx, x: &Tensor, w: &Weight, eps: f32, group: Option<usize>) -> Tensor {
    let out = cx.alloc(x.rows, x.cols);
    let Some(g) = cx.ok(policy::check_rms_norm((x.rows, x.cols), group, w.cols)) else { return out };
    let Some(wb) = cx.ok(w.vector("rms_norm")).cloned() else { return out };
    let Some([xb, ob]) = bufs([x, &out]) else { return out };
    let n_groups = x.rows * x.cols / g;
    let variant = Variant { wg: if g <= 128 { 64 } else { 256 }, subgroups: cx.dev.subgroups };
    // One workgroup per group, whatever its size.
    let groups = cx.dev.grid(n_groups, 1);
    let params = Params { n_groups: n_groups as u32, group: g as u32, eps, pad: 0 };
    cx.dispatch(&variant, &params, vec![(1, Bind::Buf(xb)), (2, Bind::Buf(wb)), (3, Bind::Buf(ob))], groups);
    out
}

impl Shader for Variant {
    fn source(&self) -> String {
        module(format!("{SOURCE}\n{}", reduce(self.subgroups)))
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        vec![("WG", self.wg as f64)]
    }
}
