//! What the CPU and WebGPU backends decide alike, in one place: which keys a query sees, RoPE angles,
//! where the attention scale applies, and the checks behind the misuse policy of [`Backend`].
//!
//! [`Backend`]: super::Backend

use super::{AttnLayout, AttnParams, Rope};
use crate::gguf::TensorInfo;
use crate::EngineError;

/// The error a recorded misuse becomes at the next fallible call (see [`super::Backend`]).
pub fn misuse_error(msg: &str) -> EngineError {
    EngineError::Backend(misuse_message(msg))
}

/// How a misuse is worded, on both backends.
pub fn misuse_message(msg: &str) -> String {
    format!("backend misuse: {msg}")
}

/// Visible keys of each query row, in one index space (the cached prefix first, then the new rows):
/// prefix keys `[a, pe)` (`pe` = `prefix`; `a` > 0 under a sliding window) and keys of the row's own
/// segment `[b, e)` up to and including the row itself.
pub fn visible_keys(layout: &AttnLayout, window: Option<usize>, prefix: usize) -> Vec<[usize; 4]> {
    let n_new = layout.segments.len();
    // Each new row's segment starts here (segments are contiguous runs of rows).
    let mut seg_start = vec![0usize; n_new];
    for t in 1..n_new {
        seg_start[t] = if layout.segments[t] == layout.segments[t - 1] { seg_start[t - 1] } else { t };
    }
    layout
        .query_rows
        .iter()
        .map(|&r| {
            let pos = layout.positions[r] as usize;
            let a = window.map_or(0, |w| (pos + 1).saturating_sub(w)).min(prefix);
            let b = window.map_or(seg_start[r], |w| seg_start[r].max((r + 1).saturating_sub(w)));
            [a, prefix, prefix + b, prefix + r + 1]
        })
        .collect()
}

impl AttnParams {
    /// The factors applied to Q before the product and to the scores after it: Q is scaled first
    /// for Gemma, the scores otherwise (as llama.cpp's graphs do; the f16 rounding of Q differs).
    pub fn pre_post_scale(&self) -> (f32, f32) {
        if self.scale_q_first {
            (self.scale, 1.0)
        } else {
            (1.0, self.scale)
        }
    }
}

impl Rope<'_> {
    /// `(cos, sin)` of every (position, pair): `positions.len() × head_dim / 2` entries. f32 inverse
    /// frequencies, f32 products and libm's cos/sin, computed on the host for both backends (a GPU's
    /// trigonometry on arguments of thousands of radians is not to be trusted).
    pub fn table(&self, positions: &[u32], head_dim: usize) -> Vec<[f32; 2]> {
        let inv_freq = self.inv_freq(head_dim);
        let mut table = vec![[0.0; 2]; positions.len() * inv_freq.len()];
        for (&pos, out) in positions.iter().zip(table.chunks_exact_mut(inv_freq.len().max(1))) {
            self.angles(pos, &inv_freq, out);
        }
        table
    }

    /// The inverse frequency of each of a head's `head_dim / 2` pairs ([`Rope::table`]).
    pub fn inv_freq(&self, head_dim: usize) -> Vec<f32> {
        (0..head_dim / 2)
            .map(|i| {
                let f = self.base.powf(-2.0 * i as f32 / head_dim as f32);
                self.freq_factors.map_or(f, |ff| f / ff[i])
            })
            .collect()
    }

    /// `(cos, sin)` of each pair at position `pos` into `out`: one position's row of
    /// [`Rope::table`], for a backend that computes the rows in parallel.
    pub fn angles(&self, pos: u32, inv_freq: &[f32], out: &mut [[f32; 2]]) {
        let p = pos as f32 / self.scale;
        for (o, f) in out.iter_mut().zip(inv_freq) {
            let a = p * f;
            *o = [a.cos(), a.sin()];
        }
    }

    /// The two elements of a head that pair `i` (of `half`) rotates.
    pub fn pair(&self, i: usize, half: usize) -> (usize, usize) {
        if self.neox {
            (i, i + half)
        } else {
            (2 * i, 2 * i + 1)
        }
    }
}

/// Shapes of a matrix (rows, columns) as the checks see them.
type Shape = (usize, usize);

pub fn check_matmul(x: Shape, w: Shape) -> Result<(), String> {
    if x.1 != w.1 {
        return Err(format!("matmul: x has {} columns, the weight has {}", x.1, w.1));
    }
    Ok(())
}

pub fn check_same_shape(op: &str, a: Shape, b: Shape) -> Result<(), String> {
    if a != b {
        return Err(format!("{op}: {}×{} and {}×{} differ in shape", a.0, a.1, b.0, b.1));
    }
    Ok(())
}

/// RMSNorm groups: `group` (or whole rows) must divide the row and the norm must cover a group.
/// Returns the group size.
pub fn check_rms_norm(x: Shape, group: Option<usize>, w_len: usize) -> Result<usize, String> {
    let g = group.unwrap_or(x.1);
    if g == 0 || !x.1.is_multiple_of(g) || w_len < g {
        return Err(format!("rms_norm: {} columns in groups of {g} with a norm of {w_len}", x.1));
    }
    Ok(g)
}

