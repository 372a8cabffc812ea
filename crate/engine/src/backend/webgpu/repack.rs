//! GGUF blocks → the planes the WGSL kernels read.
//!
//! ggml blocks interleave scales with packed integers (18-, 22-, 144-, 210-byte records), which a
//! shader can only read byte by byte. At load we split every weight row into planes of `u32` words:
//!
//! | plane | contents | words per row of `k` values |
//! |---|---|---|
//! | low | 8 consecutive 4-bit codes per word (nibble `i` = element `8w + i`), or 4 bytes (Q8_0), or the floats | `k/8` (`k/4` for Q8_0, `k` f32, `k/2` f16/bf16) |
//! | high | the 5th bit (Q5_*: one word per 32 values) or 5th–6th bits (Q6_K: two words per 32) | `k/32` or `k/16` |
//! | scales | Q4_0..Q5_1: per 32 values one word holding f16 `(d, m)`; Q8_0: f16 `d`; K-quants: per 256 values `d`, `dmin` as f32 and the eight 6-bit sub-block scales and mins unpacked to bytes (Q6_K: `d` and sixteen i8 scales) | |
//!
//! A value is then `code · s + m`, with `s`, `m` one multiply away from the stored words and every
//! product exact in f32 — so the GPU sees exactly the weights [`crate::quant::dequantize`] gives the
//! CPU backend (up to the sign of a zero). [`dq8_reference`] is the Rust twin of the shaders' `dq8` and is tested against it.
//!
//! Float rows (F32/F16/BF16) of any length are padded with zeros to a multiple of 32, so kernels can
//! always step through whole groups of 8 and 32.

use half::{bf16, f16};
use rayon::prelude::*;

use crate::quant::{f16_le, k_quant_levels, nibbles, q6k_levels, scale_min_k4, GgmlType};
use crate::EngineError;

/// How a weight is laid out on the device (one per supported GGUF type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    F32,
    F16,
    BF16,
    Q8_0,
    /// Q4_0 and Q4_1: 4-bit codes, f16 `(d, m)` per 32.
    Q4,
    /// Q5_0 and Q5_1: 4-bit codes + 1 high bit, f16 `(d, m)` per 32.
    Q5,
    Q4K,
    Q5K,
    Q6K,
}

impl Format {
    pub fn of(dtype: GgmlType) -> Format {
        match dtype {
            GgmlType::F32 => Format::F32,
            GgmlType::F16 => Format::F16,
            GgmlType::BF16 => Format::BF16,
            GgmlType::Q8_0 => Format::Q8_0,
            GgmlType::Q4_0 | GgmlType::Q4_1 => Format::Q4,
            GgmlType::Q5_0 | GgmlType::Q5_1 => Format::Q5,
            GgmlType::Q4K => Format::Q4K,
            GgmlType::Q5K => Format::Q5K,
            GgmlType::Q6K => Format::Q6K,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::F32 => "f32",
            Format::F16 => "f16",
            Format::BF16 => "bf16",
            Format::Q8_0 => "q8_0",
            Format::Q4 => "q4",
            Format::Q5 => "q5",
            Format::Q4K => "q4k",
            Format::Q5K => "q5k",
            Format::Q6K => "q6k",
        }
    }

    /// Words per row of each plane, for a padded row length `kp` (a multiple of 32, and of 256
    /// for K-quants).
    pub fn plane_words(self, kp: usize) -> Vec<usize> {
        match self {
            Format::F32 => vec![kp],
            Format::F16 | Format::BF16 => vec![kp / 2],
            Format::Q8_0 => vec![kp / 4, kp / 32],
            Format::Q4 => vec![kp / 8, kp / 32],
            Format::Q5 => vec![kp / 8, kp / 32, kp / 32],
            Format::Q4K => vec![kp / 8, kp / 256 * 6],
            Format::Q5K => vec![kp / 8, kp / 32, kp / 256 * 6],
            Format::Q6K => vec![kp / 8, kp / 16, kp / 256 * 5],
        }
    }

    /// Bytes per row on the device, all planes together.
    pub fn row_bytes(self, kp: usize) -> usize {
        self.plane_words(kp).iter().sum::<usize>() * 4
    }
}

/// Row length after padding (float rows to a multiple of 32; quantized rows are whole blocks).
pub fn padded_cols(dtype: GgmlType, cols: usize) -> usize {
    match Format::of(dtype) {
        Format::F32 | Format::F16 | Format::BF16 => cols.div_ceil(32) * 32,
        _ => cols,
    }
}

