// out[r, i] = x[r, :] · W[ids[i], :] for the ids whose row lies in this part of the head, then the
// optional final soft-cap: only the vocabulary rows that are read are ever computed.

struct Params {
    m: u32,
    n_ids: u32,
    k: u32,
    k_padded: u32,
    part_row0: u32,
    part_rows: u32,
    softcap: f32,
    has_cap: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(2) var<storage, read> ids: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

const WG: u32 = 64u;

// Reduction: reduce.wgsl.

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, lane: Lane) {
    let tid = lane.tid;
    // Ids beyond the per-dimension workgroup limit (a whole vocabulary) fold into z.
    let i = wid.z * nwg.x + wid.x;
    let r = wid.y;
    if (i >= P.n_ids) {
        return;
    }
    let id = ids[i];
    if (id < P.part_row0 || id >= P.part_row0 + P.part_rows) {
        return;
    }
    var s = 0.0;
    for (var k8 = tid; k8 < P.k_padded / 8u; k8 += WG) {
        let w = dq8(id - P.part_row0, k8);
        s += dot(w.a, xload4(r, 8u * k8)) + dot(w.b, xload4(r, 8u * k8 + 4u));
    }
    let total = workgroup_sum(s, lane);
    if (tid == 0u) {
        var l = total;
        if (P.has_cap != 0u) {
            l = P.softcap * tanh_safe(l / P.softcap);
        }
        out[r * P.n_ids + i] = l;
    }
}
