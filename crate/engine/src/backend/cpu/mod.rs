//! The CPU backend: weight products on integer dot products (by default) or f32, attention tiled by
//! query block and head or, for a decoded token, per query row ([`attention`]), all on a rayon pool
//! of the requested size.
//!
//! - **Integer** ([`Precision::Int8`], the default): quantized weights are repacked at load and
//!   multiplied with activations rounded to 8 bits per block exactly as llama.cpp rounds them
//!   ([`qmatmul`]), so p(Yes) follows the reference and the products run on 8-bit dot products
//!   (AVX-512 VNNI, AVX-VNNI, AVX2, NEON dotprod, wasm simd128 / relaxed-simd).
//! - **f32** ([`Precision::F32`]): each product dequantizes the weight into f32 once and runs a tuned
//!   f32 GEMM (the `gemm` crate); activations are never rounded.
//!
//! F16, BF16 and F32 weights always take the f32 path.

mod attention;
#[cfg(target_arch = "wasm32")]
mod f32wasm;
pub mod qmatmul;
mod splits;
mod wide;

use std::sync::Arc;

use half::f16;
use rayon::prelude::*;

use super::optimes::{Op, OpTimer, OpTimes};
use super::policy::{self, visible_keys};
use super::{Activation, AttnLayout, AttnParams, Backend, Rope};
use crate::gguf::TensorInfo;
use crate::quant::{dequantize, GgmlType};
use crate::EngineError;
use qmatmul::{Kernels, QActs, QWeight};
use splits::Tasks;
use wide::wide;

/// Row-major f32 activations.
#[derive(Debug, Clone)]
pub struct Tensor {
    pub rows: usize,
    pub cols: usize,
    pub data: Vec<f32>,
}

impl Tensor {
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Tensor { rows, cols, data: vec![0.0; rows * cols] }
    }
    pub fn row(&self, r: usize) -> &[f32] {
        &self.data[r * self.cols..(r + 1) * self.cols]
    }
}

/// A weight as stored in the GGUF (for the f32 path and row lookups), repacked for the integer
/// kernels, or both (the embedding table, which is also looked up by row). Vectors (norms, biases)
/// are kept decoded.
pub struct Weight {
    pub dtype: GgmlType,
    pub rows: usize,
    pub cols: usize,
    bytes: Vec<u8>,
    decoded: Option<Vec<f32>>,
    q: Option<QWeight>,
}

impl Weight {
    fn row_bytes(&self) -> usize {
        self.dtype.row_bytes(self.cols)
    }
    fn dequant_rows(&self, r0: usize, r1: usize, out: &mut [f32]) {
        let rb = self.row_bytes();
        dequantize(self.dtype, &self.bytes[r0 * rb..r1 * rb], &mut out[..(r1 - r0) * self.cols]);
    }
    fn vector(&self) -> Result<&[f32], String> {
        self.decoded.as_deref().ok_or_else(|| format!("a {}×{} matrix given where a vector is needed", self.rows, self.cols))
    }
}

/// Keys and values are stored in f16, as llama.cpp's default KV cache does (half the memory, and the
/// same rounding as the reference).
pub struct Cache {
    k: Vec<f16>,
    v: Vec<f16>,
    len: usize,
    capacity: usize,
    kv_dim: usize,
}

/// How the CPU backend multiplies quantized weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// Activations rounded to 8 bits per block as llama.cpp does, integer dot products.
    #[default]
    Int8,
    /// Weights dequantized to f32, f32 GEMM, activations never rounded.
    F32,
}

pub struct Cpu {
    /// Our own pool of `threads` workers; `None` on wasm32, where the pool is rayon's global one
    /// (Web Workers started by the page when it is cross-origin isolated, else none: one thread).
    pool: Option<Arc<rayon::ThreadPool>>,
    threads: usize,
    precision: Precision,
    kernels: Kernels,
    /// A weight expanded to f32, reused between products.
    scratch: Vec<f32>,
    /// The first misuse, reported by the next fallible call (see [`Backend`]).
    misuse: Option<String>,
    /// Each operation's wall time, where asked for ([`Backend::time_ops`]).
    op_times: Option<Arc<OpTimes>>,
    /// The threads the work is split for, where not `threads` ([`Backend::time_splits`]).
    split_as: Option<usize>,
}

impl Cpu {
    /// A CPU backend on `threads` threads (0: one per core), integer products.
    pub fn new(threads: usize) -> Result<Self, EngineError> {
        Self::with_precision(threads, Precision::Int8)
    }

