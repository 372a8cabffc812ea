//! Intel AMX (Advanced Matrix Extensions, Xeon since Sapphire Rapids): the CPU's own matrix units
//! for the products of many activation rows (a prefill's), chosen at run time where the CPU has
//! them and Linux grants this process their state.
//!
//! **What a tile does.** Eight tile registers of up to 16 rows × 64 bytes. One instruction
//! (`tdpbsud`, or `tdpbssd` for signed weights) adds to a 16 × 16 tile C of 32-bit sums the
//! products of a tile A of 16 activation rows × K bytes (signed) with a tile B of K/4 rows × 16
//! weight rows × 4 bytes (4 consecutive levels of each weight row, the layout the VNNI kernels'
//! groups already have): 16·16·K multiply-adds, where one `vpdpbusd` does 32.
//!
//! **How a product uses them.** A task takes pairs of weight groups (16 rows, one tile's columns),
//! two pairs at a time. For each chunk of 2048 values of K, their levels are unpacked into B tiles
//! once (32 KiB a pair, 4-bit levels widened to bytes) and every two tiles of 16 activation rows
//! meet them: per block of 32 values (16 for Q6_K, whose scales change every 16), four independent
//! tile products (2 row tiles × 2 pairs: all eight registers), issued back to back. Each product's
//! sums are stored and, as in [`super::scalar_kernel`], multiplied by the block's integer scales
//! into a super-block's integer sum (K-quants) or by the block's floats (older types); the floats
//! follow in the scalar kernel's order. So a product on the tiles gives the scalar reference's
//! values bit for bit.
//! Fewer than [`MIN_ROWS`] activation rows (decode) take the VNNI kernel beside it.
//!
//! **Tested without the hardware.** The product is written once over [`Tiles`]: [`Hw`] runs each
//! operation as its instruction (inline assembly: the intrinsics are not stable Rust), [`Emu`]
//! computes it in plain Rust from the instruction set reference's definitions. The emulation's
//! products are checked against the scalar kernel bit for bit on every CPU; where the CPU has AMX,
//! the tiles are checked against the emulation once before they are offered ([`ready`]), so a
//! machine whose tiles disagree keeps its VNNI kernel and says why.

use std::arch::asm;
use std::arch::x86_64::*;
use std::ops::Range;

use rayon::prelude::*;

use super::super::splits::Tasks;
use super::super::SendPtr;
use super::{groups_per_task, QActs, QWeight, GROUP, QK, QK_K};
use crate::quant::GgmlType;

/// Activation rows per tile.
const TM: usize = 16;
/// Weight rows per tile (a pair of groups).
const TN: usize = 2 * GROUP;
/// Values of K whose B tiles a task unpacks at once (as the VNNI tasks' chunks).
const CHUNK: usize = 2048;
/// Bytes of a B tile row: 4 levels of each of [`TN`] weight rows.
const B_ROW: usize = 4 * TN;

/// Products of fewer activation rows take the VNNI kernel (a tile of 16 rows would run mostly
/// empty).
pub(super) const MIN_ROWS: usize = 4;

/// A step's tiles: 2 × 2 tiles of C (row tile i and column tile j in `C[i][j]`), the two row tiles
/// of A and the two column tiles of B. The four products of a step are independent, so the unit
/// runs them back to back instead of waiting on each one's latency.
const C: [[usize; 2]; 2] = [[0, 1], [2, 3]];
const A: [usize; 2] = [4, 5];
const B: [usize; 2] = [6, 7];

/// A tile configuration (`ldtilecfg`'s 64 bytes, palette 1): bytes per row and rows of tiles 0–7;
/// the fields of "tiles" 8–15 are reserved bytes and stay 0. A configuration the CPU rejects is a
/// general-protection fault, so [`Emu`] checks the same rules.
#[repr(C, align(64))]
struct Config {
    palette: u8,
    start_row: u8,
    reserved: [u8; 14],
    colsb: [u16; 16],
    rows: [u8; 16],
}

impl Config {
    /// Row tiles of `rows[0]` and `rows[1]` activation rows (the second may be 0: its A and C
    /// tiles are then left unconfigured, rows and bytes 0), each operation over `k` values.
    fn new(rows: [usize; 2], k: usize) -> Config {
        debug_assert!(rows.iter().all(|&r| r <= TM) && k <= 64 && k.is_multiple_of(4));
        let mut c = Config { palette: 1, start_row: 0, reserved: [0; 14], colsb: [0; 16], rows: [0; 16] };
        for (i, &r) in rows.iter().enumerate() {
            (c.rows[B[i]], c.colsb[B[i]]) = ((k / 4) as u8, B_ROW as u16);
            if r > 0 {
                (c.rows[A[i]], c.colsb[A[i]]) = (r as u8, k as u16);
                for j in 0..2 {
                    (c.rows[C[i][j]], c.colsb[C[i][j]]) = (r as u8, (4 * TN) as u16);
                }
            }
        }
        c
    }
}

