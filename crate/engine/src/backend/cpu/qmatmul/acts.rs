//! Activation rows rounded to 8 bits per block exactly as llama.cpp rounds them for a weight type
//! (its `vec_dot_type`): the same blocks, scales, rounding (to nearest, ties to even) and sums.

use half::f16;
use rayon::prelude::*;

use super::super::splits::Tasks;
use super::super::wide::wide;
use super::super::{max_by_lanes, Fresh};
use super::{QK, QK_K};

/// How activations are rounded (llama.cpp's `vec_dot_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActKind {
    /// One f32 scale per 256 values, and the sum of each 16 levels (for the K-quants).
    Q8K,
    /// One f16 scale per 32 values.
    Q8_0,
    /// As Q8_0, plus the f16 of scale × sum of the block's levels (for Q4_1, Q5_1).
    Q8_1,
}

/// Activation rows rounded to 8 bits per block.
pub struct QActs {
    pub kind: ActKind,
    pub rows: usize,
    pub k: usize,
    /// Levels, row-major, in [−127, 127].
    pub q: Vec<i8>,
    /// Per block (256 values for Q8K, 32 otherwise): the scale.
    pub d: Vec<f32>,
    /// Q8K: the sum of each 16 levels, and of each 32.
    pub sums16: Vec<i16>,
    pub sums32: Vec<i16>,
    /// Q8_0 / Q8_1: per block, what multiplies the weights' offset: scale × level sum (Q8_0) or its
    /// f16 rounding (Q8_1, as llama.cpp stores it).
    pub s: Vec<f32>,
}

/// Round to nearest, ties to even, as ggml's `nearest_int` and `_mm256_round_ps` do: adding
/// 1.5·2²³ pushes the fraction out of the mantissa (exact for |x| < 2²²; levels are ≤ 127). Plain
/// float and integer operations, so the quantization loops vectorize (no libm call per value).
#[inline(always)]
fn nearest_int(x: f32) -> i32 {
    ((x + 12_582_912.0).to_bits() & 0x007f_ffff) as i32 - 0x0040_0000
}

impl QActs {
    /// The levels of rows `r0..r0 + M`, one pointer per row (a SIMD kernel's tile).
    ///
    /// # Safety
    /// Rows `r0..r0 + M` must exist.
    #[inline(always)]
    pub(super) unsafe fn row_levels<const M: usize>(&self, r0: usize) -> [*const i8; M] {
        std::array::from_fn(|i| self.q.as_ptr().add((r0 + i) * self.k))
    }

    /// The level sums of rows `r0..r0 + M` (Q8K): per 32 values where the weight has 4 pairs of
    /// offset coefficients per super-block (Q4_K, Q5_K), else per 16 (Q6_K).
    ///
    /// # Safety
    /// Rows `r0..r0 + M` must exist.
    #[inline(always)]
    pub(super) unsafe fn row_sums<const M: usize>(&self, r0: usize, pairs: usize) -> [*const i16; M] {
        std::array::from_fn(|i| {
            if pairs == 4 {
                self.sums32.as_ptr().add((r0 + i) * (self.k / 32))
            } else {
                self.sums16.as_ptr().add((r0 + i) * (self.k / 16))
            }
        })
    }

