//! Attention on the CPU, two ways to the same quantities as llama.cpp's f16 KV cache: keys, values
//! and the scaled queries rounded to f16, scores and softmax in f32, each probability rounded to
//! f16 before it meets the values.
//!
//! - [`tiled`], many query rows (a prefill chunk, a checklist's items): every key and value of the
//!   call is expanded to f32 once, then each block of 32 query rows × one head is two GEMMs over
//!   the union of the block's visible keys.
//! - [`per_query`], a few query rows (decoding a token): each row reads only the keys it sees, in
//!   chunks of [`KEY_CHUNK`], straight from the f16 cache. The scores convert [`KF`] keys at a time
//!   into a buffer that stays in L1, one conversion serving every head of the KV group (the heads
//!   are the lanes of the score kernel); the fused weighted sums convert the values as they load
//!   them. For one query row the tiled path's expansion of the whole cache (zeroed, written, then
//!   packed by the GEMM) cost more than the products.
//!
//! The two order their sums differently, so their values agree to float rounding, not bit for bit;
//! each path's own order is fixed (lanes written out, splits independent of the thread count), so a
//! path gives the same bits on every thread count, on SSE2 and AVX2, and in the tab. The AVX2 copy
//! of [`per_query`] fuses each multiply-add (one instruction where the others take two) without
//! changing a bit: its products are of two f16 values, exact in f32 ([`add_product`]).

use half::f16;
use rayon::prelude::*;

use super::splits::Tasks;
use super::wide::{self, wide};
use super::{exp_sum, fast_exp, gemm_nn, gemm_nt, max_of, round_f16, round_f16_slice, Cache, SendPtr, Tensor};
use crate::backend::AttnParams;

/// Query rows up to which the backend takes [`per_query`].
pub(super) const FEW_QUERIES: usize = 4;

/// Keys per task in [`per_query`]: a fixed split, so that its sums do not depend on the threads.
const KEY_CHUNK: usize = 128;

/// Query rows per task in [`tiled`].
const QB: usize = 32;

/// Softmax over one query row's scores for one head, given as the runs of keys it sees: the scale
/// after the product, the soft cap (c·tanh(s/c)), e^(s − max) / Σ, then each probability rounded to
/// f16 (llama.cpp multiplies the f16 values by f16 probabilities).
#[inline(always)]
fn softmax(runs: &mut [&mut [f32]], post: f32, softcap: Option<f32>) {
    let mut max = f32::NEG_INFINITY;
    for run in runs.iter_mut() {
        if post != 1.0 {
            run.iter_mut().for_each(|s| *s *= post);
        }
        if let Some(c) = softcap {
            // tanh(u) = 1 − 2/(e^{2u} + 1).
            run.iter_mut().for_each(|s| *s = c * (1.0 - 2.0 / (fast_exp(2.0 * *s / c) + 1.0)));
        }
        max = max.max(max_of(run));
    }
    let mut sum = 0.0;
    for run in runs.iter_mut() {
        sum += exp_sum(run, max);
    }
    let inv = 1.0 / sum;
    for run in runs.iter_mut() {
        run.iter_mut().for_each(|s| *s *= inv);
        round_f16_slice(run);
    }
}

