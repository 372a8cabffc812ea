//! x86-64 kernels, chosen at run time: AVX-512 VNNI (256-bit, EVEX), AVX-VNNI (the same
//! instruction, VEX), else AVX2.
//!
//! Per step of 4 values: the 4 activation bytes of a row are broadcast to all 8 lanes and
//! multiplied with the 4 unsigned levels of each of the 8 weight rows (one row per 32-bit lane),
//! the products summed per lane. How the sums are formed is the one difference ([`Dot`]):
//! - AVX2: `maddubs` adds pairs of products into 16 bits; a run of steps is summed in 16 bits (no
//!   overflow, see [`Format::run`]), then `madd` widens it to 32 bits, multiplying by the
//!   K-quants' integer scales on the way.
//! - VNNI: `vpdpbusd` adds the 4 products straight into a 32-bit accumulator (one instruction for
//!   `maddubs` + `madd` + add); each scale's steps are summed in 32 bits (two accumulators per row,
//!   alternating, so consecutive steps do not wait on each other's latency), then multiplied by the
//!   scale once.
//!
//! Floats (the file's f16, widened by F16C) appear once per 256 values (K-quants) or per 32 (older
//! types). Q8_0's signed weights take llama.cpp's sign trick (|w| × sign(x, w)). 256-bit vectors
//! on purpose: a 512-bit `vpdpbusd` does twice the work at half the rate on the CPUs that have it
//! (one port instead of two on Intel, two passes on AMD Zen 4), so it would buy nothing but a
//! second layout.

use std::arch::x86_64::*;

use half::f16;

use super::{Format, Kernel, QActs, QWeight, Tile, GROUP, MR, QK, QK_K};

