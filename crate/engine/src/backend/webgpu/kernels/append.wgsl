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

override WG: u32;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i < P.n) {
        let a = k[i];
        let b = v[i];
        kc[P.dst + i] = pack_f16(a.x, a.y);
        vc[P.dst + i] = pack_f16(b.x, b.y);
    }
}