    /// The threads the products run on.
    pub fn threads(&self) -> usize {
        self.threads
    }

    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The products that run: "int8 avx2", "int8 wasm simd128", "f32", ….
    pub fn kernel_name(&self) -> &'static str {
        match self.precision {
            Precision::Int8 => qmatmul::kernel_name(self.kernels),
            Precision::F32 => "f32",
        }
    }

    /// A CPU backend on `threads` threads (0: one per core) with the given products.
    pub fn with_precision(threads: usize, precision: Precision) -> Result<Self, EngineError> {
        let (pool, threads) = if cfg!(target_arch = "wasm32") {
            // The page's worker pool (wasm-bindgen-rayon), when it started one.
            (None, rayon::current_num_threads())
        } else {
            let threads = if threads == 0 { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) } else { threads };
            match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
                Ok(p) => (Some(Arc::new(p)), threads),
                Err(_) => (None, 1),
            }
        };
        Ok(Cpu { pool, threads, precision, kernels: Kernels::Best, scratch: Vec::new(), misuse: None, op_times: None, split_as: None })
    }

    /// Use other integer kernels than the CPU's best: the scalar reference or a named SIMD set
    /// (tests, side-by-side benchmarks).
    pub fn with_kernels(mut self, kernels: Kernels) -> Self {
        self.kernels = kernels;
        self
    }

    /// Record a misuse (the first one is kept); `false` when there was one.
    fn ok(&mut self, checked: Result<(), String>) -> bool {
        match checked {
            Ok(()) => true,
            Err(m) => {
                self.misuse.get_or_insert(m);
                false
            }
        }
    }

    /// The recorded misuse as an error.
    fn check(&self) -> Result<(), EngineError> {
        match &self.misuse {
            Some(m) => Err(policy::misuse_error(m)),
            None => Ok(()),
        }
    }

    /// `x · Wᵀ (+ bias)`; an integer product rounds `x` into `rounded`, or uses what it holds
    /// when that was rounded for the same weight types ([`Backend::matmuls`]: one rounding for Q,
    /// K and V).
    fn matmul_sharing(&mut self, x: &Tensor, w: &Weight, bias: Option<&Weight>, rounded: &mut Option<QActs>) -> Tensor {
        let _t = self.timed(Op::Matmul);
        let (m, k, n) = (x.rows, x.cols, w.rows);
        let bias = match bias.map(Weight::vector).transpose() {
            Ok(b) => b,
            Err(msg) => {
                self.ok(Err(format!("matmul bias: {msg}")));
                return Tensor::zeros(m, n);
            }
        };
        if !self.ok(policy::check_matmul((x.rows, x.cols), (w.rows, w.cols))) {
            return Tensor::zeros(m, n);
        }
        if w.q.is_none() && w.bytes.is_empty() {
            self.ok(Err("matmul: a vector given where a matrix is needed".into()));
            return Tensor::zeros(m, n);
        }
        if let Some(q) = &w.q {
            let (threads, kernels) = (self.split_threads(), self.kernels);
            // Allocated by the thread that runs the forward, not in a task: glibc gives each thread
            // its own arena (the CLI keeps one), and outputs taken from the arena of whichever
            // worker ran a task, freed by another thread, raised the peak memory.
            let mut y = Tensor { rows: m, cols: n, data: Vec::with_capacity(m * n) };
            self.run(|| {
                let kind = q.act_kind();
                let a = match rounded {
                    Some(a) if a.kind == kind => a,
                    _ => rounded.insert(QActs::quantize(&x.data, m, k, kind)),
                };
                qmatmul::matmul_fill(a, q, &mut y.data, threads, kernels);
                add_bias(&mut y, bias);
            });
            return y;
        }
        let mut y = Tensor::zeros(m, n);
        let rb = w.row_bytes();
        if (1..=FEW_ROWS).contains(&m) {
            // A few rows (a generated token): one pass over the weight, each of its rows expanded
            // into a buffer that stays in the L1 cache and dotted with every activation row —
            // expanding all of it for a GEMM costs more than the products. The buffer is made once
            // per run of tasks, not per task (a whole vocabulary's head is thousands of tasks).
            let mut yt = vec![0f32; n * m];
            self.run(|| {
                yt.par_chunks_mut(16 * m).zip(w.bytes.par_chunks(16 * rb)).each_task_init(
                    1,
                    || vec![0f32; k],
                    |wrow, (out, wb)| {
                        wide!({
                            for (j, b) in wb.chunks_exact(rb).enumerate() {
                                dequantize(w.dtype, b, wrow);
                                for (r, xrow) in x.data.chunks_exact(k).enumerate() {
                                    out[j * m + r] = dot(wrow, xrow);
                                }
                            }
                        })
                    },
                );
            });
            for (r, yrow) in y.data.chunks_exact_mut(n).enumerate() {
                yrow.iter_mut().enumerate().for_each(|(j, v)| *v = yt[j * m + r]);
            }
            add_bias(&mut y, bias);
            return y;
        }
        // The weight is expanded to f32 once per product (in parallel, into a reused buffer), then
        // one multi-threaded GEMM does the rest.
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.resize(n * k, 0.0);
        let threads = self.split_threads();
        self.run(|| {
            scratch.par_chunks_mut(k * 16).enumerate().each_task(1, |(c, out)| {
                let r0 = c * 16;
                let rows = out.len() / k;
                wide!({ dequantize(w.dtype, &w.bytes[r0 * rb..(r0 + rows) * rb], out) });
            });
            // SAFETY: y is m×n, x is m×k, scratch is n×k, all row-major and non-overlapping.
            unsafe { gemm_nt(m, n, k, &x.data, &scratch, y.data.as_mut_ptr(), 0, n, threads) };
            add_bias(&mut y, bias);
        });
        self.scratch = scratch;
        y
    }

    /// The threads the products split their work for.
    fn split_threads(&self) -> usize {
        self.split_as.unwrap_or(self.threads)
    }

    /// A timer for one call of `op` (`None` unless [`Backend::time_ops`] was asked).
    fn timed(&self, op: Op) -> Option<OpTimer> {
        self.op_times.as_ref().map(|t| t.start(op))
    }

    /// Run `f` on our pool (its parallel iterators use the pool's threads).
    fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }
}

/// What [`Backend::enter`] hands to a pool thread, whose caller vouches for it (see there).
struct Handed<T>(T);
// SAFETY: the value is used by one thread at a time: the pool's, while the caller waits.
unsafe impl<T> Send for Handed<T> {}

/// A new vector of `len` values that one parallel step writes piece by piece, each task zeroing
/// its own piece first (in its caches) instead of the calling thread zeroing the whole vector
/// before the step: a serial pass over memory that, on many threads, every other thread waits for
/// (`bench --splits` found it in the norms, the additions and the rounding of activations).
struct Fresh<T> {
    v: Vec<T>,
    len: usize,
    zeroed: std::sync::atomic::AtomicUsize,
}

/// One piece of a [`Fresh`] vector, to be zeroed by the task that writes it.
struct Piece<'a, T> {
    values: &'a mut [std::mem::MaybeUninit<T>],
    zeroed: &'a std::sync::atomic::AtomicUsize,
}

impl<T: Copy + Default + Send + Sync> Fresh<T> {
    fn new(len: usize) -> Self {
        Fresh { v: Vec::with_capacity(len), len, zeroed: Default::default() }
    }

    /// The vector in pieces of `chunk` values (the last may be shorter), in order.
    fn pieces(&mut self, chunk: usize) -> impl IndexedParallelIterator<Item = Piece<'_, T>> + '_ {
        let zeroed = &self.zeroed;
        self.v.spare_capacity_mut()[..self.len].par_chunks_mut(chunk).map(move |values| Piece { values, zeroed })
    }

    /// The vector, every piece of which was zeroed and written; panics where one was not.
    fn finish(mut self) -> Vec<T> {
        assert_eq!(*self.zeroed.get_mut(), self.len, "a piece of a new vector was left unwritten");
        // SAFETY: the pieces cover the first `len` values once each, and every one was zeroed
        // (counted above), so all of them are initialized.
        unsafe { self.v.set_len(self.len) };
        self.v
    }
}

impl<'a, T: Copy + Default> Piece<'a, T> {
    fn zeroed(self) -> &'a mut [T] {
        self.values.fill(std::mem::MaybeUninit::new(T::default()));
        self.zeroed.fetch_add(self.values.len(), std::sync::atomic::Ordering::Relaxed);
        // SAFETY: every value was just initialized; MaybeUninit<T> has T's layout.
        unsafe { &mut *(self.values as *mut [std::mem::MaybeUninit<T>] as *mut [T]) }
    }
}

/// A raw pointer that may cross threads: each task writes a disjoint region.
#[derive(Clone, Copy)]
struct SendPtr(*mut f32);
unsafe impl Send for SendPtr {}
unsafe impl Sync for SendPtr {}

