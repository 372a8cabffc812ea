//! WGSL sources, assembled per variant from the files in `kernels/`: the common helpers, the kernel,
//! and — for kernels that read weights — the `dq8` decoder of the weight's device format. Variants
//! differ only in compile-time constants (tile sizes, workgroup-memory element type), so each is a
//! separate pipeline, created on first use and cached.

use super::repack::Format;

const COMMON: &str = include_str!("kernels/common.wgsl");
const DQ: &str = include_str!("kernels/dq.wgsl");
const XLOAD: &str = include_str!("kernels/xload.wgsl");
const MATMUL_IO: &str = include_str!("kernels/matmul_io.wgsl");
const GEMM: &str = include_str!("kernels/gemm.wgsl");
const GEMV: &str = include_str!("kernels/gemv.wgsl");
const ATTENTION_UBO: &str = include_str!("kernels/attention_ubo.wgsl");
const MATMUL_UBO: &str = include_str!("kernels/matmul_ubo.wgsl");
const EMBED: &str = include_str!("kernels/embed.wgsl");
const LOGITS: &str = include_str!("kernels/logits.wgsl");
const ATTENTION: &str = include_str!("kernels/attention.wgsl");
const NORM: &str = include_str!("kernels/norm.wgsl");
const ROPE: &str = include_str!("kernels/rope.wgsl");
const ELTWISE: &str = include_str!("kernels/eltwise.wgsl");

/// Every pipeline the backend uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Tiled matrix product; `f16`: workgroup tiles in f16; `bk`: k-depth of a tile (16 or 32);
    /// `xvec`: activation rows are 16-byte aligned.
    Gemm {
        fmt: Format,
        f16: bool,
        bk: u32,
        xvec: bool,
    },
    Gemv {
        fmt: Format,
        xvec: bool,
    },
    Embed {
        fmt: Format,
    },
    Logits {
        fmt: Format,
        xvec: bool,
    },
    Attention {
        bq: u32,
        bk: u32,
        hd2: u32,
    },
    /// The matrix product for software adapters with activations read through a uniform binding:
    /// `mb` rows × `kc` columns per dispatch.
    MatmulUbo {
        fmt: Format,
        mb: u32,
        kc: u32,
    },
    /// Activations into `[k-chunk][row][kc]` blocks for [`Kernel::MatmulUbo`].
    PackX,
    /// Attention for software adapters: one query row per invocation, blocks of `kb` keys of `kvw`
    /// words read through uniform bindings.
    AttentionUbo {
        hd2: u32,
        kvw: u32,
        kb: u32,
    },
    Norm {
        wg: u32,
    },
    Rope,
    Add,
    Glu,
    Select,
    Append,
}

/// The text of section `//#name` of a multi-section file (up to the next section).
fn section<'a>(src: &'a str, name: &str) -> &'a str {
    let tag = format!("//#{name}\n");
    let start = src.find(&tag).unwrap_or_else(|| panic!("WGSL section {name} is missing")) + tag.len();
    let end = src[start..].find("\n//#").map_or(src.len(), |e| start + e + 1);
    &src[start..end]
}

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

fn xload(xvec: bool) -> &'static str {
    section(XLOAD, if xvec { "XVEC" } else { "XSCALAR" })
}

impl Kernel {
    pub fn label(&self) -> String {
        format!("{self:?}")
    }