/// The planes of rows `[0, rows)` of `bytes` (GGUF layout, `cols` values per row). Rows are
/// repacked in parallel (on the rayon pool of the caller: the page's workers in the tab's threaded
/// build, none in its other one), each into its own words of every plane.
pub fn repack(dtype: GgmlType, bytes: &[u8], rows: usize, cols: usize) -> Result<Vec<Vec<u32>>, EngineError> {
    if !cols.is_multiple_of(dtype.block_size()) {
        return Err(EngineError::Model(format!("a row of {cols} values is not whole {dtype:?} blocks")));
    }
    let rb = dtype.row_bytes(cols);
    if bytes.len() < rb * rows {
        return Err(EngineError::Model(format!("{} bytes for {rows} rows of {cols} {dtype:?} values", bytes.len())));
    }
    let kp = padded_cols(dtype, cols);
    let words = Format::of(dtype).plane_words(kp);
    let mut planes: Vec<Vec<u32>> = words.iter().map(|w| vec![0u32; w * rows]).collect();
    // Each row's words of every plane, in plane order.
    let mut row_words: Vec<Vec<&mut [u32]>> = (0..rows).map(|_| Vec::with_capacity(planes.len())).collect();
    for (plane, &w) in planes.iter_mut().zip(&words) {
        for (out, chunk) in row_words.iter_mut().zip(plane.chunks_mut(w)) {
            out.push(chunk);
        }
    }
    row_words
        .into_par_iter()
        .enumerate()
        .try_for_each_init(|| vec![0u8; kp], |codes, (r, mut out)| repack_row(dtype, &bytes[r * rb..(r + 1) * rb], &mut out, codes))?;
    Ok(planes)
}

/// One GGUF row `src` of `dtype` into its words of each plane (`out`, zeroed), `codes` a buffer of
/// the padded row's length for its levels.
fn repack_row(dtype: GgmlType, src: &[u8], out: &mut [&mut [u32]], codes: &mut [u8]) -> Result<(), EngineError> {
    let [lo, rest @ ..] = out else { unreachable!("every format has a low plane") };
    match dtype {
        GgmlType::F32 => {
            for (o, c) in lo.iter_mut().zip(src.chunks_exact(4)) {
                *o = u32::from_le_bytes(c.try_into().unwrap());
            }
        }
        GgmlType::F16 | GgmlType::BF16 => {
            for (i, c) in src.chunks_exact(2).enumerate() {
                let h = u16::from_le_bytes([c[0], c[1]]) as u32;
                lo[i / 2] |= h << (16 * (i % 2));
            }
        }
        GgmlType::Q8_0 => {
            for (g, b) in src.chunks_exact(34).enumerate() {
                rest[0][g] = f16_le(b, 0).to_bits() as u32;
                for w in 0..8 {
                    lo[g * 8 + w] = u32::from_le_bytes(b[2 + 4 * w..6 + 4 * w].try_into().unwrap());
                }
            }
        }
        GgmlType::Q4_0 | GgmlType::Q4_1 | GgmlType::Q5_0 | GgmlType::Q5_1 => {
            let (bb, has_min, five) = match dtype {
                GgmlType::Q4_0 => (18, false, false),
                GgmlType::Q4_1 => (20, true, false),
                GgmlType::Q5_0 => (22, false, true),
                _ => (24, true, true),
            };
            let qs_at = bb - 16;
            // Q5_*: the fifth bits as the file holds them, one word per 32 values, then the parameters.
            let (mut high, params) = match rest {
                [high, params] => (Some(high), params),
                [params] => (None, params),
                _ => unreachable!("Q4_* has two planes, Q5_* three"),
            };
            for (g, b) in src.chunks_exact(bb).enumerate() {
                let d = f16_le(b, 0);
                let offset = if five { 16.0 } else { 8.0 };
                let m = if has_min {
                    f16_le(b, 2)
                } else {
                    // -8d or -16d: a power-of-two multiple, exact in f16 unless it overflows.
                    let m = f16::from_f32(-offset * d.to_f32());
                    if m.to_f32() != -offset * d.to_f32() {
                        return Err(EngineError::Unsupported(format!("{dtype:?} block scale {d} is too large for the WebGPU layout")));
                    }
                    m
                };
                codes[32 * g..32 * g + 32].copy_from_slice(&nibbles(b[qs_at..qs_at + 16].try_into().unwrap()));
                params[g] = d.to_bits() as u32 | (m.to_bits() as u32) << 16;
                if let Some(high) = high.as_mut() {
                    high[g] = u32::from_le_bytes(b[qs_at - 4..qs_at].try_into().unwrap());
                }
            }
            pack_nibbles(codes, lo);
        }
        GgmlType::Q4K | GgmlType::Q5K => {
            let five = dtype == GgmlType::Q5K;
            let bb = if five { 176 } else { 144 };
            let [.., recs] = rest else { unreachable!("a parameter plane") };
            for (sb, b) in src.chunks_exact(bb).enumerate() {
                let qh = five.then(|| b[16..48].try_into().unwrap());
                let c = &mut codes[256 * sb..256 * sb + 256];
                c.copy_from_slice(&k_quant_levels(b[bb - 128..].try_into().unwrap(), qh));
                let rec = &mut recs[sb * 6..sb * 6 + 6];
                rec[0] = f16_le(b, 0).to_f32().to_bits();
                rec[1] = f16_le(b, 2).to_f32().to_bits();
                for g in 0..8 {
                    let (s, m) = scale_min_k4(g, &b[4..16]);
                    rec[2 + g / 4] |= (s as u32) << (8 * (g % 4));
                    rec[4 + g / 4] |= (m as u32) << (8 * (g % 4));
                }
            }
            if five {
                // Bit 4 of each level, one word per 32 values.
                for (h, c) in rest[0].iter_mut().zip(codes.chunks_exact(32)) {
                    *h = c.iter().enumerate().fold(0u32, |w, (i, &v)| w | ((v >> 4) as u32 & 1) << i);
                }
            }
            pack_nibbles(codes, lo);
        }
        GgmlType::Q6K => {
            let [high, recs] = rest else { unreachable!("Q6_K has three planes") };
            for (sb, b) in src.chunks_exact(210).enumerate() {
                let c = &mut codes[256 * sb..256 * sb + 256];
                c.copy_from_slice(&q6k_levels(b[0..128].try_into().unwrap(), b[128..192].try_into().unwrap()));
                // Two bits per value, 16 values per word.
                for (w, vals) in c.chunks_exact(16).enumerate() {
                    high[sb * 16 + w] = vals.iter().enumerate().fold(0u32, |word, (i, &v)| word | ((v >> 4) as u32) << (2 * i));
                }
                let rec = &mut recs[sb * 5..sb * 5 + 5];
                rec[0] = f16_le(b, 208).to_f32().to_bits();
                for (i, &s) in b[192..208].iter().enumerate() {
                    rec[1 + i / 4] |= (s as u32) << (8 * (i % 4));
                }
            }
            pack_nibbles(codes, lo);
        }
    }
    Ok(())
}

