// The matrix product for software adapters (lavapipe, SwiftShader), which run a workgroup's
// invocations as the SIMD lanes of a CPU. There, storage loads inside loops cost one scalar load
// per lane (tens of cycles each), but uniform-buffer loads at uniform addresses are one scalar load
// and a broadcast. So: each invocation owns one weight row (its per-lane loads: one word of codes per
// 8 values, plus scales), and a block of MB activation rows × KC columns, repacked for the purpose
// (`pack_x`), is read through a uniform binding by every lane. Per (row block, k-chunk) dispatch,
// partial sums are added into y. On a real GPU this shape is wrong (uncoalesced weight reads); see
// gemm.wgsl for that.

struct Params {
    // Activation rows of this block (first: m0), groups of 8 columns of this chunk (first: k8_0).
    m: u32,
    m0: u32,
    k8n: u32,
    k8_0: u32,
    k_padded: u32,
    // As in matmul_io.wgsl.
    part_row0: u32,
    part_rows: u32,
    y_cols: u32,
    has_bias: u32,
    // Add into y (chunks after the first) instead of storing.
    accumulate: u32,
    pad0: u32,
    pad1: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
// {{…}}: written in by the host (a uniform array's length must be a constant; the rest is unrolled code).
@group(0) @binding(1) var<uniform> xu: array<vec4<f32>, {{XV}}>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let n = wid.x * 128u + lid;
    let n2 = n + 64u;
    // Lanes past the last row decode the last row again and discard it.
    let row = min(n, P.part_rows - 1u);
    let row2 = min(n2, P.part_rows - 1u);
{{DECL}}
    for (var k8 = 0u; k8 < P.k8n; k8++) {
        let w = dq8(row, P.k8_0 + k8);
        let v = dq8(row2, P.k8_0 + k8);
        let b = 2u * k8;
{{BODY}}
    }
    if (n < P.part_rows) {
        var bi = 0.0;
        if (P.has_bias != 0u && P.accumulate == 0u) {
            bi = bias[P.part_row0 + n];
        }
{{STORE}}
    }
    if (n2 < P.part_rows) {
        var bi = 0.0;
        if (P.has_bias != 0u && P.accumulate == 0u) {
            bi = bias[P.part_row0 + n2];
        }
{{STORE2}}
    }
}