pub fn check_rope(x: Shape, positions: usize, head_dim: usize, rope: &Rope) -> Result<(), String> {
    if positions != x.0 || head_dim == 0 || !x.1.is_multiple_of(head_dim) || !head_dim.is_multiple_of(2) {
        return Err(format!("rope: {positions} positions for {} rows, head_dim {head_dim}, {} columns", x.0, x.1));
    }
    if let Some(f) = rope.freq_factors {
        if f.len() != head_dim / 2 {
            return Err(format!("rope: {} frequency factors for a head of {head_dim}", f.len()));
        }
    }
    Ok(())
}

pub fn check_select_rows(x: Shape, rows: &[usize]) -> Result<(), String> {
    if rows.iter().any(|&r| r >= x.0) {
        return Err(format!("select_rows: a row index beyond {} rows", x.0));
    }
    Ok(())
}

/// Attention shapes: `q` one row per query, `k`/`v` one row per new row of the layout, the cache as
/// wide as the KV heads, whole groups of query heads per KV head.
pub fn check_attention(q: Shape, k: Shape, v: Shape, cache_kv_dim: usize, layout: &AttnLayout, p: &AttnParams) -> Result<(), String> {
    let hd = p.head_dim;
    let nq = layout.query_rows.len();
    let kv_dim = p.n_head_kv * hd;
    if q.0 != nq
        || q.1 != p.n_head * hd
        || k.1 != kv_dim
        || v != k
        || layout.positions.len() != k.0
        || layout.segments.len() != k.0
        || layout.query_rows.iter().any(|&r| r >= k.0)
        || cache_kv_dim != kv_dim
        || p.n_head_kv == 0
        || !p.n_head.is_multiple_of(p.n_head_kv)
        || !hd.is_multiple_of(2)
    {
        return Err(format!(
            "attention: q {}×{}, k {}×{}, {nq} query rows, {} heads of {hd} over {} KV heads, cache width {cache_kv_dim}",
            q.0, q.1, k.0, k.1, p.n_head, p.n_head_kv
        ));
    }
    Ok(())
}

/// Room for `rows` more tokens in a cache of `capacity` holding `len`, and keys and values as wide
/// as the cache.
pub fn check_append(len: usize, capacity: usize, kv_dim: usize, k: Shape, v: Shape) -> Result<(), EngineError> {
    if len + k.0 > capacity {
        return Err(EngineError::Backend(format!("KV cache full: {len} + {} > {capacity} tokens", k.0)));
    }
    if k.1 != kv_dim || v != k {
        return Err(EngineError::Backend(format!(
            "append_cache: keys {}×{} and values {}×{} for a cache of width {kv_dim}",
            k.0, k.1, v.0, v.1
        )));
    }
    Ok(())
}

/// Values of a cache of `capacity` tokens of `kv_dim` keys (or values), without overflow.
pub fn cache_values(capacity: usize, kv_dim: usize) -> Result<usize, EngineError> {
    capacity.checked_mul(kv_dim).ok_or_else(|| EngineError::Backend("KV cache size overflows".into()))
}

/// The bytes given for a tensor are as many as its header says.
pub fn check_tensor_bytes(info: &TensorInfo, bytes: &[u8]) -> Result<(), EngineError> {
    if bytes.len() as u64 != info.n_bytes {
        return Err(EngineError::Model(format!("tensor `{}`: {} bytes given, {} expected", info.name, bytes.len(), info.n_bytes)));
    }
    Ok(())
}

/// Token ids within the `rows` of a table (`what`: "the embedding table", "the output head").
pub fn check_ids(ids: &[u32], rows: usize, what: &str) -> Result<(), EngineError> {
    match ids.iter().find(|&&id| id as usize >= rows) {
        Some(id) => Err(EngineError::Model(format!("token id {id} is outside {what} ({rows} rows)"))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_keys_follow_segments_and_windows() {
        // Prefix of 10; new rows: segment 0 (rows 0-2), segment 1 (rows 3-4), at positions 10-12, 10-11.
        let layout = AttnLayout { positions: vec![10, 11, 12, 10, 11], segments: vec![0, 0, 0, 1, 1], query_rows: vec![1, 4] };
        assert_eq!(visible_keys(&layout, None, 10), vec![[0, 10, 10, 12], [0, 10, 13, 15]]);
        // A window of 3: position 11 sees 9..=11, i.e. prefix key 9 and new rows 0-1.
        assert_eq!(visible_keys(&layout, Some(3), 10), vec![[9, 10, 10, 12], [9, 10, 13, 15]]);
        // A window of 1 leaves each row only itself.
        assert_eq!(visible_keys(&layout, Some(1), 10), vec![[10, 10, 11, 12], [10, 10, 14, 15]]);
    }

    #[test]
    fn rope_factors_divide_the_frequencies() {
        let plain = Rope { base: 10000.0, scale: 2.0, neox: false, freq_factors: None };
        let factors = [1.0, 4.0];
        let scaled = Rope { freq_factors: Some(&factors), ..plain };
        let (a, b) = (plain.table(&[0, 7], 4), scaled.table(&[0, 7], 4));
        assert_eq!(a[0], [1.0, 0.0]);
        assert_eq!(a[2], b[2]);
        let angle = 3.5f32 * (10000f32.powf(-0.5) / 4.0);
        assert_eq!(b[3], [angle.cos(), angle.sin()]);
        assert!(check_rope((2, 8), 2, 4, &Rope { freq_factors: Some(&[1.0]), ..plain }).is_err());
    }
}
