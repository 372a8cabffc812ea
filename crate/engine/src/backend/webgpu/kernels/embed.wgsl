// out[t, :] = W[tokens[t], :] · scale, for the tokens whose row lies in this part of the table.

struct Params {
    n_tok: u32,
    cols: u32,
    wk: u32,
    row0: u32,
    rows: u32,
    scale: f32,
    pad0: u32,
    pad1: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> tokens: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = gid.x + gid.y * nwg.x * 64u;
    let k8n = P.wk / 8u;
    if (idx >= P.n_tok * k8n) {
        return;
    }
    let t = idx / k8n;
    let k8 = idx % k8n;
    let tok = tokens[t];
    if (tok < P.row0 || tok >= P.row0 + P.rows) {
        return;
    }
    let d = dq8(tok - P.row0, k8);
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
