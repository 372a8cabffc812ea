// Rotary embedding in place: each (row, pair) rotated by the angle of the row's position. cos and sin
// come from a table the host computes exactly as the CPU backend does (no device trigonometry on
// arguments of thousands of radians).

struct Params {
    rows: u32,
    cols: u32,
    half: u32,
    neox: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> cs: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;

override WG: u32;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = gid.x + gid.y * nwg.x * WG;
    let pairs = P.cols / 2u;
    if (idx >= P.rows * pairs) {
        return;
    }
    let row = idx / pairs;
    let p = idx % pairs;
    let head = p / P.half;
    let i = p % P.half;
    let base = row * P.cols + head * 2u * P.half;
    var a = base + 2u * i;
    var b = a + 1u;
    if (P.neox != 0u) {
        a = base + i;
        b = base + i + P.half;
    }
    let c = cs[row * P.half + i];
    let x0 = x[a];
    let x1 = x[b];
    x[a] = x0 * c.x - x1 * c.y;
    x[b] = x0 * c.y + x1 * c.x;
}