    /// Round `x` (`rows × k`, row-major) to 8 bits per block for `kind`; rows in parallel.
    pub fn quantize(x: &[f32], rows: usize, k: usize, kind: ActKind) -> QActs {
        let block = if kind == ActKind::Q8K { QK_K } else { QK };
        assert!(k.is_multiple_of(block) && x.len() == rows * k, "activations {rows}×{k} do not fit {kind:?} blocks");
        let nb = k / block;
        let q8k = kind == ActKind::Q8K;
        // Written row by row by the tasks, each zeroing its rows first ([`Fresh`]).
        let (mut q, mut d) = (Fresh::new(rows * k), Fresh::new(rows * nb));
        let (mut sums16, mut sums32) = (Fresh::new(if q8k { rows * k / 16 } else { 0 }), Fresh::new(if q8k { rows * k / 32 } else { 0 }));
        let mut s = Fresh::new(if q8k { 0 } else { rows * nb });
        match kind {
            ActKind::Q8K => {
                q.pieces(k).zip(d.pieces(nb)).zip(sums16.pieces(k / 16)).zip(sums32.pieces(k / 32)).zip(x.par_chunks(k)).each_task(
                    1,
                    |((((q, d), s16), s32), x)| {
                        let (q, d, s16, s32) = (q.zeroed(), d.zeroed(), s16.zeroed(), s32.zeroed());
                        wide!({
                            for (b, x) in x.chunks_exact(QK_K).enumerate() {
                                d[b] = quantize_q8k_block(x, &mut q[b * QK_K..(b + 1) * QK_K], &mut s16[b * 16..(b + 1) * 16]);
                            }
                            for (s, p) in s32.iter_mut().zip(s16.chunks_exact(2)) {
                                *s = p[0] + p[1];
                            }
                        })
                    },
                );
            }
            ActKind::Q8_0 | ActKind::Q8_1 => {
                let round_s = kind == ActKind::Q8_1;
                q.pieces(k).zip(d.pieces(nb)).zip(s.pieces(nb)).zip(x.par_chunks(k)).each_task(1, |(((q, d), s), x)| {
                    let (q, d, s) = (q.zeroed(), d.zeroed(), s.zeroed());
                    wide!({
                        for (b, x) in x.chunks_exact(QK).enumerate() {
                            let (d16, d32, sum) = quantize_q8_0_block(x, &mut q[b * QK..(b + 1) * QK]);
                            d[b] = d16;
                            // Q8_1 stores f16(d·Σq) with the unrounded d (llama.cpp's `quantize_row_q8_1`);
                            // Q8_0's offsets meet the stored scale: d16·Σq.
                            s[b] = if round_s { f16::from_f32(d32 * sum as f32).to_f32() } else { d16 * sum as f32 };
                        }
                    })
                });
            }
        }
        QActs { kind, rows, k, q: q.finish(), d: d.finish(), sums16: sums16.finish(), sums32: sums32.finish(), s: s.finish() }
    }
}

/// llama.cpp's `quantize_row_q8_K_ref`: the value of largest magnitude maps to −127; returns the
/// scale and fills the levels and the 16-value sums.
#[inline(always)]
fn quantize_q8k_block(x: &[f32], q: &mut [i8], sums: &mut [i16]) -> f32 {
    // The first value of the largest magnitude, as llama.cpp's loop finds it: the magnitude in
    // eight lanes (vectorizes), then the value.
    let amax = max_by_lanes(x, 0.0, f32::abs);
    let max = x.iter().copied().find(|v| v.abs() == amax).unwrap_or(0.0);
    if amax == 0.0 {
        q.fill(0);
        sums.fill(0);
        return 0.0;
    }
    let iscale = -127.0 / max;
    for (q, &v) in q.iter_mut().zip(x) {
        *q = nearest_int(iscale * v).min(127) as i8;
    }
    for (s, g) in sums.iter_mut().zip(q.chunks_exact(16)) {
        *s = g.iter().map(|&v| v as i16).sum();
    }
    1.0 / iscale
}

/// llama.cpp's x86 `quantize_row_q8_0` / `quantize_row_q8_1`: scale amax/127 stored as f16,
/// levels round(x·127/amax). Returns the stored (f16-rounded) scale, the unrounded one, and the
/// level sum.
#[inline(always)]
fn quantize_q8_0_block(x: &[f32], q: &mut [i8]) -> (f32, f32, i32) {
    let amax = max_by_lanes(x, 0.0, f32::abs);
    let d = amax / 127.0;
    let id = if amax != 0.0 { 127.0 / amax } else { 0.0 };
    let mut sum = 0;
    for (q, &v) in q.iter_mut().zip(x) {
        let l = nearest_int(v * id);
        *q = l as i8;
        sum += l;
    }
    (f16::from_f32(d).to_f32(), d, sum)
}
