//! AVX2 kernels (x86-64, chosen at run time).
//!
//! Per step of 4 values: the 4 activation bytes of a row are broadcast to all 8 lanes, and
//! `maddubs` multiplies them with the 4 unsigned levels of each of the 8 weight rows (one row per
//! 32-bit lane), adding pairs into 16 bits; a run of steps is summed in 16 bits (no overflow, see
//! [`Format::run`]), then `madd` widens it to 32 bits — multiplying by the K-quants' integer scales
//! on the way. Floats appear once per 256 values (K-quants) or per 32 (older types). Q8_0's signed
//! weights take llama.cpp's sign trick (|w| × sign(x, w)).

use std::arch::x86_64::*;

use super::{Format, Kernel, QActs, QWeight, Tile, GROUP, MR, QK, QK_K};

pub(super) fn kernel() -> Option<Kernel> {
    (is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")).then_some(dispatch as Kernel)
}

unsafe fn dispatch(a: &QActs, w: &QWeight, t: Tile, out: &mut [[f32; GROUP]; MR]) {
    macro_rules! rows {
        ($k:ident $(, $c:expr)*) => {
            match t.rows {
                4 => $k::<4 $(, $c)*>(a, w, t, out),
                3 => $k::<3 $(, $c)*>(a, w, t, out),
                2 => $k::<2 $(, $c)*>(a, w, t, out),
                _ => $k::<1 $(, $c)*>(a, w, t, out),
            }
        };
    }
    let f: Format = w.fmt;
    match (f.super_blocks, f.nibbles, f.run, f.signed) {
        (true, true, _, _) => rows!(super_kernel, true, 8, false, 4),
        (true, false, 4, _) => rows!(super_kernel, false, 4, false, 4),
        (true, false, _, _) => rows!(super_kernel, false, 2, true, 8),
        (false, true, _, _) => rows!(block_kernel, true, 8, false, true),
        (false, false, _, true) => rows!(block_kernel, false, 1, true, false),
        (false, false, _, false) => rows!(block_kernel, false, 4, false, true),
    }
}

/// The levels of step `s` (0..8) of a block whose 8 × 32 levels start at `lv`.
#[inline(always)]
unsafe fn step<const NIB: bool>(lv: *const u8, s: usize, mask: __m256i) -> __m256i {
    if NIB {
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

/// 4 activation bytes at `p`, in every 32-bit lane.
#[inline(always)]
unsafe fn bcast4(p: *const i8) -> __m256i {
    _mm256_set1_epi32(std::ptr::read_unaligned(p as *const i32))
}

#[target_feature(enable = "avx2,fma")]
unsafe fn super_kernel<const M: usize, const NIB: bool, const RUN: usize, const HALF: bool, const PAIRS: usize>(
    a: &QActs,
    w: &QWeight,
    t: Tile,
    out: &mut [[f32; GROUP]; MR],
) {
    let Tile { r0, group: g, u0, u1, .. } = t;
    let (nblk, nsb) = (w.k / QK, w.k / QK_K);
    let (lb, sw) = (w.fmt.level_bytes(), w.fmt.scale_words());
    let mask = _mm256_set1_epi8(0x0F);
    let x: [*const i8; M] = std::array::from_fn(|i| a.q.as_ptr().add((r0 + i) * a.k));
    let sums: [*const i16; M] = std::array::from_fn(|i| {
        if PAIRS == 4 {
            a.sums32.as_ptr().add((r0 + i) * (a.k / 32))
        } else {
            a.sums16.as_ptr().add((r0 + i) * (a.k / 16))
        }
    });
    let mut facc = [_mm256_setzero_ps(); M];
    for u in u0..u1 {
        let mut iacc = [_mm256_setzero_si256(); M];
        for bl in 0..8 {
            let b = u * 8 + bl;
            let lv = w.levels.as_ptr().add((g * nblk + b) * lb);
            let sc = w.scales.as_ptr().add((g * nblk + b) * sw);
            let xo = b * QK;
            let mut s0 = 0;
            while s0 < 8 {
                let mut acc16 = [_mm256_setzero_si256(); M];
                for s in s0..s0 + RUN {
                    let wv = step::<NIB>(lv, s, mask);
                    for i in 0..M {
                        acc16[i] = _mm256_add_epi16(acc16[i], _mm256_maddubs_epi16(wv, bcast4(x[i].add(xo + s * 4))));
                    }
                }
                let sv = _mm256_loadu_si256(sc.add(if HALF && s0 >= 4 { GROUP } else { 0 }) as *const __m256i);
                for i in 0..M {
                    iacc[i] = _mm256_add_epi32(iacc[i], _mm256_madd_epi16(acc16[i], sv));
                }
                s0 += RUN;
            }
        }
        // Per super-block: d·main + dm·(offset coefficients · level sums), times the activation scale.
        let at = (g * nsb + u) * GROUP;
        let (dv, dmv) = (_mm256_loadu_ps(w.d.as_ptr().add(at)), _mm256_loadu_ps(w.dm.as_ptr().add(at)));
        let mins = w.mins.as_ptr().add(at * PAIRS);
        for i in 0..M {
            let mut off = _mm256_setzero_si256();
            for p in 0..PAIRS {
                let pair = _mm256_set1_epi32(std::ptr::read_unaligned(sums[i].add(u * 2 * PAIRS + 2 * p) as *const i32));
                off = _mm256_add_epi32(off, _mm256_madd_epi16(_mm256_loadu_si256(mins.add(p * GROUP) as *const __m256i), pair));
            }
            let t = _mm256_fmadd_ps(_mm256_cvtepi32_ps(off), dmv, _mm256_mul_ps(_mm256_cvtepi32_ps(iacc[i]), dv));
            facc[i] = _mm256_fmadd_ps(t, _mm256_set1_ps(*a.d.get_unchecked((r0 + i) * nsb + u)), facc[i]);
        }
    }
    for i in 0..M {
        _mm256_storeu_ps(out[i].as_mut_ptr(), facc[i]);
    }
}

#[target_feature(enable = "avx2,fma")]
unsafe fn block_kernel<const M: usize, const NIB: bool, const RUN: usize, const SIGNED: bool, const OFFSET: bool>(
    a: &QActs,
    w: &QWeight,
    t: Tile,
    out: &mut [[f32; GROUP]; MR],
) {
    let Tile { r0, group: g, u0, u1, .. } = t;
    let nblk = w.k / QK;
    let lb = w.fmt.level_bytes();
    let (mask, ones) = (_mm256_set1_epi8(0x0F), _mm256_set1_epi16(1));
    let x: [*const i8; M] = std::array::from_fn(|i| a.q.as_ptr().add((r0 + i) * a.k));
    let mut facc = [_mm256_setzero_ps(); M];
    for b in u0..u1 {
        let lv = w.levels.as_ptr().add((g * nblk + b) * lb);
        let xo = b * QK;
        let mut isum = [_mm256_setzero_si256(); M];
        let mut s0 = 0;
        while s0 < 8 {
            let mut acc16 = [_mm256_setzero_si256(); M];
            for s in s0..s0 + RUN {
                let wv = step::<NIB>(lv, s, mask);
                let aw = if SIGNED { _mm256_sign_epi8(wv, wv) } else { wv };
                for i in 0..M {
                    let xv = bcast4(x[i].add(xo + s * 4));
                    let xv = if SIGNED { _mm256_sign_epi8(xv, wv) } else { xv };
                    acc16[i] = _mm256_add_epi16(acc16[i], _mm256_maddubs_epi16(aw, xv));
                }
            }
            for i in 0..M {
                isum[i] = _mm256_add_epi32(isum[i], _mm256_madd_epi16(acc16[i], ones));
            }
            s0 += RUN;
        }
        let at = (g * nblk + b) * GROUP;
        let dv = _mm256_loadu_ps(w.d.as_ptr().add(at));
        for i in 0..M {
            let row = (r0 + i) * nblk + b;
            let dx = _mm256_set1_ps(*a.d.get_unchecked(row));
            facc[i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[i]), _mm256_mul_ps(dv, dx), facc[i]);
            if OFFSET {
                facc[i] = _mm256_fmadd_ps(_mm256_loadu_ps(w.dm.as_ptr().add(at)), _mm256_set1_ps(*a.s.get_unchecked(row)), facc[i]);
            }
        }
    }
    for i in 0..M {
        _mm256_storeu_ps(out[i].as_mut_ptr(), facc[i]);
    }
}