/// Attention of many query rows: see the module docs. `visible[i]` is query row i's
/// `[a, prefix, b, e]` (`policy::visible_keys`): it sees keys `[a, prefix)` and `[b, e)`.
pub(super) fn tiled(q: &Tensor, k: &Tensor, v: &Tensor, cache: &Cache, visible: &[[usize; 4]], p: &AttnParams) -> Tensor {
    let hd = p.head_dim;
    let nq = visible.len();
    let group = p.n_head / p.n_head_kv;
    let kv_dim = p.n_head_kv * hd;
    let prefix = cache.len;
    let n_keys = prefix + k.rows;
    // Keys and values per KV head as contiguous f32, rounded through f16 like llama.cpp's KV cache.
    let (mut kf, mut vf) = (vec![0f32; p.n_head_kv * n_keys * hd], vec![0f32; p.n_head_kv * n_keys * hd]);
    // One task per run of keys of one KV head (a model has few KV heads; threads may be many).
    kf.par_chunks_mut(hd).zip(vf.par_chunks_mut(hd)).enumerate().each_task(64, |(row, (dk, dv))| {
        wide!({
            let (g, j) = (row / n_keys, row % n_keys);
            kv_row(&cache.k, &k.data, j, prefix, kv_dim, g, dk);
            kv_row(&cache.v, &v.data, j, prefix, kv_dim, g, dv);
        })
    });
    let mut out = Tensor::zeros(nq, p.n_head * hd);
    let op = SendPtr(out.data.as_mut_ptr());
    let out_cols = out.cols;
    let (pre, post) = p.pre_post_scale();
    let (kf, vf) = (&kf, &vf);
    (0..p.n_head * nq.div_ceil(QB)).into_par_iter().each_task_init(
        1,
        || (Vec::<f32>::new(), Vec::<f32>::new()),
        |(qs, scores), task| {
            wide!({
                let h = task % p.n_head;
                let qb = task / p.n_head;
                let g = h / group;
                // Visible key ranges per row: prefix keys [a, prefix) and own-segment keys [b, e);
                // the block computes scores for the union [lo, hi).
                let ranges: Vec<(usize, usize, usize)> =
                    visible[qb * QB..((qb + 1) * QB).min(nq)].iter().map(|&[a, _, b, e]| (a, b, e)).collect();
                let m = ranges.len();
                let lo = ranges.iter().map(|x| if x.0 < prefix { x.0 } else { x.1 }).min().unwrap();
                let hi = ranges.iter().map(|x| x.2).max().unwrap();
                let nk = hi - lo;
                qs.clear();
                for i in 0..m {
                    let qrow = &q.data[(qb * QB + i) * q.cols + h * hd..][..hd];
                    qs.extend(qrow.iter().map(|x| x * pre));
                }
                round_f16_slice(qs);
                scores.resize(m * nk, 0.0);
                let kg = &kf[g * n_keys * hd..][..n_keys * hd];
                let vg = &vf[g * n_keys * hd..][..n_keys * hd];
                // SAFETY: buffers sized above.
                unsafe { gemm_nt(m, nk, hd, qs, &kg[lo * hd..hi * hd], scores.as_mut_ptr(), 0, nk, 1) };
                for (i, &(a, b, e)) in ranges.iter().enumerate() {
                    let srow = &mut scores[i * nk..(i + 1) * nk];
                    // The two visible runs within [lo, hi): prefix keys, then own-segment keys
                    // (b ≥ prefix, so the second starts where the first ends or later).
                    let (x0, x1) = (a.max(lo) - lo, b.max(lo) - lo);
                    let (y0, y1) = (prefix.max(lo) - lo, e - lo);
                    let (y0, y1) = (y0.max(x0), y1.max(x1));
                    srow[..x0].fill(0.0);
                    srow[y0..x1].fill(0.0);
                    srow[y1..].fill(0.0);
                    let (first, second) = srow.split_at_mut(x1);
                    softmax(&mut [&mut first[x0..y0], &mut second[..y1 - x1]], post, p.softcap);
                }
                // The whole `SendPtr` into the closure, not its raw pointer field (which is not Send).
                #[allow(clippy::redundant_locals)]
                let op = op;
                // SAFETY: each task writes its own (query block, head) tile of `out`.
                unsafe {
                    gemm_nn(m, hd, nk, scores.as_ptr(), nk, vg[lo * hd..].as_ptr(), hd, op.0.add(qb * QB * out_cols + h * hd), out_cols)
                };
            })
        },
    );
    out
}

/// The keys one query row sees, as one list: the cached prefix's `[a, prefix)`, then its own
/// segment's `[b, e)` (new rows, numbered from `prefix` on).
#[derive(Clone, Copy)]
struct Visible {
    a: usize,
    prefix: usize,
    b: usize,
    e: usize,
}

impl Visible {
    fn len(self) -> usize {
        (self.prefix - self.a) + (self.e - self.b)
    }

    /// The key at place `t` of the list.
    #[inline(always)]
    fn key(self, t: usize) -> usize {
        let cached = self.prefix - self.a;
        if t < cached {
            self.a + t
        } else {
            self.b + (t - cached)
        }
    }

    fn chunks(self) -> usize {
        self.len().div_ceil(KEY_CHUNK)
    }

    /// Keys in chunk `c`.
    fn chunk_len(self, c: usize) -> usize {
        (self.len() - c * KEY_CHUNK).min(KEY_CHUNK)
    }
}

/// Key (or value) `j` of KV head `g` as f32 in `out`: from the f16 cache below `prefix`, else the
/// call's new row rounded to f16 as the cache will store it.
#[inline(always)]
fn kv_row(cached: &[f16], new: &[f32], j: usize, prefix: usize, kv_dim: usize, g: usize, out: &mut [f32]) {
    let hd = out.len();
    if j < prefix {
        let at = j * kv_dim + g * hd;
        wide::f16_to_f32(&cached[at..at + hd], out);
    } else {
        let at = (j - prefix) * kv_dim + g * hd;
        out.iter_mut().zip(&new[at..at + hd]).for_each(|(o, x)| *o = round_f16(*x));
    }
}

