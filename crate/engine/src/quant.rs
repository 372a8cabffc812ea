//! ggml's tensor types and their block layouts: dequantization to f32.
//!
//! Layouts follow ggml (`ggml-common.h`, `ggml-quants.c`): a block is a fixed number of elements
//! stored as scales plus packed integers. Checked against gguf-py's numpy dequantizers
//! (`scripts/golden/quant_golden.py`).

/// The tensor types GGUF judge models use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[repr(u32)]
pub enum GgmlType {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q4K = 12,
    Q5K = 13,
    Q6K = 14,
    BF16 = 30,
}

impl GgmlType {
    /// Every supported type (for tests and benchmarks that sweep them).
    pub const ALL: [GgmlType; 11] = [
        GgmlType::F32,
        GgmlType::F16,
        GgmlType::BF16,
        GgmlType::Q4_0,
        GgmlType::Q4_1,
        GgmlType::Q5_0,
        GgmlType::Q5_1,
        GgmlType::Q8_0,
        GgmlType::Q4K,
        GgmlType::Q5K,
        GgmlType::Q6K,
    ];

    pub fn from_u32(v: u32) -> Option<Self> {
        Some(match v {
            0 => Self::F32,
            1 => Self::F16,
            2 => Self::Q4_0,
            3 => Self::Q4_1,
            6 => Self::Q5_0,
            7 => Self::Q5_1,
            8 => Self::Q8_0,
            12 => Self::Q4K,
            13 => Self::Q5K,
            14 => Self::Q6K,
            30 => Self::BF16,
            _ => return None,
        })
    }

    /// Elements per block.
    pub fn block_size(self) -> usize {
        match self {
            Self::F32 | Self::F16 | Self::BF16 => 1,
            Self::Q4_0 | Self::Q4_1 | Self::Q5_0 | Self::Q5_1 | Self::Q8_0 => 32,
            Self::Q4K | Self::Q5K | Self::Q6K => 256,
        }
    }

    /// Bytes per block.
    pub fn block_bytes(self) -> usize {
        match self {
            Self::F32 => 4,
            Self::F16 | Self::BF16 => 2,
            Self::Q4_0 => 18,
            Self::Q4_1 => 20,
            Self::Q5_0 => 22,
            Self::Q5_1 => 24,
            Self::Q8_0 => 34,
            Self::Q4K => 144,
            Self::Q5K => 176,
            Self::Q6K => 210,
        }
    }

    /// Bytes of a row of `n` elements (`n` a multiple of the block size).
    pub fn row_bytes(self, n: usize) -> usize {
        n / self.block_size() * self.block_bytes()
    }
}

/// An f16's value without a branch on its class (the `half` crate's portable conversion, which wasm
/// runs, has them): the exponent and mantissa move into f32's places and one multiply by 2^112 (the
/// two exponent biases apart) rebiases normals and subnormals alike; infinity and NaN keep f32's
/// all-ones exponent.
#[inline]
pub(crate) fn f16_bits_to_f32(h: u16) -> f32 {
    let magnitude = (h & 0x7FFF) as u32;
    let finite = f32::from_bits(magnitude << 13) * f32::from_bits(0x7780_0000);
    let v = if magnitude >= 0x7C00 { f32::from_bits((magnitude << 13) | 0x7F80_0000) } else { finite };
    f32::from_bits(v.to_bits() | (((h & 0x8000) as u32) << 16))
}

/// A bfloat16's value: its bits are an f32's upper half.
#[inline]
fn bf16_bits_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// Q4_K / Q5_K: the 6-bit scale and min of sub-block `j` (ggml's `get_scale_min_k4`).
#[inline]
pub(crate) fn scale_min_k4(j: usize, q: &[u8]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        ((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4))
    }
}

/// [`scale_min_k4`] as floats.
#[inline]
fn scale_min_k4_f32(j: usize, q: &[u8]) -> (f32, f32) {
    let (s, m) = scale_min_k4(j, q);
    (s as f32, m as f32)
}

/// 16-bit floats to f32, in groups of 16 and then the rest.
#[inline]
fn halves(src: &[u8], out: &mut [f32], value: impl Fn(u16) -> f32) {
    let src = &src[..out.len() * 2];
    let (mut o, mut s) = (out.chunks_exact_mut(16), src.chunks_exact(32));
    for (o, s) in (&mut o).zip(&mut s) {
        let (o, s): (&mut [f32; 16], &[u8; 32]) = (o.try_into().unwrap(), s.try_into().unwrap());
        for i in 0..16 {
            o[i] = value(u16::from_le_bytes([s[2 * i], s[2 * i + 1]]));
        }
    }
    for (o, c) in o.into_remainder().iter_mut().zip(s.remainder().chunks_exact(2)) {
        *o = value(u16::from_le_bytes([c[0], c[1]]));
    }
}