impl SendPtr {
    /// The pointer. A closure that calls this holds the whole `SendPtr` (one that reads `.0` would
    /// capture the bare pointer alone, which may not cross threads).
    fn get(self) -> *mut f32 {
        self.0
    }
}

/// `y[m, n] = x[m, k] · w[n, k]ᵀ` for f32 `w` rows (row stride k), written into `y` at column `col0`
/// with row stride `ldy`.
///
/// # Safety
/// `y` must point to `m` rows of at least `col0 + n` columns with row stride `ldy`, not aliased by
/// other writers of those columns.
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_nt(m: usize, n: usize, k: usize, x: &[f32], w: &[f32], y: *mut f32, col0: usize, ldy: usize, threads: usize) {
    #[cfg(target_arch = "wasm32")]
    if f32wasm::takes_nt(k) {
        return f32wasm::nt(m, n, k, x, w, y, col0, ldy, threads);
    }
    gemm::gemm(
        m,
        n,
        k,
        y.add(col0),
        1,
        ldy as isize,
        false,
        x.as_ptr(),
        1,
        k as isize,
        w.as_ptr(),
        k as isize,
        1,
        0.0f32,
        1.0f32,
        false,
        false,
        false,
        if threads > 1 { gemm::Parallelism::Rayon(threads) } else { gemm::Parallelism::None },
    );
}

/// `y[m, n] = a[m, k] · b[k, n]`, row-major with row strides `lda`, `ldb` and `ldy`, on one
/// thread; `y` is written, whatever it held.
///
/// # Safety
/// The pointers hold what the shapes and strides say; `y` is not aliased meanwhile.
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_nn(m: usize, n: usize, k: usize, a: *const f32, lda: usize, b: *const f32, ldb: usize, y: *mut f32, ldy: usize) {
    #[cfg(target_arch = "wasm32")]
    if f32wasm::takes_nn(n) {
        return f32wasm::nn(m, n, k, a, lda, b, ldb, y, ldy);
    }
    gemm::gemm(
        m,
        n,
        k,
        y,
        1,
        ldy as isize,
        false,
        a,
        1,
        lda as isize,
        b,
        1,
        ldb as isize,
        0.0f32,
        1.0f32,
        false,
        false,
        false,
        gemm::Parallelism::None,
    );
}

/// The f32 products this build runs ([`f32wasm`]'s tiles in WebAssembly, the `gemm` crate
/// elsewhere) against an f64 reference, on shapes with partial tiles, panels and K chunks: the
/// browser's way to check them (beside [`qmatmul::self_test`]).
pub fn f32_self_test() -> Vec<qmatmul::SelfTest> {
    let mut out = Vec::new();
    for &(m, n, k) in &[(1, 8, 8), (5, 16, 64), (6, 56, 520), (33, 64, 1536)] {
        let x = qmatmul::random_acts(m, k, k as u64);
        let w = qmatmul::random_acts(n, k, (n + 1) as u64);
        let b = qmatmul::random_acts(k, n, (n + 2) as u64);
        let (mut nt, mut nn) = (vec![f32::NAN; m * n], vec![f32::NAN; m * n]);
        // SAFETY: every buffer holds what its shape says.
        unsafe {
            gemm_nt(m, n, k, &x, &w, nt.as_mut_ptr(), 0, n, 2);
            gemm_nn(m, n, k, x.as_ptr(), k, b.as_ptr(), n, nn.as_mut_ptr(), n);
        }
        let exact =
            |f: &dyn Fn(usize, usize, usize) -> f64| -> Vec<f64> { (0..m * n).map(|e| (0..k).map(|t| f(e / n, e % n, t)).sum()).collect() };
        let want_nt = exact(&|i, j, t| x[i * k + t] as f64 * w[j * k + t] as f64);
        let want_nn = exact(&|i, j, t| x[i * k + t] as f64 * b[t * n + j] as f64);
        for (kernel, got, want) in [("f32 x·wᵀ", &nt, &want_nt), ("f32 a·b", &nn, &want_nn)] {
            out.push(qmatmul::SelfTest::measure(kernel, "F32".into(), [m, n, k], got, want.iter().copied()));
        }
    }
    out
}

/// Activation rows up to which a float weight's product takes dot products row by row.
const FEW_ROWS: usize = 4;

