// out[i, :] = x[rows[i], :].

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

override WG: u32;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i < P.n) {
        let r = i / P.cols;
        out[i] = x[rows[r] * P.cols + i % P.cols];
    }
}