/// Run `f` on each block of `src` and its `BS` elements of `out`, both as arrays of their fixed
/// sizes: no bounds check is left inside a block, so the per-element loops vectorize.
#[inline(always)]
fn blocks<const BB: usize, const BS: usize>(src: &[u8], out: &mut [f32], f: impl Fn(&[u8; BB], &mut [f32; BS])) {
    for (y, b) in out.chunks_exact_mut(BS).zip(src.chunks_exact(BB)) {
        f(b.try_into().unwrap(), y.try_into().unwrap());
    }
}

/// An f16 stored little-endian at `b[i..i + 2]`, by the `half` crate (F16C where the CPU has it):
/// per block, [`f16_bits_to_f32`] made the dequantization of 5-bit blocks twice as slow.
#[inline(always)]
fn f16_at(b: &[u8], i: usize) -> f32 {
    f16_le(b, i).to_f32()
}

/// The f16 stored little-endian at `b[i..i + 2]` (the repacks keep the file's f16 as it is).
#[inline(always)]
pub(crate) fn f16_le(b: &[u8], i: usize) -> half::f16 {
    half::f16::from_le_bytes([b[i], b[i + 1]])
}

/// Dequantize `out.len()` elements from `src` (whole blocks). Panics if `src` is shorter than
/// `dtype.row_bytes(out.len())`; callers pass slices they have sized from the tensor info.
///
/// Always inlined: the CPU backend calls it inside its AVX2 copies (`wide!`), where its loops
/// vectorize 8 lanes wide (f32 products of few rows spend most of their time here).
#[inline(always)]
pub fn dequantize(dtype: GgmlType, src: &[u8], out: &mut [f32]) {
    let n = out.len();
    assert_eq!(n % dtype.block_size(), 0, "dequantize: {n} elements is not whole {dtype:?} blocks");
    assert!(src.len() >= dtype.row_bytes(n), "dequantize: {} bytes for {n} {dtype:?} elements", src.len());
    match dtype {
        GgmlType::F32 => {
            for (o, c) in out.iter_mut().zip(src.chunks_exact(4)) {
                *o = f32::from_le_bytes(c.try_into().unwrap());
            }
        }
        GgmlType::F16 => halves(src, out, f16_bits_to_f32),
        GgmlType::BF16 => halves(src, out, bf16_bits_to_f32),
        GgmlType::Q4_0 => blocks(
            src,
            out,
            #[inline(always)]
            |b: &[u8; 18], y: &mut [f32; 32]| {
                let d = f16_at(b, 0);
                let v = nibbles(b[2..18].try_into().unwrap());
                for j in 0..32 {
                    y[j] = (v[j] as i32 - 8) as f32 * d;
                }
            },
        ),
        GgmlType::Q4_1 => blocks(
            src,
            out,
            #[inline(always)]
            |b: &[u8; 20], y: &mut [f32; 32]| {
                let (d, m) = (f16_at(b, 0), f16_at(b, 2));
                let v = nibbles(b[4..20].try_into().unwrap());
                for j in 0..32 {
                    y[j] = v[j] as f32 * d + m;
                }
            },
        ),
        GgmlType::Q5_0 => blocks(
            src,
            out,
            #[inline(always)]
            |b: &[u8; 22], y: &mut [f32; 32]| {
                let d = f16_at(b, 0);
                let v = fifth_bits(b[2..6].try_into().unwrap(), nibbles(b[6..22].try_into().unwrap()));
                for j in 0..32 {
                    y[j] = (v[j] as i32 - 16) as f32 * d;
                }
            },
        ),
        GgmlType::Q5_1 => blocks(
            src,
            out,
            #[inline(always)]
            |b: &[u8; 24], y: &mut [f32; 32]| {
                let (d, m) = (f16_at(b, 0), f16_at(b, 2));
                let v = fifth_bits(b[4..8].try_into().unwrap(), nibbles(b[8..24].try_into().unwrap()));
                for j in 0..32 {
                    y[j] = v[j] as f32 * d + m;
                }
            },
        ),
        GgmlType::Q8_0 => blocks(
            src,
            out,
            #[inline(always)]
            |b: &[u8; 34], y: &mut [f32; 32]| {
                let d = f16_at(b, 0);
                for j in 0..32 {
                    y[j] = (b[2 + j] as i8) as f32 * d;
                }
            },
        ),
        GgmlType::Q4K => blocks(
            src,
            out,
            #[inline(always)]
            |b: &[u8; 144], y: &mut [f32; 256]| {
                let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
                let scales = &b[4..16];
                for c in 0..4 {
                    let (sc1, m1) = scale_min_k4_f32(2 * c, scales);
                    let (sc2, m2) = scale_min_k4_f32(2 * c + 1, scales);
                    let (d1, m1, d2, m2) = (d * sc1, dmin * m1, d * sc2, dmin * m2);
                    let q: &[u8; 32] = b[16 + 32 * c..48 + 32 * c].try_into().unwrap();
                    let yy: &mut [f32; 64] = (&mut y[64 * c..64 * c + 64]).try_into().unwrap();
                    for l in 0..32 {
                        yy[l] = d1 * (q[l] & 0xF) as f32 - m1;
                        yy[l + 32] = d2 * (q[l] >> 4) as f32 - m2;
                    }
                }
            },
        ),
        GgmlType::Q5K => blocks(
            src,
            out,
            #[inline(always)]
            |b: &[u8; 176], y: &mut [f32; 256]| {
                let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
                let scales = &b[4..16];
                let qh: &[u8; 32] = b[16..48].try_into().unwrap();
                for c in 0..4 {
                    let (sc1, m1) = scale_min_k4_f32(2 * c, scales);
                    let (sc2, m2) = scale_min_k4_f32(2 * c + 1, scales);
                    let (d1, m1, d2, m2) = (d * sc1, dmin * m1, d * sc2, dmin * m2);
                    let (u1, u2) = (1u8 << (2 * c), 2u8 << (2 * c));
                    let q: &[u8; 32] = b[48 + 32 * c..80 + 32 * c].try_into().unwrap();
                    let yy: &mut [f32; 64] = (&mut y[64 * c..64 * c + 64]).try_into().unwrap();
                    for l in 0..32 {
                        let h1 = if qh[l] & u1 != 0 { 16.0 } else { 0.0 };
                        let h2 = if qh[l] & u2 != 0 { 16.0 } else { 0.0 };
                        yy[l] = d1 * ((q[l] & 0xF) as f32 + h1) - m1;
                        yy[l + 32] = d2 * ((q[l] >> 4) as f32 + h2) - m2;
                    }
                }
            },
        ),
        GgmlType::Q6K => blocks(
            src,
            out,
            #[inline(always)]
            |b: &[u8; 210], y: &mut [f32; 256]| {
                let d = f16_at(b, 208);
                for half in 0..2 {
                    let ql: &[u8; 64] = b[64 * half..64 * half + 64].try_into().unwrap();
                    let qh: &[u8; 32] = b[128 + 32 * half..160 + 32 * half].try_into().unwrap();
                    let sc: &[u8; 8] = b[192 + 8 * half..200 + 8 * half].try_into().unwrap();
                    let yy: &mut [f32; 128] = (&mut y[128 * half..128 * half + 128]).try_into().unwrap();
                    // Sixteen levels share a scale: one loop per 16, its scales fixed, vectorizes
                    // (a scale chosen by `l / 16` inside the loop kept it scalar: 0.8 GFLOP/s).
                    for is in 0..2 {
                        let ds = [0, 2, 4, 6].map(|o| d * (sc[is + o] as i8) as f32);
                        for l in 16 * is..16 * is + 16 {
                            let q1 = ((ql[l] & 0xF) | ((qh[l] & 3) << 4)) as i32 - 32;
                            let q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) as i32 - 32;
                            let q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) as i32 - 32;
                            let q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) as i32 - 32;
                            yy[l] = ds[0] * q1 as f32;
                            yy[l + 32] = ds[1] * q2 as f32;
                            yy[l + 64] = ds[2] * q3 as f32;
                            yy[l + 96] = ds[3] * q4 as f32;
                        }
                    }
                }
            },
        ),
    }
}