/// Σ a·b in 16 independent sums (vectorized: a float sum in one order would not be).
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 16];
    let (ac, bc) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail: f32 = ac.remainder().iter().zip(bc.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ac.zip(bc) {
        let (x, y): (&[f32; 16], &[f32; 16]) = (x.try_into().unwrap(), y.try_into().unwrap());
        for i in 0..16 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// Rows per parallel task of the element-wise operations: enough work to pay for a task.
const ROWS_PER_TASK: usize = 8;

fn add_bias(y: &mut Tensor, bias: Option<&[f32]>) {
    if let Some(b) = bias {
        y.data.par_chunks_mut(y.cols).each_task(ROWS_PER_TASK, |row| {
            for (v, bi) in row.iter_mut().zip(b) {
                *v += bi;
            }
        });
    }
}

/// Above this many ids, logits are one matrix product with the whole head.
const FULL_LOGITS_IDS: usize = 1024;

impl Cpu {
    /// Logits of the vocabulary rows `ids`. Many ids (a whole vocabulary: the perplexity score): the
    /// threaded matrix product with the whole head, columns picked. A few (Yes/No, digits): integer
    /// products of those rows when the head has an integer form (as llama.cpp's output matmul), else
    /// the f32 rows dotted with `x`.
    fn cpu_logits(&mut self, x: &Tensor, head: &Weight, ids: &[u32], softcap: Option<f32>) -> Result<Vec<Vec<f32>>, EngineError> {
        policy::check_ids(ids, head.rows, "the output head")?;
        if x.cols != head.cols {
            return Err(policy::misuse_error(&format!("logits: hidden states have {} columns, the head {}", x.cols, head.cols)));
        }
        if head.q.is_none() && head.bytes.is_empty() {
            return Err(policy::misuse_error("logits: the head is a vector"));
        }
        let cap = |l: f32| softcap.map_or(l, |c| c * (l / c).tanh());
        if ids.len() > FULL_LOGITS_IDS {
            let all = self.matmul(x, head, None);
            // The whole vocabulary in order (a generated token's): the product's rows as they are,
            // not gathered id by id, a serial step of every decoded token (`bench --splits`).
            if ids.len() == head.rows && ids.iter().enumerate().all(|(i, &id)| id as usize == i) {
                let mut rows: Vec<Vec<f32>> = match x.rows {
                    1 => vec![all.data],
                    _ => all.data.chunks_exact(head.rows).map(<[f32]>::to_vec).collect(),
                };
                if softcap.is_some() {
                    rows.iter_mut().flatten().for_each(|l| *l = cap(*l));
                }
                return Ok(rows);
            }
            return Ok((0..x.rows).map(|r| ids.iter().map(|&i| cap(all.row(r)[i as usize])).collect()).collect());
        }
        let _t = self.timed(Op::Logits);
        Ok(few_logits(x, head, ids, cap))
    }
}

fn few_logits(x: &Tensor, head: &Weight, ids: &[u32], cap: impl Fn(f32) -> f32) -> Vec<Vec<f32>> {
    if let Some(q) = &head.q {
        let a = QActs::quantize(&x.data, x.rows, x.cols, q.act_kind());
        let ids: Vec<usize> = ids.iter().map(|&i| i as usize).collect();
        return qmatmul::dot_rows(&a, q, &ids).into_iter().map(|row| row.into_iter().map(&cap).collect()).collect();
    }
    let mut rows = vec![0f32; ids.len() * head.cols];
    for (i, &id) in ids.iter().enumerate() {
        head.dequant_rows(id as usize, id as usize + 1, &mut rows[i * head.cols..(i + 1) * head.cols]);
    }
    (0..x.rows)
        .map(|r| {
            let xr = x.row(r);
            rows.chunks(head.cols).map(|w| cap(xr.iter().zip(w).map(|(a, b)| a * b).sum())).collect()
        })
        .collect()
}

/// e^x with relative error < 5e-7 over the whole f32 range: range reduction to 2^k · e^r with
/// |r| ≤ ln2/2 and a degree-6 polynomial. Unlike libm's `expf` it inlines and vectorizes (softmax,
/// SiLU and GELU spend most of their time here otherwise).
///
/// Only comparisons, float and integer bit operations: `clamp` and an `as i32` cast kept LLVM from
/// vectorizing the loops that call it (SiLU ran one value at a time), so the bounds are two selects
/// (a NaN passes through them, and stays NaN) and 2^k is built from k's bits with the same rounding
/// trick.
#[inline(always)]
#[allow(clippy::manual_clamp)] // on purpose: see above
fn fast_exp(x: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0; // 1.5·2^23
    let x = if x < -87.0 {
        -87.0
    } else if x > 88.0 {
        88.0
    } else {
        x
    };
    // Round to nearest without a libm call: adding 1.5·2^23 pushes the fraction out of the mantissa.
    let k = (x * std::f32::consts::LOG2_E + ROUND) - ROUND;
    // Cody–Waite: ln2 split in two so that k·ln2 is exact enough for large k.
    let r = (x - k * 0.693_359_4) - k * -2.121_944_4e-4;
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    // k + 127 ∈ [1, 254] is an integer: added to 1.5·2^23 it is the low mantissa bits.
    let biased = (k + (127.0 + ROUND)).to_bits() - ROUND.to_bits();
    p * f32::from_bits(biased << 23)
}

/// `x` rounded to the nearest f16 value (ties to even), as an f32: `f16::from_f32(x).to_f32()`
/// (a NaN stays a NaN), in plain float and integer operations that vectorize on every target —
/// wasm has no f16 conversions, and the `half` crate's portable one ran one value at a time (the
/// tab's attention spent most of its softmax time in it, seen with `perf`).
#[inline(always)]
fn round_f16(x: f32) -> f32 {
    let (bits, sign) = (x.to_bits() & 0x7fff_ffff, x.to_bits() & 0x8000_0000);
    // Normal f16 range: drop 13 mantissa bits, rounding to nearest even; from 65520 up, infinity.
    let rounded = (bits + 0x0fff + ((bits >> 13) & 1)) & !0x1fff;
    let normal = if rounded >= 0x4780_0000 { 0x7f80_0000 } else { rounded };
    // Below 2^-14 f16 is subnormal, a multiple of 2^-24: adding 0.5 (whose ulp that is) rounds
    // to it, ties to even; subtracting 0.5 is exact.
    let tiny = ((f32::from_bits(bits) + 0.5) - 0.5).to_bits();
    let out = if bits > 0x7f80_0000 {
        bits | 0x0040_0000
    } else if bits < 0x3880_0000 {
        tiny
    } else {
        normal
    };
    f32::from_bits(out | sign)
}

/// Round every value to f16 precision ([`round_f16`]).
#[inline(always)]
fn round_f16_slice(xs: &mut [f32]) {
    xs.iter_mut().for_each(|x| *x = round_f16(*x));
}

/// GELU with the tanh approximation, tanh(y) = 1 − 2/(e^{2y} + 1).
#[inline(always)]
fn gelu_tanh(x: f32) -> f32 {
    const SQRT_2_OVER_PI: f32 = 0.797_884_6;
    let y = SQRT_2_OVER_PI * x * (1.0 + 0.044715 * x * x);
    let t = 1.0 - 2.0 / (fast_exp(2.0 * y) + 1.0);
    0.5 * x * (1.0 + t)
}

#[inline(always)]
fn silu(x: f32) -> f32 {
    x / (1.0 + fast_exp(-x))
}

/// `u = u · f(g)` in place, eight lanes at a time, the activation chosen outside the loop, so
/// that it vectorizes with [`fast_exp`].
#[inline(always)]
fn gated(u: &mut [f32], g: &[f32], f: impl Fn(f32) -> f32) {
    let n = u.len() / 8 * 8;
    for (u, g) in u[..n].chunks_exact_mut(8).zip(g[..n].chunks_exact(8)) {
        for k in 0..8 {
            u[k] *= f(g[k]);
        }
    }
    for i in n..u.len() {
        u[i] *= f(g[i]);
    }
}

/// The largest value, with eight lanes so that it vectorizes.
#[inline(always)]
fn max_of(xs: &[f32]) -> f32 {
    max_by_lanes(xs, f32::NEG_INFINITY, |v| v)
}

/// The largest `f(x)`, at least `floor` (NaNs are passed over: a comparison with one is false),
/// in eight lanes so that it vectorizes.
#[inline(always)]
fn max_by_lanes(xs: &[f32], floor: f32, f: impl Fn(f32) -> f32) -> f32 {
    let mut acc = [floor; 8];
    let chunks = xs.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for k in 0..8 {
            let v = f(c[k]);
            acc[k] = if v > acc[k] { v } else { acc[k] };
        }
    }
    rest.iter().map(|&v| f(v)).chain(acc).fold(floor, |m, v| if v > m { v } else { m })
}

/// Replace each x by e^(x − max) and return their sum. Two plain loops (a map, then eight-lane
/// sums): with both in one loop LLVM left `fast_exp` scalar (seen in `perf annotate`).
#[inline(always)]
fn exp_sum(xs: &mut [f32], max: f32) -> f32 {
    for v in xs.iter_mut() {
        *v = fast_exp(*v - max);
    }
    let mut acc = [0f32; 8];
    let chunks = xs.chunks_exact(8);
    let rest: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for k in 0..8 {
            acc[k] += c[k];
        }
    }
    acc.iter().sum::<f32>() + rest
}