/// The f16 rows (every KV head's, `kv_dim` values) of chunk `c` of `vis`'s keys, or of their
/// values: the cache's own below `prefix`, else the call's new rows rounded to f16 as the cache will
/// store them, into `fresh`. Returns how many.
#[inline(always)]
fn chunk_rows<'a>(
    vis: Visible,
    c: usize,
    (cached, new): (&'a [f16], &[f32]),
    (prefix, kv_dim): (usize, usize),
    fresh: &'a mut Vec<f16>,
    out: &mut [&'a [f16]; KEY_CHUNK],
) -> usize {
    let n = vis.chunk_len(c);
    let key = |t: usize| vis.key(c * KEY_CHUNK + t);
    fresh.clear();
    for j in (0..n).map(key).filter(|&j| j >= prefix) {
        fresh.extend(new[(j - prefix) * kv_dim..][..kv_dim].iter().map(|&x| f16::from_f32(x)));
    }
    let mut fresh = fresh.chunks_exact(kv_dim);
    for (t, row) in out.iter_mut().take(n).enumerate() {
        let j = key(t);
        *row = if j < prefix { &cached[j * kv_dim..][..kv_dim] } else { fresh.next().unwrap() };
    }
    n
}

/// Ask for columns `[off, off + len)` of the `rows` to be brought into L2 ahead of their use: every
/// cache line at once, where the hardware's own prefetcher, following the rows' stride, lagged.
#[inline(always)]
fn prefetch(rows: &[&[f16]], off: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    for row in rows {
        let row = &row[off..off + len];
        for at in (0..len).step_by(32) {
            // SAFETY: a hint, with an address inside the row.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T1 }>(row.as_ptr().add(at) as *const i8) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (rows, off, len);
}

/// Columns `[off, off + hd)` (one KV head's) of the `rows`, as f32 rows of `hd` in `out`.
#[inline(always)]
fn expand(rows: &[&[f16]], off: usize, hd: usize, out: &mut [f32]) {
    for (row, out) in rows.iter().zip(out.chunks_exact_mut(hd)) {
        wide::f16_to_f32(&row[off..off + hd], out);
    }
}

/// Heads per pass of the per-query kernels: one 8-lane vector holds a value of each.
const HB: usize = 8;

/// `acc + a·b` for two f16 values `a` and `b` (held as f32): their product is exact in f32 (11 + 11
/// significant bits of 24), so fused (`FUSED`, one instruction where [`wide::takes_avx2`]) or not, the
/// sum is rounded once and the bits are the same.
#[inline(always)]
fn add_product<const FUSED: bool>(acc: f32, a: f32, b: f32) -> f32 {
    if FUSED {
        a.mul_add(b, acc)
    } else {
        acc + a * b
    }
}

/// Keys converted to f32 at a time by [`chunk_scores`]: a block small enough to stay in L1 between its
/// conversion and its products (the whole chunk's, 64 KiB for the 1.5B, went out to L2 and back).
const KF: usize = 8;

/// Keys per pass of [`scores_of`] (divides [`KF`]): each its own chain of sums.
const KB: usize = 4;

/// `s[h][t0 + t] = q_h · key_t` for the `m` keys in `keys` (rows of `hd`, [`KF`] of them) and up
/// to [`HB`] heads: `qt` holds their queries transposed, `[hd][HB]` (a missing head's column zero).
/// The heads are the vector's lanes and each key's values are broadcast, so no sum crosses lanes;
/// each score is summed in order of d.
#[inline(always)]
fn scores_of(qt: &[f32], keys: &[f32], hd: usize, m: usize, s: &mut [f32], t0: usize) {
    for t in (0..m).step_by(KB) {
        // Rows past `m` are the buffer's leftovers: their lanes are computed and dropped.
        let rows: [&[f32]; KB] = std::array::from_fn(|j| &keys[(t + j) * hd..][..hd]);
        let mut acc = [[0f32; HB]; KB];
        for (d, qv) in qt[..hd * HB].chunks_exact(HB).enumerate() {
            let qv: &[f32; HB] = qv.try_into().unwrap();
            let xs: [f32; KB] = std::array::from_fn(|j| rows[j][d]);
            for j in 0..KB {
                for l in 0..HB {
                    acc[j][l] += qv[l] * xs[j];
                }
            }
        }
        for (j, acc) in acc.iter().enumerate().take(m - t) {
            for (h, &a) in acc.iter().enumerate() {
                s[h * KEY_CHUNK + t0 + t + j] = a;
            }
        }
    }
}

/// [`scores_of`] with fused multiply-adds (AVX2 and FMA, [`wide::takes_avx2`]), all [`KF`] keys in
/// one pass: the same bits ([`add_product`]), one instruction where `scores_of` takes two, and
/// chains enough to hide the longer latency of a fused add.
///
/// # Safety
/// The CPU has AVX2 and FMA; called from code compiled for them (`wide!`'s AVX2 copy).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn scores_fused(qt: &[f32], keys: &[f32], hd: usize, m: usize, s: &mut [f32], t0: usize) {
    use std::arch::x86_64::*;
    assert!(qt.len() >= hd * HB && keys.len() >= KF * hd && m <= KF && t0 + m <= KEY_CHUNK && s.len() >= HB * KEY_CHUNK);
    let mut acc = [_mm256_setzero_ps(); KF];
    for d in 0..hd {
        let qv = _mm256_loadu_ps(qt.as_ptr().add(d * HB));
        for (j, acc) in acc.iter_mut().enumerate() {
            *acc = _mm256_fmadd_ps(qv, _mm256_broadcast_ss(&*keys.as_ptr().add(j * hd + d)), *acc);
        }
    }
    let mut out = [[0f32; HB]; KF];
    for j in 0..KF {
        _mm256_storeu_ps(out[j].as_mut_ptr(), acc[j]);
    }
    for (j, acc) in out.iter().enumerate().take(m) {
        for (h, &a) in acc.iter().enumerate() {
            s[h * KEY_CHUNK + t0 + j] = a;
        }
    }
}

/// The scores of one block of [`HB`] heads (`qt`, `s` as in [`scores_of`]) against the keys in
/// columns `[off, off + hd)` (a KV head's) of `rows` ([`chunk_rows`]), [`KF`] keys at a time converted into
/// `kb` (`KF · hd`; its rows past the last block's keys are leftovers, computed and dropped).
#[inline(always)]
fn chunk_scores(qt: &[f32], rows: &[&[f16]], (off, hd): (usize, usize), kb: &mut [f32], s: &mut [f32], fused: bool, ahead: &[&[f16]]) {
    #[cfg(target_arch = "x86_64")]
    if fused {
        // SAFETY: `fused`: this is the AVX2 copy, on a CPU with AVX2 and FMA. The common head sizes
        // are passed as constants, which the inlined kernel's addresses then hold.
        unsafe {
            match hd {
                64 => chunk_scores_fused(qt, rows, off, 64, kb, s, ahead),
                128 => chunk_scores_fused(qt, rows, off, 128, kb, s, ahead),
                _ => chunk_scores_fused(qt, rows, off, hd, kb, s, ahead),
            }
        }
        return;
    }
    let _ = fused;
    for (b, block) in rows.chunks(KF).enumerate() {
        prefetch_block(rows, ahead, b, off, hd);
        expand(block, off, hd, kb);
        scores_of(qt, kb, hd, block.len(), s, b * KF);
    }
}

/// [`chunk_scores`] through [`scores_fused`].
///
/// # Safety
/// As [`scores_fused`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn chunk_scores_fused(qt: &[f32], rows: &[&[f16]], off: usize, hd: usize, kb: &mut [f32], s: &mut [f32], ahead: &[&[f16]]) {
    for (b, block) in rows.chunks(KF).enumerate() {
        prefetch_block(rows, ahead, b, off, hd);
        expand(block, off, hd, kb);
        scores_fused(qt, kb, hd, block.len(), s, b * KF);
    }
}

/// Blocks of keys ahead of the one [`chunk_scores`] converts that it asks the memory for.
const KEYS_AHEAD: usize = 2;

/// What [`chunk_scores`] asks for while it works on block `b` of its keys: the keys [`KEYS_AHEAD`]
/// blocks on, and block `b` of `ahead` (the chunk's values, which the third step will read from
/// L2), each as columns `[off, off + hd)`.
#[inline(always)]
fn prefetch_block(rows: &[&[f16]], ahead: &[&[f16]], b: usize, off: usize, hd: usize) {
    let block = |rows: &'_ [&'_ [f16]], b: usize| {
        let lo = (b * KF).min(rows.len());
        prefetch(&rows[lo..(lo + KF).min(rows.len())], off, hd)
    };
    block(rows, b + KEYS_AHEAD);
    block(ahead, b);
}

