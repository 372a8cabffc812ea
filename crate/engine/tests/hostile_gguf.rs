//! GGUF files that lie: every one is refused with a clear error, without a panic, and without
//! allocating from the sizes it claims. Peak heap is measured with a counting allocator around each
//! parse; for files on disk that claim gigabytes, the peak resident set (VmHWM) is checked too.
//!
//! Every hostile file is generated here from a small valid one; nothing large is stored.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use rocketjudge_engine::backend::cpu::Cpu;
use rocketjudge_engine::gguf::{Gguf, GgufError, Value, Writer, MAX_ARRAY_ELEMENTS, MAX_HEADER_BYTES, MAX_TENSORS};
use rocketjudge_engine::load::{judge_from_file, read_header};
use rocketjudge_engine::quant::GgmlType;

struct Counting;
static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            let now = NOW.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(l);
        if !p.is_null() {
            let now = NOW.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            if new >= l.size() {
                let now = NOW.fetch_add(new - l.size(), Ordering::Relaxed) + new - l.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                NOW.fetch_sub(l.size() - new, Ordering::Relaxed);
            }
        }
        q
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        NOW.fetch_sub(l.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static A: Counting = Counting;

/// The heap is process-wide: tests that measure it run one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Run `f` and return its result with the heap's peak growth while it ran.
fn peak_heap<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let r = f();
    (r, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

/// Run `f` and return its result with the growth of the process's peak resident set (VmHWM, reset
/// through `/proc/self/clear_refs` first), or `None` where Linux does not offer that.
fn peak_rss<T>(f: impl FnOnce() -> T) -> (T, Option<usize>) {
    fn hwm_kib() -> Option<usize> {
        let s = std::fs::read_to_string("/proc/self/status").ok()?;
        let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
        l.split_whitespace().nth(1)?.parse().ok()
    }
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let before = if reset { hwm_kib() } else { None };
    let r = f();
    let grew = before.and_then(|b| hwm_kib().map(|a| a.saturating_sub(b) * 1024));
    (r, grew)
}

/// What a refusal may use, whatever the file claims.
const LIMIT: usize = 8 << 20;
/// What parsing a file on disk that claims gigabytes may use (heap and resident set).
const DISK_LIMIT: usize = 64 << 20;

/// A small valid model-like file: metadata with a vocabulary array and two tensors.
fn valid() -> Vec<u8> {
    let mut w = Writer::default();
    w.kv("general.architecture", Value::String("llama".into()))
        .kv("general.alignment", Value::U32(32))
        .kv("tokenizer.ggml.tokens", Value::Array((0..8).map(|i| Value::String(format!("t{i}"))).collect()))
        .kv("flag", Value::Bool(true))
        .tensor("a", &[32, 4], GgmlType::F32, vec![0u8; 512])
        .tensor("b", &[32, 2], GgmlType::Q8_0, vec![0u8; 68]);
    w.to_bytes()
}

/// Parse `bytes` as a whole file through the loader's header reader (the path the CLI takes);
/// return the error text and the peak heap growth while parsing.
fn refuse(bytes: &[u8]) -> (String, usize) {
    let (r, peak) = peak_heap(|| read_header(|n| Ok(bytes[..n.min(bytes.len())].to_vec()), Some(bytes.len() as u64)));
    match r {
        Ok(_) => panic!("a hostile file was accepted"),
        Err(e) => (e.to_string(), peak),
    }
}

fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).position(|w| w == needle).expect("field present")
}

/// Byte offset just past the key `key`: its value type (u32), then the value.
fn value_at(bytes: &[u8], key: &str) -> usize {
    find(bytes, key.as_bytes()) + key.len()
}

