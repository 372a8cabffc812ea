//! The kernel for 128-bit SIMD (wasm simd128 / relaxed-simd, ARM NEON), written once over the few
//! operations it needs ([`Simd4`]).
//!
//! A 128-bit vector holds 4 levels of each of 4 weight rows (half a group, one row per 32-bit
//! lane); a step's 4 activation bytes are splatted to every lane, and [`Simd4::run_dot`] adds the
//! products of each lane into its sums: either 32-bit sums of 4 ([`Simd4::dot4`], one instruction
//! with relaxed-simd's 32-bit dot or NEON dotprod), or, where [`Simd4::NARROW`], 16-bit sums of 2
//! (relaxed-simd's 16-bit dot: one `pmaddubsw` on any x86 CPU, where the 32-bit one is a single
//! instruction only with AVX-VNNI) summed for up to [`Format::run`] steps before widening.
//! K-quant scales multiply each run's sums; floats appear once per 256 values (K-quants) or 32
//! (older types), as separate multiplies and adds.

use half::f16;

use super::{Format, QActs, QWeight, Tile, GROUP, MR, QK, QK_K};

/// What the kernel needs of a 128-bit SIMD instruction set.
pub(super) trait Simd4 {
    /// Four i32 lanes.
    type I: Copy;
    /// Four f32 lanes.
    type F: Copy;
    unsafe fn zero() -> Self::I;
    unsafe fn zero_f() -> Self::F;
    /// 16 bytes.
    unsafe fn load(p: *const u8) -> Self::I;
    /// The low / high nibble of each byte.
    unsafe fn low_nibbles(v: Self::I) -> Self::I;
    unsafe fn high_nibbles(v: Self::I) -> Self::I;
    /// `low` with each byte's bits `at..` of `v` under `mask` put at bit 4 (packed levels' high
    /// bits, [`QWeight::step`]).
    unsafe fn with_high(low: Self::I, v: Self::I, at: u32, mask: u8) -> Self::I;
    /// The 4 bytes at `p` in every lane.
    unsafe fn splat4(p: *const i8) -> Self::I;
    /// `acc + Σ` of the 4 products in each lane: levels `w` (0..=63) times activations `x`.
    unsafe fn dot4(w: Self::I, x: Self::I, acc: Self::I) -> Self::I;
    /// Runs are 16-bit sums of pairs of products (see the module docs), else 32-bit sums of 4.
    const NARROW: bool = false;
    /// `acc + ` the products of levels `w` (0..=63) and activations `x`, in a run's sums.
    #[inline(always)]
    unsafe fn run_dot(w: Self::I, x: Self::I, acc: Self::I) -> Self::I {
        Self::dot4(w, x, acc)
    }
    /// A run's sums, each row's times its scale in `sv` ([`Simd4::scales`]), in 32-bit lanes.
    #[inline(always)]
    unsafe fn run_scaled(acc: Self::I, sv: Self::I) -> Self::I {
        Self::mul(acc, sv)
    }
    /// A run's sums, each row's in its 32-bit lane.
    #[inline(always)]
    unsafe fn run_sum(acc: Self::I) -> Self::I {
        acc
    }
    /// The same with signed levels (Q8_0).
    unsafe fn dot4_signed(w: Self::I, x: Self::I, acc: Self::I) -> Self::I;
    unsafe fn add(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn mul(a: Self::I, b: Self::I) -> Self::I;
    /// The 4 signed scale bytes at `p` as [`Simd4::run_scaled`] takes them: each lane's as i32
    /// (32-bit runs), or as i16 in both halves of its lane (16-bit runs).
    unsafe fn scales(p: *const i8) -> Self::I;
    /// Lane i's pair of signed bytes (`lo[i]`, `hi[i]`), shifted left by `shift`, times the pair
    /// of i16 at `sums`, summed.
    unsafe fn dot_pairs(lo: *const i8, hi: *const i8, shift: u32, sums: *const i16) -> Self::I;
    unsafe fn to_f(v: Self::I) -> Self::F;
    /// The 4 f16 at `p` as f32 (exactly).
    unsafe fn load_half(p: *const f16) -> Self::F;
    unsafe fn splat_f(v: f32) -> Self::F;
    unsafe fn add_f(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn mul_f(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn store_f(p: *mut f32, v: Self::F);
}

/// The levels of step `s` (0..8), half `h` (weight rows 4h..4h+4) of a block starting at `lv`:
/// bytes, nibbles (`nib`), or nibbles with `hb` bits above them packed ([`QWeight::step`]).
#[inline(always)]
#[allow(clippy::manual_checked_ops)] // the hot loop's form, kept: `hb` is known where it is inlined
unsafe fn step<S: Simd4>(lv: *const u8, nib: bool, hb: usize, s: usize, h: usize) -> S::I {
    if hb > 0 {
        let per = 8 / hb;
        let high = S::load(lv.add(128 + (s / per) * 32 + h * 16));
        S::with_high(unpacked_step::<S>(lv, true, s, h), high, (hb * (s % per)) as u32, (1 << hb) - 1)
    } else {
        unpacked_step::<S>(lv, nib, s, h)
    }
}

/// [`step`] of levels stored as the kernels read them: bytes, or nibbles (`nib`). A function of
/// its own so that `step` does not call itself: a recursive `step` was left out of line in the
/// wasm build, and the tab's 16-bit-runs kernel ran at ×0.80 of its speed on every weight type,
/// 4-bit ones too (docs/measurements/speed.md, "The CPU engine in the tab").
#[inline(always)]
unsafe fn unpacked_step<S: Simd4>(lv: *const u8, nib: bool, s: usize, h: usize) -> S::I {
    if nib {
        let v = S::load(lv.add((s % 4) * 32 + h * 16));
        if s < 4 {
            S::low_nibbles(v)
        } else {
            S::high_nibbles(v)
        }
    } else {
        S::load(lv.add(s * 32 + h * 16))
    }
}

/// See [`super::Kernel`]. The tile's activation rows go through each block together, so that
/// every weight vector is loaded and its nibbles split once per tile, not once per row.
#[inline(always)]
pub(super) unsafe fn kernel<S: Simd4>(a: &QActs, w: &QWeight, t: Tile, out: &mut [[f32; GROUP]; MR]) {
    match t.rows {
        4 => rows::<S, 4>(a, w, t, out),
        3 => rows::<S, 3>(a, w, t, out),
        2 => rows::<S, 2>(a, w, t, out),
        _ => rows::<S, 1>(a, w, t, out),
    }
}

#[inline(always)]
unsafe fn rows<S: Simd4, const M: usize>(a: &QActs, w: &QWeight, t: Tile, out: &mut [[f32; GROUP]; MR]) {
    let f = w.fmt;
    let mut res = [[S::zero_f(); 2]; M];
    // Steps per run: a scale's (a block, or half a block for Q6_K), at most the format's where runs
    // are 16-bit. The block's shape becomes constants, so that its steps unroll: no loop (V8 checks
    // for interrupts in every wasm loop) and no per-step branch.
    let per_scale = if f.half_scales { 4 } else { 8 };
    let run = if S::NARROW && !f.signed { f.run.min(per_scale) } else { per_scale };
    // Packed levels: Q5_K and Q5_0/Q5_1 (1 high bit, runs of 8 or 4), Q6_K (2, runs of 4 or 2).
    match (f.super_blocks, f.nibbles, run, t.packed_bits(w)) {
        (true, true, 8, 0) => super_rows::<S, M, true, 8, 0>(a, w, t, &mut res),
        (true, false, 8, 0) => super_rows::<S, M, false, 8, 0>(a, w, t, &mut res),
        (true, false, 8, 1) => super_rows::<S, M, false, 8, 1>(a, w, t, &mut res),
        (true, false, 4, 0) => super_rows::<S, M, false, 4, 0>(a, w, t, &mut res),
        (true, false, 4, 1) => super_rows::<S, M, false, 4, 1>(a, w, t, &mut res),
        (true, false, 4, 2) => super_rows::<S, M, false, 4, 2>(a, w, t, &mut res),
        (true, false, 2, 0) => super_rows::<S, M, false, 2, 0>(a, w, t, &mut res),
        (true, false, 2, 2) => super_rows::<S, M, false, 2, 2>(a, w, t, &mut res),
        (false, true, 8, 0) => block_rows::<S, M, true, 8, 0>(a, w, t, &mut res),
        (false, false, 8, 0) => block_rows::<S, M, false, 8, 0>(a, w, t, &mut res),
        (false, false, 8, 1) => block_rows::<S, M, false, 8, 1>(a, w, t, &mut res),
        (false, false, 4, 0) => block_rows::<S, M, false, 4, 0>(a, w, t, &mut res),
        (false, false, 4, 1) => block_rows::<S, M, false, 4, 1>(a, w, t, &mut res),
        (_, _, _, hb) => unreachable!("no format {f:?} sums runs of {run} steps with {hb} packed high bits"),
    }
    for (row, res) in out.iter_mut().zip(&res) {
        S::store_f(row.as_mut_ptr(), res[0]);
        S::store_f(row.as_mut_ptr().add(4), res[1]);
    }
}

/// The two halves (weight rows 0..4, 4..8) of step `s` of a block starting at `lv`.
#[inline(always)]
unsafe fn halves<S: Simd4>(lv: *const u8, nib: bool, hb: usize, s: usize) -> [S::I; 2] {
    [step::<S>(lv, nib, hb, s, 0), step::<S>(lv, nib, hb, s, 1)]
}

/// Each row's products over steps `s0..s0 + RUN` of the block with levels at `lv` (activations
/// from `at`), summed by `dot`.
#[inline(always)]
unsafe fn run_sums<S: Simd4, const M: usize, const NIB: bool, const RUN: usize, const HB: usize>(
    lv: *const u8,
    x: &[*const i8; M],
    at: usize,
    s0: usize,
    dot: impl Fn(S::I, S::I, S::I) -> S::I,
) -> [[S::I; 2]; M] {
    let mut acc = [[S::zero(); 2]; M];
    for s in s0..s0 + RUN {
        let wv = halves::<S>(lv, NIB, HB, s);
        for i in 0..M {
            let xv = S::splat4(x[i].add(at + s * 4));
            for h in 0..2 {
                acc[i][h] = dot(wv[h], xv, acc[i][h]);
            }
        }
    }
    acc
}

/// The tile's activation rows against a group, K-quants.
#[inline(always)]
unsafe fn super_rows<S: Simd4, const M: usize, const NIB: bool, const RUN: usize, const HB: usize>(
    a: &QActs,
    w: &QWeight,
    t: Tile,
    res: &mut [[S::F; 2]; M],
) {
    let Tile { r0, group: g, u0, u1, .. } = t;
    let f: Format = w.fmt;
    let (nblk, nsb) = (w.k / QK, w.k / QK_K);
    let sw = f.scales_per_block();
    let x: [*const i8; M] = a.row_levels(r0);
    let sums: [*const i16; M] = a.row_sums(r0, f.pairs);
    for u in u0..u1 {
        let mut iacc = [[S::zero(); 2]; M];
        for bl in 0..8 {
            let b = u * 8 + bl;
            let lv = t.block(w, b);
            let sc = w.scales.as_ptr().add((g * nblk + b) * sw);
            for s0 in (0..8).step_by(RUN) {
                let acc = run_sums::<S, M, NIB, RUN, HB>(lv, &x, b * QK, s0, |w, x, a| S::run_dot(w, x, a));
                let so = if s0 >= 4 && f.half_scales { GROUP } else { 0 };
                let sv = [S::scales(sc.add(so)), S::scales(sc.add(so + 4))];
                for i in 0..M {
                    for h in 0..2 {
                        iacc[i][h] = S::add(iacc[i][h], S::run_scaled(acc[i][h], sv[h]));
                    }
                }
            }
        }
        let at = (g * nsb + u) * GROUP;
        let mins = w.offset_coefficients().as_ptr().add(2 * at * f.pairs);
        // The halves' multipliers, widened once for every row of the tile.
        let d = [0, 1].map(|h| S::load_half(w.d.as_ptr().add(at + 4 * h)));
        let dm = [0, 1].map(|h| offsets::<S>(w, d[h], at + 4 * h));
        for i in 0..M {
            let dx = S::splat_f(*a.d.get_unchecked((r0 + i) * nsb + u));
            for (h, res) in res[i].iter_mut().enumerate() {
                let mut off = S::zero();
                for p in 0..f.pairs {
                    let lo = mins.add(p * 2 * GROUP + 4 * h);
                    off = S::add(off, S::dot_pairs(lo, lo.add(GROUP), f.min_shift, sums[i].add(u * 2 * f.pairs + 2 * p)));
                }
                let t = S::add_f(S::mul_f(S::to_f(off), dm[h]), S::mul_f(S::to_f(iacc[i][h]), d[h]));
                *res = S::add_f(S::mul_f(t, dx), *res);
            }
        }
    }
}

/// The offset multipliers of the 4 rows at `at` whose sum multipliers are `d`.
#[inline(always)]
unsafe fn offsets<S: Simd4>(w: &QWeight, d: S::F, at: usize) -> S::F {
    match w.fmt.dm_of_d {
        Some(c) => S::mul_f(d, S::splat_f(c)),
        None => S::load_half(w.dm.as_ptr().add(at)),
    }
}

/// The tile's activation rows against a group, older types.
#[inline(always)]
unsafe fn block_rows<S: Simd4, const M: usize, const NIB: bool, const RUN: usize, const HB: usize>(
    a: &QActs,
    w: &QWeight,
    t: Tile,
    res: &mut [[S::F; 2]; M],
) {
    let Tile { r0, group: g, u0, u1, .. } = t;
    let f = w.fmt;
    let nblk = w.k / QK;
    let x: [*const i8; M] = a.row_levels(r0);
    for b in u0..u1 {
        let lv = t.block(w, b);
        let part = if f.signed {
            run_sums::<S, M, false, 8, 0>(lv, &x, b * QK, 0, |w, x, a| S::dot4_signed(w, x, a))
        } else {
            let mut part = [[S::zero(); 2]; M];
            for s0 in (0..8).step_by(RUN) {
                let acc = run_sums::<S, M, NIB, RUN, HB>(lv, &x, b * QK, s0, |w, x, a| S::run_dot(w, x, a));
                for i in 0..M {
                    for h in 0..2 {
                        part[i][h] = S::add(part[i][h], S::run_sum(acc[i][h]));
                    }
                }
            }
            part
        };
        let at = (g * nblk + b) * GROUP;
        // The halves' multipliers, widened once for every row of the tile.
        let d = [0, 1].map(|h| S::load_half(w.d.as_ptr().add(at + 4 * h)));
        let m = [0, 1].map(|h| if f.pairs > 0 { offsets::<S>(w, d[h], at + 4 * h) } else { S::zero_f() });
        for i in 0..M {
            let row = (r0 + i) * nblk + b;
            let dx = S::splat_f(*a.d.get_unchecked(row));
            for (h, res) in res[i].iter_mut().enumerate() {
                *res = S::add_f(S::mul_f(S::to_f(part[i][h]), S::mul_f(d[h], dx)), *res);
                if f.pairs > 0 {
                    *res = S::add_f(S::mul_f(m[h], S::splat_f(*a.s.get_unchecked(row))), *res);
                }
            }
        }
    }
}