/// `acc[h] = Σ_t p[h][t] · values[t]` for the `n` values (rows of `hd`) and the first `nh` of
/// [`HB`] heads (`p` is `[HB][KEY_CHUNK]`, `acc` `[HB][hd]`, zeroed; the others, a block's
/// padding, stay zero), summed in order of t ([`add_product`]). Eight columns at a time, the
/// heads' sums in registers across the rows.
#[inline(always)]
fn weighted_sums<const FUSED: bool>(p: &[f32], values: &[f32], hd: usize, n: usize, acc: &mut [f32], nh: usize) {
    const W: usize = 8;
    let whole = hd / W * W;
    for d0 in (0..whole).step_by(W) {
        let mut a = [[0f32; W]; HB];
        let p: [&[f32]; HB] = std::array::from_fn(|h| &p[h * KEY_CHUNK..][..n]);
        for (t, x) in values.chunks_exact(hd).take(n).enumerate() {
            let x: &[f32; W] = x[d0..d0 + W].try_into().unwrap();
            for (h, a) in a.iter_mut().enumerate().take(nh) {
                let w = p[h][t];
                for l in 0..W {
                    a[l] = add_product::<FUSED>(a[l], w, x[l]);
                }
            }
        }
        for (h, a) in a.iter().enumerate() {
            acc[h * hd + d0..][..W].copy_from_slice(a);
        }
    }
    for d in whole..hd {
        for h in 0..nh {
            acc[h * hd + d] = (0..n).fold(0.0, |sum, t| add_product::<FUSED>(sum, p[h * KEY_CHUNK + t], values[t * hd + d]));
        }
    }
}