/// The x86 kernels this CPU can run, best first.
pub(super) fn kernels() -> Vec<(Kernel, &'static str)> {
    let mut out = Vec::new();
    if !(is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") && is_x86_feature_detected!("f16c")) {
        return out;
    }
    if is_x86_feature_detected!("avx512vnni") && is_x86_feature_detected!("avx512vl") {
        out.push((vnni512 as Kernel, "int8 avx512-vnni"));
    }
    if is_x86_feature_detected!("avxvnni") {
        out.push((avxvnni as Kernel, "int8 avx-vnni"));
    }
    out.push((avx2 as Kernel, "int8 avx2"));
    out
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn avx2(a: &QActs, w: &QWeight, t: Tile, out: &mut [[f32; GROUP]; MR]) {
    dispatch::<Avx2>(a, w, t, out)
}

#[target_feature(enable = "avx2,fma,f16c,avx512vnni,avx512vl")]
unsafe fn vnni512(a: &QActs, w: &QWeight, t: Tile, out: &mut [[f32; GROUP]; MR]) {
    dispatch::<Vnni512>(a, w, t, out)
}

#[target_feature(enable = "avx2,fma,f16c,avxvnni")]
unsafe fn avxvnni(a: &QActs, w: &QWeight, t: Tile, out: &mut [[f32; GROUP]; MR]) {
    dispatch::<AvxVnni>(a, w, t, out)
}

#[inline(always)]
unsafe fn dispatch<D: Dot>(a: &QActs, w: &QWeight, t: Tile, out: &mut [[f32; GROUP]; MR]) {
    macro_rules! rows {
        ($k:ident $(, $c:expr)*) => {
            match t.rows {
                4 => $k::<D, 4 $(, $c)*>(a, w, t, out),
                3 => $k::<D, 3 $(, $c)*>(a, w, t, out),
                2 => $k::<D, 2 $(, $c)*>(a, w, t, out),
                _ => $k::<D, 1 $(, $c)*>(a, w, t, out),
            }
        };
    }
    let f: Format = w.fmt;
    match (f.super_blocks, f.nibbles, f.run, f.signed, t.packed_bits(w)) {
        (true, true, _, _, _) => rows!(super_kernel, true, 8, false, 4, 0),
        (true, false, 4, _, 0) => rows!(super_kernel, false, 4, false, 4, 0),
        (true, false, 4, _, _) => rows!(super_kernel, false, 4, false, 4, 1),
        (true, false, _, _, 0) => rows!(super_kernel, false, 2, true, 8, 0),
        (true, false, _, _, _) => rows!(super_kernel, false, 2, true, 8, 2),
        (false, true, _, _, _) => rows!(block_kernel, true, 8, false, true, 0),
        (false, false, _, true, _) => rows!(block_kernel, false, 1, true, false, 0),
        (false, false, _, false, 0) => rows!(block_kernel, false, 4, false, true, 0),
        (false, false, _, false, _) => rows!(block_kernel, false, 4, false, true, 1),
    }
}

/// How a kernel sums the steps that share one scale.
trait Dot {
    /// Steps `s0..s1` of the block whose levels start at `lv`, against the activations at
    /// `x[i] + xo`, summed per lane into 32 bits — times the scales `sv` (each lane its row's,
    /// as i32) when given. `RUN` divides `s1 − s0`.
    unsafe fn sum<const M: usize, const NIB: bool, const RUN: usize, const SIGNED: bool, const HB: usize>(
        lv: *const u8,
        x: &[*const i8; M],
        xo: usize,
        s0: usize,
        s1: usize,
        sv: Option<__m256i>,
    ) -> [__m256i; M];
}

/// The weight vector of step `s` and the activation vector of row pointer `x` for it, with Q8_0's
/// sign trick applied (`maddubs` and `vpdpbusd` both take unsigned × signed bytes).
#[inline(always)]
unsafe fn operands<const NIB: bool, const SIGNED: bool, const HB: usize>(lv: *const u8, s: usize) -> __m256i {
    let w = step::<NIB, HB>(lv, s);
    if SIGNED {
        _mm256_sign_epi8(w, w)
    } else {
        w
    }
}

#[inline(always)]
unsafe fn act<const SIGNED: bool>(lv: *const u8, s: usize, x: *const i8) -> __m256i {
    let xv = bcast4(x.add(s * 4));
    if SIGNED {
        _mm256_sign_epi8(xv, step::<false, 0>(lv, s))
    } else {
        xv
    }
}

struct Avx2;

impl Dot for Avx2 {
    #[inline(always)]
    unsafe fn sum<const M: usize, const NIB: bool, const RUN: usize, const SIGNED: bool, const HB: usize>(
        lv: *const u8,
        x: &[*const i8; M],
        xo: usize,
        s0: usize,
        s1: usize,
        sv: Option<__m256i>,
    ) -> [__m256i; M] {
        // `madd` multiplies pairs of 16-bit sums: each lane's scale in both of its halves.
        let pairs =
            _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13, 0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13);
        let sv = sv.map_or(_mm256_set1_epi16(1), |sv| _mm256_shuffle_epi8(sv, pairs));
        let mut total = [_mm256_setzero_si256(); M];
        let mut r0 = s0;
        while r0 < s1 {
            let mut acc16 = [_mm256_setzero_si256(); M];
            for s in r0..r0 + RUN {
                let wv = operands::<NIB, SIGNED, HB>(lv, s);
                for i in 0..M {
                    acc16[i] = _mm256_add_epi16(acc16[i], _mm256_maddubs_epi16(wv, act::<SIGNED>(lv, s, x[i].add(xo))));
                }
            }
            for i in 0..M {
                total[i] = _mm256_add_epi32(total[i], _mm256_madd_epi16(acc16[i], sv));
            }
            r0 += RUN;
        }
        total
    }
}

/// `vpdpbusd` through AVX-512 VNNI's 256-bit form or AVX-VNNI's: the same sums either way.
trait Dpbusd {
    unsafe fn dpbusd(acc: __m256i, w: __m256i, x: __m256i) -> __m256i;
}

struct Vnni512;
struct AvxVnni;

impl Dpbusd for Vnni512 {
    #[inline(always)]
    unsafe fn dpbusd(acc: __m256i, w: __m256i, x: __m256i) -> __m256i {
        _mm256_dpbusd_epi32(acc, w, x)
    }
}

impl Dpbusd for AvxVnni {
    #[inline(always)]
    unsafe fn dpbusd(acc: __m256i, w: __m256i, x: __m256i) -> __m256i {
        _mm256_dpbusd_avx_epi32(acc, w, x)
    }
}

