// y[m, col0 + n] = Σ_k x[m, k] · W[n, k] (+ bias) for few rows m (≤ MB per z-slice): a workgroup
// takes NR weight rows and streams each once, each decoded group of 8 serving every m; partial sums
// meet in workgroup memory and one invocation per (row, m) adds them. Two ways to split the work
// (sections below): 32 lanes per row, or with subgroups, a subgroup per (row, part of k) that sums
// its lanes in registers first.

// Params and bindings: matmul_io.wgsl; invocation ids: lane.wgsl.

const NR: u32 = 8u;
const LANES: u32 = 32u;
const MB: u32 = 8u;
const WG: u32 = 256u;

// Partial sums: [m][row][up to LANES parts].
var<workgroup> red: array<f32, 2048>; // MB * NR * LANES

// Partial sums of weight row `n` over the groups of 8 k8 = first, first + step, … < end, for each m.
fn partial(n: u32, mbase: u32, first: u32, end: u32, step: u32) -> array<f32, 8> {
    var acc: array<f32, 8>;
    for (var i = 0u; i < MB; i++) {
        acc[i] = 0.0;
    }
    if (n < P.part_rows) {
        for (var k8 = first; k8 < end; k8 += step) {
            let w = dq8(n, k8);
            for (var i = 0u; i < MB; i++) {
                let m = mbase + i;
                if (m < P.m) {
                    acc[i] += dot(w.a, xload4(m, 8u * k8)) + dot(w.b, xload4(m, 8u * k8 + 4u));
                }
            }
        }
    }
    return acc;
}

// After a barrier: invocation (row, m) adds its `parts` partial sums and writes y.
fn store(wg: u32, mbase: u32, tid: u32, parts: u32) {
    if (tid < NR * MB) {
        let r = tid / MB;
        let i = tid % MB;
        let n = wg * NR + r;
        let m = mbase + i;
        if (n < P.part_rows && m < P.m) {
            var s = 0.0;
            for (var p = 0u; p < parts; p++) {
                s += red[(i * NR + r) * LANES + p];
            }
            if (P.has_bias != 0u) {
                s += bias[P.part_row0 + n];
            }
            y[m * P.y_cols + P.part_row0 + n] = s;
        }
    }
}
//#PLAIN
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, lane: Lane) {
    let tid = lane.tid;
    let wg = wid.x + wid.y * nwg.x;
    let mbase = wid.z * MB;
    let r = tid / LANES;
    let l = tid % LANES;
    let acc = partial(wg * NR + r, mbase, l, P.k_padded / 8u, LANES);
    for (var i = 0u; i < MB; i++) {
        red[(i * NR + r) * LANES + l] = acc[i];
    }
    workgroupBarrier();
    store(wg, mbase, tid, LANES);
}
//#SUBGROUP
// Work units (row, part of k): as many parts per row as there are subgroups per row (1 to LANES),
// each subgroup taking units sid, sid + nsg, … .
// `lane.sid` and `lane.nsg` are the same across a subgroup, so this loop is subgroup-uniform; a
// browser's WGSL compiler cannot see that through the `Lane` struct (its `tid` differs per
// invocation), hence the diagnostic's scope (naga, natively, does not check it).
@diagnostic(off, subgroup_uniformity)
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, lane: Lane) {
    let wg = wid.x + wid.y * nwg.x;
    let mbase = wid.z * MB;
    let rw = subgroup_rank();
    let parts = clamp(lane.nsg / NR, 1u, LANES);
    let k8n = P.k_padded / 8u;
    // Only the rows m that exist are summed (one when decoding); `store` reads no others.
    let mn = min(MB, P.m - mbase);
    for (var u = lane.sid; u < NR * parts; u += lane.nsg) {
        let r = u % NR;
        let p = u / NR;
        let acc = partial(wg * NR + r, mbase, p * k8n / parts + rw.x, (p + 1u) * k8n / parts, rw.y);
        for (var i = 0u; i < mn; i++) {
            let s = subgroupAdd(acc[i]);
            if (rw.x == 0u) {
                red[(i * NR + r) * LANES + p] = s;
            }
        }
    }
    workgroupBarrier();
    store(wg, mbase, lane.tid, parts);
}
