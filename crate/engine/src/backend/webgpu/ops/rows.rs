//! Row lookups: embedding rows of a (quantized, possibly split) table for token ids (`embed.wgsl`),
//! and a selection of activation rows (`select.wgsl`).

use bytemuck::{Pod, Zeroable};

use super::super::pool::{bufs, Tensor};
use super::super::recorder::{Bind, Shader};
use super::super::repack::Format;
use super::super::weight::Weight;
use super::{dq_section, module, planes, Ctx};
use crate::backend::policy;
use crate::EngineError;

const EMBED: &str = include_str!("../kernels/embed.wgsl");
const SELECT: &str = include_str!("../kernels/select.wgsl");

/// Invocations per `embed.wgsl` workgroup (its `WG` override), one per 8 values.
const EMBED_WG: u32 = 64;

/// The parameters of `embed.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct EmbedParams {
    n_tok: u32,
    cols: u32,
    k_padded: u32,
    part_row0: u32,
    part_rows: u32,
    scale: f32,
    pad0: u32,
    pad1: u32,
}

/// The parameters of `select.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct SelectParams {
    n: u32,
    cols: u32,
    pad1: u32,
    pad2: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(in super::super) enum Variant {
    Embed(Format),
    Select,
}

impl Variant {
    fn body(&self) -> String {
        match *self {
            Variant::Embed(fmt) => format!("{EMBED}\n{}", dq_section(fmt)),
            Variant::Select => SELECT.to_string(),
        }
    }

    pub fn wg(&self) -> u32 {
        match self {
            Variant::Embed(_) => EMBED_WG,
            Variant::Select => super::eltwise::WG,
        }
    }
}

/// Rows of the embedding table for `tokens`, times `scale`.
pub(in super::super) fn embed(cx: &mut Ctx, table: &Weight, tokens: &[u32], scale: f32) -> Result<Tensor, EngineError> {
    policy::check_ids(tokens, table.rows, "the embedding table")?;
    let out = cx.alloc(tokens.len(), table.cols);
    let Some((fmt, kp, parts)) = cx.ok(table.matrix("embed")) else {
        cx.dev.check()?;
        return Ok(out);
    };
    let Some([ob]) = bufs([&out]) else {
        cx.dev.check()?;
        return Ok(out);
    };
    let toks = cx.rec.arena(tokens);
    let variant = Variant::Embed(fmt);
    for part in parts {
        let params = EmbedParams {
            n_tok: tokens.len() as u32,
            cols: table.cols as u32,
            k_padded: kp as u32,
            part_row0: part.row0 as u32,
            part_rows: part.rows as u32,
            scale,
            pad0: 0,
            pad1: 0,
        };
        let mut binds = vec![(1, toks.clone()), (2, Bind::Buf(ob.clone()))];
        binds.extend(planes(part));
        let g = cx.dev.grid(tokens.len() * kp / 8, variant.wg());
        cx.dispatch(&variant, &params, binds, g);
    }
    Ok(out)
}

/// The given rows of `x`.
pub(in super::super) fn select(cx: &mut Ctx, x: &Tensor, rows: &[usize]) -> Tensor {
    let out = cx.alloc(rows.len(), x.cols);
    if cx.ok(policy::check_select_rows((x.rows, x.cols), rows)).is_none() {
        return out;
    }
    let Some([xb, ob]) = bufs([x, &out]) else { return out };
    let idx: Vec<u32> = rows.iter().map(|&r| r as u32).collect();
    let ib = cx.rec.arena(&idx);
    let n = rows.len() * x.cols;
    let g = cx.dev.grid(n, Variant::Select.wg());
    let params = SelectParams { n: n as u32, cols: x.cols as u32, pad1: 0, pad2: 0 };
    cx.dispatch(&Variant::Select, &params, vec![(1, ib), (2, Bind::Buf(xb)), (3, Bind::Buf(ob))], g);
    out
}

impl Shader for Variant {
    fn source(&self) -> String {
        module(self.body())
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        vec![("WG", self.wg() as f64)]
    }
}