/// [`weighted_sums`] with fused multiply-adds (AVX2, FMA and F16C, [`wide::takes_avx2`]) for `NH`
/// heads known when compiled, the values read as f16 straight from their rows (columns `[off, off
/// + hd)` of `rows`) and converted as loaded: the `NH × CB` sums of `CB` vectors of 8 columns stay
/// in registers across the rows (a head count known only at run time left the compiler a branch
/// per head and row), each row's vectors loaded once for all the heads. The same bits: each
/// column's sum in order of t, one fused multiply-add a term ([`add_product`]). `hd` is a multiple
/// of `CB · 8`.
///
/// # Safety
/// The CPU has AVX2, FMA and F16C; called from code compiled for them (`wide!`'s AVX2 copy).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn weighted_sums_fused<const NH: usize, const CB: usize>(p: &[f32], rows: &[&[f16]], off: usize, hd: usize, acc: &mut [f32]) {
    use std::arch::x86_64::*;
    const W: usize = 8;
    let n = rows.len();
    assert!(NH <= HB && hd.is_multiple_of(CB * W) && n <= KEY_CHUNK && p.len() >= HB * KEY_CHUNK && acc.len() >= HB * hd);
    assert!(rows.iter().all(|r| r.len() >= off + hd));
    for d0 in (0..hd).step_by(CB * W) {
        let mut a = [[_mm256_setzero_ps(); CB]; NH];
        for (t, row) in rows.iter().enumerate() {
            let row = row.as_ptr().add(off + d0);
            let x: [__m256; CB] = std::array::from_fn(|c| _mm256_cvtph_ps(_mm_loadu_si128(row.add(c * W) as *const __m128i)));
            for (h, a) in a.iter_mut().enumerate() {
                let w = _mm256_broadcast_ss(&*p.as_ptr().add(h * KEY_CHUNK + t));
                for c in 0..CB {
                    a[c] = _mm256_fmadd_ps(w, x[c], a[c]);
                }
            }
        }
        for (h, a) in a.iter().enumerate() {
            for (c, a) in a.iter().enumerate() {
                _mm256_storeu_ps(acc.as_mut_ptr().add(h * hd + d0 + c * W), *a);
            }
        }
    }
}

/// The weighted sums of one block's first `nh` heads against the values in columns `[off, off +
/// hd)` (a KV head's) of `rows`: fused from the f16 rows ([`weighted_sums_fused`], as many column vectors at
/// a time as leave the sums and a row's vectors in the 16 registers) where this is the AVX2 copy and
/// `hd` a multiple of the vectors, else [`weighted_sums`] over the rows converted into `vals`.
#[inline(always)]
fn weighted_sums_of(p: &[f32], rows: &[&[f16]], (off, hd): (usize, usize), acc: &mut [f32], nh: usize, fused: bool, vals: &mut Vec<f32>) {
    #[cfg(target_arch = "x86_64")]
    if fused && hd % 8 == 0 {
        // SAFETY: `fused`: this is the AVX2 copy, on a CPU with AVX2, FMA and F16C.
        unsafe {
            match (nh, hd % 16 == 0) {
                (1, true) => weighted_sums_fused::<1, 2>(p, rows, off, hd, acc),
                (2, true) => weighted_sums_fused::<2, 2>(p, rows, off, hd, acc),
                (3, true) => weighted_sums_fused::<3, 2>(p, rows, off, hd, acc),
                (4, true) => weighted_sums_fused::<4, 2>(p, rows, off, hd, acc),
                (5, true) => weighted_sums_fused::<5, 2>(p, rows, off, hd, acc),
                (6, true) => weighted_sums_fused::<6, 2>(p, rows, off, hd, acc),
                (1, _) => weighted_sums_fused::<1, 1>(p, rows, off, hd, acc),
                (2, _) => weighted_sums_fused::<2, 1>(p, rows, off, hd, acc),
                (3, _) => weighted_sums_fused::<3, 1>(p, rows, off, hd, acc),
                (4, _) => weighted_sums_fused::<4, 1>(p, rows, off, hd, acc),
                (5, _) => weighted_sums_fused::<5, 1>(p, rows, off, hd, acc),
                (6, _) => weighted_sums_fused::<6, 1>(p, rows, off, hd, acc),
                (7, _) => weighted_sums_fused::<7, 1>(p, rows, off, hd, acc),
                _ => weighted_sums_fused::<8, 1>(p, rows, off, hd, acc),
            }
        }
        return;
    }
    vals.resize(KEY_CHUNK * hd, 0.0);
    expand(rows, off, hd, vals);
    if fused {
        weighted_sums::<true>(p, vals, hd, rows.len(), acc, nh);
    } else {
        weighted_sums::<false>(p, vals, hd, rows.len(), acc, nh);
    }
}

