// Weight decoders: one `dq8(row, k8)` per device format (see repack.rs for the layouts). Each block
// below is selected by the Rust side; `P.k_padded` is the padded row length of the bound weight.

//#F32
@group(0) @binding(8) var<storage, read> w0: array<vec4<f32>>;
fn dq8(row: u32, k8: u32) -> D8 {
    let i = (row * P.k_padded) / 4u + 2u * k8;
    return D8(w0[i], w0[i + 1u]);
}
//#F16
@group(0) @binding(8) var<storage, read> w0: array<vec4<u32>>;
fn dq8(row: u32, k8: u32) -> D8 {
    let u = w0[(row * P.k_padded) / 8u + k8];
    return D8(vec4<f32>(unpack2x16float(u.x), unpack2x16float(u.y)),
              vec4<f32>(unpack2x16float(u.z), unpack2x16float(u.w)));
}
//#BF16
@group(0) @binding(8) var<storage, read> w0: array<vec4<u32>>;
fn bf2(w: u32) -> vec2<f32> {
    return vec2<f32>(bitcast<f32>(w << 16u), bitcast<f32>(w & 0xffff0000u));
}
fn dq8(row: u32, k8: u32) -> D8 {
    let u = w0[(row * P.k_padded) / 8u + k8];
    return D8(vec4<f32>(bf2(u.x), bf2(u.y)), vec4<f32>(bf2(u.z), bf2(u.w)));
}
//#Q8_0
@group(0) @binding(8) var<storage, read> w0: array<vec2<u32>>;
@group(0) @binding(9) var<storage, read> w1: array<u32>;
fn dq8(row: u32, k8: u32) -> D8 {
    let u = w0[(row * P.k_padded) / 8u + k8];
    let d = unpack2x16float(w1[(row * P.k_padded) / 32u + k8 / 4u]).x;
    let a = vec4<f32>(f32(extractBits(bitcast<i32>(u.x), 0u, 8u)), f32(extractBits(bitcast<i32>(u.x), 8u, 8u)),
                      f32(extractBits(bitcast<i32>(u.x), 16u, 8u)), f32(extractBits(bitcast<i32>(u.x), 24u, 8u)));
    let b = vec4<f32>(f32(extractBits(bitcast<i32>(u.y), 0u, 8u)), f32(extractBits(bitcast<i32>(u.y), 8u, 8u)),
                      f32(extractBits(bitcast<i32>(u.y), 16u, 8u)), f32(extractBits(bitcast<i32>(u.y), 24u, 8u)));
    return D8(a * d, b * d);
}
//#Q4
@group(0) @binding(8) var<storage, read> w0: array<u32>;
@group(0) @binding(9) var<storage, read> w1: array<u32>;
fn dq8(row: u32, k8: u32) -> D8 {
    let w = w0[(row * P.k_padded) / 8u + k8];
    let dm = unpack2x16float(w1[(row * P.k_padded) / 32u + k8 / 4u]);
    return D8(nib_lo(w) * dm.x + dm.y, nib_hi(w) * dm.x + dm.y);
}
//#Q5
@group(0) @binding(8) var<storage, read> w0: array<u32>;
@group(0) @binding(9) var<storage, read> w1: array<u32>;
@group(0) @binding(10) var<storage, read> w2: array<u32>;
fn dq8(row: u32, k8: u32) -> D8 {
    let g = (row * P.k_padded) / 32u + k8 / 4u;
    let w = w0[(row * P.k_padded) / 8u + k8];
    let h = w1[g] >> (8u * (k8 % 4u));
    let dm = unpack2x16float(w2[g]);
    let qa = nib_lo(w) + vec4<f32>(bits4(h, 0u, 1u, 1u) << vec4<u32>(4u));
    let qb = nib_hi(w) + vec4<f32>(bits4(h, 4u, 1u, 1u) << vec4<u32>(4u));
    return D8(qa * dm.x + dm.y, qb * dm.x + dm.y);
}
//#Q4K
@group(0) @binding(8) var<storage, read> w0: array<u32>;
@group(0) @binding(9) var<storage, read> w1: array<u32>;
fn dq8(row: u32, k8: u32) -> D8 {
    let w = w0[(row * P.k_padded) / 8u + k8];
    let base = ((row * P.k_padded) / 256u + k8 / 32u) * 6u;
    let gs = (k8 / 4u) % 8u;
    let sh = 8u * (gs % 4u);
    let s = bitcast<f32>(w1[base]) * f32((w1[base + 2u + gs / 4u] >> sh) & 0xffu);
    let m = bitcast<f32>(w1[base + 1u]) * f32((w1[base + 4u + gs / 4u] >> sh) & 0xffu);
    return D8(s * nib_lo(w) - m, s * nib_hi(w) - m);
}
//#Q5K
@group(0) @binding(8) var<storage, read> w0: array<u32>;
@group(0) @binding(9) var<storage, read> w1: array<u32>;
@group(0) @binding(10) var<storage, read> w2: array<u32>;
fn dq8(row: u32, k8: u32) -> D8 {
    let w = w0[(row * P.k_padded) / 8u + k8];
    let h = w1[(row * P.k_padded) / 32u + k8 / 4u] >> (8u * (k8 % 4u));
    let base = ((row * P.k_padded) / 256u + k8 / 32u) * 6u;
    let gs = (k8 / 4u) % 8u;
    let sh = 8u * (gs % 4u);
    let s = bitcast<f32>(w2[base]) * f32((w2[base + 2u + gs / 4u] >> sh) & 0xffu);
    let m = bitcast<f32>(w2[base + 1u]) * f32((w2[base + 4u + gs / 4u] >> sh) & 0xffu);
    let qa = nib_lo(w) + vec4<f32>(bits4(h, 0u, 1u, 1u) << vec4<u32>(4u));
    let qb = nib_hi(w) + vec4<f32>(bits4(h, 4u, 1u, 1u) << vec4<u32>(4u));
    return D8(s * qa - m, s * qb - m);
}
//#Q6K
@group(0) @binding(8) var<storage, read> w0: array<u32>;
@group(0) @binding(9) var<storage, read> w1: array<u32>;
@group(0) @binding(10) var<storage, read> w2: array<u32>;
fn dq8(row: u32, k8: u32) -> D8 {
    let w = w0[(row * P.k_padded) / 8u + k8];
    let j = k8 % 4u;
    let hw = w1[(row * P.k_padded) / 16u + 2u * (k8 / 4u) + j / 2u];
    let hs = 16u * (j % 2u);
    let base = ((row * P.k_padded) / 256u + k8 / 32u) * 5u;
    let g16 = (k8 % 32u) / 2u;
    let sc = f32(extractBits(bitcast<i32>(w2[base + 1u + g16 / 4u]), 8u * (g16 % 4u), 8u));
    let s = bitcast<f32>(w2[base]) * sc;
    let qa = vec4<i32>(nibu_lo(w) | (bits4(hw, hs, 2u, 3u) << vec4<u32>(4u))) - vec4<i32>(32);
    let qb = vec4<i32>(nibu_hi(w) | (bits4(hw, hs + 8u, 2u, 3u) << vec4<u32>(4u))) - vec4<i32>(32);
    return D8(s * vec4<f32>(qa), s * vec4<f32>(qb));
}
