//! Rotary position embedding in place (`rope.wgsl`), with the shared policy's cos/sin tables
//! ([`Rope::table`]) in the arena, written once per submission for Q and K alike.

use bytemuck::{Pod, Zeroable};

use super::super::pool::{bufs, Tensor};
use super::super::recorder::{Bind, Shader};
use super::{module, Ctx};
use crate::backend::{policy, Rope};

const SOURCE: &str = include_str!("../kernels/rope.wgsl");

/// Invocations per workgroup (the `WG` override), one per rotated pair.
const WG: u32 = 64;

/// The parameters of `rope.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    rows: u32,
    cols: u32,
    half: u32,
    neox: u32,
}

pub(in super::super) fn record(cx: &mut Ctx, x: &mut Tensor, positions: &[u32], head_dim: usize, rope: &Rope) {
    if cx.ok(policy::check_rope((x.rows, x.cols), positions.len(), head_dim, rope)).is_none() {
        return;
    }
    let Some([xb]) = bufs([&*x]) else { return };
    // Everything the table depends on.
    let mut key: Vec<u8> = bytemuck::cast_slice(positions).to_vec();
    key.extend((head_dim as u64).to_le_bytes());
    key.extend(rope.base.to_le_bytes());
    key.extend(rope.scale.to_le_bytes());
    if let Some(f) = rope.freq_factors {
        key.extend(bytemuck::cast_slice(f));
    }
    let table = cx.rec.arena_memo(key, || rope.table(positions, head_dim));
    let g = cx.dev.grid(x.rows * x.cols / 2, WG);
    let params = Params { rows: x.rows as u32, cols: x.cols as u32, half: (head_dim / 2) as u32, neox: rope.neox as u32 };
    cx.dispatch(&Rotate, &params, vec![(1, table), (2, Bind::Buf(xb))], g);
}

/// The rotation kernel (one variant).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Rotate;

impl Shader for Rotate {
    fn source(&self) -> String {
        module(SOURCE.to_string())
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        vec![("WG", WG as f64)]
    }
}
