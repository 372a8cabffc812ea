// Element-wise kernels, one per section: `x + y` and gated activations.

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

override WG: u32;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
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

override WG: u32;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
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
