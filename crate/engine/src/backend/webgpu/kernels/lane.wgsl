// A kernel's invocation ids as one struct parameter of its entry point, so that the signature stays
// the same with subgroup operations (natively, where the device has them) and without.
//#PLAIN
struct Lane {
    @builtin(local_invocation_index) tid: u32,
}
//#SUBGROUP
struct Lane {
    @builtin(local_invocation_index) tid: u32,
    @builtin(subgroup_id) sid: u32,
    @builtin(num_subgroups) nsg: u32,
}

// This invocation's rank among the subgroup's active ones and their count: strides over them need
// no subgroup size, layout or fullness. Call in subgroup-uniform control flow.
fn subgroup_rank() -> vec2<u32> {
    return vec2<u32>(subgroupExclusiveAdd(1u), subgroupAdd(1u));
}
