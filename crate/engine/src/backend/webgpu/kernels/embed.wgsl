// out[t, :] = W[tokens[t], :] · scale, for the tokens whose row lies in this part of the table.

struct Params {
    n_tok: u32,
    cols: u32,
    k_padded: u32,
    part_row0: u32,
    part_rows: u32,
    scale: f32,
    pad0: u32,
    pad1: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> tokens: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

override WG: u32;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = gid.x + gid.y * nwg.x * WG;
    let k8n = P.k_padded / 8u;
    if (idx >= P.n_tok * k8n) {
        return;
    }
    let t = idx / k8n;
    let k8 = idx % k8n;
    let tok = tokens[t];
    if (tok < P.part_row0 || tok >= P.part_row0 + P.part_rows) {
        return;
    }
    let d = dq8(tok - P.part_row0, k8);
    let base = t * P.cols + 8u * k8;
    for (var i = 0u; i < 4u; i++) {
        if (8u * k8 + i < P.cols) {
            out[base + i] = d.a[i] * P.scale;
        }
        if (8u * k8 + 4u + i < P.cols) {
            out[base + 4u + i] = d.b[i] * P.scale;
        }
    }
}
