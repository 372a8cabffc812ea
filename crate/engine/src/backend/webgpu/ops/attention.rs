//! Attention over the cached prefix and the new keys, masked by the visible key ranges the shared
//! policy computes: flash-style with key tiles in workgroup memory (`attention.wgsl`) on GPUs, one
//! query row per invocation with keys through uniform bindings (`attention_ubo.wgsl`) on software
//! adapters.

use bytemuck::{Pod, Zeroable};

use super::super::pool::{bufs, Tensor};
use super::super::recorder::{Bind, Shader};
use super::cache::{self, Cache};
use super::{lane, module, subgroup_section, Ctx};
use crate::backend::policy::{self, visible_keys};
use crate::backend::{AttnLayout, AttnParams};

const ATTENTION: &str = include_str!("../kernels/attention.wgsl");
const ATTENTION_UBO: &str = include_str!("../kernels/attention_ubo.wgsl");

/// Query rows per `attention_ubo.wgsl` workgroup (`WG` there).
const UBO_QUERIES: usize = 32;

/// The parameters of `attention.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    nq: u32,
    n_head: u32,
    /// Query heads per KV head.
    group: u32,
    kv_dim: u32,
    /// Cached keys; the new ones follow them.
    prefix: u32,
    n_new: u32,
    q_cols: u32,
    has_cap: u32,
    pre: f32,
    post: f32,
    softcap: f32,
    pad: u32,
}

/// The parameters of `attention_ubo.wgsl`: one block of `nk` keys from key `j0`, `kvw` words (f16
/// pairs) per key row.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct UboParams {
    nq: u32,
    n_head: u32,
    group: u32,
    kvw: u32,
    j0: u32,
    nk: u32,
    q_cols: u32,
    has_cap: u32,
    pre: f32,
    post: f32,
    softcap: f32,
    /// FIRST (1): no state to carry in; LAST (2): write the normalized output.
    flags: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(in super::super) enum Variant {
    /// Tiles of `bq` queries × `bk` keys of `hd2` f16 pairs; `subgroups`: a subgroup per row in
    /// the softmax step.
    Gpu { bq: u32, bk: u32, hd2: u32, subgroups: bool },
    /// Blocks of `kb` keys of `kvw` words, heads of `hd2` pairs.
    Ubo { hd2: u32, kvw: u32, kb: u32 },
}

impl Variant {
    /// Both kernels keep per-thread arrays or unrolled code sized by these numbers (a function-scope
    /// array length and a uniform array length must be constants, not overrides), so they are
    /// written into the text.
    fn body(&self) -> String {
        match *self {
            Variant::Gpu { bq, bk, hd2, subgroups } => {
                let text = subgroup_section(ATTENTION, subgroups);
                let text = text.replace("{{BQ}}", &bq.to_string()).replace("{{BK}}", &bk.to_string()).replace("{{HD2}}", &hd2.to_string());
                format!("{}\n{text}", lane(subgroups))
            }
            Variant::Ubo { hd2, kvw, kb } => ubo_source(hd2, kvw, kb),
        }
    }
}

/// The widest head, in f16 pairs, whose query row `attention_ubo.wgsl` keeps in registers beside its
/// output; a wider head's row is rounded into a buffer once and read from there for every key.
/// SwiftShader's compiler (Chromium's software WebGPU) takes time that grows faster than the
/// registers: with q and the output held, heads of 64, 128 and 256 dimensions took it 4.6, 10.7 and
/// 45–51 s (the 0.5B, the 1.5B, Gemma 3); Gemma 3 with q in a buffer 5.5–8.3 s. Reading q from the
/// buffer costs Gemma 3 on lavapipe 14 % of its prefill and 25 % of its decoding speed (SwiftShader:
/// prefill as fast, decoding 12 % slower), so narrower heads keep it in registers.
const Q_IN_REGISTERS: u32 = 64;

/// Whether `attention_ubo.wgsl` keeps a head of `hd2` pairs' query row in registers (see
/// [`Q_IN_REGISTERS`]); otherwise it needs the `qh` buffer.
fn q_in_registers(hd2: u32) -> bool {
    hd2 <= Q_IN_REGISTERS
}