/// The 32 levels of a 4-bit block: the low nibbles of its 16 bytes, then the high ones. In byte
/// lanes of their own, so that these and the conversion to f32 vectorize apart.
#[inline(always)]
pub(crate) fn nibbles(qs: &[u8; 16]) -> [u8; 32] {
    let mut v = [0u8; 32];
    // Two loops: one writing both halves stored element by element.
    for j in 0..16 {
        v[j] = qs[j] & 0xF;
    }
    for j in 0..16 {
        v[j + 16] = qs[j] >> 4;
    }
    v
}

/// 16 in byte `8i + j` of entry `b` where bit `j` of `b` is set: eight fifth bits at once.
static FIFTH_BITS: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut j = 0;
        while j < 8 {
            if (b >> j) & 1 == 1 {
                table[b] |= 16 << (8 * j);
            }
            j += 1;
        }
        b += 1;
    }
    table
};

/// Q5_0 / Q5_1: 4-bit levels with their fifth bits (`qh`, bit j for level j) added, by table: a
/// shift by each level's own position kept the loop from vectorizing.
#[inline(always)]
pub(crate) fn fifth_bits(qh: &[u8; 4], mut v: [u8; 32]) -> [u8; 32] {
    let mut high = [0u8; 32];
    for (i, &b) in qh.iter().enumerate() {
        high[8 * i..8 * i + 8].copy_from_slice(&FIFTH_BITS[b as usize].to_le_bytes());
    }
    for j in 0..32 {
        v[j] |= high[j];
    }
    v
}

