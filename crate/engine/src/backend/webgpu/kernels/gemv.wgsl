// y[m, col0 + n] = Σ_k x[m, k] · W[n, k] (+ bias) for few rows m (≤ MB per z-slice): 32 lanes per
// weight row stream the row once, each decoded group of 8 serving every m; a workgroup-memory
// reduction ends it.

// Params and bindings: matmul_io.wgsl.

const NR: u32 = 8u;
const LANES: u32 = 32u;
const MB: u32 = 8u;

var<workgroup> red: array<f32, 2048>; // MB * NR * LANES

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let wg = wid.x + wid.y * nwg.x;
    let r = tid / LANES;
    let lane = tid % LANES;
    let n = wg * NR + r;
    let mbase = wid.z * MB;
    var acc: array<f32, 8>;
    for (var i = 0u; i < MB; i++) {
        acc[i] = 0.0;
    }
    if (n < P.part_rows) {
        for (var k8 = lane; k8 < P.k_padded / 8u; k8 += LANES) {
            let w = dq8(n, k8);
            for (var i = 0u; i < MB; i++) {
                let m = mbase + i;
                if (m < P.m) {
                    acc[i] += dot(w.a, xload4(m, 8u * k8)) + dot(w.b, xload4(m, 8u * k8 + 4u));
                }
            }
        }
    }
    for (var i = 0u; i < MB; i++) {
        red[(i * NR + r) * LANES + lane] = acc[i];
    }
    workgroupBarrier();
    if (tid < NR * MB) {
        let rr = tid / MB;
        let i = tid % MB;
        let nn = wg * NR + rr;
        let m = mbase + i;
        if (nn < P.part_rows && m < P.m) {
            var s = 0.0;
            for (var l = 0u; l < LANES; l++) {
                s += red[(i * NR + rr) * LANES + l];
            }
            if (P.has_bias != 0u) {
                s += bias[P.part_row0 + nn];
            }
            y[m * P.y_cols + P.part_row0 + nn] = s;
        }
    }
}