impl<V: Dpbusd> Dot for V {
    #[inline(always)]
    unsafe fn sum<const M: usize, const NIB: bool, const RUN: usize, const SIGNED: bool, const HB: usize>(
        lv: *const u8,
        x: &[*const i8; M],
        xo: usize,
        s0: usize,
        s1: usize,
        sv: Option<__m256i>,
    ) -> [__m256i; M] {
        let mut acc = [[_mm256_setzero_si256(); M]; 2];
        for s in s0..s1 {
            let wv = operands::<NIB, SIGNED, HB>(lv, s);
            for i in 0..M {
                acc[s % 2][i] = V::dpbusd(acc[s % 2][i], wv, act::<SIGNED>(lv, s, x[i].add(xo)));
            }
        }
        std::array::from_fn(|i| {
            let s = _mm256_add_epi32(acc[0][i], acc[1][i]);
            sv.map_or(s, |sc| _mm256_mullo_epi32(s, sc))
        })
    }
}

/// The levels of step `s` (0..8) of a block whose 8 × 32 levels start at `lv`: bytes, nibbles
/// (`NIB`), or nibbles with `HB` bits above them packed ([`QWeight::step`]).
#[inline(always)]
#[allow(clippy::manual_checked_ops)] // HB is a constant: its branch is chosen at compile time
unsafe fn step<const NIB: bool, const HB: usize>(lv: *const u8, s: usize) -> __m256i {
    if HB > 0 {
        let low = step::<true, 0>(lv, s);
        let per = 8 / HB;
        let high = _mm256_loadu_si256(lv.add(128 + (s / per) * 32) as *const __m256i);
        // This step's high bits (at bit HB · (s % per)) moved to bit 4.
        let at = (HB * (s % per)) as i32;
        let high =
            if at <= 4 { _mm256_sll_epi16(high, _mm_cvtsi32_si128(4 - at)) } else { _mm256_srl_epi16(high, _mm_cvtsi32_si128(at - 4)) };
        _mm256_or_si256(low, _mm256_and_si256(high, _mm256_set1_epi8((((1 << HB) - 1) << 4) as i8)))
    } else if NIB {
        let mask = _mm256_set1_epi8(0x0F);
        let v = _mm256_loadu_si256(lv.add((s % 4) * 32) as *const __m256i);
        if s < 4 {
            _mm256_and_si256(v, mask)
        } else {
            _mm256_and_si256(_mm256_srli_epi16(v, 4), mask)
        }
    } else {
        _mm256_loadu_si256(lv.add(s * 32) as *const __m256i)
    }
}

/// The 8 signed bytes at `p`, one a 32-bit lane.
#[inline(always)]
unsafe fn widen8(p: *const i8) -> __m256i {
    _mm256_cvtepi8_epi32(_mm_loadl_epi64(p as *const __m128i))
}

/// The 8 f16 at `p`, widened.
#[inline(always)]
unsafe fn halves8(p: *const f16) -> __m256 {
    _mm256_cvtph_ps(_mm_loadu_si128(p as *const __m128i))
}

/// The offset multipliers of the 8 rows at `at` whose sum multipliers are `dv`.
#[inline(always)]
unsafe fn offsets(w: &QWeight, dv: __m256, at: usize) -> __m256 {
    match w.fmt.dm_of_d {
        Some(c) => _mm256_mul_ps(dv, _mm256_set1_ps(c)),
        None => halves8(w.dm.as_ptr().add(at)),
    }
}

/// 4 activation bytes at `p`, in every 32-bit lane.
#[inline(always)]
unsafe fn bcast4(p: *const i8) -> __m256i {
    _mm256_set1_epi32(std::ptr::read_unaligned(p as *const i32))
}