/// The tile operations a product uses; `T`, `C`, `A`, `B` are tile registers (0–7).
trait Tiles {
    /// Load `cfg` (every tile's shape; tiles are zeroed).
    unsafe fn configure(&mut self, cfg: &Config);
    /// Tile `T` = 0.
    unsafe fn zero<const T: usize>(&mut self);
    /// Tile `T` = its configured rows × bytes at `p`, rows `stride` bytes apart.
    unsafe fn load<const T: usize>(&mut self, p: *const u8, stride: usize);
    /// C += A · B, A's bytes signed, B's signed or unsigned.
    unsafe fn dot<const C: usize, const A: usize, const B: usize, const SIGNED: bool>(&mut self);
    /// Tile `T`'s rows of 16 sums to `p`.
    unsafe fn store<const T: usize>(&mut self, p: *mut [i32; TN]);
    /// Give the tile state back (a thread holding it costs every context switch 8 KiB more).
    unsafe fn release(&mut self);

    // What becomes of a row of C's sums, column by column, in the scalar kernel's operations and
    // order. Written out in AVX-512 for [`Hw`] (LLVM vectorized these loops across rows, with
    // gathers); the same bits either way (`row_operations_are_the_plain_ones`).

    /// K-quants: `main += sc · c`, a block's sums times its scales into the super-block's.
    #[inline(always)]
    unsafe fn scale_add(main: &mut [i32; TN], sc: &[i32; TN], c: &[i32; TN]) {
        for i in 0..TN {
            main[i] += sc[i] * c[i];
        }
    }

    /// K-quants, a super-block's end: the offsets' sum `off` from the pairs of coefficients `mins`
    /// and the row's level sums, then `total += (dm · off + d · main) · ad`.
    #[inline(always)]
    unsafe fn super_block(
        total: &mut [f32; TN],
        main: &[i32; TN],
        mins: &[[[i32; TN]; 2]],
        sums: &[i16],
        [d, dm]: [&[f32; TN]; 2],
        ad: f32,
    ) {
        let mut off = [0i32; TN];
        for (q, [lo, hi]) in mins.iter().enumerate() {
            for i in 0..TN {
                off[i] += lo[i] * sums[2 * q] as i32 + hi[i] * sums[2 * q + 1] as i32;
            }
        }
        for i in 0..TN {
            total[i] += (dm[i] * off[i] as f32 + d[i] * main[i] as f32) * ad;
        }
    }

    /// Older types, a block: `total += c · (d · ad)`, then `+= dm · s` where the type has offsets.
    #[inline(always)]
    unsafe fn block(total: &mut [f32; TN], c: &[i32; TN], d: &[f32; TN], ad: f32, offset: Option<(&[f32; TN], f32)>) {
        for i in 0..TN {
            total[i] += c[i] as f32 * (d[i] * ad);
        }
        if let Some((dm, s)) = offset {
            for i in 0..TN {
                total[i] += dm[i] * s;
            }
        }
    }
}

/// The CPU's tiles.
struct Hw;

impl Tiles for Hw {
    #[inline(always)]
    unsafe fn configure(&mut self, cfg: &Config) {
        asm!("ldtilecfg [{}]", in(reg) cfg, options(nostack, readonly, preserves_flags));
    }
    #[inline(always)]
    unsafe fn zero<const T: usize>(&mut self) {
        asm!("tilezero tmm{t}", t = const T, options(nostack, nomem, preserves_flags));
    }
    #[inline(always)]
    unsafe fn load<const T: usize>(&mut self, p: *const u8, stride: usize) {
        asm!("tileloadd tmm{t}, [{p} + {s}*1]", t = const T, p = in(reg) p, s = in(reg) stride, options(nostack, readonly, preserves_flags));
    }
    #[inline(always)]
    unsafe fn dot<const C: usize, const A: usize, const B: usize, const SIGNED: bool>(&mut self) {
        if SIGNED {
            asm!("tdpbssd tmm{c}, tmm{a}, tmm{b}", c = const C, a = const A, b = const B, options(nostack, nomem, preserves_flags));
        } else {
            asm!("tdpbsud tmm{c}, tmm{a}, tmm{b}", c = const C, a = const A, b = const B, options(nostack, nomem, preserves_flags));
        }
    }
    #[inline(always)]
    unsafe fn store<const T: usize>(&mut self, p: *mut [i32; TN]) {
        asm!("tilestored [{p} + {s}*1], tmm{t}", t = const T, p = in(reg) p, s = in(reg) 4 * TN, options(nostack, preserves_flags));
    }
    #[inline(always)]
    unsafe fn release(&mut self) {
        asm!("tilerelease", options(nostack, nomem, preserves_flags));
    }

    #[inline(always)]
    unsafe fn scale_add(main: &mut [i32; TN], sc: &[i32; TN], c: &[i32; TN]) {
        let product = _mm512_mullo_epi32(ld(sc), ld(c));
        _mm512_storeu_si512(main.as_mut_ptr().cast(), _mm512_add_epi32(ld(main), product));
    }

