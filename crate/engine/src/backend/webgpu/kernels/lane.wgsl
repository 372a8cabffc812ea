// A kernel's invocation ids as one struct parameter of its entry point, so that the signature stays
// the same with subgroup operations (where the device has them) and without. A browser's WGSL needs
// `enable subgroups;` for them (the host moves it to the top of the module; naga, natively, neither
// needs nor parses it) and the `subgroup_id` language feature for the ids below.
//#PLAIN
struct Lane {
    @builtin(local_invocation_index) tid: u32,
}
//#SUBGROUP
enable subgroups;
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