/// Sum of squares with eight independent accumulators, so that it vectorizes.
#[inline(always)]
fn sum_squares(xs: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let chunks = xs.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for k in 0..8 {
            acc[k] += c[k] * c[k];
        }
    }
    acc.iter().sum::<f32>() + rest.iter().map(|v| v * v).sum::<f32>()
}

impl Backend for Cpu {
    type Tensor = Tensor;
    type Weight = Weight;
    type Cache = Cache;

    unsafe fn enter<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let pool = self.pool.clone();
        // Already on a pool thread, or no other thread to start.
        let here = match &pool {
            Some(p) => p.current_thread_index().is_some(),
            None => self.threads <= 1 || rayon::current_thread_index().is_some(),
        };
        if here {
            return f(self);
        }
        let job = Handed((self, f));
        let run = move || {
            // The whole `job` moves in (a closure would otherwise capture its unwrapped fields).
            let job = job;
            let (b, f) = job.0;
            Handed(f(b))
        };
        match pool {
            Some(p) => p.install(run).0,
            // wasm32: the page's pool, which a scope's body runs on.
            None => rayon::scope(|_| run()).0,
        }
    }

    fn time_ops(&mut self) -> Option<Arc<OpTimes>> {
        Some(Arc::clone(self.op_times.get_or_insert_with(Default::default)))
    }

    fn time_splits(&mut self, split_as: Option<usize>) -> Result<Arc<OpTimes>, String> {
        if let Some(p) = split_as {
            if self.threads != 1 || p == 0 {
                return Err(format!("a replay of the work split as for {p} threads runs on one thread; this backend has {}", self.threads));
            }
            self.split_as = Some(p);
        }
        let times = self.time_ops().expect("the CPU times its operations");
        splits::start(Arc::clone(&times), split_as.map_or(splits::Replay::Pool, splits::Replay::As));
        Ok(times)
    }

    fn describe(&self) -> String {
        let split = self.split_as.map(|p| format!(", the work split as for {p}")).unwrap_or_default();
        format!("cpu ({} thread{}{split}, {})", self.threads, if self.threads == 1 { "" } else { "s" }, self.kernel_name())
    }

    fn load(&mut self, info: &TensorInfo, bytes: &[u8]) -> Result<Weight, EngineError> {
        self.check()?;
        let (rows, cols) = info.rows_cols();
        policy::check_tensor_bytes(info, bytes)?;
        if info.dims.len() == 1 {
            let mut v = vec![0.0; cols];
            dequantize(info.dtype, bytes, &mut v);
            return Ok(Weight { dtype: info.dtype, rows, cols, bytes: Vec::new(), decoded: Some(v), q: None });
        }
        let q = match self.precision {
            Precision::Int8 => self.run(|| QWeight::from_gguf(info.dtype, rows, cols, bytes)),
            Precision::F32 => None,
        };
        // The GGUF bytes are kept where there is no integer form.
        let keep_bytes = q.is_none();
        Ok(Weight { dtype: info.dtype, rows, cols, bytes: if keep_bytes { bytes.to_vec() } else { Vec::new() }, decoded: None, q })
    }

    /// The GGUF bytes, whose rows are dequantized as they are looked up; the integer form only where
    /// the table is also the head (a table only looked up would hold it for nothing, as large again:
    /// 153 MB for the 0.5B's).
    fn load_table(&mut self, info: &TensorInfo, bytes: &[u8], head: bool) -> Result<Weight, EngineError> {
        let mut w = if head {
            self.load(info, bytes)?
        } else {
            self.check()?;
            policy::check_tensor_bytes(info, bytes)?;
            let (rows, cols) = info.rows_cols();
            Weight { dtype: info.dtype, rows, cols, bytes: Vec::new(), decoded: None, q: None }
        };
        if w.bytes.is_empty() {
            w.bytes = bytes.to_vec();
        }
        Ok(w)
    }

    fn new_cache(&mut self, capacity: usize, kv_dim: usize) -> Result<Cache, EngineError> {
        self.check()?;
        let n = policy::cache_values(capacity, kv_dim)?;
        Ok(Cache { k: vec![f16::ZERO; n], v: vec![f16::ZERO; n], len: 0, capacity, kv_dim })
    }

    fn truncate_cache(&mut self, cache: &mut Cache, len: usize) {
        cache.len = cache.len.min(len);
    }

    fn embed(&mut self, table: &Weight, tokens: &[u32], scale: f32) -> Result<Tensor, EngineError> {
        let _t = self.timed(Op::Embed);
        self.check()?;
        policy::check_ids(tokens, table.rows, "the embedding table")?;
        if table.bytes.is_empty() {
            return Err(policy::misuse_error("embed: the table has no rows to look up"));
        }
        let mut t = Tensor::zeros(tokens.len(), table.cols);
        for (i, &tok) in tokens.iter().enumerate() {
            let row = &mut t.data[i * table.cols..(i + 1) * table.cols];
            table.dequant_rows(tok as usize, tok as usize + 1, row);
            if scale != 1.0 {
                row.iter_mut().for_each(|v| *v *= scale);
            }
        }
        Ok(t)
    }

    fn rms_norm(&mut self, x: &Tensor, w: &Weight, eps: f32, group: Option<usize>) -> Tensor {
        let _t = self.timed(Op::RmsNorm);
        let checked = policy::check_rms_norm((x.rows, x.cols), group, w.cols)
            .and_then(|g| Ok((g, w.vector().map_err(|m| format!("rms_norm: {m}"))?)));
        let (g, w) = match checked {
            Ok(gw) => gw,
            Err(m) => {
                self.ok(Err(m));
                return Tensor::zeros(x.rows, x.cols);
            }
        };
        let mut out = Fresh::new(x.data.len());
        self.run(|| {
            out.pieces(g).zip(x.data.par_chunks(g)).each_task(ROWS_PER_TASK, |(o, x)| {
                let o = o.zeroed();
                wide!({
                    let ss = sum_squares(x) / g as f32;
                    let inv = 1.0 / (ss + eps).sqrt();
                    for ((o, v), wi) in o.iter_mut().zip(x).zip(w) {
                        *o = v * (inv * wi);
                    }
                })
            })
        });
        Tensor { rows: x.rows, cols: x.cols, data: out.finish() }
    }

    fn matmul(&mut self, x: &Tensor, w: &Weight, bias: Option<&Weight>) -> Tensor {
        self.matmul_sharing(x, w, bias, &mut None)
    }

    fn matmuls<const N: usize>(&mut self, x: &Tensor, ws: [(&Weight, Option<&Weight>); N]) -> [Tensor; N] {
        let mut rounded = None;
        ws.map(|(w, bias)| self.matmul_sharing(x, w, bias, &mut rounded))
    }

    fn rope(&mut self, x: &mut Tensor, positions: &[u32], head_dim: usize, rope: &Rope) {
        let _t = self.timed(Op::Rope);
        if !self.ok(policy::check_rope((x.rows, x.cols), positions.len(), head_dim, rope)) {
            return;
        }
        let half = head_dim / 2;
        // Each row's (cos, sin) computed by its task: the whole table, first on the calling
        // thread, was a serial step (`bench --splits`).
        let inv_freq = rope.inv_freq(head_dim);
        let cols = x.cols;
        // A task a row, or where the rows are fewer than the threads (a decoded token) a few heads
        // of one, as many as the threads want: each pair of values is rotated on its own, so any
        // split gives the same bits.
        let (heads, want) = (cols / head_dim, self.split_threads().div_ceil(x.rows.max(1)));
        let per = (1..=heads).find(|d| heads % d == 0 && heads / d <= want).unwrap_or(heads);
        let piece = (per * head_dim).max(1);
        self.run(|| {
            x.data.par_chunks_mut(piece).enumerate().each_task_init(
                1,
                || vec![[0f32; 2]; half],
                |cs, (i, row)| {
                    rope.angles(positions[i * piece / cols], &inv_freq, cs);
                    wide!({
                        for head in row.chunks_mut(head_dim) {
                            for (i, &[c, s]) in cs.iter().enumerate() {
                                let (a, b) = rope.pair(i, half);
                                let (x0, x1) = (head[a], head[b]);
                                head[a] = x0 * c - x1 * s;
                                head[b] = x0 * s + x1 * c;
                            }
                        }
                    })
                },
            )
        });
    }

    fn add(&mut self, x: &Tensor, y: &Tensor) -> Tensor {
        let _t = self.timed(Op::Add);
        if !self.ok(policy::check_same_shape("add", (x.rows, x.cols), (y.rows, y.cols))) {
            return Tensor::zeros(x.rows, x.cols);
        }
        let mut out = Fresh::new(x.data.len());
        self.run(|| {
            out.pieces(4096).zip(x.data.par_chunks(4096).zip(y.data.par_chunks(4096))).each_task(1, |(o, (x, y))| {
                let o = o.zeroed();
                wide!({
                    for ((o, a), b) in o.iter_mut().zip(x).zip(y) {
                        *o = a + b;
                    }
                })
            })
        });
        Tensor { rows: x.rows, cols: x.cols, data: out.finish() }
    }

    fn gated_activation(&mut self, gate: &Tensor, mut up: Tensor, act: Activation) -> Tensor {
        let _t = self.timed(Op::GatedActivation);
        if !self.ok(policy::check_same_shape("gated_activation", (gate.rows, gate.cols), (up.rows, up.cols))) {
            return up;
        }
        // Pieces of 4096 values, smaller where that leaves threads idle (a decoded token's 4864
        // values: 2 pieces on 2 threads, 10 on 16): each value is its own, so any split gives the
        // same bits.
        let piece = up.data.len().div_ceil(self.split_threads()).clamp(512, 4096).next_multiple_of(64);
        self.run(|| {
            up.data.par_chunks_mut(piece).zip(gate.data.par_chunks(piece)).each_task(1, |(u, g)| {
                wide!({
                    match act {
                        Activation::Silu => gated(u, g, silu),
                        Activation::GeluTanh => gated(u, g, gelu_tanh),
                    }
                })
            })
        });
        up
    }

    fn select_rows(&mut self, x: &Tensor, rows: &[usize]) -> Tensor {
        let _t = self.timed(Op::SelectRows);
        let mut out = Tensor::zeros(rows.len(), x.cols);
        if !self.ok(policy::check_select_rows((x.rows, x.cols), rows)) {
            return out;
        }
        for (i, &r) in rows.iter().enumerate() {
            out.data[i * x.cols..(i + 1) * x.cols].copy_from_slice(x.row(r));
        }
        out
    }

    fn append_cache(&mut self, cache: &mut Cache, k: &Tensor, v: &Tensor) -> Result<(), EngineError> {
        let _t = self.timed(Op::AppendCache);
        self.check()?;
        policy::check_append(cache.len, cache.capacity, cache.kv_dim, (k.rows, k.cols), (v.rows, v.cols))?;
        let (a, b) = (cache.len * cache.kv_dim, (cache.len + k.rows) * cache.kv_dim);
        cache.k[a..b].iter_mut().zip(&k.data).for_each(|(c, x)| *c = f16::from_f32(*x));
        cache.v[a..b].iter_mut().zip(&v.data).for_each(|(c, x)| *c = f16::from_f32(*x));
        cache.len += k.rows;
        Ok(())
    }

    fn attention(&mut self, q: &Tensor, k: &Tensor, v: &Tensor, cache: &Cache, layout: &AttnLayout, p: &AttnParams) -> Tensor {
        let _t = self.timed(Op::Attention);
        let nq = layout.query_rows.len();
        if !self.ok(policy::check_attention((q.rows, q.cols), (k.rows, k.cols), (v.rows, v.cols), cache.kv_dim, layout, p)) {
            return Tensor::zeros(nq, p.n_head * p.head_dim);
        }
        let visible = visible_keys(layout, p.window, cache.len);
        self.run(|| {
            if nq <= attention::FEW_QUERIES {
                attention::per_query(q, k, v, cache, &visible, p, self.split_threads())
            } else {
                attention::tiled(q, k, v, cache, &visible, p)
            }
        })
    }

    fn logits(
        &mut self,
        x: &Tensor,
        head: &Weight,
        ids: &[u32],
        softcap: Option<f32>,
    ) -> impl std::future::Future<Output = Result<Vec<Vec<f32>>, EngineError>> {
        std::future::ready(self.check().and_then(|()| self.cpu_logits(x, head, ids, softcap)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The f32 products (x·wᵀ for the weights and the attention's scores, a·b for its values) equal
    /// the f64 sums to f32 accuracy on shapes with partial tiles.
    #[test]
    fn f32_products_match_f64() {
        let results = f32_self_test();
        assert_eq!(results.len(), 8);
        for r in results {
            assert!(r.max_rel_error <= 1e-5, "{r:?}");
        }
    }

    /// Float weights, and every weight on the f32 path, give the same products with one to five
    /// activation rows (the row-by-row dot products up to [`FEW_ROWS`], one GEMM above) as an f64
    /// sum over the dequantized weight; widths that are and are not a multiple of 16.
    #[test]
    fn float_products_of_few_and_many_rows_match_f64_sums() {
        let cases = [(GgmlType::F32, 40), (GgmlType::F16, 256), (GgmlType::BF16, 72), (GgmlType::Q8_0, 96), (GgmlType::Q4K, 256)];
        for (dtype, k) in cases {
            let n = 37;
            let bytes = qmatmul::random_weight(dtype, n, k, 5);
            let mut wf = vec![0f32; n * k];
            dequantize(dtype, &bytes, &mut wf);
            let precision = if matches!(dtype, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16) { Precision::Int8 } else { Precision::F32 };
            let mut cpu = Cpu::with_precision(2, precision).unwrap();
            let info = TensorInfo { name: "w".into(), dims: vec![k as u64, n as u64], dtype, offset: 0, n_bytes: bytes.len() as u64 };
            let w = cpu.load(&info, &bytes).unwrap();
            for m in 1..=FEW_ROWS + 1 {
                let x = qmatmul::random_acts(m, k, m as u64);
                let y = cpu.matmul(&Tensor { rows: m, cols: k, data: x.clone() }, &w, None);
                for r in 0..m {
                    for j in 0..n {
                        let want: f64 = (0..k).map(|i| x[r * k + i] as f64 * wf[j * k + i] as f64).sum();
                        let got = y.data[r * n + j] as f64;
                        assert!((got - want).abs() <= 1e-4 * (1.0 + want.abs()), "{dtype:?} m={m} ({r},{j}): {got} against {want}");
                    }
                }
            }
        }
    }

    /// A table only looked up by row (the embeddings of a model with its own output head) keeps its
    /// GGUF bytes and no integer form, and looks up the rows a tied table does, bit for bit; a tied
    /// table keeps both, for its products as the head. The name does not decide.
    #[test]
    fn a_lookup_table_keeps_no_integer_form_and_the_same_rows() {
        let (n, k) = (37, 256);
        for dtype in [GgmlType::Q5_0, GgmlType::Q4K, GgmlType::Q8_0] {
            let bytes = qmatmul::random_weight(dtype, n, k, 11);
            let info = TensorInfo { name: "t".into(), dims: vec![k as u64, n as u64], dtype, offset: 0, n_bytes: bytes.len() as u64 };
            let mut cpu = Cpu::new(2).unwrap();
            let (tied, lookup) = (cpu.load_table(&info, &bytes, true).unwrap(), cpu.load_table(&info, &bytes, false).unwrap());
            assert!(tied.q.is_some() && !tied.bytes.is_empty(), "{dtype:?}: a tied table is also the head");
            assert!(lookup.q.is_none() && lookup.bytes == bytes, "{dtype:?}: a lookup table keeps its bytes alone");
            let tokens = [0, 36, 5, 5];
            let rows = |w: &Weight, cpu: &mut Cpu| cpu.embed(w, &tokens, 0.5).unwrap().data.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(rows(&tied, &mut cpu), rows(&lookup, &mut cpu), "{dtype:?}");
        }
    }

    /// Every step `wide!` compiles twice gives the same bits in both copies (AVX2 where this CPU has
    /// it, and as built): norms, RoPE, the three activation roundings with integer products, the
    /// attention over a cached prefix and a new chunk (both paths), the residual add, both gated
    /// activations and a float weight's few-rows product. Activations with ties of ±max, zeros and large values.
    #[test]
    fn same_values_on_every_width() {
        let (n, k, hd) = (48, 256, 16);
        let mut x = qmatmul::random_acts(9, k, 3);
        x[5] = -40.0; // a tie of magnitudes: the first of them sets the sign of a Q8_K scale
        x[17] = 40.0;
        x[k..2 * k].fill(0.0);
        let run = |narrow: bool| -> Vec<Vec<u32>> {
            wide::set_narrow(narrow);
            let mut cpu = Cpu::new(2).unwrap();
            let mut load = |dtype: GgmlType, rows: usize, seed| {
                let bytes = qmatmul::random_weight(dtype, rows, k, seed);
                let dims = if rows == 1 { vec![k as u64] } else { vec![k as u64, rows as u64] };
                cpu.load(&TensorInfo { name: "w".into(), dims, dtype, offset: 0, n_bytes: bytes.len() as u64 }, &bytes).unwrap()
            };
            let norm = load(GgmlType::F32, 1, 1);
            let (wq, wk, wv, wf) =
                (load(GgmlType::Q4K, n, 2), load(GgmlType::Q8_0, n, 3), load(GgmlType::Q4_1, n, 4), load(GgmlType::F16, n, 5));
            let xt = Tensor { rows: 9, cols: k, data: x.clone() };
            let h = cpu.rms_norm(&xt, &norm, 1e-6, None);
            let (mut q, mut kk, v) = (cpu.matmul(&h, &wq, None), cpu.matmul(&h, &wk, None), cpu.matmul(&h, &wv, None));
            let rope = Rope { base: 10000.0, scale: 1.0, neox: true, freq_factors: None };
            let positions: Vec<u32> = (0..9).collect();
            cpu.rope(&mut q, &positions, hd, &rope);
            cpu.rope(&mut kk, &positions, hd, &rope);
            let p =
                AttnParams { n_head: n / hd, n_head_kv: 1, head_dim: hd, scale: 0.2, scale_q_first: false, softcap: None, window: None };
            // A 3-token prefix in the cache, then 6 new tokens attending to it and to themselves
            // (the tiled path), and the last of them alone (the per-query path, as in decoding).
            // One KV head: the first `hd` columns of the K and V products.
            let kv = |t: &Tensor, r: std::ops::Range<usize>| Tensor {
                rows: r.len(),
                cols: hd,
                data: r.flat_map(|i| t.row(i)[..hd].to_vec()).collect(),
            };
            let mut cache = cpu.new_cache(16, hd).unwrap();
            cpu.append_cache(&mut cache, &kv(&kk, 0..3), &kv(&v, 0..3)).unwrap();
            let mut layout = AttnLayout { positions: (3..9).collect(), segments: vec![0; 6], query_rows: (0..6).collect() };
            let q_new = Tensor { rows: 6, cols: n, data: q.data[3 * n..].to_vec() };
            let (k_new, v_new) = (kv(&kk, 3..9), kv(&v, 3..9));
            let tiled = cpu.attention(&q_new, &k_new, &v_new, &cache, &layout, &p);
            layout.query_rows = vec![5];
            let q_last = Tensor { rows: 1, cols: n, data: q.data[8 * n..].to_vec() };
            let per_query = cpu.attention(&q_last, &k_new, &v_new, &cache, &layout, &p);
            let sum = cpu.add(&q, &kk);
            let silu = cpu.gated_activation(&q, v.clone(), Activation::Silu);
            let gelu = cpu.gated_activation(&q, v.clone(), Activation::GeluTanh);
            let few = cpu.matmul(&Tensor { rows: 3, cols: k, data: x[..3 * k].to_vec() }, &wf, None);
            cpu.check().unwrap();
            [&h, &q, &kk, &v, &tiled, &per_query, &sum, &silu, &gelu, &few]
                .iter()
                .map(|t| t.data.iter().map(|f| f.to_bits()).collect())
                .collect()
        };
        let (narrow, best) = (run(true), run(false)); // the second leaves the best copy on
        #[cfg(target_arch = "x86_64")]
        if !wide::has_avx2() {
            eprintln!("this CPU has no AVX2: both runs took the copy as built");
        }
        #[cfg(not(target_arch = "x86_64"))]
        eprintln!("not x86-64: one copy only, both runs took it");
        let names = [
            "rms_norm",
            "Q4_K product + RoPE",
            "Q8_0 product + RoPE",
            "Q4_1 product",
            "attention, tiled",
            "attention, per query",
            "add",
            "SiLU",
            "GELU",
            "F16 few rows",
        ];
        for ((name, a), b) in names.iter().zip(&narrow).zip(&best) {
            assert!(a.iter().any(|&v| v != 0), "{name}: all zero");
            assert_eq!(a, b, "{name}: the AVX2 copy differs from the one as built");
        }
    }

    #[test]
    fn timed_operations_count_each_call_and_change_no_value() {
        let (n, k) = (40, 256);
        let bytes = qmatmul::random_weight(GgmlType::Q4K, n, k, 11);
        let info =
            TensorInfo { name: "w".into(), dims: vec![k as u64, n as u64], dtype: GgmlType::Q4K, offset: 0, n_bytes: bytes.len() as u64 };
        let x = Tensor { rows: 3, cols: k, data: qmatmul::random_acts(3, k, 2) };
        let run = |cpu: &mut Cpu| {
            let w = cpu.load(&info, &bytes).unwrap();
            let y = cpu.matmul(&x, &w, None);
            let [a, b, c] = cpu.matmuls(&x, [(&w, None), (&w, None), (&w, None)]);
            (cpu.add(&y, &a), b, c)
        };
        let plain = run(&mut Cpu::new(2).unwrap());
        let mut cpu = Cpu::new(2).unwrap();
        let times = cpu.time_ops().unwrap();
        let timed = run(&mut cpu);
        assert_eq!([&plain.0.data, &plain.1.data, &plain.2.data], [&timed.0.data, &timed.1.data, &timed.2.data]);
        let calls: Vec<(&str, u64)> = times.snapshot().iter().map(|t| (t.op.name(), t.calls)).collect();
        assert_eq!(calls, [("matmul", 4), ("add", 1)]);
        times.reset();
        assert!(times.snapshot().is_empty());
        assert!(Arc::ptr_eq(&times, &cpu.time_ops().unwrap()), "asked again, the same times");
    }

    /// [`Backend::enter`] runs its closure on a thread of the pool, where the operations inside run
    /// without crossing threads and give the same values as from outside; entered again from
    /// there, it stays.
    #[test]
    fn entered_operations_run_on_the_pool_and_give_the_same_values() {
        let (n, k) = (40, 256);
        let bytes = qmatmul::random_weight(GgmlType::Q4K, n, k, 11);
        let mut cpu = Cpu::new(2).unwrap();
        let info =
            TensorInfo { name: "w".into(), dims: vec![k as u64, n as u64], dtype: GgmlType::Q4K, offset: 0, n_bytes: bytes.len() as u64 };
        let w = cpu.load(&info, &bytes).unwrap();
        let x = Tensor { rows: 3, cols: k, data: qmatmul::random_acts(3, k, 2) };
        let outside = cpu.matmul(&x, &w, None);
        let caller = std::thread::current().id();
        // SAFETY: the closures hold references to plain data only.
        let (thread, index, again, inside) = unsafe {
            cpu.enter(|b| {
                let index = b.pool.as_ref().unwrap().current_thread_index();
                let again = b.enter(|_| std::thread::current().id());
                (std::thread::current().id(), index, again, b.matmul(&x, &w, None))
            })
        };
        assert_ne!(thread, caller);
        assert!(index.is_some(), "not on the pool");
        assert_eq!(again, thread, "entered again, it moved");
        assert_eq!(inside.data, outside.data);
    }

    #[test]
    fn fast_exp_is_accurate() {
        for i in 0..2000 {
            let x = -(i as f32) * 0.05;
            let (a, b) = (fast_exp(x), x.exp());
            assert!((a - b).abs() <= 5e-7 * b.max(1e-30) + 1e-38, "{x}: {a} vs {b}");
        }
        for i in 0..=1760 {
            let x = i as f32 * 0.05;
            let (a, b) = (fast_exp(x), x.exp());
            assert!((a - b).abs() <= 5e-7 * b, "{x}: {a} vs {b}");
        }
        assert_eq!(fast_exp(-1000.0), fast_exp(-87.0));
        assert_eq!(fast_exp(1000.0), fast_exp(88.0));
        assert!(fast_exp(f32::NAN).is_nan(), "a NaN stays NaN");
    }

    /// `round_f16` is the `half` crate's round trip through f16, on every 61st f32 bit pattern
    /// (all exponents, both signs, NaNs) and on the edges: f16's subnormals, its largest value,
    /// the ties between two f16 values and around overflow.
    #[test]
    fn round_f16_is_the_round_trip_through_f16() {
        let check = |x: f32| {
            let (got, want) = (round_f16(x), f16::from_f32(x).to_f32());
            if want.is_nan() {
                assert!(got.is_nan(), "{x:e} ({:#x}): {got:e}", x.to_bits());
            } else {
                assert_eq!(got.to_bits(), want.to_bits(), "{x:e} ({:#x}): {got:e} vs {want:e}", x.to_bits());
            }
        };
        for b in (0..=u32::MAX).step_by(61) {
            check(f32::from_bits(b));
        }
        for h in 0..=u16::MAX {
            let v = f16::from_bits(h).to_f32();
            let next = f16::from_bits(h.wrapping_add(1)).to_f32();
            for x in [v, (v + next) / 2.0, f32::from_bits(v.to_bits() + 1), f32::from_bits(v.to_bits().wrapping_sub(1))] {
                check(x);
            }
        }
        for x in [65504.0, 65519.99, 65520.0, 65536.0, f32::INFINITY, f32::MAX, 2f32.powi(-25), 2f32.powi(-24) * 1.5, 6.1e-5, 0.0] {
            check(x);
            check(-x);
        }
    }
}