    #[inline(always)]
    unsafe fn super_block(
        total: &mut [f32; TN],
        main: &[i32; TN],
        mins: &[[[i32; TN]; 2]],
        sums: &[i16],
        [d, dm]: [&[f32; TN]; 2],
        ad: f32,
    ) {
        let mut off = _mm512_setzero_si512();
        for (q, [lo, hi]) in mins.iter().enumerate() {
            let lo = _mm512_mullo_epi32(ld(lo), _mm512_set1_epi32(sums[2 * q] as i32));
            let hi = _mm512_mullo_epi32(ld(hi), _mm512_set1_epi32(sums[2 * q + 1] as i32));
            off = _mm512_add_epi32(off, _mm512_add_epi32(lo, hi));
        }
        let t = _mm512_add_ps(_mm512_mul_ps(ldf(dm), _mm512_cvtepi32_ps(off)), _mm512_mul_ps(ldf(d), _mm512_cvtepi32_ps(ld(main))));
        _mm512_storeu_ps(total.as_mut_ptr(), _mm512_add_ps(ldf(total), _mm512_mul_ps(t, _mm512_set1_ps(ad))));
    }

    #[inline(always)]
    unsafe fn block(total: &mut [f32; TN], c: &[i32; TN], d: &[f32; TN], ad: f32, offset: Option<(&[f32; TN], f32)>) {
        let scale = _mm512_mul_ps(ldf(d), _mm512_set1_ps(ad));
        let mut t = _mm512_add_ps(ldf(total), _mm512_mul_ps(_mm512_cvtepi32_ps(ld(c)), scale));
        if let Some((dm, s)) = offset {
            t = _mm512_add_ps(t, _mm512_mul_ps(ldf(dm), _mm512_set1_ps(s)));
        }
        _mm512_storeu_ps(total.as_mut_ptr(), t);
    }
}

/// A row of sums as one vector.
#[inline(always)]
unsafe fn ld(v: &[i32; TN]) -> __m512i {
    _mm512_loadu_si512(v.as_ptr().cast())
}

/// A row of floats as one vector.
#[inline(always)]
unsafe fn ldf(v: &[f32; TN]) -> __m512 {
    _mm512_loadu_ps(v.as_ptr())
}

/// The same operations in plain Rust, as the instruction set reference defines them (`TDPBSUD`:
/// for each row m of C, each group of 4 bytes k of A's row and each column n,
/// C[m][n] += Σᵢ A[m][4k+i] · B[k][4n+i], wrapping). Configurations and shapes are checked as the
/// CPU faults on them: reserved bytes not 0, a tile with rows but no bytes or the reverse, a tile
/// used unconfigured, shapes that do not multiply.
struct Emu {
    rows: [usize; 8],
    colsb: [usize; 8],
    tile: [[[u8; 64]; TM]; 8],
}

impl Default for Emu {
    fn default() -> Emu {
        Emu { rows: [0; 8], colsb: [0; 8], tile: [[[0; 64]; TM]; 8] }
    }
}

impl Emu {
    fn configured(&self, t: usize) {
        assert!(self.rows[t] > 0 && self.colsb[t] > 0, "tile {t} used but not configured");
    }
}

impl Tiles for Emu {
    unsafe fn configure(&mut self, cfg: &Config) {
        assert_eq!((cfg.palette, cfg.start_row, cfg.reserved), (1, 0, [0; 14]));
        for t in 0..16 {
            if t >= 8 {
                assert_eq!((cfg.rows[t], cfg.colsb[t]), (0, 0), "tile {t} does not exist");
                continue;
            }
            (self.rows[t], self.colsb[t]) = (cfg.rows[t] as usize, cfg.colsb[t] as usize);
            assert!(self.rows[t] <= TM && self.colsb[t] <= 64);
            assert_eq!(self.rows[t] == 0, self.colsb[t] == 0, "tile {t}: rows and bytes must both be 0, or neither");
        }
        self.tile = [[[0; 64]; TM]; 8];
    }
    unsafe fn zero<const T: usize>(&mut self) {
        self.configured(T);
        self.tile[T] = [[0; 64]; TM];
    }
    unsafe fn load<const T: usize>(&mut self, p: *const u8, stride: usize) {
        self.configured(T);
        for r in 0..self.rows[T] {
            std::ptr::copy_nonoverlapping(p.add(r * stride), self.tile[T][r].as_mut_ptr(), self.colsb[T]);
        }
    }
    unsafe fn dot<const C: usize, const A: usize, const B: usize, const SIGNED: bool>(&mut self) {
        for t in [C, A, B] {
            self.configured(t);
        }
        let (rows, colsb) = (self.rows, self.colsb);
        assert!(rows[C] == rows[A] && colsb[C] == colsb[B] && colsb[A] == 4 * rows[B], "tile shapes do not multiply");
        assert!(C != A && C != B && A != B);
        let (a, b) = (self.tile[A], self.tile[B]);
        let c = &mut self.tile[C];
        for m in 0..rows[C] {
            for n in 0..colsb[C] / 4 {
                let mut sum = i32::from_le_bytes(c[m][4 * n..4 * n + 4].try_into().unwrap());
                for k in 0..colsb[A] / 4 {
                    for i in 0..4 {
                        let bv = if SIGNED { b[k][4 * n + i] as i8 as i32 } else { b[k][4 * n + i] as i32 };
                        sum = sum.wrapping_add(a[m][4 * k + i] as i8 as i32 * bv);
                    }
                }
                c[m][4 * n..4 * n + 4].copy_from_slice(&sum.to_le_bytes());
            }
        }
    }
    unsafe fn store<const T: usize>(&mut self, p: *mut [i32; TN]) {
        self.configured(T);
        assert_eq!(self.colsb[T], 4 * TN);
        for r in 0..self.rows[T] {
            let row: [i32; TN] = std::array::from_fn(|n| i32::from_le_bytes(self.tile[T][r][4 * n..4 * n + 4].try_into().unwrap()));
            p.add(r).write(row);
        }
    }
    unsafe fn release(&mut self) {
        *self = Emu::default();
    }
}

