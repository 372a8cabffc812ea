// Helpers shared by every kernel.

// Eight consecutive values of a weight row.
struct D8 {
    a: vec4<f32>,
    b: vec4<f32>,
}

// f32 → f16 bits, rounded to nearest even (as the CPU backend's `half` conversions round). Written
// out in integer arithmetic because WGSL leaves the rounding of f32 → f16 conversions to the device.
fn f16_bits(x: f32) -> u32 {
    let b = bitcast<u32>(x);
    let sign = (b >> 16u) & 0x8000u;
    let a = b & 0x7fffffffu;
    if (a >= 0x7f800000u) {
        return sign | 0x7c00u | select(0u, 0x200u, a > 0x7f800000u);
    }
    if (a >= 0x477ff000u) {
        return sign | 0x7c00u;
    }
    if (a >= 0x38800000u) {
        let m = a - 0x38000000u;
        return sign | ((m + 0xfffu + ((m >> 13u) & 1u)) >> 13u);
    }
    if (a < 0x33000000u) {
        return sign;
    }
    let e = a >> 23u;
    let mant = (a & 0x7fffffu) | 0x800000u;
    let shift = 126u - e;
    var r = mant >> shift;
    let rem = mant & ((1u << shift) - 1u);
    let half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u) == 1u)) {
        r = r + 1u;
    }
    return sign | r;
}

fn round_f16(x: f32) -> f32 {
    return unpack2x16float(f16_bits(x)).x;
}

fn pack_f16(a: f32, b: f32) -> u32 {
    return f16_bits(a) | (f16_bits(b) << 16u);
}

// tanh without inf/NaN intermediates (WGSL does not promise IEEE infinities).
fn tanh_safe(x: f32) -> f32 {
    let e = exp(2.0 * clamp(x, -15.0, 15.0));
    return (e - 1.0) / (e + 1.0);
}

// Nibbles 0..3 and 4..7 of a word.
fn nibu_lo(w: u32) -> vec4<u32> {
    return vec4<u32>(w, w >> 4u, w >> 8u, w >> 12u) & vec4<u32>(0xfu);
}
fn nibu_hi(w: u32) -> vec4<u32> {
    return vec4<u32>(w >> 16u, w >> 20u, w >> 24u, w >> 28u) & vec4<u32>(0xfu);
}
fn nib_lo(w: u32) -> vec4<f32> {
    return vec4<f32>(nibu_lo(w));
}
fn nib_hi(w: u32) -> vec4<f32> {
    return vec4<f32>(nibu_hi(w));
}
// Bits s, s+1, s+2, s+3 (step `step`) of `w`, masked with `m`, as unsigned vectors.
fn bits4(w: u32, s: u32, step: u32, m: u32) -> vec4<u32> {
    return (vec4<u32>(w >> s, w >> (s + step), w >> (s + 2u * step), w >> (s + 3u * step))) & vec4<u32>(m);
}
