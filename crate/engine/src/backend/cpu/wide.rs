//! The element-wise loops (norms, SiLU, softmax, f16 rounding, activation rounding, the products'
//! write-back, the f32 products' dequantization) compiled twice on x86-64: as built (SSE2, 4 lanes —
//! what every x86-64 CPU has) and with AVX2, FMA and F16C (8 lanes), chosen at run time. The integer
//! kernels choose theirs the same way (`qmatmul::x86`); these loops are plain Rust that LLVM
//! vectorizes for the features it may use ([`f16_to_f32`] aside).
//!
//! Same values either way: the loops are written lane by lane with fixed accumulation orders, Rust
//! never contracts `a * b + c` into a fused multiply-add, and SSE2 and AVX2 round every operation
//! alike — only the vector width differs (the parity tests against llama.cpp run on this CPU's
//! choice; `same_values_on_every_width` compares the two directly).

/// `wide!({ body })`: run the block through [`dispatch`] as an always-inlined closure. A closure LLVM
/// leaves out of line keeps the features the crate was built with (seen in the disassembly: the
/// hot ones were), so the attribute is not optional, and the macro writes it once.
macro_rules! wide {
    ($body:block) => {
        $crate::backend::cpu::wide::dispatch(
            #[inline(always)]
            || $body,
        )
    };
}
pub(super) use wide;

/// Run `f` compiled for AVX2 and FMA where the CPU has them, else as built: inlined into the AVX2
/// copy with the `#[inline(always)]` helpers it calls, its loops vectorize 8 lanes wide. Meant for
/// a task's whole body (a row, a chunk), not for one value: the check is a load and a branch.
#[inline(always)]
pub(super) fn dispatch<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if takes_avx2() {
        // SAFETY: the CPU has the features `avx2` is compiled for.
        return unsafe { avx2(f) };
    }
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// `out[i] = src[i]` as f32 (exact): F16C's `vcvtph2ps`, 8 values an instruction, where the CPU has
/// it (inlined in the AVX2 copy, whose features include it); else the branch-free conversion that
/// vectorizes on any target (`quant::f16_bits_to_f32`), which took twice as long per decoded
/// token's keys and values here (2-core AMD EPYC, Zen 1).
#[inline(always)]
pub(super) fn f16_to_f32(src: &[half::f16], out: &mut [f32]) {
    let (mut o, mut i) = (out.chunks_exact_mut(8), src.chunks_exact(8));
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("f16c") {
        use std::arch::x86_64::{__m128i, _mm256_cvtph_ps, _mm256_storeu_ps, _mm_loadu_si128};
        for (o, i) in (&mut o).zip(&mut i) {
            // SAFETY: 8 values each side; the CPU has F16C, and so AVX (F16C is VEX-encoded).
            unsafe { _mm256_storeu_ps(o.as_mut_ptr(), _mm256_cvtph_ps(_mm_loadu_si128(i.as_ptr() as *const __m128i))) };
        }
    }
    for (o, i) in (&mut o).zip(&mut i) {
        o.iter_mut().zip(i).for_each(|(o, h)| *o = crate::quant::f16_bits_to_f32(h.to_bits()));
    }
    o.into_remainder().iter_mut().zip(i.remainder()).for_each(|(o, h)| *o = crate::quant::f16_bits_to_f32(h.to_bits()));
}

/// Set by a test ([`set_narrow`]): run the copy as built even where the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
static NARROW: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Tests: make [`dispatch`] take the copy as built (`true`) or the best one again; where there is
/// one copy only, nothing to do.
#[cfg(test)]
pub(super) fn set_narrow(narrow: bool) {
    #[cfg(target_arch = "x86_64")]
    NARROW.store(narrow, std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = narrow;
}

/// Whether [`dispatch`] takes the AVX2 copy. It is compiled with FMA too: there `f32::mul_add` is
/// one instruction, in the copy as built a library call, so a kernel that fuses asks this first.
#[cfg(target_arch = "x86_64")]
pub(super) fn takes_avx2() -> bool {
    has_avx2() && !NARROW.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether [`dispatch`] can take the AVX2 copy on this CPU.
#[cfg(target_arch = "x86_64")]
pub(super) fn has_avx2() -> bool {
    // `is_x86_feature_detected!` caches the CPU's answer itself.
    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") && std::is_x86_feature_detected!("f16c")
}
