// Flash-style attention for one (block of BQ query rows, head): key tiles of BK stream through
// workgroup memory, scores live only per tile, and a running max / sum rescales the output
// (online softmax), so no n × n matrix ever exists.
//
// Keys [0, prefix) come from the f16 cache, keys prefix + j from the new rows (rounded through f16 on
// the way in, like the cache would). Q, K and V are held as packed f16 pairs — the values they take in
// the CPU backend, exactly. Each query row sees two key runs given by `ranges`: [a, pe) of the prefix
// (a > 0 under a sliding window) and [b, e) of its own segment.

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
@group(0) @binding(2) var<storage, read> kn: array<f32>;
@group(0) @binding(3) var<storage, read> vn: array<f32>;
@group(0) @binding(4) var<storage, read> kc: array<u32>;
@group(0) @binding(5) var<storage, read> vc: array<u32>;
@group(0) @binding(6) var<storage, read> ranges: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> out: array<f32>;

// Invocation ids: lane.wgsl.

// Written in by the host as text, not overrides: NO below sizes the function-scope array `o`, and
// a function-scope array's length must be a constant.
const BQ: u32 = {{BQ}}u;
const BK: u32 = {{BK}}u;
const HD2: u32 = {{HD2}}u;
const SP: u32 = HD2 + 1u;
const SS: u32 = BK + 1u;
const WG: u32 = 128u;
const NS: u32 = (BQ * BK + WG - 1u) / WG;
const NO: u32 = (BQ * HD2 + WG - 1u) / WG;
const MASKED: f32 = -1.0e38;
const VISIBLE: f32 = -1.0e37;

var<workgroup> qs: array<u32, BQ * SP>;
var<workgroup> kvs: array<u32, BK * SP>;
var<workgroup> ss: array<f32, BQ * SS>;
var<workgroup> rng: array<vec4<u32>, BQ>;
var<workgroup> row_m: array<f32, BQ>;
var<workgroup> row_l: array<f32, BQ>;
var<workgroup> row_a: array<f32, BQ>;
var<workgroup> wlo: u32;
var<workgroup> whi: u32;

// A score's weight under the running max `mx`; 0 for a masked key.
fn weight(s: f32, mx: f32) -> f32 {
    return select(0.0, exp(s - mx), s > VISIBLE);
}

fn load_k(j: u32, dp: u32, g: u32) -> u32 {
    if (j < P.prefix) {
        return kc[j * (P.kv_dim / 2u) + g * HD2 + dp];
    }
    let jn = j - P.prefix;
    if (jn < P.n_new) {
        let at = jn * P.kv_dim + g * 2u * HD2 + 2u * dp;
        return pack_f16(kn[at], kn[at + 1u]);
    }
    return 0u;
}

