// RMSNorm of each group of `g` values (a row, or one head of a row): x · w / sqrt(mean(x²) + eps).

struct Params {
    n_groups: u32,
    group: u32,
    eps: f32,
    pad: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

override WG: u32;

// Reduction: reduce.wgsl.

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, lane: Lane) {
    let tid = lane.tid;
    let grp = wid.x + wid.y * nwg.x;
    if (grp >= P.n_groups) {
        return;
    }
    let base = grp * P.group;
    var s = 0.0;
    for (var i = tid; i < P.group; i += WG) {
        let v = x[base + i];
        s += v * v;
    }
    let inv = 1.0 / sqrt(workgroup_sum(s, lane) / f32(P.group) + P.eps);
    for (var i = tid; i < P.group; i += WG) {
        out[base + i] = x[base + i] * (inv * w[i]);
    }
}