/// Byte offset of a tensor info's `n_dims` (u32); dims (u64 each, two here) follow, then the type
/// (u32) at +20 and the offset (u64) at +24.
fn info_of(bytes: &[u8], name: u8) -> usize {
    find(bytes, &[1, 0, 0, 0, 0, 0, 0, 0, name]) + 9
}

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Every lie of the list (and a few more), each with what its error must say.
fn hostile_cases() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let v = valid();
    let mut cases: Vec<(&str, Vec<u8>, &str)> = Vec::new();
    let mut patch = |what: &'static str, expect: &'static str, f: &dyn Fn(&mut Vec<u8>)| {
        let mut c = v.clone();
        f(&mut c);
        cases.push((what, c, expect));
    };
    // Magic and version.
    patch("wrong magic", "wrong magic", &|c| c[..4].copy_from_slice(b"GGML"));
    patch("version 0", "version 0", &|c| put_u32(c, 4, 0));
    patch("version 1", "version 1", &|c| put_u32(c, 4, 1));
    patch("version 99", "version 99", &|c| put_u32(c, 4, 99));
    // Absurd counts.
    patch("tensor count u64::MAX", "tensors; the limit", &|c| put_u64(c, 8, u64::MAX));
    patch("tensor count just over the limit", "tensors; the limit", &|c| put_u64(c, 8, MAX_TENSORS + 1));
    patch("tensor count at the limit, two present", "GGUF", &|c| put_u64(c, 8, MAX_TENSORS));
    patch("metadata count 2^40", "metadata entries; the limit", &|c| put_u64(c, 16, 1 << 40));
    patch("metadata count 1000, four present", "GGUF", &|c| put_u64(c, 16, 1000));
    // String lengths past the end of the file.
    patch("key length 2^60", "exceeds the 16777216-byte limit", &|c| put_u64(c, 24, 1 << 60));
    patch("key length u64::MAX", "exceeds the 16777216-byte limit", &|c| put_u64(c, 24, u64::MAX));
    patch("key length 1 MiB in a 1 KiB file", "truncated", &|c| put_u64(c, 24, 1 << 20));
    patch("string value past the end", "truncated", &|c| {
        let at = value_at(c, "general.architecture") + 4;
        put_u64(c, at, 4000);
    });
    patch("array element string past the end", "truncated", &|c| {
        let at = find(c, &[2, 0, 0, 0, 0, 0, 0, 0, b't', b'3']);
        put_u64(c, at, 1 << 20);
    });
    // Array lengths past the end of the file, or past any header.
    let count_at = value_at(&v, "tokenizer.ggml.tokens") + 4 + 4;
    patch("array count 2^40", "exceeds the limit", &|c| put_u64(c, count_at, 1 << 40));
    patch("array count u64::MAX", "exceeds the limit", &|c| put_u64(c, count_at, u64::MAX));
    patch("array count at the element limit in a 1 KiB file", "truncated", &|c| put_u64(c, count_at, MAX_ARRAY_ELEMENTS));
    patch("array count just over the element limit", "exceeds the limit", &|c| put_u64(c, count_at, MAX_ARRAY_ELEMENTS + 1));
    patch("array count 1000 in a 1 KiB file", "truncated", &|c| put_u64(c, count_at, 1000));
    // Unknown value types.
    patch("unknown value type", "unknown value type 77", &|c| {
        let at = value_at(c, "general.architecture");
        put_u32(c, at, 77);
    });
    patch("unknown array element type", "unknown array element type 13", &|c| put_u32(c, count_at - 4, 13));
    patch("nested array by element type", "nested", &|c| put_u32(c, count_at - 4, 9));
    patch("boolean byte 2", "boolean byte 2", &|c| {
        let at = value_at(c, "flag") + 4;
        c[at] = 2;
    });
    // Strings that are not UTF-8.
    patch("key not UTF-8", "not valid UTF-8", &|c| {
        let at = find(c, b"general.architecture");
        c[at] = 0xFF;
    });
    patch("value not UTF-8", "not valid UTF-8", &|c| {
        let at = find(c, b"llama");
        c[at + 1] = 0xC3;
    });
    // Alignment: zero, not a power of two, absurd, not a number.
    let align_at = value_at(&v, "general.alignment") + 4;
    for (what, a) in [("alignment 0", 0u32), ("alignment 24", 24), ("alignment 2^30", 1 << 30)] {
        patch(what, "alignment", &move |c| put_u32(c, align_at, a));
    }
    patch("alignment as a float", "alignment", &|c| put_u32(c, align_at - 4, 6));
    // Tensor infos.
    let a = info_of(&v, b'a');
    patch("zero dimensions", "0 dimensions", &|c| put_u32(c, a, 0));
    patch("nine dimensions", "9 dimensions", &|c| put_u32(c, a, 9));
    patch("a zero dimension", "zero or overflows", &|c| put_u64(c, a + 4, 0));
    patch("dimension product overflows u64", "zero or overflows", &|c| {
        put_u64(c, a + 4, 1 << 40);
        put_u64(c, a + 12, 1 << 40);
    });
    patch("dimension u64::MAX", "zero or overflows", &|c| {
        put_u64(c, a + 4, u64::MAX - 31);
        put_u64(c, a + 12, 2);
    });
    patch("2^45 elements", "zero or overflows", &|c| {
        put_u64(c, a + 4, 1 << 25);
        put_u64(c, a + 12, 1 << 20);
    });
    patch("unknown quantization type", "quantization type 999", &|c| put_u32(c, a + 20, 999));
    patch("removed quantization type Q4_2", "quantization type 4", &|c| put_u32(c, a + 20, 4));
    patch("row not whole blocks", "block size", &|c| {
        put_u64(c, a + 4, 33);
        put_u32(c, a + 20, GgmlType::Q8_0 as u32);
    });
    // Tensor data outside the file.
    patch("tensor offset 2^50", "truncated or corrupt", &|c| put_u64(c, a + 24, 1 << 50));
    patch("tensor offset overflows", "offset overflows", &|c| put_u64(c, a + 24, u64::MAX / 32 * 32));
    patch("tensor size past the end", "truncated or corrupt", &|c| put_u64(c, a + 12, 1 << 20));
    patch("misaligned tensor offset", "not aligned", &|c| put_u64(c, a + 24, 8));
    patch("overlapping tensors", "overlap", &|c| {
        let b = info_of(c, b'b');
        put_u64(c, b + 24, 256);
    });
    // Truncated files.
    cases.push(("truncated in the tensor data", v[..v.len() - 40].to_vec(), "truncated"));
    cases.push(("truncated in the header", v[..60].to_vec(), "truncated"));
    cases.push(("truncated inside the magic", v[..3].to_vec(), "truncated"));
    cases.push(("empty file", Vec::new(), "truncated"));
    // Repeated names.
    let mut w = Writer::default();
    w.tensor("x", &[32], GgmlType::F32, vec![0; 128]).tensor("x", &[32], GgmlType::F32, vec![0; 128]);
    cases.push(("duplicate tensor", w.to_bytes(), "appears twice"));
    let mut w = Writer::default();
    w.kv("k", Value::U8(1)).kv("k", Value::U8(2));
    cases.push(("duplicate key", w.to_bytes(), "appears twice"));
    let mut w = Writer::default();
    w.kv("nested", Value::Array(vec![Value::Array(vec![Value::U8(1)])]));
    cases.push(("nested array", w.to_bytes(), "nested"));
    cases
}

