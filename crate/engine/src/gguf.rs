//! GGUF v2/v3 reader, hardened for files from anywhere.
//!
//! The header (metadata and tensor infos) is parsed from a byte prefix of the file; tensor data is read
//! later by offset, one tensor at a time, so the caller decides how bytes arrive (a file, an HTTP
//! stream, a browser `Blob`). Nothing is allocated from a claimed size before that claim is checked
//! against the bytes actually present and against fixed limits: a file that lies about counts, lengths,
//! dimensions, types or offsets is refused with [`GgufError`], in time and memory bounded by the prefix.

use std::collections::BTreeMap;
use std::fmt;

use crate::quant::GgmlType;

const MAGIC: &[u8; 4] = b"GGUF";
/// Limits that no real judge model comes near; a file above them is refused, not trusted.
pub const MAX_TENSORS: u64 = 1 << 16;
pub const MAX_KV: u64 = 1 << 16;
pub const MAX_DIMS: u32 = 4;
/// The largest header we are willing to parse (Gemma 3's 262k-token vocabulary takes 6.5 MB, the
/// packaged judges' headers 1.8–6.5 MB). A claim beyond it is refused before any byte is read for it.
pub const MAX_HEADER_BYTES: usize = 64 << 20;
pub const MAX_STRING_BYTES: u64 = 16 << 20;
/// Array elements in the whole header (Gemma 3 has 786k: tokens, scores, token types). Each element
/// is decoded into a [`Value`] of 32 bytes from as little as one byte of the file, so this bounds the
/// memory a header can make us spend (64 MiB), whatever its bytes say.
pub const MAX_ARRAY_ELEMENTS: u64 = 1 << 21;

#[derive(Debug, Clone, PartialEq)]
pub enum GgufError {
    /// The prefix ends before the header does: give at least this many bytes.
    NeedMore(usize),
    /// The file is not a usable GGUF; the message says where and why.
    Invalid(String),
}

impl fmt::Display for GgufError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GgufError::NeedMore(n) => write!(f, "GGUF header is incomplete: {n} bytes needed"),
            GgufError::Invalid(m) => write!(f, "invalid GGUF file: {m}"),
        }
    }
}

impl std::error::Error for GgufError {}

fn bad<T>(msg: impl Into<String>) -> Result<T, GgufError> {
    Err(GgufError::Invalid(msg.into()))
}

/// A metadata value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    U64(u64),
    I64(i64),
    F32(f32),
    F64(f64),
    Bool(bool),
    String(String),
    Array(Vec<Value>),
}

impl Value {
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::U8(v) => Some(v.into()),
            Value::U16(v) => Some(v.into()),
            Value::U32(v) => Some(v.into()),
            Value::U64(v) => Some(v),
            Value::I8(v) => u64::try_from(v).ok(),
            Value::I16(v) => u64::try_from(v).ok(),
            Value::I32(v) => u64::try_from(v).ok(),
            Value::I64(v) => u64::try_from(v).ok(),
            Value::Bool(v) => Some(v.into()),
            _ => None,
        }
    }
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::F32(v) => Some(v.into()),
            Value::F64(v) => Some(v),
            _ => self.as_u64().map(|v| v as f64).or(match *self {
                Value::I8(v) => Some(v.into()),
                Value::I16(v) => Some(v.into()),
                Value::I32(v) => Some(v.into()),
                Value::I64(v) => Some(v as f64),
                _ => None,
            }),
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// Where a tensor's bytes are and how to read them.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInfo {
    pub name: String,
    /// GGUF order: `dims[0]` is the fastest-varying (row length), as ggml's `ne`.
    pub dims: Vec<u64>,
    pub dtype: GgmlType,
    /// Offset from the start of the file (tensor data offset already added).
    pub offset: u64,
    pub n_bytes: u64,
}

impl TensorInfo {
    pub fn n_elements(&self) -> u64 {
        self.dims.iter().product()
    }
    /// Rows × row length for a 2-D (or 1-D) tensor.
    pub fn rows_cols(&self) -> (usize, usize) {
        let cols = self.dims.first().copied().unwrap_or(1) as usize;
        (self.n_elements() as usize / cols.max(1), cols)
    }
}