#[inline(always)]
unsafe fn super_kernel<D: Dot, const M: usize, const NIB: bool, const RUN: usize, const HALF: bool, const PAIRS: usize, const HB: usize>(
    a: &QActs,
    w: &QWeight,
    t: Tile,
    out: &mut [[f32; GROUP]; MR],
) {
    let Tile { r0, group: g, u0, u1, .. } = t;
    let (nblk, nsb) = (w.k / QK, w.k / QK_K);
    let sw = w.fmt.scales_per_block();
    let min_shift = _mm_cvtsi32_si128(w.fmt.min_shift as i32);
    let x: [*const i8; M] = a.row_levels(r0);
    let sums: [*const i16; M] = a.row_sums(r0, PAIRS);
    // Steps per scale: 8 (a scale per 32 values) or 4 (Q6_K: per 16).
    let per_scale = if HALF { 4 } else { 8 };
    let mut facc = [_mm256_setzero_ps(); M];
    for u in u0..u1 {
        let mut iacc = [_mm256_setzero_si256(); M];
        for bl in 0..8 {
            let b = u * 8 + bl;
            let lv = t.block(w, b);
            let sc = w.scales.as_ptr().add((g * nblk + b) * sw);
            for s0 in (0..8).step_by(per_scale) {
                let sv = widen8(sc.add(if s0 >= 4 && HALF { GROUP } else { 0 }));
                let part = D::sum::<M, NIB, RUN, false, HB>(lv, &x, b * QK, s0, s0 + per_scale, Some(sv));
                for i in 0..M {
                    iacc[i] = _mm256_add_epi32(iacc[i], part[i]);
                }
            }
        }
        // Per super-block: d·main + dm·(offset coefficients · level sums), times the activation scale.
        let at = (g * nsb + u) * GROUP;
        let dv = halves8(w.d.as_ptr().add(at));
        let dmv = offsets(w, dv, at);
        let mins = w.offset_coefficients().as_ptr().add(2 * at * PAIRS);
        // Each row's pair of coefficients (a pair's halves, 8 bytes each) in its lane's two 16-bit
        // halves.
        let mins: [__m256i; PAIRS] = std::array::from_fn(|p| {
            let v = _mm_loadu_si128(mins.add(2 * p * GROUP) as *const __m128i);
            _mm256_sll_epi16(_mm256_cvtepi8_epi16(_mm_unpacklo_epi8(v, _mm_unpackhi_epi64(v, v))), min_shift)
        });
        for i in 0..M {
            let mut off = _mm256_setzero_si256();
            for (p, &mv) in mins.iter().enumerate() {
                let pair = _mm256_set1_epi32(std::ptr::read_unaligned(sums[i].add(u * 2 * PAIRS + 2 * p) as *const i32));
                off = _mm256_add_epi32(off, _mm256_madd_epi16(mv, pair));
            }
            let t = _mm256_fmadd_ps(_mm256_cvtepi32_ps(off), dmv, _mm256_mul_ps(_mm256_cvtepi32_ps(iacc[i]), dv));
            facc[i] = _mm256_fmadd_ps(t, _mm256_set1_ps(*a.d.get_unchecked((r0 + i) * nsb + u)), facc[i]);
        }
    }
    for i in 0..M {
        _mm256_storeu_ps(out[i].as_mut_ptr(), facc[i]);
    }
}

#[inline(always)]
unsafe fn block_kernel<
    D: Dot,
    const M: usize,
    const NIB: bool,
    const RUN: usize,
    const SIGNED: bool,
    const OFFSET: bool,
    const HB: usize,
>(
    a: &QActs,
    w: &QWeight,
    t: Tile,
    out: &mut [[f32; GROUP]; MR],
) {
    let Tile { r0, group: g, u0, u1, .. } = t;
    let nblk = w.k / QK;
    let x: [*const i8; M] = a.row_levels(r0);
    let mut facc = [_mm256_setzero_ps(); M];
    for b in u0..u1 {
        let lv = t.block(w, b);
        let isum = D::sum::<M, NIB, RUN, SIGNED, HB>(lv, &x, b * QK, 0, 8, None);
        let at = (g * nblk + b) * GROUP;
        let dv = halves8(w.d.as_ptr().add(at));
        let dmv = if OFFSET { offsets(w, dv, at) } else { dv };
        for i in 0..M {
            let row = (r0 + i) * nblk + b;
            let dx = _mm256_set1_ps(*a.d.get_unchecked(row));
            facc[i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[i]), _mm256_mul_ps(dv, dx), facc[i]);
            if OFFSET {
                facc[i] = _mm256_fmadd_ps(dmv, _mm256_set1_ps(*a.s.get_unchecked(row)), facc[i]);
            }
        }
    }
    for i in 0..M {
        _mm256_storeu_ps(out[i].as_mut_ptr(), facc[i]);
    }
}