#[test]
fn the_valid_file_parses() {
    let b = valid();
    let g = Gguf::parse(&b, Some(b.len() as u64)).unwrap();
    assert_eq!(g.tensors.len(), 2);
    assert_eq!(g.get("flag"), Some(&Value::Bool(true)));
    assert!(g.data_end as usize <= b.len() && g.data_end as usize + 32 > b.len());
}

#[test]
fn every_lie_is_refused_in_bounded_memory() {
    let _g = serial();
    let cases = hostile_cases();
    for (what, bytes, expect) in &cases {
        let (err, peak) = refuse(bytes);
        assert!(err.contains("GGUF"), "{what}: error `{err}` does not say it is about the GGUF file");
        assert!(err.contains(expect), "{what}: error `{err}` does not mention `{expect}`");
        assert!(peak <= LIMIT, "{what}: parsing allocated {peak} bytes");
        // The same bytes as a streamed prefix of unknown length (the browser's path): an error or a
        // request for a bounded number of bytes more, never a panic.
        match Gguf::parse(bytes, None) {
            Err(GgufError::NeedMore(n)) => assert!(n > bytes.len() && n <= MAX_HEADER_BYTES, "{what}: asks for {n} bytes"),
            Err(GgufError::Invalid(_)) | Ok(_) => {}
        }
    }
    eprintln!("{} hostile GGUF files refused, each within {} MiB of heap", cases.len(), LIMIT >> 20);
}