    pub fn source(&self) -> String {
        let mut s = String::new();
        let body = match *self {
            Kernel::Gemm { fmt, f16, bk, xvec } => {
                if f16 {
                    s.push_str("enable f16;\n");
                }
                let tile = 64 * (bk / 4 + 1);
                format!(
                    "{MATMUL_IO}\n{}\n{}\n{}",
                    GEMM.replace("{{BK}}", &bk.to_string())
                        .replace("{{TILE}}", &tile.to_string())
                        .replace("TYPE", if f16 { "f16" } else { "f32" }),
                    xload(xvec),
                    dq_section(fmt)
                )
            }
            Kernel::Gemv { fmt, xvec } => {
                format!("{MATMUL_IO}\n{GEMV}\n{}\n{}", xload(xvec), dq_section(fmt))
            }
            Kernel::MatmulUbo { fmt, mb, kc } => {
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
                            "        if ({i}u < P.m) {{\n            let at = (P.m0 + {i}u) * P.ldy + P.col0 + {col};\n            \
                             if (P.accumulate != 0u) {{ y[at] += {acc}{i}; }} else {{ y[at] = {acc}{i} + bi; }}\n        }}\n"
                        ));
                    }
                }
                format!(
                    "{}\n{}",
                    MATMUL_UBO
                        .replace("{{XV}}", &(mb * kc / 4).to_string())
                        .replace("{{KC4}}", &(kc / 4).to_string())
                        .replace("{{DECL}}", &decl)
                        .replace("{{BODY}}", &body)
                        .replace("{{STORE}}", &store)
                        .replace("{{STORE2}}", &store2),
                    dq_section(fmt)
                )
            }
            Kernel::PackX => section(ELTWISE, "PACKX").to_string(),
            Kernel::AttentionUbo { hd2, kvw, kb } => {
                let mut t = [(); 8].map(|_| String::new());
                let [qdecl, oload, score, rescale, pv, store, osave, _] = &mut t;
                for d in 0..hd2 {
                    let (a, b) = (2 * d, 2 * d + 1);
                    qdecl.push_str(&format!(
                        "    let q{d} = unpack2x16float(pack_f16(q[qat + {a}u] * P.pre, q[qat + {b}u] * P.pre));\n    var o{d} = vec2<f32>(0.0);\n"
                    ));
                    oload.push_str(&format!("        o{d} = vec2<f32>(state[st + {}u], state[st + {}u]);\n", 2 + a, 2 + b));
                    score.push_str(&format!("                acc += dot(q{d}, unpack2x16float(kw(kb + {d}u)));\n"));
                    rescale.push_str(&format!("        o{d} = o{d} * alpha;\n"));
                    pv.push_str(&format!("                o{d} += pr * unpack2x16float(vw(vb + {d}u));\n"));
                    store.push_str(&format!("            out[qat + {a}u] = o{d}.x * inv;\n            out[qat + {b}u] = o{d}.y * inv;\n"));
                    osave.push_str(&format!(
                        "            state[st + {}u] = o{d}.x;\n            state[st + {}u] = o{d}.y;\n",
                        2 + a,
                        2 + b
                    ));
                }
                ATTENTION_UBO
                    .replace("{{HD2}}", &hd2.to_string())
                    .replace("{{KV4}}", &(kb * kvw).div_ceil(4).to_string())
                    .replace("{{QDECL}}", qdecl)
                    .replace("{{OLOAD}}", oload)
                    .replace("{{SCORE}}", score)
                    .replace("{{RESCALE}}", rescale)
                    .replace("{{PV}}", pv)
                    .replace("{{STORE}}", store)
                    .replace("{{OSAVE}}", osave)
            }
            Kernel::Embed { fmt } => format!("{EMBED}\n{}", dq_section(fmt)),
            Kernel::Logits { fmt, xvec } => {
                format!("{LOGITS}\n{}\n{}", xload(xvec), dq_section(fmt))
            }
            Kernel::Attention { bq, bk, hd2 } => {
                ATTENTION.replace("{{BQ}}", &bq.to_string()).replace("{{BK}}", &bk.to_string()).replace("{{HD2}}", &hd2.to_string())
            }
            Kernel::Norm { wg } => NORM.replace("{{WG}}", &wg.to_string()),
            Kernel::Rope => ROPE.to_string(),
            Kernel::Add => section(ELTWISE, "ADD").to_string(),
            Kernel::Glu => section(ELTWISE, "GLU").to_string(),
            Kernel::Select => section(ELTWISE, "SELECT").to_string(),
            Kernel::Append => section(ELTWISE, "APPEND").to_string(),
        };
        s.push_str(COMMON);
        s.push('\n');
        s.push_str(&body);
        s
    }
}

/// Workgroup-memory words the attention kernel needs for tiles of `bq` queries × `bk` keys.
pub fn attention_words(bq: u32, bk: u32, hd2: u32) -> u32 {
    bq * (hd2 + 1) + bk * (hd2 + 1) + bq * (bk + 1) + 4 * bq + 4 * bq + 2
}

/// The largest attention tile that fits in `limit` bytes of workgroup memory.
pub fn attention_tile(hd2: u32, limit: u32) -> Option<(u32, u32)> {
    [(32, 32), (16, 32), (32, 16), (16, 16), (16, 8), (8, 16), (8, 8), (4, 8), (4, 4)]
        .into_iter()
        .find(|&(bq, bk)| 4 * attention_words(bq, bk, hd2) <= limit)
}
