//! WebAssembly kernels: [`lanes4`](super::lanes4) on simd128, with relaxed-simd's 8-bit dot products
//! where the module is built with it (`-C target-feature=+relaxed-simd`: the threaded build).
//!
//! - relaxed-simd has two kernels; which is faster depends on the CPU under the browser, so both are
//!   listed and [`super::race_kernels`] lets them race on a judge's first products. The weights'
//!   levels (≤ 63) are the dot products' 7-bit operand, so every result is defined. Q8_0's signed
//!   weights take the simd128 path.
//!   - "16-bit runs": `i16x8.relaxed_dot_i8x16_i7x16` sums pairs of products into 16 bits — one
//!     `pmaddubsw` on every x86 CPU V8 runs on — for a run of steps ([`super::Format::run`]), then
//!     `i32x4.dot_i16x8` multiplies the run by its scales (or pairs of ones) into 32 bits.
//!   - "32-bit dot": `i32x4.relaxed_dot_i8x16_i7x16_add` sums the 4 products of each lane into 32
//!     bits: one `vpdpbusd` where the CPU has AVX-VNNI (or ARM's `sdot`), else V8 lowers it to five
//!     instructions.
//! - simd128: `extmul` multiplies bytes into 16-bit products, `extadd_pairwise` and a pairwise fold
//!   of two vectors sum each lane's 4.
//!
//! Floats use separate multiply and add: simd128 has no fused multiply-add, and relaxed-simd's may
//! or may not fuse, which would make results depend on the machine.

use core::arch::wasm32::*;

use half::f16;

use super::lanes4::{self, Simd4};
use super::{Kernel, QActs, QWeight, Tile, GROUP, MR};

/// This module's kernels, in no particular order (see the module docs).
pub(super) fn kernels() -> Vec<(Kernel, &'static str)> {
    #[cfg(target_feature = "relaxed-simd")]
    {
        vec![(narrow as Kernel, "int8 wasm relaxed-simd 16-bit runs"), (wide as Kernel, "int8 wasm relaxed-simd 32-bit dot")]
    }
    #[cfg(not(target_feature = "relaxed-simd"))]
    {
        vec![(wide as Kernel, "int8 wasm simd128")]
    }
}

#[cfg(target_feature = "relaxed-simd")]
unsafe fn narrow(a: &QActs, w: &QWeight, t: Tile, out: &mut [[f32; GROUP]; MR]) {
    lanes4::kernel::<Wasm<true>>(a, w, t, out)
}

unsafe fn wide(a: &QActs, w: &QWeight, t: Tile, out: &mut [[f32; GROUP]; MR]) {
    lanes4::kernel::<Wasm<false>>(a, w, t, out)
}

/// `NARROW`: runs are 16-bit sums of pairs (relaxed-simd only).
struct Wasm<const NARROW: bool>;

/// Each lane's 4 products of signed bytes, summed: extmul to 16 bits, pairwise to 32, then the
/// lanes (r0 a, r0 b, r1 a, r1 b) and (r2 a, r2 b, r3 a, r3 b) folded to (r0, r1, r2, r3).
#[inline(always)]
unsafe fn dot4_extmul(w: v128, x: v128, acc: v128) -> v128 {
    let lo = i32x4_extadd_pairwise_i16x8(i16x8_extmul_low_i8x16(w, x));
    let hi = i32x4_extadd_pairwise_i16x8(i16x8_extmul_high_i8x16(w, x));
    i32x4_add(acc, i32x4_add(i32x4_shuffle::<0, 2, 4, 6>(lo, hi), i32x4_shuffle::<1, 3, 5, 7>(lo, hi)))
}

