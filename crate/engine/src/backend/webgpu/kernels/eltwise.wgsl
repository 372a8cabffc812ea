// Element-wise kernels: one entry per section.

//#ADD
struct Params {
    n: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < P.n) {
        out[i] = a[i] + b[i];
    }
}
//#GLU
// act(gate) · up, act = SiLU (ACT 0) or GELU with the tanh approximation (ACT 1).
struct Params {
    n: u32,
    act: u32,
    pad1: u32,
    pad2: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> gate: array<f32>;
@group(0) @binding(2) var<storage, read> up: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < P.n) {
        let g = gate[i];
        var a: f32;
        if (P.act == 0u) {
            a = g / (1.0 + exp(min(-g, 80.0)));
        } else {
            a = 0.5 * g * (1.0 + tanh_safe(0.7978846 * g * (1.0 + 0.044715 * g * g)));
        }
        out[i] = up[i] * a;
    }
}
//#SELECT
struct Params {
    n: u32,
    cols: u32,
    pad1: u32,
    pad2: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> rows: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < P.n) {
        let r = i / P.cols;
        out[i] = x[rows[r] * P.cols + i % P.cols];
    }
}
//#APPEND
// Keys and values of new rows into the f16 cache (pairs packed per u32), at word `dst`.
struct Params {
    n: u32,
    dst: u32,
    pad1: u32,
    pad2: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> k: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> v: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> kc: array<u32>;
@group(0) @binding(4) var<storage, read_write> vc: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < P.n) {
        let a = k[i];
        let b = v[i];
        kc[P.dst + i] = pack_f16(a.x, a.y);
        vc[P.dst + i] = pack_f16(b.x, b.y);
    }
}
//#PACKX
// Activations re-laid out for the software matrix product: chunk c of KC columns of every row,
// rows contiguous ([c][m][KC]), zero past the last column.
struct Params {
    n: u32,
    m: u32,
    k: u32,
    kc: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < P.n) {
        let c = i / (P.m * P.kc);
        let r = i % (P.m * P.kc);
        let m = r / P.kc;
        let k = c * P.kc + r % P.kc;
        var v = 0.0;
        if (k < P.k) {
            v = x[m * P.k + k];
        }
        out[i] = v;
    }
}