/// Every prefix of a valid file, taken as the whole file, is refused as truncated; every byte of the
/// header replaced by a handful of values parses or is refused, never panics, never accepts a tensor
/// outside the file, and stays within the memory bound.
#[test]
fn truncations_and_byte_mutations_never_panic() {
    let _g = serial();
    let v = valid();
    let g = Gguf::parse(&v, Some(v.len() as u64)).unwrap();
    let mut tried = 0;
    for len in 0..v.len() {
        if len as u64 >= g.data_end {
            break;
        }
        let (err, peak) = refuse(&v[..len]);
        assert!(err.contains("truncated"), "prefix of {len} bytes: `{err}`");
        assert!(peak <= LIMIT);
        tried += 1;
    }
    let header = g.data_offset as usize;
    for at in 0..header {
        for x in [0x00u8, 0x01, 0x7F, 0x80, 0xFF, v[at] ^ 0x01, v[at] ^ 0x40] {
            if x == v[at] {
                continue;
            }
            let mut c = v.clone();
            c[at] = x;
            let (r, peak) = peak_heap(|| Gguf::parse(&c, Some(c.len() as u64)));
            assert!(peak <= LIMIT, "byte {at} = {x:#x}: parsing allocated {peak} bytes");
            if let Ok(g) = r {
                for t in &g.tensors {
                    assert!(t.offset + t.n_bytes <= c.len() as u64, "byte {at} = {x:#x}: tensor `{}` past the end", t.name);
                    let _ = (t.n_elements(), t.rows_cols());
                }
            }
            if let Err(GgufError::NeedMore(n)) = Gguf::parse(&c, None) {
                assert!(n <= MAX_HEADER_BYTES);
            }
            tried += 1;
        }
    }
    eprintln!("{tried} truncated or mutated GGUF files parsed or refused without a panic");
}

#[test]
fn need_more_is_not_an_allocation() {
    let _g = serial();
    // A prefix that ends inside a huge claimed string asks for more bytes instead of allocating them.
    let mut c = valid();
    put_u64(&mut c, 24, 1 << 20);
    let (r, peak) = peak_heap(|| Gguf::parse(&c[..40], None));
    assert!(matches!(r, Err(GgufError::NeedMore(n)) if ((1 << 20)..=MAX_HEADER_BYTES).contains(&n)), "{r:?}");
    assert!(peak < 4096, "{peak}");
}

/// A sparse file of `len` bytes starting with `header`.
fn sparse_file(dir: &std::path::Path, name: &str, header: &[u8], len: u64) -> std::path::PathBuf {
    let p = dir.join(name);
    let mut f = std::fs::File::create(&p).unwrap();
    f.write_all(header).unwrap();
    f.set_len(len).unwrap();
    f.seek(SeekFrom::Start(0)).unwrap();
    p
}

/// The bytes of a header: magic, version 3, `n_tensors`, `n_kv`, then `rest`.
fn header(n_tensors: u64, n_kv: u64, rest: &[u8]) -> Vec<u8> {
    let mut h = b"GGUF".to_vec();
    h.extend_from_slice(&3u32.to_le_bytes());
    h.extend_from_slice(&n_tensors.to_le_bytes());
    h.extend_from_slice(&n_kv.to_le_bytes());
    h.extend_from_slice(rest);
    h
}