// ------------------------------------------------------------------ detection

/// CPUID leaf 7: AMX-TILE (EDX bit 24) and AMX-INT8 (bit 25).
fn cpu_has_tiles() -> bool {
    let max = std::arch::x86_64::__cpuid(0).eax;
    let edx = if max >= 7 { std::arch::x86_64::__cpuid_count(7, 0).edx } else { 0 };
    edx & (3 << 24) == 3 << 24
        && is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512vl")
}

/// Linux hands the tiles' 8 KiB of state to a process only when asked (`arch_prctl`
/// `ARCH_REQ_XCOMP_PERM` for `XFEATURE_XTILEDATA`), for all its threads; a tile instruction before
/// that is an illegal instruction.
#[cfg(target_os = "linux")]
fn os_grants_tiles() -> Result<(), String> {
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: a plain system call with integer arguments.
    match unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) } {
        0 => Ok(()),
        _ => Err(format!("Linux refused the tiles' state ({})", std::io::Error::last_os_error())),
    }
}

#[cfg(not(target_os = "linux"))]
fn os_grants_tiles() -> Result<(), String> {
    Err("the tiles are enabled on Linux only".into())
}

/// The environment variable that keeps products off the tiles (set to anything but empty or 0).
pub const OFF: &str = "ROCKETJUDGE_NO_AMX";

/// Whether products may take the tiles: None where the CPU has no AMX int8 tiles, else Ok or
/// why not ([`OFF`] is set, the OS refused them, or their products differ from the emulation's).
/// Found once.
pub fn status() -> Option<&'static Result<(), String>> {
    static STATUS: std::sync::OnceLock<Option<Result<(), String>>> = std::sync::OnceLock::new();
    STATUS
        .get_or_init(|| {
            cpu_has_tiles().then(|| match turned_off(std::env::var(OFF).ok().as_deref()) {
                true => Err(format!("turned off by {OFF}")),
                false => os_grants_tiles().and_then(|()| tiles_agree()),
            })
        })
        .as_ref()
}

/// Whether [`OFF`]'s value turns the tiles off: set, and neither empty nor 0.
fn turned_off(value: Option<&str>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0")
}

/// Whether products may take the tiles.
pub(super) fn ready() -> bool {
    matches!(status(), Some(Ok(())))
}

/// The tiles against their emulation, bit for bit, on one product of each kind (unsigned levels
/// with K-quant scales, Q6_K's 16-value blocks, signed Q8_0 levels) with both tile configurations
/// (two row tiles and one, partial), an odd group and two chunks of K.
fn tiles_agree() -> Result<(), String> {
    // 37 rows: a step of two row tiles (16 + 16), then one of one (5).
    // SAFETY: the CPU has the tiles and the OS granted them (checked before).
    [GgmlType::Q4K, GgmlType::Q6K, GgmlType::Q8_0]
        .into_iter()
        .try_for_each(|dtype| unsafe { against_emulation(dtype, (37, 24, 2304), None) })
}

/// A random product of `dtype` and `shape` (m, n, k) on the tiles and on their emulation, split for
/// `threads` on the pool or (None) as one task on the calling thread: Err where an output's bits
/// differ.
///
/// # Safety
/// The tiles can run.
unsafe fn against_emulation(dtype: GgmlType, (m, n, k): (usize, usize, usize), threads: Option<usize>) -> Result<(), String> {
    let (w, a) = super::random_product(dtype, m, n, k);
    let [mut hw, mut emu] = [vec![0f32; m * n], vec![0f32; m * n]];
    for (y, task) in [(&mut hw, hw_task as Task), (&mut emu, emu_task as Task)] {
        match threads {
            Some(threads) => split(&a, &w, y.as_mut_ptr(), threads, task),
            None => task(&a, &w, y.as_mut_ptr(), 0..w.groups.div_ceil(2)),
        }
    }
    match (0..m * n).find(|&i| hw[i].to_bits() != emu[i].to_bits()) {
        None => Ok(()),
        Some(i) => {
            Err(format!("the tiles' {dtype:?} {m}×{n}×{k} product differs from their emulation (output {i}: {} against {})", hw[i], emu[i]))
        }
    }
}

// ------------------------------------------------------------------ products

/// A task's function: the columns of the given pairs of groups into `y`.
type Task = unsafe fn(&QActs, &QWeight, *mut f32, Range<usize>);

