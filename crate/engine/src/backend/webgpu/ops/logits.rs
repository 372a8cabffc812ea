//! Logits of chosen vocabulary rows (`logits.wgsl`): one workgroup per (id, row), only the rows that
//! are read, then the optional final soft-cap; the result is the forward's one read-back. A whole
//! vocabulary in order without a soft-cap (generation, perplexity) is the head's product instead
//! (`matmul`: many rows a workgroup). Otherwise a workgroup per id, and ids beyond one grid
//! dimension fold into z.

use bytemuck::{Pod, Zeroable};

use super::super::options::WebGpuOptions;
use super::super::pool::{bufs, Tensor};
use super::super::recorder::{Bind, Readback, Shader};
use super::super::repack::Format;
use super::super::weight::Weight;
use super::{dq_section, matmul, module, planes, reduce, xload, Ctx};
use crate::backend::policy;
use crate::EngineError;

const LOGITS: &str = include_str!("../kernels/logits.wgsl");

/// The parameters of `logits.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    m: u32,
    n_ids: u32,
    k: u32,
    k_padded: u32,
    part_row0: u32,
    part_rows: u32,
    softcap: f32,
    has_cap: u32,
}

fn body(fmt: Format, xvec: bool, subgroups: bool) -> String {
    format!("{LOGITS}\n{}\n{}\n{}", reduce(subgroups), xload(xvec), dq_section(fmt))
}

/// Record the logits kernel, submit, and start mapping the result.
pub(in super::super) fn record(
    cx: &mut Ctx,
    (options, dummy): (&WebGpuOptions, &wgpu::Buffer),
    x: &Tensor,
    head: &Weight,
    ids: &[u32],
    softcap: Option<f32>,
) -> Result<Readback, EngineError> {
    cx.dev.check()?;
    policy::check_ids(ids, head.rows, "the output head")?;
    if x.cols != head.cols {
        return Err(policy::misuse_error(&format!("logits: hidden states have {} columns, the head {}", x.cols, head.cols)));
    }
    let (fmt, kp, parts) = head.matrix("logits").map_err(|m| policy::misuse_error(&m))?;
    let out = cx.alloc(x.rows, ids.len());
    if softcap.is_none() && ids.len() == head.rows && ids.iter().enumerate().all(|(i, &id)| id as usize == i) {
        matmul::record(cx, options, dummy, x, head, None, &out);
        cx.dev.check()?;
        let Some([ob]) = bufs([&out]) else {
            return Err(EngineError::Backend("logits: no device buffers".into()));
        };
        return Ok(cx.rec.start_readback(cx.dev, &ob, (x.rows * ids.len() * 4) as u64));
    }
    let Some([xb, ob]) = bufs([x, &out]) else {
        cx.dev.check()?;
        return Err(EngineError::Backend("logits: no device buffers".into()));
    };
    let idb = cx.rec.arena(ids);
    for part in parts {
        let params = Params {
            m: x.rows as u32,
            n_ids: ids.len() as u32,
            k: x.cols as u32,
            k_padded: kp as u32,
            part_row0: part.row0 as u32,
            part_rows: part.rows as u32,
            softcap: softcap.unwrap_or(1.0),
            has_cap: softcap.is_some() as u32,
        };
        let mut binds = vec![(1, Bind::Buf(xb.clone())), (2, idb.clone()), (3, Bind::Buf(ob.clone()))];
        binds.extend(planes(part));
        let [per_z, z, _] = cx.dev.grid(ids.len(), 1);
        cx.dispatch(
            &Logits { fmt, xvec: x.cols.is_multiple_of(4), subgroups: cx.dev.subgroups },
            &params,
            binds,
            [per_z, x.rows as u32, z],
        );
    }
    Ok(cx.rec.start_readback(cx.dev, &ob, (x.rows * ids.len() * 4) as u64))
}

/// The logits kernel of a weight format and activation loader.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Logits {
    fmt: Format,
    xvec: bool,
    subgroups: bool,
}

impl Shader for Logits {
    fn source(&self) -> String {
        module(body(self.fmt, self.xvec, self.subgroups))
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}
