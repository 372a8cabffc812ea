//! ggml's tensor types and their block layouts: dequantization to f32.
//!
//! Layouts follow ggml (`ggml-common.h`, `ggml-quants.c`): a block is a fixed number of elements
//! stored as scales plus packed integers. Checked against gguf-py's numpy dequantizers
//! (`scripts/golden/quant_golden.py`).

use half::f16;

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
fn f16_bits_to_f32(h: u16) -> f32 {
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

#[inline]
fn f16_at(b: &[u8], i: usize) -> f32 {
    f16::from_le_bytes([b[i], b[i + 1]]).to_f32()
}

/// Q4_K / Q5_K: the 6-bit scale and min of sub-block `j` (ggml's `get_scale_min_k4`).
#[inline]
fn scale_min_k4(j: usize, q: &[u8]) -> (f32, f32) {
    if j < 4 {
        ((q[j] & 63) as f32, (q[j + 4] & 63) as f32)
    } else {
        (((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4)) as f32, ((q[j + 4] >> 4) | ((q[j] >> 6) << 4)) as f32)
    }
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

/// Dequantize `out.len()` elements from `src` (whole blocks). Panics if `src` is shorter than
/// `dtype.row_bytes(out.len())`; callers pass slices they have sized from the tensor info.
pub fn dequantize(dtype: GgmlType, src: &[u8], out: &mut [f32]) {
    let n = out.len();
    assert_eq!(n % dtype.block_size(), 0, "dequantize: {n} elements is not whole {dtype:?} blocks");
    assert!(src.len() >= dtype.row_bytes(n), "dequantize: {} bytes for {n} {dtype:?} elements", src.len());
    let bb = dtype.block_bytes();
    match dtype {
        GgmlType::F32 => {
            for (o, c) in out.iter_mut().zip(src.chunks_exact(4)) {
                *o = f32::from_le_bytes(c.try_into().unwrap());
            }
        }
        GgmlType::F16 => halves(src, out, f16_bits_to_f32),
        GgmlType::BF16 => halves(src, out, bf16_bits_to_f32),
        GgmlType::Q4_0 => {
            for (y, b) in out.chunks_exact_mut(32).zip(src.chunks_exact(bb)) {
                let d = f16_at(b, 0);
                for j in 0..16 {
                    y[j] = ((b[2 + j] & 0xF) as i32 - 8) as f32 * d;
                    y[j + 16] = ((b[2 + j] >> 4) as i32 - 8) as f32 * d;
                }
            }
        }
        GgmlType::Q4_1 => {
            for (y, b) in out.chunks_exact_mut(32).zip(src.chunks_exact(bb)) {
                let (d, m) = (f16_at(b, 0), f16_at(b, 2));
                for j in 0..16 {
                    y[j] = (b[4 + j] & 0xF) as f32 * d + m;
                    y[j + 16] = (b[4 + j] >> 4) as f32 * d + m;
                }
            }
        }
        GgmlType::Q5_0 | GgmlType::Q5_1 => {
            let has_min = dtype == GgmlType::Q5_1;
            let qs_at = if has_min { 8 } else { 6 };
            for (y, b) in out.chunks_exact_mut(32).zip(src.chunks_exact(bb)) {
                let d = f16_at(b, 0);
                let m = if has_min { f16_at(b, 2) } else { 0.0 };
                let qh_at = qs_at - 4;
                let qh = u32::from_le_bytes(b[qh_at..qh_at + 4].try_into().unwrap());
                for j in 0..16 {
                    let lo = (b[qs_at + j] & 0xF) as u32 | ((qh >> j) & 1) << 4;
                    let hi = (b[qs_at + j] >> 4) as u32 | ((qh >> (j + 16)) & 1) << 4;
                    if has_min {
                        y[j] = lo as f32 * d + m;
                        y[j + 16] = hi as f32 * d + m;
                    } else {
                        y[j] = (lo as i32 - 16) as f32 * d;
                        y[j + 16] = (hi as i32 - 16) as f32 * d;
                    }
                }
            }
        }
        GgmlType::Q8_0 => {
            for (y, b) in out.chunks_exact_mut(32).zip(src.chunks_exact(bb)) {
                let d = f16_at(b, 0);
                for j in 0..32 {
                    y[j] = (b[2 + j] as i8) as f32 * d;
                }
            }
        }
        GgmlType::Q4K => {
            for (y, b) in out.chunks_exact_mut(256).zip(src.chunks_exact(bb)) {
                let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
                let scales = &b[4..16];
                let qs = &b[16..144];
                for c in 0..4 {
                    let (sc1, m1) = scale_min_k4(2 * c, scales);
                    let (sc2, m2) = scale_min_k4(2 * c + 1, scales);
                    let (d1, m1, d2, m2) = (d * sc1, dmin * m1, d * sc2, dmin * m2);
                    let q = &qs[32 * c..32 * c + 32];
                    let yy = &mut y[64 * c..64 * c + 64];
                    for l in 0..32 {
                        yy[l] = d1 * (q[l] & 0xF) as f32 - m1;
                        yy[l + 32] = d2 * (q[l] >> 4) as f32 - m2;
                    }
                }
            }
        }
        GgmlType::Q5K => {
            for (y, b) in out.chunks_exact_mut(256).zip(src.chunks_exact(bb)) {
                let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
                let scales = &b[4..16];
                let qh = &b[16..48];
                let qs = &b[48..176];
                for c in 0..4 {
                    let (sc1, m1) = scale_min_k4(2 * c, scales);
                    let (sc2, m2) = scale_min_k4(2 * c + 1, scales);
                    let (d1, m1, d2, m2) = (d * sc1, dmin * m1, d * sc2, dmin * m2);
                    let (u1, u2) = (1u8 << (2 * c), 2u8 << (2 * c));
                    let q = &qs[32 * c..32 * c + 32];
                    let yy = &mut y[64 * c..64 * c + 64];
                    for l in 0..32 {
                        let h1 = if qh[l] & u1 != 0 { 16.0 } else { 0.0 };
                        let h2 = if qh[l] & u2 != 0 { 16.0 } else { 0.0 };
                        yy[l] = d1 * ((q[l] & 0xF) as f32 + h1) - m1;
                        yy[l + 32] = d2 * ((q[l] >> 4) as f32 + h2) - m2;
                    }
                }
            }
        }
        GgmlType::Q6K => {
            for (y, b) in out.chunks_exact_mut(256).zip(src.chunks_exact(bb)) {
                let ql = &b[0..128];
                let qh = &b[128..192];
                let sc = &b[192..208];
                let d = f16_at(b, 208);
                for half in 0..2 {
                    let (ql, qh, sc) = (&ql[64 * half..], &qh[32 * half..], &sc[8 * half..]);
                    let yy = &mut y[128 * half..128 * half + 128];
                    for l in 0..32 {
                        let is = l / 16;
                        let q1 = ((ql[l] & 0xF) | ((qh[l] & 3) << 4)) as i32 - 32;
                        let q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) as i32 - 32;
                        let q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) as i32 - 32;
                        let q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) as i32 - 32;
                        yy[l] = d * (sc[is] as i8) as f32 * q1 as f32;
                        yy[l + 32] = d * (sc[is + 2] as i8) as f32 * q2 as f32;
                        yy[l + 64] = d * (sc[is + 4] as i8) as f32 * q3 as f32;
                        yy[l + 96] = d * (sc[is + 6] as i8) as f32 * q4 as f32;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