fn ubo_source(hd2: u32, kvw: u32, kb: u32) -> String {
    let q_in_registers = q_in_registers(hd2);
    let mut t = [(); 7].map(|_| String::new());
    let [qdecl, oload, score, rescale, pv, store, osave] = &mut t;
    let qh = if q_in_registers {
        "// (binding 5, the query rows as f16 pairs: heads wider than the registers hold)"
    } else {
        qdecl.push_str(concat!(
            "    let qs = (qr * P.n_head + h) * HD2;\n",
            "    if ((P.flags & FIRST) != 0u && live) {\n",
            "        for (var d = 0u; d < HD2; d++) {\n",
            "            qh[qs + d] = pack_f16(q[qat + 2u * d] * P.pre, q[qat + 2u * d + 1u] * P.pre);\n",
            "        }\n",
            "    }\n"
        ));
        "@group(0) @binding(5) var<storage, read_write> qh: array<u32>;"
    };
    for d in 0..hd2 {
        let (a, b) = (2 * d, 2 * d + 1);
        if q_in_registers {
            qdecl.push_str(&format!("    let q{d} = unpack2x16float(pack_f16(q[qat + {a}u] * P.pre, q[qat + {b}u] * P.pre));\n"));
        }
        qdecl.push_str(&format!("    var o{d} = vec2<f32>(0.0);\n"));
        oload.push_str(&format!("        o{d} = vec2<f32>(state[st + {}u], state[st + {}u]);\n", 2 + a, 2 + b));
        let qd = if q_in_registers { format!("q{d}") } else { format!("unpack2x16float(qh[qs + {d}u])") };
        score.push_str(&format!("                acc += dot({qd}, unpack2x16float(kw(kb + {d}u)));\n"));
        rescale.push_str(&format!("        o{d} = o{d} * alpha;\n"));
        pv.push_str(&format!("                o{d} += pr * unpack2x16float(vw(vb + {d}u));\n"));
        store.push_str(&format!("            out[qat + {a}u] = o{d}.x * inv;\n            out[qat + {b}u] = o{d}.y * inv;\n"));
        osave.push_str(&format!("            state[st + {}u] = o{d}.x;\n            state[st + {}u] = o{d}.y;\n", 2 + a, 2 + b));
    }
    ATTENTION_UBO
        .replace("{{HD2}}", &hd2.to_string())
        .replace("{{KV4}}", &(kb * kvw).div_ceil(4).to_string())
        .replace("{{QH}}", qh)
        .replace("{{QDECL}}", qdecl)
        .replace("{{OLOAD}}", oload)
        .replace("{{SCORE}}", score)
        .replace("{{RESCALE}}", rescale)
        .replace("{{PV}}", pv)
        .replace("{{STORE}}", store)
        .replace("{{OSAVE}}", osave)
}

/// Workgroup-memory words `attention.wgsl` needs for tiles of `bq` queries × `bk` keys.
fn attention_words(bq: u32, bk: u32, hd2: u32) -> u32 {
    bq * (hd2 + 1) + bk * (hd2 + 1) + bq * (bk + 1) + 4 * bq + 4 * bq + 2
}

/// The largest attention tile that fits in `limit` bytes of workgroup memory.
fn gpu_tile(hd2: u32, limit: u32) -> Option<(u32, u32)> {
    [(32, 32), (16, 32), (32, 16), (16, 16), (16, 8), (8, 16), (8, 8), (4, 8), (4, 4)]
        .into_iter()
        .find(|&(bq, bk)| 4 * attention_words(bq, bk, hd2) <= limit)
}

pub(in super::super) fn record(
    cx: &mut Ctx,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    cache: &Cache,
    layout: &AttnLayout,
    p: &AttnParams,
) -> Tensor {
    let hd = p.head_dim;
    let nq = layout.query_rows.len();
    let out = cx.alloc(nq, p.n_head * hd);
    let kv_dim = p.n_head_kv * hd;
    if cx.ok(policy::check_attention((q.rows, q.cols), (k.rows, k.cols), (v.rows, v.cols), cache.kv_dim, layout, p)).is_none() {
        return out;
    }
    let Some([qb, kb, vb, ob]) = bufs([q, k, v, &out]) else {
        return out;
    };
    let prefix = cache.len;
    let n_new = k.rows;
    let ranges: Vec<u32> = visible_keys(layout, p.window, prefix).into_iter().flatten().map(|i| i as u32).collect();
    let hd2 = (hd / 2) as u32;
    let rb = cx.rec.arena(&ranges);
    let (pre, post) = p.pre_post_scale();
    let params = Params {
        nq: nq as u32,
        n_head: p.n_head as u32,
        group: (p.n_head / p.n_head_kv) as u32,
        kv_dim: kv_dim as u32,
        prefix: prefix as u32,
        n_new: n_new as u32,
        q_cols: (p.n_head * hd) as u32,
        has_cap: p.softcap.is_some() as u32,
        pre,
        post,
        softcap: p.softcap.unwrap_or(1.0),
        pad: 0,
    };
    if cx.dev.software {
        ubo(cx, [&qb, &kb, &vb, &ob], &rb, cache, &ranges, params, hd2);
        return out;
    }
    let Some((bq, bk)) = gpu_tile(hd2, cx.dev.limits.max_compute_workgroup_storage_size) else {
        cx.dev.misuse(format!("attention: head dimension {hd} does not fit in workgroup memory"));
        return out;
    };
    let binds = vec![
        (1, Bind::Buf(qb)),
        (2, Bind::Buf(kb)),
        (3, Bind::Buf(vb)),
        (4, Bind::Buf(cache.k.clone())),
        (5, Bind::Buf(cache.v.clone())),
        (6, rb),
        (7, Bind::Buf(ob)),
    ];
    cx.dispatch(
        &Variant::Gpu { bq, bk, hd2, subgroups: cx.dev.subgroups },
        &params,
        binds,
        [nq.div_ceil(bq as usize) as u32, p.n_head as u32, 1],
    );
    out
}

