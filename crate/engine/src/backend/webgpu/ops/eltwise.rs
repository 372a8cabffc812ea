//! Element-wise kernels (`eltwise.wgsl`): `x + y` and gated activations `act(gate) · up`.

use bytemuck::{Pod, Zeroable};

use super::super::pool::{bufs, Tensor};
use super::super::recorder::{Bind, Shader};
use super::{module, section, Ctx};
use crate::backend::{policy, Activation};

const ELTWISE: &str = include_str!("../kernels/eltwise.wgsl");

/// Invocations per workgroup (the `WG` override) of the element-wise kernels, and of the others
/// with one invocation per element (`append.wgsl`, `pack_x.wgsl`, `select.wgsl`).
pub(super) const WG: u32 = 256;

/// The parameters of `eltwise.wgsl`'s ADD.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct AddParams {
    n: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

/// The parameters of `eltwise.wgsl`'s GLU.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct GluParams {
    n: u32,
    /// 0: SiLU, 1: GELU (tanh approximation).
    act: u32,
    pad1: u32,
    pad2: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(in super::super) enum Variant {
    Add,
    Glu,
}

impl Variant {
    fn body(&self) -> &'static str {
        section(
            ELTWISE,
            match self {
                Variant::Add => "ADD",
                Variant::Glu => "GLU",
            },
        )
    }
}

pub(in super::super) fn add(cx: &mut Ctx, x: &Tensor, y: &Tensor) -> Tensor {
    let out = cx.alloc(x.rows, x.cols);
    if cx.ok(policy::check_same_shape("add", (x.rows, x.cols), (y.rows, y.cols))).is_none() {
        return out;
    }
    let n = x.rows * x.cols;
    let params = AddParams { n: n as u32, pad0: 0, pad1: 0, pad2: 0 };
    binary(cx, Variant::Add, &params, [x, y], out, n)
}

pub(in super::super) fn gated_activation(cx: &mut Ctx, gate: &Tensor, up: &Tensor, act: Activation) -> Tensor {
    let out = cx.alloc(up.rows, up.cols);
    if cx.ok(policy::check_same_shape("gated_activation", (gate.rows, gate.cols), (up.rows, up.cols))).is_none() {
        return out;
    }
    let n = up.rows * up.cols;
    let act = match act {
        Activation::Silu => 0,
        Activation::GeluTanh => 1,
    };
    binary(cx, Variant::Glu, &GluParams { n: n as u32, act, pad1: 0, pad2: 0 }, [gate, up], out, n)
}

/// `out = op(a, b)` over `n` elements: bindings 1 and 2 in, 3 out.
fn binary<P: Pod>(cx: &mut Ctx, v: Variant, params: &P, [a, b]: [&Tensor; 2], out: Tensor, n: usize) -> Tensor {
    let Some([a, b, o]) = bufs([a, b, &out]) else { return out };
    let g = cx.dev.grid(n, WG);
    cx.dispatch(&v, params, vec![(1, Bind::Buf(a)), (2, Bind::Buf(b)), (3, Bind::Buf(o))], g);
    out
}

impl Shader for Variant {
    fn source(&self) -> String {
        module(self.body().to_string())
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        vec![("WG", WG as f64)]
    }
}