/// `y = a · wᵀ` on the tiles, on the current rayon pool, split for `threads` workers.
///
/// # Safety
/// [`ready`]; `y` points to `a.rows × w.rows` writable values.
pub(super) unsafe fn product(a: &QActs, w: &QWeight, y: *mut f32, threads: usize) {
    split(a, w, y, threads, hw_task)
}

/// The whole product on the calling thread ([`super::ceiling`]).
///
/// # Safety
/// As [`product`].
pub(super) unsafe fn product_here(a: &QActs, w: &QWeight, y: *mut f32) {
    hw_task(a, w, y, 0..w.groups.div_ceil(2))
}

/// Tasks take two pairs at a time (a step's two column tiles), as many as [`groups_per_task`] gives
/// groups: on 16 threads the judges' products would otherwise fall to one pair a task, half of
/// each step's four tile products left out, in the same number of rounds.
unsafe fn split(a: &QActs, w: &QWeight, y: *mut f32, threads: usize, task: Task) {
    let pairs = w.groups.div_ceil(2);
    let per_task = 2 * groups_per_task(pairs.div_ceil(2), threads);
    let yp = SendPtr(y);
    (0..pairs.div_ceil(per_task)).into_par_iter().each_task(1, |t| {
        // SAFETY: the tasks' pairs are disjoint, so are the columns of `y` they write.
        unsafe { task(a, w, yp.get(), t * per_task..((t + 1) * per_task).min(pairs)) }
    });
}

#[target_feature(enable = "avx2,fma,avx512f,avx512bw,avx512vl")]
unsafe fn hw_task(a: &QActs, w: &QWeight, y: *mut f32, pairs: Range<usize>) {
    SCRATCH.with_borrow_mut(|scratch| task(&mut Hw, scratch, a, w, y, pairs))
}

unsafe fn emu_task(a: &QActs, w: &QWeight, y: *mut f32, pairs: Range<usize>) {
    SCRATCH.with_borrow_mut(|scratch| task(&mut Emu::default(), scratch, a, w, y, pairs))
}

