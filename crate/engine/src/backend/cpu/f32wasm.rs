//! f32 products in WebAssembly (simd128), in place of the `gemm` crate's there: `y = x · wᵀ` with
//! both operands K-contiguous ([`nt`]: the f32 products' prefill, the attention's scores) and
//! `y = a · b` with `b` row-major ([`nn`]: the attention's probabilities times its values).
//!
//! The `gemm` crate's simd128 kernel (12 × 4 outputs, K unrolled twice) keeps ~26 vectors live
//! where x64 has 16 vector registers, most likely spilled by V8 (its kernel was 55 % of an f32
//! prefill of SmolLM2 in the tab). These tiles keep at most 16 live and read the operands where
//! they are (no packing): SmolLM2's f32 prefill ×1.17 in the tab (docs/measurements/speed.md).
//!
//! Sums (the same on every machine; another order than the `gemm` crate's natively, as any two f32
//! sums differ):
//! - [`nt`]: each output's 4 lanes sum the values at K ≡ lane (mod 4) of a chunk of [`KC`] in order;
//!   the lanes are added pairwise ((0 + 1) + (2 + 3)), the chunks' totals in order.
//! - [`nn`]: each output is one lane, summed over K in order.

use core::arch::wasm32::*;

use rayon::prelude::*;

use super::splits::Tasks;
use super::SendPtr;

/// [`nt`]: rows of `x` and of `w` per tile.
const T: usize = 3;
/// [`nt`]: values of K per chunk: a tile's 6 rows of a chunk (12 KiB) stay in L1.
const KC: usize = 512;
/// [`nt`]: rows of `w` per parallel task: a panel's chunk (96 KiB) stays in L2 while every tile of
/// `x` meets it.
const NC: usize = 48;
/// [`nn`]: rows of `a` per tile (8 accumulators for 8 columns of `b`).
const R: usize = 4;

/// Whether [`nt`] takes a product with this K.
pub(super) fn takes_nt(k: usize) -> bool {
    k.is_multiple_of(4)
}

/// Whether [`nn`] takes a product with this N (columns of `b` and `y`).
pub(super) fn takes_nn(n: usize) -> bool {
    n.is_multiple_of(8)
}

/// `y[i, col0 + j] = Σ x[i, ·] · w[j, ·]` for `m` rows of `x` and `n` of `w` (row stride `k`);
/// `y` has row stride `ldy` and is written, whatever it held.
///
/// # Safety
/// `y` points to `m` rows of at least `col0 + n` columns with row stride `ldy`, not aliased by
/// other writers of those columns; `takes_nt(k)`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn nt(m: usize, n: usize, k: usize, x: &[f32], w: &[f32], y: *mut f32, col0: usize, ldy: usize, threads: usize) {
    debug_assert!(takes_nt(k) && x.len() >= m * k && w.len() >= n * k);
    let yp = SendPtr(y.add(col0));
    let panel = |p: usize| {
        // The whole `SendPtr` (Sync), not its raw pointer field, is what the closure captures.
        let yp = &yp;
        let j1 = ((p + 1) * NC).min(n);
        // One chunk at least: with k = 0 the outputs are written as zeros.
        for k0 in (0..k.max(1)).step_by(KC) {
            let len = KC.min(k - k0);
            for i0 in (0..m).step_by(T) {
                for j0 in (p * NC..j1).step_by(T) {
                    // A partial tile repeats its last row; only the real ones are stored.
                    let xr: [*const f32; T] = core::array::from_fn(|i| x.as_ptr().add((i0 + i).min(m - 1) * k + k0));
                    let wr: [*const f32; T] = core::array::from_fn(|j| w.as_ptr().add((j0 + j).min(n - 1) * k + k0));
                    let sums = nt_tile(xr, wr, len);
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
        (0..panels).into_par_iter().each_task(1, panel);
    } else {
        (0..panels).for_each(panel);
    }
}

/// The 3 × 3 dot products of rows `xr` and `wr` over `len` values (a multiple of 4): per 4 values,
/// 6 loads, 9 multiplies and 9 adds into 9 accumulators.
#[inline(always)]
unsafe fn nt_tile(xr: [*const f32; T], wr: [*const f32; T], len: usize) -> [[f32; T]; T] {
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

/// `y[i, j] = Σ_t a[i, t] · b[t, j]` for `m` rows of `a` (row stride `lda`, `k` values used), `k`
/// rows of `b` (row stride `ldb`, `n` values used); `y` has row stride `ldy` and is written,
/// whatever it held. One thread.
///
/// # Safety
/// `y` points to `m` rows of at least `n` columns with row stride `ldy`; `a` and `b` hold what the
/// strides say; `takes_nn(n)`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn nn(m: usize, n: usize, k: usize, a: *const f32, lda: usize, b: *const f32, ldb: usize, y: *mut f32, ldy: usize) {
    debug_assert!(takes_nn(n));
    for j0 in (0..n).step_by(8) {
        for i0 in (0..m).step_by(R) {
            // A partial tile repeats its last row; only the real ones are stored.
            let ar: [*const f32; R] = core::array::from_fn(|i| a.add((i0 + i).min(m - 1) * lda));
            let mut acc = [[f32x4_splat(0.0); 2]; R];
            for t in 0..k {
                let bt = b.add(t * ldb + j0);
                let bv = [v128_load(bt as *const v128), v128_load(bt.add(4) as *const v128)];
                for i in 0..R {
                    let av = v128_load32_splat(ar[i].add(t) as *const u32);
                    for h in 0..2 {
                        acc[i][h] = f32x4_add(acc[i][h], f32x4_mul(av, bv[h]));
                    }
                }
            }
            for (i, acc) in acc.iter().enumerate().take(m - i0) {
                let dst = y.add((i0 + i) * ldy + j0);
                v128_store(dst as *mut v128, acc[0]);
                v128_store(dst.add(4) as *mut v128, acc[1]);
            }
        }
    }
}