/// A parsed GGUF header.
#[derive(Debug, Clone)]
pub struct Gguf {
    pub version: u32,
    pub metadata: BTreeMap<String, Value>,
    pub tensors: Vec<TensorInfo>,
    /// Byte offset where tensor data starts.
    pub data_offset: u64,
    /// Where the last tensor ends (the file must be at least this long).
    pub data_end: u64,
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Array elements decoded so far (bounded by [`MAX_ARRAY_ELEMENTS`]).
    elements: u64,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: u64) -> Result<&'a [u8], GgufError> {
        let end = (self.pos as u64).checked_add(n).ok_or_else(|| GgufError::Invalid("length overflows".into()))?;
        if end > MAX_HEADER_BYTES as u64 {
            return bad(format!("header would exceed {MAX_HEADER_BYTES} bytes at byte {}", self.pos));
        }
        if end as usize > self.buf.len() {
            // Ask for more, with headroom so a caller reading in chunks does not crawl.
            return Err(GgufError::NeedMore((end as usize).max(self.buf.len() * 2).min(MAX_HEADER_BYTES)));
        }
        let s = &self.buf[self.pos..end as usize];
        self.pos = end as usize;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, GgufError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, GgufError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn string(&mut self, what: &str) -> Result<String, GgufError> {
        let at = self.pos;
        let n = self.u64()?;
        if n > MAX_STRING_BYTES {
            return bad(format!("{what}: string of {n} bytes at byte {at} exceeds the {MAX_STRING_BYTES}-byte limit"));
        }
        let bytes = self.take(n)?;
        String::from_utf8(bytes.to_vec()).or_else(|_| bad(format!("{what}: string at byte {at} is not valid UTF-8")))
    }
    fn value(&mut self, ty: u32, key: &str, depth: u32) -> Result<Value, GgufError> {
        Ok(match ty {
            0 => Value::U8(self.u8()?),
            1 => Value::I8(self.u8()? as i8),
            2 => Value::U16(self.u16()?),
            3 => Value::I16(self.u16()? as i16),
            4 => Value::U32(self.u32()?),
            5 => Value::I32(self.u32()? as i32),
            6 => Value::F32(f32::from_bits(self.u32()?)),
            7 => match self.u8()? {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                b => return bad(format!("metadata `{key}`: boolean byte {b} is neither 0 nor 1")),
            },
            8 => Value::String(self.string(key)?),
            9 => {
                if depth > 0 {
                    return bad(format!("metadata `{key}`: nested arrays are not supported"));
                }
                let elem = self.u32()?;
                let n = self.u64()?;
                // Every element takes at least one byte: a count beyond the bytes left is a lie (or a
                // truncated file), found before anything is allocated for it.
                let min = match elem {
                    0 | 1 | 7 => 1,
                    2 | 3 => 2,
                    4..=6 => 4,
                    8 | 10..=12 => 8,
                    9 => return bad(format!("metadata `{key}`: nested arrays are not supported")),
                    t => return bad(format!("metadata `{key}`: unknown array element type {t}")),
                };
                if n > MAX_ARRAY_ELEMENTS - self.elements {
                    return bad(format!(
                        "metadata `{key}`: array of {n} elements exceeds the limit of {MAX_ARRAY_ELEMENTS} array elements in a header"
                    ));
                }
                self.elements += n;
                let need = n.checked_mul(min).ok_or_else(|| GgufError::Invalid(format!("metadata `{key}`: array length {n} overflows")))?;
                if need > (MAX_HEADER_BYTES - self.pos) as u64 {
                    return bad(format!("metadata `{key}`: array of {n} elements cannot fit in a header"));
                }
                if self.pos as u64 + need > self.buf.len() as u64 {
                    return Err(GgufError::NeedMore(((self.pos as u64 + need) as usize).max(self.buf.len() * 2).min(MAX_HEADER_BYTES)));
                }
                let mut v = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    v.push(self.value(elem, key, depth + 1)?);
                }
                Value::Array(v)
            }
            10 => Value::U64(self.u64()?),
            11 => Value::I64(self.u64()? as i64),
            12 => Value::F64(f64::from_bits(self.u64()?)),
            t => return bad(format!("metadata `{key}`: unknown value type {t}")),
        })
    }
}

