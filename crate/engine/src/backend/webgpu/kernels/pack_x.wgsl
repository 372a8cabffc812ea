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

override WG: u32;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
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