fn load_v(j: u32, dp: u32, g: u32) -> u32 {
    if (j < P.prefix) {
        return vc[j * (P.kv_dim / 2u) + g * HD2 + dp];
    }
    let jn = j - P.prefix;
    if (jn < P.n_new) {
        let at = jn * P.kv_dim + g * 2u * HD2 + 2u * dp;
        return pack_f16(vn[at], vn[at + 1u]);
    }
    return 0u;
}

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, lane: Lane) {
    let tid = lane.tid;
    let q0 = wid.x * BQ;
    let h = wid.y;
    let g = h / P.group;
    if (tid < BQ) {
        var r = vec4<u32>(0u);
        if (q0 + tid < P.nq) {
            r = ranges[q0 + tid];
        }
        rng[tid] = r;
        row_m[tid] = -1.0e30;
        row_l[tid] = 0.0;
    }
    for (var e = tid; e < BQ * HD2; e += WG) {
        let r = e / HD2;
        let dp = e % HD2;
        var w = 0u;
        if (q0 + r < P.nq) {
            let at = (q0 + r) * P.q_cols + h * 2u * HD2 + 2u * dp;
            w = pack_f16(q[at] * P.pre, q[at + 1u] * P.pre);
        }
        qs[r * SP + dp] = w;
    }
    workgroupBarrier();
    if (tid == 0u) {
        var lo = 0xffffffffu;
        var hi = 0u;
        for (var r = 0u; r < BQ; r++) {
            let x = rng[r];
            if (x.x < x.y) {
                lo = min(lo, x.x);
                hi = max(hi, x.y);
            }
            if (x.z < x.w) {
                lo = min(lo, x.z);
                hi = max(hi, x.w);
            }
        }
        wlo = lo;
        whi = hi;
    }
    let lo = workgroupUniformLoad(&wlo);
    let hi = workgroupUniformLoad(&whi);

    var o: array<vec2<f32>, NO>;
    for (var i = 0u; i < NO; i++) {
        o[i] = vec2<f32>(0.0);
    }
    for (var t0 = lo; t0 < hi; t0 += BK) {
        for (var e = tid; e < BK * HD2; e += WG) {
            kvs[(e / HD2) * SP + e % HD2] = load_k(t0 + e / HD2, e % HD2, g);
        }
        workgroupBarrier();
        for (var i = 0u; i < NS; i++) {
            let e = tid + WG * i;
            if (e < BQ * BK) {
                let r = e / BK;
                let kk = e % BK;
                var s = 0.0;
                for (var dp = 0u; dp < HD2; dp++) {
                    s += dot(unpack2x16float(qs[r * SP + dp]), unpack2x16float(kvs[kk * SP + dp]));
                }
                s = s * P.post;
                if (P.has_cap != 0u) {
                    s = P.softcap * tanh_safe(s / P.softcap);
                }
                let j = t0 + kk;
                let x = rng[r];
                let vis = (j >= x.x && j < x.y) || (j >= x.z && j < x.w);
                ss[r * SS + kk] = select(MASKED, s, vis);
            }
        }
        workgroupBarrier();
        softmax_tile(lane);
        for (var e = tid; e < BK * HD2; e += WG) {
            kvs[(e / HD2) * SP + e % HD2] = load_v(t0 + e / HD2, e % HD2, g);
        }
        workgroupBarrier();
        for (var i = 0u; i < NO; i++) {
            let e = tid + WG * i;
            if (e < BQ * HD2) {
                let r = e / HD2;
                let dp = e % HD2;
                var acc = o[i] * row_a[r];
                for (var kk = 0u; kk < BK; kk++) {
                    acc += ss[r * SS + kk] * unpack2x16float(kvs[kk * SP + dp]);
                }
                o[i] = acc;
            }
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < NO; i++) {
        let e = tid + WG * i;
        if (e < BQ * HD2) {
            let r = e / HD2;
            let dp = e % HD2;
            if (q0 + r < P.nq) {
                let l = row_l[r];
                let inv = select(0.0, 1.0 / l, l > 0.0);
                let at = (q0 + r) * P.q_cols + h * 2u * HD2 + 2u * dp;
                out[at] = o[i].x * inv;
                out[at + 1u] = o[i].y * inv;
            }
        }
    }
}

// `softmax_tile`: the online softmax's step for one key tile, per query row r — the new running max
// over the tile's visible scores, the rescale `alpha` of what came before, the tile's weights in
// place of its scores (rounded through f16: they meet the f16 values as f16, as llama.cpp rounds
// them), and the running sum. An invocation per row, or a subgroup per row.
//#PLAIN
fn softmax_tile(lane: Lane) {
    let r = lane.tid;
    if (r < BQ) {
        let m_old = row_m[r];
        var mx = m_old;
        for (var kk = 0u; kk < BK; kk++) {
            let s = ss[r * SS + kk];
            if (s > VISIBLE) {
                mx = max(mx, s);
            }
        }
        let alpha = exp(m_old - mx);
        var l = row_l[r] * alpha;
        for (var kk = 0u; kk < BK; kk++) {
            let p = weight(ss[r * SS + kk], mx);
            l += p;
            ss[r * SS + kk] = round_f16(p);
        }
        row_m[r] = mx;
        row_l[r] = l;
        row_a[r] = alpha;
    }
}
//#SUBGROUP
// Rows sid, sid + nsg, …; the subgroup's active lanes split the tile's keys, a subgroup max and a
// subgroup sum combine them.
// `lane.sid` and `lane.nsg` are the same across a subgroup, so this loop is subgroup-uniform; a
// browser's WGSL compiler cannot see that through the `Lane` struct (its `tid` differs per
// invocation), hence the diagnostic's scope (naga, natively, does not check it).
@diagnostic(off, subgroup_uniformity)
fn softmax_tile(lane: Lane) {
    let rw = subgroup_rank();
    for (var r = lane.sid; r < BQ; r += lane.nsg) {
        let m_old = row_m[r];
        var mx = m_old;
        for (var kk = rw.x; kk < BK; kk += rw.y) {
            let s = ss[r * SS + kk];
            if (s > VISIBLE) {
                mx = max(mx, s);
            }
        }
        mx = subgroupMax(mx);
        var l = 0.0;
        for (var kk = rw.x; kk < BK; kk += rw.y) {
            let p = weight(ss[r * SS + kk], mx);
            l += p;
            ss[r * SS + kk] = round_f16(p);
        }
        l = subgroupAdd(l);
        if (rw.x == 0u) {
            let alpha = exp(m_old - mx);
            row_m[r] = mx;
            row_l[r] = row_l[r] * alpha + l;
            row_a[r] = alpha;
        }
    }
}