/// Low 4 bits of 8 consecutive codes per word.
fn pack_nibbles(codes: &[u8], out: &mut [u32]) {
    for (o, c) in out.iter_mut().zip(codes.chunks_exact(8)) {
        *o = c.iter().enumerate().fold(0u32, |w, (i, &v)| w | ((v & 0xF) as u32) << (4 * i));
    }
}

/// The Rust twin of the shaders' `dq8`: values `8·k8 .. 8·k8 + 8` of `row`, computed with the same
/// operations in the same order.
pub fn dq8_reference(fmt: Format, planes: &[Vec<u32>], kp: usize, row: usize, k8: usize) -> [f32; 8] {
    let words = fmt.plane_words(kp);
    let p = |i: usize, at: usize| planes[i][row * words[i] + at];
    let mut out = [0f32; 8];
    let nib = |i: usize| (p(0, k8) >> (4 * i)) & 0xF;
    let g = k8 / 4;
    let j = k8 % 4;
    match fmt {
        Format::F32 => {
            for i in 0..8 {
                out[i] = f32::from_bits(p(0, 8 * k8 + i));
            }
        }
        Format::F16 | Format::BF16 => {
            for i in 0..8 {
                let h = (p(0, 4 * k8 + i / 2) >> (16 * (i % 2))) & 0xFFFF;
                out[i] = if fmt == Format::F16 { f16::from_bits(h as u16).to_f32() } else { bf16::from_bits(h as u16).to_f32() };
            }
        }
        Format::Q8_0 => {
            let d = f16::from_bits(p(1, g) as u16).to_f32();
            for i in 0..8 {
                let w = p(0, 2 * k8 + i / 4);
                out[i] = ((w >> (8 * (i % 4))) as u8 as i8) as f32 * d;
            }
        }
        Format::Q4 | Format::Q5 => {
            let dm = p(if fmt == Format::Q4 { 1 } else { 2 }, g);
            let (d, m) = (f16::from_bits(dm as u16).to_f32(), f16::from_bits((dm >> 16) as u16).to_f32());
            for i in 0..8 {
                let mut q = nib(i);
                if fmt == Format::Q5 {
                    q |= ((p(1, g) >> (8 * j + i)) & 1) << 4;
                }
                out[i] = q as f32 * d + m;
            }
        }
        Format::Q4K | Format::Q5K => {
            let rp = if fmt == Format::Q4K { 1 } else { 2 };
            let base = (k8 / 32) * 6;
            let gs = g % 8;
            let d = f32::from_bits(p(rp, base));
            let dmin = f32::from_bits(p(rp, base + 1));
            let sc = (p(rp, base + 2 + gs / 4) >> (8 * (gs % 4))) & 0xFF;
            let mn = (p(rp, base + 4 + gs / 4) >> (8 * (gs % 4))) & 0xFF;
            let (s, m) = (d * sc as f32, dmin * mn as f32);
            for i in 0..8 {
                let mut q = nib(i);
                if fmt == Format::Q5K {
                    q |= ((p(1, g) >> (8 * j + i)) & 1) << 4;
                }
                out[i] = s * q as f32 - m;
            }
        }
        Format::Q6K => {
            let base = (k8 / 32) * 5;
            let g16 = (k8 % 32) / 2;
            let d = f32::from_bits(p(2, base));
            let sc = ((p(2, base + 1 + g16 / 4) >> (8 * (g16 % 4))) as u8 as i8) as f32;
            let s = d * sc;
            let hw = p(1, 2 * g + j / 2);
            for i in 0..8 {
                let q = nib(i) | ((hw >> (16 * (j % 2) + 2 * i)) & 3) << 4;
                out[i] = s * (q as i32 - 32) as f32;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quant::dequantize;

    /// Random blocks with sane f16 scales (like `scripts/golden/quant_golden.py`).
    fn random_blocks(dtype: GgmlType, rows: usize, cols: usize, seed: u64) -> Vec<u8> {
        let mut s = seed;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut b: Vec<u8> = (0..dtype.row_bytes(cols) * rows).map(|_| next() as u8).collect();
        let scale_at: &[usize] = match dtype {
            GgmlType::Q4_0 | GgmlType::Q5_0 | GgmlType::Q8_0 => &[0],
            GgmlType::Q4_1 | GgmlType::Q5_1 | GgmlType::Q4K | GgmlType::Q5K => &[0, 2],
            GgmlType::Q6K => &[208],
            _ => &[],
        };
        let bb = dtype.block_bytes();
        for blk in b.chunks_exact_mut(bb) {
            for &o in scale_at {
                let v = ((next() % 2001) as f32 - 1000.0) / 10000.0;
                blk[o..o + 2].copy_from_slice(&f16::from_f32(v).to_le_bytes());
            }
        }
        match dtype {
            GgmlType::F16 => b.chunks_exact_mut(2).for_each(|c| c[1] &= 0xBB),
            GgmlType::BF16 => b.chunks_exact_mut(2).for_each(|c| c[1] &= 0xBF),
            GgmlType::F32 => b.chunks_exact_mut(4).for_each(|c| c[3] &= 0xBF),
            _ => {}
        }
        b
    }

    #[test]
    fn repacked_values_equal_the_reference_dequantization_exactly() {
        let types = GgmlType::ALL;
        for (t, dtype) in types.into_iter().enumerate() {
            let cols = match dtype.block_size() {
                256 => 512,
                32 => 96,
                _ => 40, // not a multiple of 32: padded
            };
            let rows = 3;
            let bytes = random_blocks(dtype, rows, cols, 0x9E37 + t as u64);
            let planes = repack(dtype, &bytes, rows, cols).unwrap();
            let kp = padded_cols(dtype, cols);
            let fmt = Format::of(dtype);
            for (i, w) in fmt.plane_words(kp).iter().enumerate() {
                assert_eq!(planes[i].len(), w * rows, "{dtype:?} plane {i}");
            }
            for r in 0..rows {
                let mut want = vec![0f32; cols];
                dequantize(dtype, &bytes[r * dtype.row_bytes(cols)..], &mut want);
                for k8 in 0..kp / 8 {
                    let got = dq8_reference(fmt, &planes, kp, r, k8);
                    for i in 0..8 {
                        let k = 8 * k8 + i;
                        let w = if k < cols { want[k] } else { 0.0 };
                        // Equal as numbers: only the sign of a zero may differ ((8 - 8)·d vs 8d - 8d).
                        assert!(got[i] == w, "{dtype:?} row {r} value {k}: {} vs {w}", got[i]);
                    }
                }
            }
        }
    }
}
