// The sum of one value per invocation over a workgroup of `WG` invocations (a power of two), in
// every invocation, given the ids of lane.wgsl's section of the same name. Call once per dispatch,
// in workgroup-uniform control flow.
//#PLAIN
var<workgroup> red: array<f32, WG>;

// A tree in workgroup memory: log2(WG) + 1 barriers.
fn workgroup_sum(s: f32, lane: Lane) -> f32 {
    red[lane.tid] = s;
    workgroupBarrier();
    for (var st = WG / 2u; st > 0u; st >>= 1u) {
        if (lane.tid < st) {
            red[lane.tid] += red[lane.tid + st];
        }
        workgroupBarrier();
    }
    return red[0];
}
//#SUBGROUP
// One slot per subgroup (there are at most WG).
var<workgroup> red: array<f32, WG>;

// Each subgroup sums in registers, its first active invocation writes the subgroup's sum, and one
// barrier later every invocation adds the slots: no assumption on how invocations form subgroups,
// nor on their size, nor that they are full.
fn workgroup_sum(s: f32, lane: Lane) -> f32 {
    let t = subgroupAdd(s);
    if (subgroupBroadcastFirst(lane.tid) == lane.tid) {
        red[lane.sid] = t;
    }
    workgroupBarrier();
    var total = 0.0;
    for (var i = 0u; i < lane.nsg; i++) {
        total += red[i];
    }
    return total;
}
