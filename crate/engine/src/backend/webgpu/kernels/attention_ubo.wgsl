// Attention for software adapters (see matmul_ubo.wgsl for why): each invocation owns one query row
// of one head, with q and the output in registers (one variable per pair of dimensions, unrolled by
// the host: Mesa's llvmpipe before 23 stops an invocation after 65 535 loop iterations in all). One
// dispatch per block of KB keys, read through uniform bindings (the f16 cache, or the new rows
// pre-rounded to f16, laid out alike); the online-softmax state (max, sum, output) of each row
// carries over from block to block in `state`, and the last block writes the normalized output.
// Heads wider than 128 keep q out of registers (`ops/attention.rs`, `Q_IN_REGISTERS`): the first
// block rounds it to f16 pairs into `qh`, where every block reads it.

struct Params {
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
    flags: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<uniform> ku: array<vec4<u32>, {{KV4}}>;
@group(0) @binding(3) var<uniform> vu: array<vec4<u32>, {{KV4}}>;
@group(0) @binding(4) var<storage, read_write> state: array<f32>;
{{QH}}
@group(0) @binding(6) var<storage, read> ranges: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> out: array<f32>;

const HD2: u32 = {{HD2}}u;
const WG: u32 = 32u;
const BKC: u32 = 16u;
const MASKED: f32 = -1.0e38;
const VISIBLE: f32 = -1.0e37;
const FIRST: u32 = 1u;
const LAST: u32 = 2u;

fn kw(i: u32) -> u32 {
    return ku[i >> 2u][i & 3u];
}
fn vw(i: u32) -> u32 {
    return vu[i >> 2u][i & 3u];
}

@compute @workgroup_size(32)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let qi = wid.x * WG + lid;
    let h = wid.y;
    let g0 = (h / P.group) * HD2;
    let live = qi < P.nq;
    let qr = min(qi, P.nq - 1u);
    let x = ranges[qr];
    let qat = qr * P.q_cols + h * 2u * HD2;
    let st = (qr * P.n_head + h) * (2u * HD2 + 2u);
{{QDECL}}
    var m = -1.0e30;
    var l = 0.0;
    if ((P.flags & FIRST) == 0u) {
        m = state[st];
        l = state[st + 1u];
{{OLOAD}}
    }
    for (var t0 = 0u; t0 < P.nk; t0 += BKC) {
        var s: array<f32, BKC>;
        var mx = m;
        for (var kk = 0u; kk < BKC; kk++) {
            let jj = t0 + kk;
            let j = P.j0 + jj;
            var sc = MASKED;
            if (jj < P.nk) {
                let kb = jj * P.kvw + g0;
                var acc = 0.0;
{{SCORE}}
                acc = acc * P.post;
                if (P.has_cap != 0u) {
                    acc = P.softcap * tanh_safe(acc / P.softcap);
                }
                if ((j >= x.x && j < x.y) || (j >= x.z && j < x.w)) {
                    sc = acc;
                    mx = max(mx, acc);
                }
            }
            s[kk] = sc;
        }
        let alpha = exp(m - mx);
        l = l * alpha;
{{RESCALE}}
        for (var kk = 0u; kk < BKC; kk++) {
            let jj = t0 + kk;
            if (jj < P.nk && s[kk] > VISIBLE) {
                let p = exp(s[kk] - mx);
                l += p;
                // The weights meet the f16 values as f16.
                let pr = round_f16(p);
                let vb = jj * P.kvw + g0;
{{PV}}
            }
        }
        m = mx;
    }
    if (live) {
        if ((P.flags & LAST) != 0u) {
            let inv = select(0.0, 1.0 / l, l > 0.0);
{{STORE}}
        } else {
            state[st] = m;
            state[st + 1u] = l;
{{OSAVE}}
        }
    }
}
