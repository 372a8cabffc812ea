//! ARM NEON kernels: [`lanes4`](super::lanes4) with the 8-bit dot product `sdot` (ARMv8.2 dotprod,
//! chosen at run time), else multiplies into 16 bits and pairwise adds.

use std::arch::aarch64::*;

use half::f16;

use super::lanes4::{self, Simd4};
use super::{Kernel, QActs, QWeight, Tile, GROUP, MR};

pub(super) fn kernel() -> Option<(Kernel, &'static str)> {
    Some(if std::arch::is_aarch64_feature_detected!("dotprod") {
        (dotprod as Kernel, "int8 neon dotprod")
    } else {
        (plain as Kernel, "int8 neon")
    })
}

#[target_feature(enable = "neon,dotprod")]
unsafe fn dotprod(a: &QActs, w: &QWeight, t: Tile, out: &mut [[f32; GROUP]; MR]) {
    lanes4::kernel::<Neon<true>>(a, w, t, out)
}

#[target_feature(enable = "neon")]
unsafe fn plain(a: &QActs, w: &QWeight, t: Tile, out: &mut [[f32; GROUP]; MR]) {
    lanes4::kernel::<Neon<false>>(a, w, t, out)
}

/// `DOT`: the dotprod extension is available.
struct Neon<const DOT: bool>;

/// Each lane's 4 products of signed bytes, summed without dotprod: 16-bit products, pairwise adds.
#[inline(always)]
unsafe fn dot4_mull(w: int8x16_t, x: int8x16_t, acc: int32x4_t) -> int32x4_t {
    let lo = vpaddlq_s16(vmull_s8(vget_low_s8(w), vget_low_s8(x)));
    let hi = vpaddlq_s16(vmull_high_s8(w, x));
    vaddq_s32(acc, vpaddq_s32(lo, hi))
}

/// `sdot`: each lane of `acc` plus the 4 products of the lane's bytes (needs dotprod).
#[inline(always)]
unsafe fn sdot(mut acc: int32x4_t, a: int8x16_t, b: int8x16_t) -> int32x4_t {
    std::arch::asm!("sdot {acc:v}.4s, {a:v}.16b, {b:v}.16b", acc = inout(vreg) acc, a = in(vreg) a, b = in(vreg) b, options(pure, nomem, nostack));
    acc
}

impl<const DOT: bool> Simd4 for Neon<DOT> {
    type I = int32x4_t;
    type F = float32x4_t;
    #[inline(always)]
    unsafe fn zero() -> int32x4_t {
        vdupq_n_s32(0)
    }
    #[inline(always)]
    unsafe fn zero_f() -> float32x4_t {
        vdupq_n_f32(0.0)
    }
    #[inline(always)]
    unsafe fn load(p: *const u8) -> int32x4_t {
        vreinterpretq_s32_u8(vld1q_u8(p))
    }
    #[inline(always)]
    unsafe fn low_nibbles(v: int32x4_t) -> int32x4_t {
        vreinterpretq_s32_u8(vandq_u8(vreinterpretq_u8_s32(v), vdupq_n_u8(0x0F)))
    }
    #[inline(always)]
    unsafe fn high_nibbles(v: int32x4_t) -> int32x4_t {
        vreinterpretq_s32_u8(vshrq_n_u8::<4>(vreinterpretq_u8_s32(v)))
    }
    #[inline(always)]
    unsafe fn with_high(low: int32x4_t, v: int32x4_t, at: u32, mask: u8) -> int32x4_t {
        let high = vshlq_n_u8::<4>(vshlq_u8(vreinterpretq_u8_s32(v), vdupq_n_s8(-(at as i8))));
        vreinterpretq_s32_u8(vorrq_u8(vreinterpretq_u8_s32(low), vandq_u8(high, vdupq_n_u8(mask << 4))))
    }
    #[inline(always)]
    unsafe fn splat4(p: *const i8) -> int32x4_t {
        vdupq_n_s32(std::ptr::read_unaligned(p as *const i32))
    }
    #[inline(always)]
    unsafe fn dot4(w: int32x4_t, x: int32x4_t, acc: int32x4_t) -> int32x4_t {
        let (w, x) = (vreinterpretq_s8_s32(w), vreinterpretq_s8_s32(x));
        if DOT {
            sdot(acc, w, x)
        } else {
            dot4_mull(w, x, acc)
        }
    }
    #[inline(always)]
    unsafe fn dot4_signed(w: int32x4_t, x: int32x4_t, acc: int32x4_t) -> int32x4_t {
        Self::dot4(w, x, acc)
    }
    #[inline(always)]
    unsafe fn add(a: int32x4_t, b: int32x4_t) -> int32x4_t {
        vaddq_s32(a, b)
    }
    #[inline(always)]
    unsafe fn mul(a: int32x4_t, b: int32x4_t) -> int32x4_t {
        vmulq_s32(a, b)
    }
    #[inline(always)]
    unsafe fn scales(p: *const i8) -> int32x4_t {
        let bytes = vreinterpret_s8_s32(vdup_n_s32(std::ptr::read_unaligned(p as *const i32)));
        vmovl_s16(vget_low_s16(vmovl_s8(bytes)))
    }
    #[inline(always)]
    unsafe fn dot_pairs(lo: *const i8, hi: *const i8, shift: u32, sums: *const i16) -> int32x4_t {
        let four = |p: *const i8| vreinterpret_s8_s32(vdup_n_s32(std::ptr::read_unaligned(p as *const i32)));
        let wv = vshlq_s16(vmovl_s8(vzip1_s8(four(lo), four(hi))), vdupq_n_s16(shift as i16));
        let pv = vreinterpretq_s16_s32(vdupq_n_s32(std::ptr::read_unaligned(sums as *const i32)));
        let lo = vmull_s16(vget_low_s16(wv), vget_low_s16(pv));
        let hi = vmull_high_s16(wv, pv);
        vpaddq_s32(lo, hi)
    }
    #[inline(always)]
    unsafe fn to_f(v: int32x4_t) -> float32x4_t {
        vcvtq_f32_s32(v)
    }
    #[inline(always)]
    unsafe fn load_half(p: *const f16) -> float32x4_t {
        // `fcvtl` (base ARMv8): Rust's f16 vector types are not stable yet.
        let h = vld1_u16(p as *const u16);
        let out: float32x4_t;
        std::arch::asm!("fcvtl {o:v}.4s, {h:v}.4h", o = out(vreg) out, h = in(vreg) h, options(pure, nomem, nostack));
        out
    }
    #[inline(always)]
    unsafe fn splat_f(v: f32) -> float32x4_t {
        vdupq_n_f32(v)
    }
    #[inline(always)]
    unsafe fn add_f(a: float32x4_t, b: float32x4_t) -> float32x4_t {
        vaddq_f32(a, b)
    }
    #[inline(always)]
    unsafe fn mul_f(a: float32x4_t, b: float32x4_t) -> float32x4_t {
        vmulq_f32(a, b)
    }
    #[inline(always)]
    unsafe fn store_f(p: *mut f32, v: float32x4_t) {
        vst1q_f32(p, v)
    }
}