/// Q4_K's and Q5_K's 256 levels: chunk c of 64 values is the low nibbles of 32 bytes of `qs`, then
/// their high nibbles; Q5_K's fifth bits are bit 2c (first half) and 2c + 1 (second half) of
/// `qh`'s byte l. (Returned by value, not written through a reference that might alias the file's
/// bytes, so that the loops vectorize.)
#[inline]
pub(crate) fn k_quant_levels(qs: &[u8; 128], qh: Option<&[u8; 32]>) -> [u8; 256] {
    let mut lv = [0u8; 256];
    for c in 0..4 {
        for l in 0..32 {
            lv[64 * c + l] = qs[32 * c + l] & 0xF;
            lv[64 * c + 32 + l] = qs[32 * c + l] >> 4;
        }
    }
    if let Some(qh) = qh {
        for c in 0..4 {
            for l in 0..32 {
                lv[64 * c + l] |= ((qh[l] >> (2 * c)) & 1) << 4;
                lv[64 * c + 32 + l] |= ((qh[l] >> (2 * c + 1)) & 1) << 4;
            }
        }
    }
    lv
}

/// Q6_K's 256 unsigned levels (0..64): in each half, four runs of 32 from the nibbles of `ql` and
/// 2 bits of `qh`.
#[inline]
pub(crate) fn q6k_levels(ql: &[u8; 128], qh: &[u8; 64]) -> [u8; 256] {
    let mut lv = [0u8; 256];
    for half in 0..2 {
        let (ql, qh, y) = (&ql[64 * half..][..64], &qh[32 * half..][..32], &mut lv[128 * half..][..128]);
        for l in 0..32 {
            y[l] = (ql[l] & 0xF) | ((qh[l] & 3) << 4);
            y[l + 32] = (ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4);
            y[l + 64] = (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4);
            y[l + 96] = (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4);
        }
    }
    lv
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    #[test]
    fn q8_0_by_hand() {
        let mut b = vec![0u8; 34];
        b[..2].copy_from_slice(&f16::from_f32(0.5).to_le_bytes());
        b[2] = 4;
        b[3] = (-6i8) as u8;
        let mut y = [0f32; 32];
        dequantize(GgmlType::Q8_0, &b, &mut y);
        assert_eq!(&y[..3], &[2.0, -3.0, 0.0]);
    }

    /// Every f16 and bf16 bit pattern (normals, subnormals, zeros, infinities, both signs) converts
    /// to the `half` crate's value, bit for bit; every NaN to a NaN. Also through `dequantize`, whose
    /// 16-value groups and remainder take them, on a length that is not a multiple of 16.
    #[test]
    fn half_float_conversions_are_the_half_crates_for_every_value() {
        let all: Vec<u16> = (0..=u16::MAX).collect();
        let bytes: Vec<u8> = all.iter().flat_map(|h| h.to_le_bytes()).collect();
        let n = all.len() - 7;
        let (mut f, mut b) = (vec![0f32; n], vec![0f32; n]);
        dequantize(GgmlType::F16, &bytes, &mut f);
        dequantize(GgmlType::BF16, &bytes, &mut b);
        for (i, &h) in all.iter().enumerate() {
            let pairs = [(f16_bits_to_f32(h), f16::from_bits(h).to_f32()), (bf16_bits_to_f32(h), half::bf16::from_bits(h).to_f32())];
            let through = if i < n { [Some(f[i]), Some(b[i])] } else { [None, None] };
            for ((got, want), d) in pairs.into_iter().zip(through) {
                for got in std::iter::once(got).chain(d) {
                    if want.is_nan() {
                        assert!(got.is_nan(), "{h:#06x}: {got}");
                    } else {
                        assert_eq!(got.to_bits(), want.to_bits(), "{h:#06x}: {got} against {want}");
                    }
                }
            }
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(GgmlType::Q4K.row_bytes(512), 288);
        assert_eq!(GgmlType::Q6K.row_bytes(256), 210);
        assert_eq!(GgmlType::from_u32(13), Some(GgmlType::Q5K));
        assert_eq!(GgmlType::from_u32(10), None);
    }
}