impl Gguf {
    /// Parse the header from a prefix of the file. `file_len` (when known) bounds tensor offsets.
    /// Returns [`GgufError::NeedMore`] when the prefix is too short.
    pub fn parse(prefix: &[u8], file_len: Option<u64>) -> Result<Self, GgufError> {
        let mut c = Cursor { buf: prefix, pos: 0, elements: 0 };
        if c.take(4)? != MAGIC {
            return bad("wrong magic: this is not a GGUF file");
        }
        let version = c.u32()?;
        if !(2..=3).contains(&version) {
            return bad(format!("GGUF version {version} is not supported (2 and 3 are)"));
        }
        let n_tensors = c.u64()?;
        let n_kv = c.u64()?;
        if n_tensors > MAX_TENSORS {
            return bad(format!("claims {n_tensors} tensors; the limit is {MAX_TENSORS}"));
        }
        if n_kv > MAX_KV {
            return bad(format!("claims {n_kv} metadata entries; the limit is {MAX_KV}"));
        }
        let mut metadata = BTreeMap::new();
        for _ in 0..n_kv {
            let key = c.string("metadata key")?;
            let ty = c.u32()?;
            let v = c.value(ty, &key, 0)?;
            if metadata.insert(key.clone(), v).is_some() {
                return bad(format!("metadata key `{key}` appears twice"));
            }
        }
        let alignment = match metadata.get("general.alignment") {
            None => 32,
            Some(v) => match v.as_u64() {
                Some(a) if a > 0 && a.is_power_of_two() && a <= 1 << 20 => a,
                _ => return bad(format!("general.alignment {v:?} must be a power of two")),
            },
        };
        let mut raw = Vec::with_capacity(n_tensors.min(4096) as usize);
        let mut names = std::collections::HashSet::new();
        for _ in 0..n_tensors {
            let name = c.string("tensor name")?;
            let n_dims = c.u32()?;
            if n_dims == 0 || n_dims > MAX_DIMS {
                return bad(format!("tensor `{name}` has {n_dims} dimensions (1 to {MAX_DIMS} supported)"));
            }
            let mut dims = Vec::with_capacity(n_dims as usize);
            for _ in 0..n_dims {
                dims.push(c.u64()?);
            }
            let ty = c.u32()?;
            let offset = c.u64()?;
            let dtype = GgmlType::from_u32(ty)
                .ok_or_else(|| GgufError::Invalid(format!("tensor `{name}` has quantization type {ty}, which is not supported")))?;
            let n_el = dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d)).filter(|&n| n > 0 && n < (1 << 40));
            let Some(n_el) = n_el else {
                return bad(format!("tensor `{name}` has dimensions {dims:?} whose product is zero or overflows"));
            };
            if dims[0] % dtype.block_size() as u64 != 0 {
                return bad(format!(
                    "tensor `{name}`: row length {} is not a multiple of the {:?} block size {}",
                    dims[0],
                    dtype,
                    dtype.block_size()
                ));
            }
            let n_bytes = n_el / dtype.block_size() as u64 * dtype.block_bytes() as u64;
            if offset % alignment != 0 {
                return bad(format!("tensor `{name}`: offset {offset} is not aligned to {alignment}"));
            }
            if !names.insert(name.clone()) {
                return bad(format!("tensor `{name}` appears twice"));
            }
            raw.push(TensorInfo { name, dims, dtype, offset, n_bytes });
        }
        let data_offset = (c.pos as u64).div_ceil(alignment) * alignment;
        let mut data_end = data_offset;
        for t in &mut raw {
            let start =
                data_offset.checked_add(t.offset).ok_or_else(|| GgufError::Invalid(format!("tensor `{}`: offset overflows", t.name)))?;
            let end = start.checked_add(t.n_bytes).ok_or_else(|| GgufError::Invalid(format!("tensor `{}`: size overflows", t.name)))?;
            if let Some(len) = file_len {
                if end > len {
                    return bad(format!("tensor `{}` ends at byte {end} but the file has {len} bytes (truncated or corrupt)", t.name));
                }
            }
            t.offset = start;
            data_end = data_end.max(end);
        }
        // Tensors must not overlap: sort by offset and check neighbours.
        let mut by_offset: Vec<&TensorInfo> = raw.iter().collect();
        by_offset.sort_by_key(|t| t.offset);
        for w in by_offset.windows(2) {
            if w[0].offset + w[0].n_bytes > w[1].offset {
                return bad(format!("tensors `{}` and `{}` overlap", w[0].name, w[1].name));
            }
        }
        Ok(Gguf { version, metadata, tensors: raw, data_offset, data_end })
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.get(key)
    }

    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// `general.architecture`.
    pub fn architecture(&self) -> Option<&str> {
        self.get("general.architecture").and_then(Value::as_str)
    }
}

/// A minimal GGUF writer (version 3), for tests that build small models and for tools.
#[derive(Default)]
pub struct Writer {
    kv: Vec<(String, Value)>,
    tensors: Vec<(String, Vec<u64>, GgmlType, Vec<u8>)>,
}