/// Attention on software adapters (see `kernels/attention_ubo.wgsl`): new keys and values rounded
/// to f16 pairs once, then one dispatch per block of keys that some query can see.
fn ubo(cx: &mut Ctx, [qb, kb, vb, ob]: [&wgpu::Buffer; 4], rb: &Bind, cache: &Cache, ranges: &[u32], base: Params, hd2: u32) {
    let kv_dim = cache.kv_dim;
    let kvw = kv_dim / 2;
    let (nq, n_head, n_new) = (base.nq as usize, base.n_head as usize, base.n_new as usize);
    // Keys per block: one uniform binding each for keys and values, offsets aligned.
    let limits = &cx.dev.limits;
    let align = limits.min_uniform_buffer_offset_alignment.max(4) as usize;
    let step = align / gcd(kvw * 4, align);
    let per_binding = (limits.max_uniform_buffer_binding_size as usize).min(1 << 16) / (kvw * 4);
    let kb_keys = (per_binding.min(cache::SLACK_ROWS) / 16 * 16) / step * step;
    if kb_keys == 0 {
        cx.dev.misuse(format!("attention: a key row of {kv_dim} values does not fit a uniform binding"));
        return;
    }
    // New rows rounded to f16 pairs, with a block of slack for the last uniform binding.
    let (kt, vt) = (cx.alloc(n_new + kb_keys, kvw), cx.alloc(n_new + kb_keys, kvw));
    let state = cx.alloc(nq * n_head, 2 * hd2 as usize + 2);
    let Some([ktb, vtb, sb]) = bufs([&kt, &vt, &state]) else { return };
    // The query rows as f16 pairs, for heads too wide to keep them in registers.
    let qh = (!q_in_registers(hd2)).then(|| cx.alloc(nq * n_head, hd2 as usize));
    let qhb = qh.as_ref().and_then(|t| t.buffer().cloned());
    if qh.is_some() && qhb.is_none() {
        return;
    }
    cache::record_append(cx, kb, vb, &ktb, &vtb, n_new * kvw, 0);
    let prefix = cache.len;
    // Blocks of (keys, values, first key index, first row in that buffer, count) that some
    // query sees.
    let visible = |j0: usize, j1: usize| {
        ranges.chunks(4).any(|r| {
            let (a, pe, b, e) = (r[0] as usize, r[1] as usize, r[2] as usize, r[3] as usize);
            (a.max(j0) < pe.min(j1)) || (b.max(j0) < e.min(j1))
        })
    };
    let mut blocks = Vec::new();
    for r0 in (0..prefix).step_by(kb_keys) {
        let nk = kb_keys.min(prefix - r0);
        if visible(r0, r0 + nk) {
            blocks.push((cache.k.clone(), cache.v.clone(), r0, r0, nk));
        }
    }
    for r0 in (0..n_new).step_by(kb_keys) {
        let nk = kb_keys.min(n_new - r0);
        if visible(prefix + r0, prefix + r0 + nk) {
            blocks.push((ktb.clone(), vtb.clone(), prefix + r0, r0, nk));
        }
    }
    let binding = ((kb_keys * kvw).div_ceil(4) * 16) as u64;
    let last = blocks.len().saturating_sub(1);
    let variant = Variant::Ubo { hd2, kvw: kvw as u32, kb: kb_keys as u32 };
    for (i, (kbuf, vbuf, j0, r0, nk)) in blocks.into_iter().enumerate() {
        let flags = (i == 0) as u32 | ((i == last) as u32) << 1;
        let params = UboParams {
            nq: base.nq,
            n_head: base.n_head,
            group: base.group,
            kvw: kvw as u32,
            j0: j0 as u32,
            nk: nk as u32,
            q_cols: base.q_cols,
            has_cap: base.has_cap,
            pre: base.pre,
            post: base.post,
            softcap: base.softcap,
            flags,
        };
        let offset = (r0 * kvw * 4) as u64;
        let mut binds = vec![
            (1, Bind::Buf(qb.clone())),
            (2, Bind::Range(kbuf, offset, binding)),
            (3, Bind::Range(vbuf, offset, binding)),
            (4, Bind::Buf(sb.clone())),
            (6, rb.clone()),
            (7, Bind::Buf(ob.clone())),
        ];
        binds.extend(qhb.clone().map(|b| (5, Bind::Buf(b))));
        cx.dispatch(&variant, &params, binds, [nq.div_ceil(UBO_QUERIES) as u32, n_head as u32, 1]);
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Shader for Variant {
    fn source(&self) -> String {
        module(self.body())
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}
