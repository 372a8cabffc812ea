// Attention shaped for software adapters (see matmul_rows.wgsl): each invocation owns one query row
// of one head, holding q and the output in registers; keys and values are read at uniform
// addresses (the same key for every lane), blocks of BKC keys at a time with an online softmax.
// New keys and values arrive pre-rounded to f16 pairs (kt, vt), laid out like the cache.

struct Params {
    nq: u32,
    n_head: u32,
    group: u32,
    kv_dim: u32,
    prefix: u32,
    n_new: u32,
    q_cols: u32,
    has_cap: u32,
    pre: f32,
    post: f32,
    softcap: f32,
    pad: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> kt: array<u32>;
@group(0) @binding(3) var<storage, read> vt: array<u32>;
@group(0) @binding(4) var<storage, read> kc: array<u32>;
@group(0) @binding(5) var<storage, read> vc: array<u32>;
@group(0) @binding(6) var<storage, read> ranges: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> out: array<f32>;

const HD2: u32 = {{HD2}}u;
const WG: u32 = 32u;
const BKC: u32 = 16u;
const MASKED: f32 = -1.0e38;
const VISIBLE: f32 = -1.0e37;

var<workgroup> lane_lo: array<u32, WG>;
var<workgroup> lane_hi: array<u32, WG>;
var<workgroup> wlo: u32;
var<workgroup> whi: u32;

fn kload(j: u32, at: u32) -> vec2<f32> {
    if (j < P.prefix) {
        return unpack2x16float(kc[j * (P.kv_dim / 2u) + at]);
    }
    return unpack2x16float(kt[(j - P.prefix) * (P.kv_dim / 2u) + at]);
}

fn vload(j: u32, at: u32) -> vec2<f32> {
    if (j < P.prefix) {
        return unpack2x16float(vc[j * (P.kv_dim / 2u) + at]);
    }
    return unpack2x16float(vt[(j - P.prefix) * (P.kv_dim / 2u) + at]);
}

@compute @workgroup_size(32)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let qi = wid.x * WG + lid;
    let h = wid.y;
    let g0 = (h / P.group) * HD2;
    let active = qi < P.nq;
    var x = vec4<u32>(0u);
    if (active) {
        x = ranges[qi];
    }
    var lo = 0xffffffffu;
    var hi = 0u;
    if (x.x < x.y) {
        lo = min(lo, x.x);
        hi = max(hi, x.y);
    }
    if (x.z < x.w) {
        lo = min(lo, x.z);
        hi = max(hi, x.w);
    }
    lane_lo[lid] = lo;
    lane_hi[lid] = hi;
    workgroupBarrier();
    if (lid == 0u) {
        var a = 0xffffffffu;
        var b = 0u;
        for (var i = 0u; i < WG; i++) {
            a = min(a, lane_lo[i]);
            b = max(b, lane_hi[i]);
        }
        wlo = a;
        whi = b;
    }
    let klo = workgroupUniformLoad(&wlo);
    let khi = workgroupUniformLoad(&whi);

    var qv: array<vec2<f32>, HD2>;
    var o: array<vec2<f32>, HD2>;
    let qat = min(qi, P.nq - 1u) * P.q_cols + h * 2u * HD2;
    for (var dp = 0u; dp < HD2; dp++) {
        qv[dp] = unpack2x16float(pack_f16(q[qat + 2u * dp] * P.pre, q[qat + 2u * dp + 1u] * P.pre));
        o[dp] = vec2<f32>(0.0);
    }
    var m = -1.0e30;
    var l = 0.0;
    for (var t0 = klo; t0 < khi; t0 += BKC) {
        var s: array<f32, BKC>;
        var mx = m;
        for (var kk = 0u; kk < BKC; kk++) {
            let j = t0 + kk;
            var sc = MASKED;
            if (j < khi) {
                var acc = 0.0;
                for (var dp = 0u; dp < HD2; dp++) {
                    acc += dot(qv[dp], kload(j, g0 + dp));
                }
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
        for (var dp = 0u; dp < HD2; dp++) {
            o[dp] = o[dp] * alpha;
        }
        for (var kk = 0u; kk < BKC; kk++) {
            let j = t0 + kk;
            if (j < khi) {
                var p = 0.0;
                if (s[kk] > VISIBLE) {
                    p = exp(s[kk] - mx);
                }
                l += p;
                // The weights meet the f16 values as f16.
                let pr = round_f16(p);
                for (var dp = 0u; dp < HD2; dp++) {
                    o[dp] += pr * vload(j, g0 + dp);
                }
            }
        }
        m = mx;
    }
    if (active) {
        let inv = select(0.0, 1.0 / l, l > 0.0);
        for (var dp = 0u; dp < HD2; dp++) {
            out[qat + 2u * dp] = o[dp].x * inv;
            out[qat + 2u * dp + 1u] = o[dp].y * inv;
        }
    }
}