impl<const NARROW: bool> Simd4 for Wasm<NARROW> {
    type I = v128;
    type F = v128;
    #[inline(always)]
    unsafe fn zero() -> v128 {
        i32x4_splat(0)
    }
    #[inline(always)]
    unsafe fn zero_f() -> v128 {
        f32x4_splat(0.0)
    }
    #[inline(always)]
    unsafe fn load(p: *const u8) -> v128 {
        v128_load(p as *const v128)
    }
    #[inline(always)]
    unsafe fn low_nibbles(v: v128) -> v128 {
        v128_and(v, u8x16_splat(0x0F))
    }
    #[inline(always)]
    unsafe fn high_nibbles(v: v128) -> v128 {
        u8x16_shr(v, 4)
    }
    #[inline(always)]
    unsafe fn with_high(low: v128, v: v128, at: u32, mask: u8) -> v128 {
        v128_or(low, v128_and(u8x16_shl(u8x16_shr(v, at), 4), u8x16_splat(mask << 4)))
    }
    #[inline(always)]
    unsafe fn splat4(p: *const i8) -> v128 {
        v128_load32_splat(p as *const u32)
    }
    #[inline(always)]
    unsafe fn dot4(w: v128, x: v128, acc: v128) -> v128 {
        #[cfg(target_feature = "relaxed-simd")]
        {
            i32x4_relaxed_dot_i8x16_i7x16_add(x, w, acc)
        }
        #[cfg(not(target_feature = "relaxed-simd"))]
        {
            dot4_extmul(w, x, acc)
        }
    }
    const NARROW: bool = NARROW;
    #[inline(always)]
    unsafe fn run_dot(w: v128, x: v128, acc: v128) -> v128 {
        #[cfg(target_feature = "relaxed-simd")]
        if NARROW {
            return i16x8_add(acc, i16x8_relaxed_dot_i8x16_i7x16(x, w));
        }
        Self::dot4(w, x, acc)
    }
    #[inline(always)]
    unsafe fn run_scaled(acc: v128, sv: v128) -> v128 {
        if NARROW {
            i32x4_dot_i16x8(acc, sv)
        } else {
            i32x4_mul(acc, sv)
        }
    }
    #[inline(always)]
    unsafe fn run_sum(acc: v128) -> v128 {
        if NARROW {
            i32x4_extadd_pairwise_i16x8(acc)
        } else {
            acc
        }
    }
    #[inline(always)]
    unsafe fn dot4_signed(w: v128, x: v128, acc: v128) -> v128 {
        dot4_extmul(w, x, acc)
    }
    #[inline(always)]
    unsafe fn add(a: v128, b: v128) -> v128 {
        i32x4_add(a, b)
    }
    #[inline(always)]
    unsafe fn mul(a: v128, b: v128) -> v128 {
        i32x4_mul(a, b)
    }
    #[inline(always)]
    unsafe fn scales(p: *const i8) -> v128 {
        let s16 = i16x8_extend_low_i8x16(v128_load32_zero(p as *const u32));
        if NARROW {
            i16x8_shuffle::<0, 0, 1, 1, 2, 2, 3, 3>(s16, s16)
        } else {
            i32x4_extend_low_i16x8(s16)
        }
    }
    #[inline(always)]
    unsafe fn dot_pairs(lo: *const i8, hi: *const i8, shift: u32, sums: *const i16) -> v128 {
        let (lo, hi) = (v128_load32_zero(lo as *const u32), v128_load32_zero(hi as *const u32));
        let pairs = i8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(lo, hi);
        let pairs = i16x8_shl(i16x8_extend_low_i8x16(pairs), shift);
        i32x4_dot_i16x8(pairs, v128_load32_splat(sums as *const u32))
    }
    #[inline(always)]
    unsafe fn to_f(v: v128) -> v128 {
        f32x4_convert_i32x4(v)
    }
    #[inline(always)]
    unsafe fn load_half(p: *const f16) -> v128 {
        // wasm has no f16 conversion. A finite f16's exponent and mantissa, moved to an f32's
        // places, read the value × 2⁻¹¹² (subnormals too, as f32 subnormals), so one multiply by
        // 2¹¹² gives it exactly; infinities and NaNs then get the exponent's ones, and the sign
        // goes back on.
        let h = u32x4_extend_low_u16x8(v128_load64_zero(p as *const u64));
        let abs = v128_and(h, u32x4_splat(0x7FFF));
        let v = f32x4_mul(u32x4_shl(abs, 13), f32x4_splat(f32::from_bits(0x7780_0000)));
        let v = v128_or(v, v128_and(u32x4_ge(abs, u32x4_splat(0x7C00)), u32x4_splat(0x7F80_0000)));
        v128_or(v, u32x4_shl(v128_and(h, u32x4_splat(0x8000)), 16))
    }
    #[inline(always)]
    unsafe fn splat_f(v: f32) -> v128 {
        f32x4_splat(v)
    }
    #[inline(always)]
    unsafe fn add_f(a: v128, b: v128) -> v128 {
        f32x4_add(a, b)
    }
    #[inline(always)]
    unsafe fn mul_f(a: v128, b: v128) -> v128 {
        f32x4_mul(a, b)
    }
    #[inline(always)]
    unsafe fn store_f(p: *mut f32, v: v128) {
        v128_store(p as *mut v128, v)
    }
}