impl Writer {
    pub fn kv(&mut self, key: &str, v: Value) -> &mut Self {
        self.kv.push((key.to_string(), v));
        self
    }
    /// Add a tensor: `dims` in GGUF order (row length first) and its raw block bytes.
    pub fn tensor(&mut self, name: &str, dims: &[u64], dtype: GgmlType, bytes: Vec<u8>) -> &mut Self {
        self.tensors.push((name.to_string(), dims.to_vec(), dtype, bytes));
        self
    }
    pub fn to_bytes(&self) -> Vec<u8> {
        const ALIGN: usize = 32;
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(&(self.tensors.len() as u64).to_le_bytes());
        out.extend_from_slice(&(self.kv.len() as u64).to_le_bytes());
        fn s(out: &mut Vec<u8>, x: &str) {
            out.extend_from_slice(&(x.len() as u64).to_le_bytes());
            out.extend_from_slice(x.as_bytes());
        }
        fn ty(v: &Value) -> u32 {
            match v {
                Value::U8(_) => 0,
                Value::I8(_) => 1,
                Value::U16(_) => 2,
                Value::I16(_) => 3,
                Value::U32(_) => 4,
                Value::I32(_) => 5,
                Value::F32(_) => 6,
                Value::Bool(_) => 7,
                Value::String(_) => 8,
                Value::Array(_) => 9,
                Value::U64(_) => 10,
                Value::I64(_) => 11,
                Value::F64(_) => 12,
            }
        }
        fn val(out: &mut Vec<u8>, v: &Value) {
            match v {
                Value::U8(x) => out.push(*x),
                Value::I8(x) => out.push(*x as u8),
                Value::U16(x) => out.extend_from_slice(&x.to_le_bytes()),
                Value::I16(x) => out.extend_from_slice(&x.to_le_bytes()),
                Value::U32(x) => out.extend_from_slice(&x.to_le_bytes()),
                Value::I32(x) => out.extend_from_slice(&x.to_le_bytes()),
                Value::F32(x) => out.extend_from_slice(&x.to_le_bytes()),
                Value::Bool(x) => out.push(u8::from(*x)),
                Value::String(x) => s(out, x),
                Value::Array(a) => {
                    out.extend_from_slice(&a.first().map(ty).unwrap_or(4).to_le_bytes());
                    out.extend_from_slice(&(a.len() as u64).to_le_bytes());
                    for e in a {
                        val(out, e);
                    }
                }
                Value::U64(x) => out.extend_from_slice(&x.to_le_bytes()),
                Value::I64(x) => out.extend_from_slice(&x.to_le_bytes()),
                Value::F64(x) => out.extend_from_slice(&x.to_le_bytes()),
            }
        }
        for (k, v) in &self.kv {
            s(&mut out, k);
            out.extend_from_slice(&ty(v).to_le_bytes());
            val(&mut out, v);
        }
        let mut offset = 0u64;
        let mut offsets = Vec::new();
        for (name, dims, dtype, bytes) in &self.tensors {
            s(&mut out, name);
            out.extend_from_slice(&(dims.len() as u32).to_le_bytes());
            for d in dims {
                out.extend_from_slice(&d.to_le_bytes());
            }
            out.extend_from_slice(&(*dtype as u32).to_le_bytes());
            out.extend_from_slice(&offset.to_le_bytes());
            offsets.push(offset);
            offset += (bytes.len() as u64).div_ceil(ALIGN as u64) * ALIGN as u64;
        }
        out.resize(out.len().div_ceil(ALIGN) * ALIGN, 0);
        for (_, _, _, bytes) in &self.tensors {
            out.extend_from_slice(bytes);
            out.resize(out.len().div_ceil(ALIGN) * ALIGN, 0);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Vec<u8> {
        let mut w = Writer::default();
        w.kv("general.architecture", Value::String("llama".into()))
            .kv("tokenizer.ggml.tokens", Value::Array(vec![Value::String("a".into()), Value::String("b".into())]))
            .tensor("w", &[32, 2], GgmlType::F32, vec![0u8; 256]);
        w.to_bytes()
    }

    #[test]
    fn round_trip() {
        let b = small();
        let g = Gguf::parse(&b, Some(b.len() as u64)).unwrap();
        assert_eq!(g.architecture(), Some("llama"));
        assert_eq!(g.tensors[0].rows_cols(), (2, 32));
        assert_eq!(g.data_end as usize, b.len());
    }

    #[test]
    fn prefix_too_short_asks_for_more() {
        let b = small();
        assert!(matches!(Gguf::parse(&b[..20], None), Err(GgufError::NeedMore(_))));
    }

    #[test]
    fn lies_are_refused() {
        let b = small();
        let mut wrong = b.clone();
        wrong[0] = b'X';
        assert!(matches!(Gguf::parse(&wrong, None), Err(GgufError::Invalid(m)) if m.contains("magic")));
        // Truncated file: the tensor ends past the end.
        assert!(matches!(Gguf::parse(&b, Some(b.len() as u64 - 1)), Err(GgufError::Invalid(m)) if m.contains("truncated")));
        // Absurd tensor count.
        let mut many = b.clone();
        many[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(Gguf::parse(&many, None), Err(GgufError::Invalid(_))));
        // An array that claims more elements than bytes exist asks for more, never allocates them.
        let mut w = Writer::default();
        w.kv("x", Value::Array(vec![Value::U32(1)]));
        let mut arr = w.to_bytes();
        let count_at = 24 + 8 + 1 + 4 + 4;
        arr[count_at..count_at + 8].copy_from_slice(&(u64::MAX / 8).to_le_bytes());
        assert!(Gguf::parse(&arr, None).is_err());
    }
}