/// Attention of a few query rows: see the module docs. Three parallel steps over tasks of (query
/// row, chunk of [`KEY_CHUNK`] visible keys, KV heads): the scores of every head of each group, the
/// softmax per row and head, the probabilities times the values; then each row and head sums its
/// chunks in order. A task takes every KV head of its chunk, so that it reads the cache's rows
/// whole (they hold every KV head's values side by side; a task per KV head read half of each, and
/// the memory brought in the other half too), unless that leaves fewer tasks than threads: then one
/// KV head each. A group's heads go [`HB`] at a time (`nb` blocks), the last padded with heads of
/// zero queries whose results are dropped.
///
/// `threads` (the pool's, or those the work is split for) sets only how the steps are split, which
/// gives the same bits either way.
pub(super) fn per_query(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    cache: &Cache,
    visible: &[[usize; 4]],
    p: &AttnParams,
    threads: usize,
) -> Tensor {
    let (hd, n_kv) = (p.head_dim, p.n_head_kv);
    let group = p.n_head / n_kv;
    let nb = group.div_ceil(HB);
    // Fused multiply-adds where this runs the AVX2 copy: the same bits ([`add_product`]).
    #[cfg(target_arch = "x86_64")]
    let fused = wide::takes_avx2();
    #[cfg(not(target_arch = "x86_64"))]
    let fused = false;
    let kv_dim = n_kv * hd;
    let prefix = cache.len;
    let (pre, post) = p.pre_post_scale();
    let rows: Vec<Visible> = visible.iter().map(|&[a, prefix, b, e]| Visible { a, prefix, b, e }).collect();
    // The (row, chunk) pairs in order; `first[r]`, row r's first. Blocks of scores and of partial
    // sums are laid out [row, chunk][KV head].
    let first: Vec<usize> = rows.iter().scan(0, |at, vis| Some(std::mem::replace(at, *at + vis.chunks()))).collect();
    let chunks: Vec<(usize, usize)> = rows.iter().enumerate().flat_map(|(r, vis)| (0..vis.chunks()).map(move |c| (r, c))).collect();
    let per = if chunks.len() >= threads.max(1) { n_kv } else { 1 };
    let tasks: Vec<(usize, usize, usize)> = chunks.iter().flat_map(|&(r, c)| (0..n_kv).step_by(per).map(move |g| (r, c, g))).collect();
    // The scaled queries rounded to f16, per row and KV head transposed: [block][hd][HB].
    let mut qt = vec![0f32; rows.len() * n_kv * nb * hd * HB];
    for (r, qr) in q.data.chunks_exact(q.cols).enumerate() {
        for (h, qh) in qr.chunks_exact(hd).enumerate() {
            let (g, hb, l) = (h / group, h % group / HB, h % group % HB);
            let block = &mut qt[((r * n_kv + g) * nb + hb) * hd * HB..][..hd * HB];
            for (d, &x) in qh.iter().enumerate() {
                block[d * HB + l] = round_f16(x * pre);
            }
        }
    }
    // Scores, then probabilities, per row, chunk and KV head: [nb · HB heads][KEY_CHUNK].
    let sb = nb * HB * KEY_CHUNK;
    let mut scores = vec![0f32; chunks.len() * n_kv * sb];
    scores.par_chunks_mut(per * sb).zip(&tasks).each_task_init(
        1,
        || (vec![0f32; KF * hd], Vec::new(), Vec::new()),
        |(kb, fresh, fresh_v), (blocks, &(r, c, g0))| {
            wide!({
                let (mut keys, mut values): ([&[f16]; KEY_CHUNK], [&[f16]; KEY_CHUNK]) = ([&[]; KEY_CHUNK], [&[]; KEY_CHUNK]);
                let n = chunk_rows(rows[r], c, (&cache.k, &k.data), (prefix, kv_dim), fresh, &mut keys);
                // The values, for the prefetches only (none in the tab's wasm).
                let m = if cfg!(target_arch = "x86_64") {
                    chunk_rows(rows[r], c, (&cache.v, &v.data), (prefix, kv_dim), fresh_v, &mut values)
                } else {
                    0
                };
                for (g, block) in (g0..).zip(blocks.chunks_exact_mut(sb)) {
                    let qt = &qt[(r * n_kv + g) * nb * hd * HB..][..nb * hd * HB];
                    for (hb, (qt, s)) in qt.chunks_exact(hd * HB).zip(block.chunks_exact_mut(HB * KEY_CHUNK)).enumerate() {
                        let ahead = if hb == 0 { &values[..m] } else { &[][..] };
                        chunk_scores(qt, &keys[..n], (g * hd, hd), kb, s, fused, ahead);
                    }
                }
            })
        },
    );
    // The softmax needs a row's and head's whole list, its runs in each of the row's chunks: a task
    // per row and KV head, or, where those are fewer than the threads (a decoded token's 2 on 16
    // threads), per fewer heads, down to one.
    let per_softmax = (group * rows.len() * n_kv).div_ceil(threads.max(1)).clamp(1, group);
    let pieces = group.div_ceil(per_softmax);
    let base = SendPtr(scores.as_mut_ptr());
    (0..rows.len() * n_kv * pieces).into_par_iter().each_task(1, |t| {
        let (r, g, h0) = (t / pieces / n_kv, t / pieces % n_kv, t % pieces * per_softmax);
        let vis = rows[r];
        wide!({
            for hg in h0..(h0 + per_softmax).min(group) {
                // SAFETY: inside `scores` (blocks laid out [row, chunk][KV head]); the runs of head
                // `hg` of one row and KV head are this task's alone.
                let mut runs: Vec<&mut [f32]> = (0..vis.chunks())
                    .map(|c| unsafe {
                        let at = ((first[r] + c) * n_kv + g) * sb + hg * KEY_CHUNK;
                        std::slice::from_raw_parts_mut(base.get().add(at), vis.chunk_len(c))
                    })
                    .collect();
                softmax(&mut runs, post, p.softcap);
            }
        })
    });
    // Probabilities × values per row, chunk and KV head: [nb · HB heads][hd].
    let pb = nb * HB * hd;
    let mut partial = vec![0f32; chunks.len() * n_kv * pb];
    partial.par_chunks_mut(per * pb).zip(scores.par_chunks(per * sb)).zip(&tasks).each_task_init(
        1,
        || (Vec::new(), Vec::new()),
        |(vals, fresh), ((sums, probs), &(r, c, g0))| {
            wide!({
                let mut at: [&[f16]; KEY_CHUNK] = [&[]; KEY_CHUNK];
                let n = chunk_rows(rows[r], c, (&cache.v, &v.data), (prefix, kv_dim), fresh, &mut at);
                for (g, (sums, probs)) in (g0..).zip(sums.chunks_exact_mut(pb).zip(probs.chunks_exact(sb))) {
                    for (hb, (acc, pr)) in sums.chunks_exact_mut(HB * hd).zip(probs.chunks_exact(HB * KEY_CHUNK)).enumerate() {
                        // The block's heads of the group; the padding's sums stay zero, and are dropped.
                        let nh = (group - hb * HB).min(HB);
                        weighted_sums_of(pr, &at[..n], (g * hd, hd), acc, nh, fused, vals);
                    }
                }
            })
        },
    );
    // A row's heads of KV head g are the output columns [g·group·hd, (g + 1)·group·hd).
    let mut out = Tensor::zeros(rows.len(), p.n_head * hd);
    for (r, vis) in rows.iter().enumerate() {
        for g in 0..n_kv {
            let o = &mut out.data[r * p.n_head * hd + g * group * hd..][..group * hd];
            for c in 0..vis.chunks() {
                let part = &partial[((first[r] + c) * n_kv + g) * pb..][..pb];
                o.iter_mut().zip(part).for_each(|(o, x)| *o += x);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::Cpu;
    use crate::backend::policy::visible_keys;
    use crate::backend::{AttnLayout, Backend};

    /// The two paths compute the same attention (to float rounding: their sums are ordered
    /// differently) on one to four query rows: decoding after a long cached prefix (over several
    /// key chunks), the pruned last layer of a judge's items, sliding windows, soft caps, Q scaled
    /// first, grouped KV heads (up to 18 to a KV head: three passes of [`HB`]) and head sizes 20,
    /// 64, 96, 128 and 256. And the per-query path gives the same bits on one thread and on three,
    /// and in the AVX2 copy (fused kernels, the common head sizes as constants) and the one as built.
    #[test]
    fn per_query_rows_match_the_tiled_path() {
        struct Case {
            hd: usize,
            n_head: usize,
            n_kv: usize,
            prefix: usize,
            /// Lengths of the new rows' segments; each segment's last row is a query.
            segments: &'static [usize],
            window: Option<usize>,
            softcap: Option<f32>,
            q_first: bool,
        }
        let case = |hd, n_head, n_kv, prefix, segments, window, softcap, q_first| Case {
            hd,
            n_head,
            n_kv,
            prefix,
            segments,
            window,
            softcap,
            q_first,
        };
        let cases = [
            case(64, 14, 2, 1500, &[1][..], None, None, false),
            case(128, 12, 2, 1500, &[1][..], None, None, false),
            case(64, 4, 4, 0, &[1][..], None, None, false),
            case(128, 6, 2, 300, &[1][..], None, Some(30.0), false),
            case(96, 3, 1, 129, &[5, 9][..], None, None, false),
            case(256, 4, 1, 700, &[3, 1, 8, 2][..], Some(512), None, true),
            case(64, 2, 1, 260, &[1][..], Some(100), Some(50.0), true),
            case(64, 4, 2, 40, &[20, 1, 1][..], Some(8), None, false),
            case(64, 18, 1, 300, &[1][..], None, None, false),
            case(20, 3, 1, 150, &[2, 1][..], None, None, false),
        ];
        let mut seed = 7u64;
        let mut rand = |n: usize, scale: f32| -> Vec<f32> {
            (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((seed >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
                })
                .collect()
        };
        let mut worst = 0f32;
        for c in &cases {
            let kv_dim = c.n_kv * c.hd;
            let n_new: usize = c.segments.iter().sum();
            let mut cpu = Cpu::new(3).unwrap();
            let mut cache = cpu.new_cache(c.prefix + n_new, kv_dim).unwrap();
            if c.prefix > 0 {
                let (pk, pv) = (rand(c.prefix * kv_dim, 1.5), rand(c.prefix * kv_dim, 1.0));
                let t = |data| Tensor { rows: c.prefix, cols: kv_dim, data };
                cpu.append_cache(&mut cache, &t(pk), &t(pv)).unwrap();
            }
            let (mut positions, mut segments, mut query_rows) = (Vec::new(), Vec::new(), Vec::new());
            for (s, &len) in c.segments.iter().enumerate() {
                positions.extend((c.prefix..c.prefix + len).map(|x| x as u32));
                segments.extend(std::iter::repeat_n(s as u32, len));
                query_rows.push(positions.len() - 1);
            }
            let layout = AttnLayout { positions, segments, query_rows };
            let p = AttnParams {
                n_head: c.n_head,
                n_head_kv: c.n_kv,
                head_dim: c.hd,
                scale: 1.0 / (c.hd as f32).sqrt(),
                scale_q_first: c.q_first,
                softcap: c.softcap,
                window: c.window,
            };
            let nq = layout.query_rows.len();
            assert!(nq <= FEW_QUERIES);
            let q = Tensor { rows: nq, cols: c.n_head * c.hd, data: rand(nq * c.n_head * c.hd, 3.0) };
            let t = |data| Tensor { rows: n_new, cols: kv_dim, data };
            let (k, v) = (t(rand(n_new * kv_dim, 1.5)), t(rand(n_new * kv_dim, 1.0)));
            let visible = visible_keys(&layout, p.window, c.prefix);
            let want = tiled(&q, &k, &v, &cache, &visible, &p);
            let got = cpu.run(|| per_query(&q, &k, &v, &cache, &visible, &p, 2));
            let one =
                rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(|| per_query(&q, &k, &v, &cache, &visible, &p, 16));
            assert_eq!(
                got.data, one.data,
                "hd {} prefix {}: three threads (the softmax split for 2) and one (split for 16) differ",
                c.hd, c.prefix
            );
            // The copy as built (no fused kernels, every head size at run time) gives the same bits.
            wide::set_narrow(true);
            let narrow = cpu.run(|| per_query(&q, &k, &v, &cache, &visible, &p, 2));
            wide::set_narrow(false);
            assert_eq!(got.data, narrow.data, "hd {} prefix {}: the AVX2 copy and the copy as built differ", c.hd, c.prefix);
            // Outputs are convex combinations of values in [-1, 1].
            for (i, (a, b)) in got.data.iter().zip(&want.data).enumerate() {
                assert!((a - b).abs() <= 2e-5, "hd {} prefix {} segments {:?}: output {i}: {a} vs {b}", c.hd, c.prefix, c.segments);
                worst = worst.max((a - b).abs());
            }
            // Through the backend: its choice of path for these rows.
            assert_eq!(cpu.attention(&q, &k, &v, &cache, &layout, &p).data, got.data);
        }
        eprintln!("per-query path against the tiled one: max |Δ| {worst:.2e} over {} cases", cases.len());
    }
}