fn kv_head(key: &str, ty: u32) -> Vec<u8> {
    let mut b = (key.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(key.as_bytes());
    b.extend_from_slice(&ty.to_le_bytes());
    b
}

/// Files on disk of a gigabyte (sparse: the zeros are real bytes to a reader, but take no disk) whose
/// headers make claims the bytes could satisfy: loading one through the CLI's path (`judge_from_file`)
/// is refused with the heap and the resident set each growing by less than 64 MiB.
#[test]
fn gigabyte_files_with_huge_claims_stay_within_64_mib() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    const GIB: u64 = 1 << 30;
    let mut files = Vec::new();
    // 30 million one-byte array elements: the zeros after the header would satisfy them, and each
    // would become a 32-byte `Value` (960 MB) were the count not checked against a fixed limit.
    let mut rest = kv_head("tokenizer.ggml.token_type", 9);
    rest.extend_from_slice(&0u32.to_le_bytes());
    rest.extend_from_slice(&30_000_000u64.to_le_bytes());
    files.push(("array of 30M u8", header(0, 1, &rest), "exceeds the limit"));
    // Strings of 8 bytes each (empty strings from the zeros): 10 million of them.
    let mut rest = kv_head("tokenizer.ggml.tokens", 9);
    rest.extend_from_slice(&8u32.to_le_bytes());
    rest.extend_from_slice(&10_000_000u64.to_le_bytes());
    files.push(("array of 10M strings", header(0, 1, &rest), "exceeds the limit"));
    // An array within the limits, its 8 MiB present: parsed, then refused as a judge (no tokenizer).
    let mut rest = kv_head("x", 9);
    rest.extend_from_slice(&10u32.to_le_bytes());
    rest.extend_from_slice(&(1u64 << 20).to_le_bytes());
    files.push(("array of 1M u64 (8 MiB, within the limits)", header(0, 1, &rest), ""));
    // A string of 2^40 bytes.
    let mut rest = kv_head("general.name", 8);
    rest.extend_from_slice(&(1u64 << 40).to_le_bytes());
    files.push(("string of 1 TiB", header(0, 1, &rest), "limit"));
    // 65536 tensor infos claimed, the zeros read as empty names with zero dimensions.
    files.push(("65536 tensors of zeros", header(MAX_TENSORS, 0, &[]), "0 dimensions"));
    // One tensor of 2^39 F32 elements (2 TiB of data) in a 1 GiB file.
    let mut rest = 1u64.to_le_bytes().to_vec();
    rest.push(b't');
    rest.extend_from_slice(&2u32.to_le_bytes());
    rest.extend_from_slice(&(1u64 << 20).to_le_bytes());
    rest.extend_from_slice(&(1u64 << 19).to_le_bytes());
    rest.extend_from_slice(&0u32.to_le_bytes());
    rest.extend_from_slice(&0u64.to_le_bytes());
    files.push(("tensor of 2 TiB", header(1, 0, &rest), "truncated or corrupt"));
    for (i, (what, h, expect)) in files.iter().enumerate() {
        let p = sparse_file(dir.path(), &format!("{i}.gguf"), h, GIB);
        let ((r, heap), rss) = peak_rss(|| peak_heap(|| judge_from_file(&p, Cpu::new(1).unwrap(), 4096, &mut |_, _| {}).map(|_| ())));
        assert!(heap < DISK_LIMIT, "{what}: the heap grew by {} MiB", heap >> 20);
        if let Some(rss) = rss {
            assert!(rss < DISK_LIMIT, "{what}: the resident set grew by {} MiB", rss >> 20);
        }
        let err = r.expect_err(what).to_string();
        assert!(err.contains(expect), "{what}: `{err}` does not mention `{expect}`");
        eprintln!("{what}: refused with a heap peak of {} KiB, resident set +{:?} KiB: {err}", heap >> 10, rss.map(|r| r >> 10));
    }
}