/// What a task fills for each chunk of K of two pairs: their B tiles and their columns' scales.
/// One a thread, kept between tasks (a product's tasks are many and short, and with one allocator
/// arena for every thread, a buffer allocated per task would make them queue for it).
#[derive(Default)]
struct Scratch {
    b: Vec<u8>,
    columns: [Columns; 2],
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Sums or floats for a step's 2 × 2 tiles of output: `[row tile][column tile][row][column]`.
type Step<V> = [[[[V; TN]; TM]; 2]; 2];

/// The columns of `pairs` (of groups) into `y`, two pairs at a time: per chunk of K, their B tiles
/// and the columns' scales gathered once, then every two tiles of activation rows.
///
/// # Safety
/// The tiles can run; `y` points to `a.rows × w.rows` writable values whose columns of `pairs`
/// nothing else uses meanwhile.
#[inline(always)]
unsafe fn task<T: Tiles>(tiles: &mut T, scratch: &mut Scratch, a: &QActs, w: &QWeight, y: *mut f32, pairs: Range<usize>) {
    let (m, n, k) = (a.rows, w.rows, w.k);
    let fmt = w.fmt;
    // Values per tile operation: a block, or half of one where the scales change every 16 values.
    let step = if fmt.half_scales { QK / 2 } else { QK };
    let (nblk, nsb) = (k / QK, k / QK_K);
    let per_pair = CHUNK / 4 * B_ROW;
    scratch.b.resize(2 * per_pair, 0);
    let Scratch { b, columns: cs } = scratch;
    let mut c: Step<i32> = [[[[0; TN]; TM]; 2]; 2];
    let mut configured = [0; 2];
    for p0 in pairs.clone().step_by(2) {
        let np = 2.min(pairs.end - p0);
        for k0 in (0..k).step_by(CHUNK) {
            let blocks = k0 / QK..(k0 + CHUNK).min(k) / QK;
            for (j, cs) in cs.iter_mut().enumerate().take(np) {
                unpack(w, p0 + j, blocks.clone(), &mut b[j * per_pair..][..per_pair]);
                cs.gather(w, p0 + j, blocks.clone());
            }
            for r0 in (0..m).step_by(2 * TM) {
                let rows = [TM.min(m - r0), (m - r0).saturating_sub(TM).min(TM)];
                if rows != configured {
                    tiles.configure(&Config::new(rows, step));
                    configured = rows;
                }
                let nr = if rows[1] > 0 { 2 } else { 1 };
                // Where a step's tiles over `step` values of block `blk` from value `at` start:
                // the rows' and the pairs' (past the last where `two` says there is none).
                let tiles_at = |blk: usize, at: usize| -> [[*const u8; 2]; 2] {
                    let a_at = |i: usize| (a.q.as_ptr() as *const u8).wrapping_add((r0 + i * TM) * k + blk * QK + at);
                    let b_at = |j: usize| b.as_ptr().wrapping_add(j * per_pair + ((blk - blocks.start) * QK + at) / 4 * B_ROW);
                    [[a_at(0), a_at(1)], [b_at(0), b_at(1)]]
                };
                let two = [nr == 2, np == 2];
                let mut total: Step<f32> = [[[[0.0; TN]; TM]; 2]; 2];
                if fmt.super_blocks {
                    for (ul, u) in (blocks.start / 8..blocks.end / 8).enumerate() {
                        let mut main: Step<i32> = [[[[0; TN]; TM]; 2]; 2];
                        for bl in 0..8 {
                            for (h, at) in (0..QK).step_by(step).enumerate() {
                                four(tiles, fmt.signed, tiles_at(8 * u + bl, at), k, two, &mut c);
                                for i in 0..nr {
                                    for j in 0..np {
                                        let sc = &cs[j].scales[(8 * ul + bl) * (QK / step) + h];
                                        for r in 0..rows[i] {
                                            T::scale_add(&mut main[i][j][r], sc, &c[i][j][r]);
                                        }
                                    }
                                }
                            }
                        }
                        for i in 0..nr {
                            for r in 0..rows[i] {
                                let row = r0 + i * TM + r;
                                let sums = if fmt.pairs == 4 {
                                    &a.sums32[row * (k / 32) + u * 8..][..8]
                                } else {
                                    &a.sums16[row * (k / 16) + u * 16..][..16]
                                };
                                for j in 0..np {
                                    let cs = &cs[j];
                                    let mins = &cs.mins[ul * fmt.pairs..][..fmt.pairs];
                                    T::super_block(
                                        &mut total[i][j][r],
                                        &main[i][j][r],
                                        mins,
                                        sums,
                                        [&cs.d[ul], &cs.dm[ul]],
                                        a.d[row * nsb + u],
                                    );
                                }
                            }
                        }
                    }
                } else {
                    for (bl, blk) in blocks.clone().enumerate() {
                        four(tiles, fmt.signed, tiles_at(blk, 0), k, two, &mut c);
                        for i in 0..nr {
                            for r in 0..rows[i] {
                                let row = r0 + i * TM + r;
                                let (ad, s) = (a.d[row * nblk + blk], if fmt.pairs > 0 { a.s[row * nblk + blk] } else { 0.0 });
                                for j in 0..np {
                                    let offset = (fmt.pairs > 0).then(|| (&cs[j].dm[bl], s));
                                    T::block(&mut total[i][j][r], &c[i][j][r], &cs[j].d[bl], ad, offset);
                                }
                            }
                        }
                    }
                }
                for i in 0..nr {
                    for j in 0..np {
                        let (col0, cols) = ((p0 + j) * TN, TN.min(n - (p0 + j) * TN));
                        for (r, row) in total[i][j].iter().enumerate().take(rows[i]) {
                            // SAFETY: inside y; only this task writes these columns. The first
                            // chunk of K sets them (`y` may be uninitialized until then), the others
                            // add to them.
                            let dst = y.add((r0 + i * TM + r) * n + col0);
                            if k0 == 0 {
                                std::ptr::copy_nonoverlapping(row.as_ptr(), dst, cols);
                            } else {
                                std::slice::from_raw_parts_mut(dst, cols).iter_mut().zip(row).for_each(|(d, v)| *d += v);
                            }
                        }
                    }
                }
            }
        }
    }
    if configured != [0; 2] {
        tiles.release();
    }
}

/// A step's products into `c`: tiles of rows `a[i]` (`stride` bytes apart) times B tiles `b[j]`,
/// for the second row tile and the second column tile only where `two` says they exist; B's levels
/// `signed` or not. Every load and product is issued before the first store, so the four run back
/// to back.
#[inline(always)]
unsafe fn four<T: Tiles>(t: &mut T, signed: bool, [a, b]: [[*const u8; 2]; 2], stride: usize, two: [bool; 2], c: &mut Step<i32>) {
    if signed {
        four_of::<T, true>(t, a, stride, b, two, c)
    } else {
        four_of::<T, false>(t, a, stride, b, two, c)
    }
}

#[inline(always)]
unsafe fn four_of<T: Tiles, const SIGNED: bool>(
    t: &mut T,
    a: [*const u8; 2],
    stride: usize,
    b: [*const u8; 2],
    two: [bool; 2],
    c: &mut Step<i32>,
) {
    t.load::<{ A[0] }>(a[0], stride);
    t.load::<{ B[0] }>(b[0], B_ROW);
    t.zero::<{ C[0][0] }>();
    t.dot::<{ C[0][0] }, { A[0] }, { B[0] }, SIGNED>();
    if two[1] {
        t.load::<{ B[1] }>(b[1], B_ROW);
        t.zero::<{ C[0][1] }>();
        t.dot::<{ C[0][1] }, { A[0] }, { B[1] }, SIGNED>();
    }
    if two[0] {
        t.load::<{ A[1] }>(a[1], stride);
        t.zero::<{ C[1][0] }>();
        t.dot::<{ C[1][0] }, { A[1] }, { B[0] }, SIGNED>();
        if two[1] {
            t.zero::<{ C[1][1] }>();
            t.dot::<{ C[1][1] }, { A[1] }, { B[1] }, SIGNED>();
        }
    }
    t.store::<{ C[0][0] }>(c[0][0].as_mut_ptr());
    if two[1] {
        t.store::<{ C[0][1] }>(c[0][1].as_mut_ptr());
    }
    if two[0] {
        t.store::<{ C[1][0] }>(c[1][0].as_mut_ptr());
        if two[1] {
            t.store::<{ C[1][1] }>(c[1][1].as_mut_ptr());
        }
    }
}

/// A pair's per-column parameters over one chunk of K, gathered once for every tile of rows (zeros
/// for the columns of a group that does not exist).
#[derive(Default)]
struct Columns {
    /// K-quants: per block and tile operation, the columns' integer scales.
    scales: Vec<[i32; TN]>,
    /// Per super-block (K-quants) or block (older types): the multipliers of the sums and of the
    /// offsets (zeros where the type has none).
    d: Vec<[f32; TN]>,
    dm: Vec<[f32; TN]>,
    /// K-quants, per super-block and pair of offset coefficients: the two coefficients.
    mins: Vec<[[i32; TN]; 2]>,
}

impl Columns {
    fn gather(&mut self, w: &QWeight, p: usize, blocks: Range<usize>) {
        let fmt = w.fmt;
        let (nblk, nsb) = (w.k / QK, w.k / QK_K);
        let units = if fmt.super_blocks { blocks.start / 8..blocks.end / 8 } else { blocks.clone() };
        let per = if fmt.super_blocks { nsb } else { nblk };
        self.d.clear();
        self.dm.clear();
        self.scales.clear();
        self.mins.clear();
        self.d.extend(units.clone().map(|u| per_column(w, p, |g, j| w.d_at((g * per + u) * GROUP + j))));
        self.dm
            .extend(units.clone().map(|u| per_column(w, p, |g, j| if fmt.pairs > 0 { w.dm_at((g * per + u) * GROUP + j) } else { 0.0 })));
        if fmt.super_blocks {
            let halves = if fmt.half_scales { 2 } else { 1 };
            for blk in blocks {
                for h in 0..halves {
                    self.scales.push(per_column(w, p, |g, j| w.scale(g, blk, h, j)));
                }
            }
            for u in units {
                for q in 0..fmt.pairs {
                    self.mins.push([0, 1].map(|h| per_column(w, p, |g, j| w.min_pair(g, u, q, j)[h])));
                }
            }
        }
    }
}

/// `f(group, row)` for each of pair `p`'s 16 weight rows (a tile's columns): 0 where the pair's
/// second group does not exist.
fn per_column<V: Default>(w: &QWeight, p: usize, f: impl Fn(usize, usize) -> V) -> [V; TN] {
    std::array::from_fn(|i| {
        let g = 2 * p + i / GROUP;
        if g < w.groups {
            f(g, i % GROUP)
        } else {
            V::default()
        }
    })
}

/// Pair `p`'s levels of `blocks` as B tiles, one byte a level: block i's step s (values 4s..4s+3)
/// is row 8i + s, its first 32 bytes group 2p's 8 rows and the rest group 2p + 1's (zeros where
/// that group does not exist).
fn unpack(w: &QWeight, p: usize, blocks: Range<usize>, out: &mut [u8]) {
    for (i, blk) in blocks.enumerate() {
        for half in 0..2 {
            let g = 2 * p + half;
            for s in 0..QK / 4 {
                let dst = &mut out[(i * QK / 4 + s) * B_ROW + 32 * half..][..32];
                if g >= w.groups {
                    dst.fill(0);
                } else {
                    dst.copy_from_slice(&w.step(g, blk, s));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{matmul, random_product, Kernels, TYPES};
    use super::*;

    /// Shapes with partial row tiles, one row tile or both, odd groups, partial pairs, one chunk of
    /// K and several.
    const SHAPES: [(usize, usize, usize); 5] = [(4, 8, 256), (17, 13, 2304), (33, 40, 512), (16, 24, 4352), (45, 56, 2304)];

    /// The emulated tiles give the scalar kernel's values bit for bit, for every type: the product
    /// is right wherever the tiles do what the reference says they do.
    #[test]
    fn emulated_tiles_give_the_scalar_kernels_bits() {
        for dtype in TYPES {
            for (m, n, k) in SHAPES {
                let (w, a) = random_product(dtype, m, n, k);
                let mut want = vec![0f32; m * n];
                matmul(&a, &w, &mut want, 2, Kernels::Scalar);
                // Split for 2 threads (two pairs a task, here), and every pair in one task.
                for whole in [false, true] {
                    let mut got = vec![f32::NAN; m * n];
                    // SAFETY: `got` holds m × n values.
                    unsafe {
                        match whole {
                            false => split(&a, &w, got.as_mut_ptr(), 2, emu_task),
                            true => emu_task(&a, &w, got.as_mut_ptr(), 0..w.groups.div_ceil(2)),
                        }
                    }
                    for (i, (g, s)) in got.iter().zip(&want).enumerate() {
                        assert_eq!(g.to_bits(), s.to_bits(), "{dtype:?} {m}×{n}×{k} (one task: {whole}), output {i}: {g} against {s}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_variable_turns_the_tiles_off_unless_empty_or_0() {
        for (value, off) in [(None, false), (Some(""), false), (Some("0"), false), (Some("1"), true), (Some("yes"), true)] {
            assert_eq!(turned_off(value), off, "{OFF}={value:?}");
        }
    }

    /// The emulation's one instruction against a product worked by hand: signed rows times signed
    /// or unsigned levels, added to what C held.
    #[test]
    fn emulated_dot_is_the_references() {
        let mut e = Emu::default();
        unsafe {
            e.configure(&Config::new([2, 0], 8));
            let a: [i8; 16] = [1, -2, 3, -4, 5, 6, 7, 8, -1, -1, -1, -1, 2, 2, 2, 2];
            let mut b = [0u8; 2 * B_ROW];
            b[..4].copy_from_slice(&[1, 2, 3, 255]); // column 0, values 0..4
            b[B_ROW..B_ROW + 4].copy_from_slice(&[1, 1, 1, 1]); // column 0, values 4..8
            b[4..8].copy_from_slice(&[0, 0, 0, 1]); // column 1, values 0..4
            e.load::<{ A[0] }>(a.as_ptr() as *const u8, 8);
            e.load::<{ B[1] }>(b.as_ptr(), B_ROW);
            let mut c = [[0i32; TN]; TM];
            e.dot::<{ C[0][1] }, { A[0] }, { B[1] }, false>();
            e.store::<{ C[0][1] }>(c.as_mut_ptr());
            // Row 0: 1·1 − 2·2 + 3·3 − 4·255 + (5 + 6 + 7 + 8) = −988; row 1: −(1 + 2 + 3 + 255) + 8.
            assert_eq!((c[0][0], c[1][0], c[0][1], c[1][1]), (-988, -253, -4, -1));
            e.dot::<{ C[0][1] }, { A[0] }, { B[1] }, true>(); // 255 is −1 now, added to the sums held
            e.store::<{ C[0][1] }>(c.as_mut_ptr());
            assert_eq!((c[0][0], c[1][0]), (-988 + 1 - 4 + 9 + 4 + 26, -253 + (-1 - 2 - 3 + 1) + 8));
        }
    }

    /// [`Hw`]'s row operations in AVX-512 give the plain ones' bits (on any CPU with AVX-512, tiles
    /// or not), on random sums, scales and floats.
    #[test]
    fn row_operations_are_the_plain_ones() {
        if !(is_x86_feature_detected!("avx512f")) {
            eprintln!("AMX's row operations not tested: this CPU has no AVX-512");
            return;
        }
        #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
        unsafe fn on<T: Tiles>(x: &[i32], f: &[f32]) -> ([i32; TN], [f32; TN], [f32; TN], [f32; TN]) {
            let row = |o: usize| -> [i32; TN] { std::array::from_fn(|i| x[o + i]) };
            let rowf = |o: usize| -> [f32; TN] { std::array::from_fn(|i| f[o + i]) };
            let mut main = row(0);
            T::scale_add(&mut main, &row(16), &row(32));
            let mins = [[row(48), row(64)], [row(80), row(96)]];
            let sums: Vec<i16> = x[112..116].iter().map(|&v| v as i16).collect();
            let mut total = rowf(0);
            T::super_block(&mut total, &main, &mins, &sums, [&rowf(16), &rowf(32)], f[48]);
            let (mut plain, mut offset) = (rowf(64), rowf(64));
            T::block(&mut plain, &row(0), &rowf(80), f[96], None);
            T::block(&mut offset, &row(0), &rowf(80), f[96], Some((&rowf(16), f[97])));
            (main, total, plain, offset)
        }
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for _ in 0..200 {
            let x: Vec<i32> = (0..128).map(|_| (next() % 2001) as i32 - 1000).collect();
            let f: Vec<f32> = (0..128).map(|_| (next() % 1_000_001) as f32 * 1e-6 - 0.5).collect();
            let (hw, plain) = unsafe { (on::<Hw>(&x, &f), on::<Emu>(&x, &f)) };
            assert_eq!(hw.0, plain.0);
            for (a, b) in [(hw.1, plain.1), (hw.2, plain.2), (hw.3, plain.3)] {
                assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits));
            }
        }
    }

    /// Where the CPU has the tiles, they give their emulation's products for every type (the check
    /// [`ready`] makes covers three); elsewhere the log says why this did not run.
    #[test]
    fn the_tiles_give_their_emulations_products_here() {
        match status() {
            None => eprintln!("AMX not tested: this CPU has no AMX int8 tiles"),
            Some(Err(why)) => panic!("this CPU has AMX int8 tiles, but {why}"),
            Some(Ok(())) => {
                for dtype in TYPES {
                    for shape in SHAPES {
                        // SAFETY: the tiles can run (`status`).
                        unsafe { against_emulation(dtype, shape, Some(2)) }.unwrap();
                    }
                }
                eprintln!("AMX tiles: their products equal their emulation's, {} types × {} shapes", TYPES.len(), SHAPES.len());
            }
        }
    }
}
