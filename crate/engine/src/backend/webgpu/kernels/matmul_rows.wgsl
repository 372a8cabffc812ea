// The matrix product shaped for software adapters (lavapipe, SwiftShader), which run a workgroup's
// invocations as SIMD lanes of a CPU: there, a load whose address differs between lanes costs one
// scalar load per lane, while a load at an address the compiler can prove uniform is one load. So
// each invocation owns one weight row (its only per-lane loads: one word of codes per 8 values,
// plus the group's scales) and MR activation rows, read at uniform addresses, share every decoded
// value. On a real GPU this is the wrong shape (uncoalesced weight reads); see gemm.wgsl.

struct Params {
    m: u32,
    n: u32,
    k: u32,
    wk: u32,
    ldy: u32,
    col0: u32,
    has_bias: u32,
    pad: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

const MR: u32 = 16u;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let n = wid.x * 64u + lid;
    let m0 = wid.y * MR;
    // Lanes past the last row decode the last row again and discard it.
    let row = min(n, P.n - 1u);
    var acc: array<f32, 16>;
    for (var i = 0u; i < MR; i++) {
        acc[i] = 0.0;
    }
    for (var k8 = 0u; k8 < P.wk / 8u; k8++) {
        let w = dq8(row, k8);
        for (var i = 0u; i < MR; i++) {
            if (m0 + i < P.m) {
                acc[i] += dot(w.a, xload4(m0 + i, 8u * k8)) + dot(w.b, xload4(m0 + i, 8u * k8 + 4u));
            }
        }
    }
    if (n < P.n) {
        var b = 0.0;
        if (P.has_bias != 0u) {
            b = bias[P.col0 + n];
        }
        for (var i = 0u; i < MR; i++) {
            if (m0 + i < P.m) {
                y[(m0 + i) * P.ldy + P.col0 + n] = acc[i] + b;
            }
        }
    }
}
