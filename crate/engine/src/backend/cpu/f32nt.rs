//! The f32 product `y = x · wᵀ` in WebAssembly (simd128), where both operands are row-major with
//! K contiguous: the f32 products' prefill and the attention's scores.
//!
//! The `gemm` crate's simd128 kernel (12 × 4 outputs, K unrolled twice) keeps 26 vectors live; V8
//! allocates 15 of x64's 16 vector registers, so the rest went to the stack on every step (its
//! kernel was 55 % of an f32 prefill in the tab). Here a tile is 3 rows of `x` against 3 rows of
//! `w`: per 4 values of K, 6 loads, then 9 multiplies and 9 adds into 9 accumulators, 16 registers
//! at most. No packing: the rows are read where they are, the horizontal sums come once per chunk.
//!
//! Sums: each output's 4 lanes sum the values at K ≡ lane (mod 4) of a chunk of [`KC`], in order;
//! the lanes are added pairwise ((0 + 1) + (2 + 3)) and the chunks' totals in order. The same on
//! every machine; a different order from the `gemm` crate's (natively), as any two f32 sums differ.

use core::arch::wasm32::*;

use rayon::prelude::*;

use super::SendPtr;

/// Rows of `x` and of `w` per tile.
const T: usize = 3;
/// Values of K per chunk: a tile's 6 rows of a chunk (12 KiB) stay in L1.
const KC: usize = 512;
/// Rows of `w` per parallel task: a panel's chunk (96 KiB) stays in L2 while every tile of `x`
/// meets it.
const NC: usize = 48;

/// Whether [`gemm_nt`] takes a product with this K.
pub(super) fn takes(k: usize) -> bool {
    k % 4 == 0
}

/// `y[i, col0 + j] = Σ x[i, ·] · w[j, ·]` for `m` rows of `x` and `n` of `w` (row stride `k`);
/// `y` has row stride `ldy` and is written, whatever it held.
///
/// # Safety
/// `y` points to `m` rows of at least `col0 + n` columns with row stride `ldy`, not aliased by
/// other writers of those columns; `takes(k)`.
pub(super) unsafe fn gemm_nt(m: usize, n: usize, k: usize, x: &[f32], w: &[f32], y: *mut f32, col0: usize, ldy: usize, threads: usize) {
    debug_assert!(takes(k) && x.len() >= m * k && w.len() >= n * k);
    if m == 0 || n == 0 {
        return;
    }
    let yp = SendPtr(y.add(col0));
    let panel = |p: usize| {
        let yp = yp;
        let j1 = ((p + 1) * NC).min(n);
        for k0 in (0..k.max(1)).step_by(KC) {
            let len = KC.min(k - k0);
            for i0 in (0..m).step_by(T) {
                for j0 in (p * NC..j1).step_by(T) {
                    // A partial tile repeats its last row; only the real ones are stored.
                    let xr: [*const f32; T] = core::array::from_fn(|i| x.as_ptr().add((i0 + i).min(m - 1) * k + k0));
                    let wr: [*const f32; T] = core::array::from_fn(|j| w.as_ptr().add((j0 + j).min(n - 1) * k + k0));
                    let sums = tile(xr, wr, len);
                    for (i, row) in sums.iter().enumerate().take(m - i0) {
                        let dst = yp.0.add((i0 + i) * ldy + j0);
                        for (j, &v) in row.iter().enumerate().take(j1 - j0) {
                            *dst.add(j) = if k0 == 0 { v } else { *dst.add(j) + v };
                        }
                    }
                }
            }
        }
    };
    let panels = n.div_ceil(NC);
    if threads > 1 && panels > 1 {
        (0..panels).into_par_iter().for_each(panel);
    } else {
        (0..panels).for_each(panel);
    }
}

/// The 3 × 3 dot products of rows `xr` and `wr` over `len` values (a multiple of 4).
#[inline(always)]
unsafe fn tile(xr: [*const f32; T], wr: [*const f32; T], len: usize) -> [[f32; T]; T] {
    let mut acc = [[f32x4_splat(0.0); T]; T];
    let mut p = 0;
    while p < len {
        let xv: [v128; T] = core::array::from_fn(|i| v128_load(xr[i].add(p) as *const v128));
        for j in 0..T {
            let wv = v128_load(wr[j].add(p) as *const v128);
            for i in 0..T {
                acc[i][j] = f32x4_add(acc[i][j], f32x4_mul(xv[i], wv));
            }
        }
        p += 4;
    }
    acc.map(|row| {
        row.map(|v| (f32x4_extract_lane::<0>(v) + f32x4_extract_lane::<1>(v)) + (f32x4_extract_lane::<2>(v) + f32x4_extract_lane::<3>(v)))
    })
}
