//! `rocketjudge site`: the app as a folder any static host serves as is (GitHub Pages, an S3
//! bucket, `python3 -m http.server`).
//!
//! The folder holds the page (index.html, the service worker sw.js that makes it cross-origin
//! isolated where the host cannot send the headers, web/, pkg/ and the threaded pkg-threads/), the
//! bundled MT-Bench (queries,
//! checklists, demo answers, reference rankings), and `models/manifest.json` naming the judges the
//! page offers. A judge is either copied in, cut into parts of at most --part-mb MB that the page
//! joins as it downloads (GitHub Pages refuses files over 100 MB), or left where --model-base says,
//! whose origin is then added to the page's Content-Security-Policy. Either way the page checks the
//! joined bytes against the manifest's SHA-256.
//!
//! The folder is built beside the target and swapped in at the end, so an interrupted build never
//! leaves half a site; an existing folder is replaced only if an earlier `rocketjudge site` made it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::models::{self, manifest::MANIFEST};
use crate::CliResult;

/// What marks a folder as made by this command (it may then be replaced).
const MARKER: &str = ".rocketjudge-site.json";

/// The files of the app, relative to the repository root (after `scripts/build-web.sh`).
/// The pages, each with its Content-Security-Policy meta tag.
const PAGES: [&str; 2] = ["index.html", "bench.html"];
const APP: &[&str] = &["index.html", "bench.html", "sw.js", "web", "pkg", "pkg-threads", "benchmarks/mt-bench", "README.md"];

/// Build the app as a static site.
///
/// Copies the page, the wasm engine, the bundled MT-Bench and the judge models into --out, ready
/// for any static host. Models are cut into parts of at most --part-mb MB (the page joins them and
/// checks the SHA-256), or, with --model-base, left on another host.
#[derive(clap::Args)]
pub struct Args {
    /// The folder to write. An existing one is replaced only if `rocketjudge site` made it.
    #[arg(long)]
    out: PathBuf,
    /// The repository root, after `scripts/build-web.sh` built pkg/ and web/vendor/.
    #[arg(long, default_value = ".")]
    app: PathBuf,
    /// The judges the page offers (manifest names, comma-separated); fetched into the cache first
    /// when missing. Default: the two the app recommends (with WebGPU / without).
    #[arg(long, value_delimiter = ',', default_value = "qwen2.5-coder-1.5b,qwen2.5-coder-0.5b")]
    models: Vec<String>,
    /// Do not copy the models: the page downloads `<BASE>/<name>.gguf` (that host must allow CORS);
    /// BASE's origin is added to the page's connect-src.
    #[arg(long)]
    model_base: Option<String>,
    /// The largest model part, in MB (10^6 bytes).
    #[arg(long, default_value_t = 95)]
    part_mb: u64,
}

pub fn run(a: Args) -> CliResult {
    if a.part_mb == 0 {
        bail!("--part-mb must be at least 1");
    }
    let app = a.app.canonicalize().with_context(|| format!("cannot read the app folder {}", a.app.display()))?;
    if !app.join("pkg/rocketjudge_wasm_bg.wasm").is_file() || !app.join("web/vendor").is_dir() {
        bail!("{} has no built web app (pkg/, web/vendor/): run scripts/build-web.sh first", app.display());
    }
    let base = match &a.model_base {
        Some(b) => {
            let u = url::Url::parse(b).with_context(|| format!("--model-base {b} is not a URL"))?;
            if !matches!(u.scheme(), "https" | "http") {
                bail!("--model-base must be an http(s) URL");
            }
            Some(u)
        }
        None => None,
    };
    let all = models::manifest();
    let mut wanted = Vec::new();
    for name in &a.models {
        let e = all
            .models
            .iter()
            .find(|e| &e.name == name)
            .with_context(|| format!("--models: unknown model `{name}` (see `rocketjudge models list`)"))?;
        wanted.push(e.clone());
    }
    check_target(&a.out)?;

    let parent = a.out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    let name = a.out.file_name().and_then(|n| n.to_str()).context("--out must name a folder")?;
    let building = parent.join(format!(".{name}.building"));
    if building.exists() {
        std::fs::remove_dir_all(&building).with_context(|| format!("cannot remove {}", building.display()))?;
    }
    for rel in APP {
        let src = app.join(rel);
        if src.exists() {
            copy_tree(&src, &building.join(rel))?;
        }
    }
    // GitHub Pages: serve files as they are (no Jekyll).
    std::fs::write(building.join(".nojekyll"), "")?;

    let mut manifest: Value = serde_json::from_str(MANIFEST)?;
    let mut entries = Vec::new();
    let mut copied = 0u64;
    for e in &wanted {
        let mut entry = manifest["models"].as_array().and_then(|m| m.iter().find(|x| x["name"] == e.name.as_str())).cloned().unwrap();
        entry.as_object_mut().unwrap().remove("source");
        match &base {
            Some(b) => {
                let url = b.join(&format!("{}.gguf", e.name)).with_context(|| format!("--model-base {b}"))?;
                entry["web"] = json!({ "url": url.as_str() });
            }
            None => {
                let file = models::resolve(&e.name)?;
                let parts = split(&file, &building.join("models"), &e.name, a.part_mb * 1_000_000)?;
                copied += e.size;
                entry["web"] = json!({ "parts": parts });
                eprintln!("{}: {} parts of at most {} MB", e.name, parts.len(), a.part_mb);
            }
        }
        entries.push(entry);
    }
    manifest["models"] = Value::Array(entries);
    manifest["about"] = json!("The judges this static copy of rocketjudge offers (built by `rocketjudge site`). `web.parts` are joined in order; `web.url` is fetched as is; the SHA-256 is checked either way.");
    std::fs::create_dir_all(building.join("models"))?;
    std::fs::write(building.join("models/manifest.json"), serde_json::to_string_pretty(&manifest)?)?;
    if let Some(b) = &base {
        for page in PAGES {
            allow_model_origin(&building.join(page), &b.origin().ascii_serialization())?;
        }
    }
    let marker = json!({ "built_by": format!("rocketjudge {}", env!("CARGO_PKG_VERSION")), "models": a.models, "part_mb": a.part_mb, "model_base": a.model_base });
    std::fs::write(building.join(MARKER), serde_json::to_string_pretty(&marker)?)?;

    // Swap the finished folder in; the old one (made by this command, checked above) goes.
    if a.out.exists() {
        let old = parent.join(format!(".{name}.old"));
        let _ = std::fs::remove_dir_all(&old);
        std::fs::rename(&a.out, &old).with_context(|| format!("cannot move the old {} aside", a.out.display()))?;
        std::fs::rename(&building, &a.out).with_context(|| format!("cannot move the new site into {}", a.out.display()))?;
        std::fs::remove_dir_all(&old).with_context(|| format!("cannot remove {}", old.display()))?;
    } else {
        std::fs::rename(&building, &a.out).with_context(|| format!("cannot move the new site into {}", a.out.display()))?;
    }
    let total = dir_size(&a.out)?;
    eprintln!(
        "static site in {}: {:.0} MB ({:.0} MB of models); serve it with any static host, e.g. `python3 -m http.server -d {}`",
        a.out.display(),
        total as f64 / 1e6,
        copied as f64 / 1e6,
        a.out.display()
    );
    if total > 1_000_000_000 {
        eprintln!("note: GitHub Pages publishes sites of at most 1 GB; use fewer --models, or --model-base to host the models elsewhere");
    }
    Ok(())
}

/// Refuse to replace a folder that holds anything but an earlier site build.
fn check_target(out: &Path) -> Result<()> {
    if !out.exists() {
        return Ok(());
    }
    if !out.is_dir() {
        bail!("--out {} is a file, not a folder", out.display());
    }
    let empty = std::fs::read_dir(out)?.next().is_none();
    if !empty && !out.join(MARKER).is_file() {
        bail!("--out {} is not empty and was not made by `rocketjudge site`; choose another folder (nothing was changed)", out.display());
    }
    Ok(())
}

/// Cut `file` into `<dir>/<name>.gguf.partNNN` of at most `max` bytes; returns [{url, size}].
fn split(file: &Path, dir: &Path, name: &str, max: u64) -> Result<Vec<Value>> {
    std::fs::create_dir_all(dir)?;
    let mut f = std::fs::File::open(file).with_context(|| format!("cannot read {}", file.display()))?;
    let mut parts = Vec::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let part = format!("{name}.gguf.part{:03}", parts.len());
        let path = dir.join(&part);
        let mut out = std::fs::File::create(&path).with_context(|| format!("cannot write {}", path.display()))?;
        let mut n = 0u64;
        while n < max {
            let want = buf.len().min((max - n) as usize);
            let k = f.read(&mut buf[..want])?;
            if k == 0 {
                break;
            }
            out.write_all(&buf[..k])?;
            n += k as u64;
        }
        if n == 0 {
            drop(out);
            std::fs::remove_file(&path)?;
            break;
        }
        parts.push(json!({ "url": format!("models/{part}"), "size": n }));
        if n < max {
            break;
        }
    }
    Ok(parts)
}

/// Add `origin` to the connect-src of a page's Content-Security-Policy meta tag.
fn allow_model_origin(index: &Path, origin: &str) -> Result<()> {
    let html = std::fs::read_to_string(index)?;
    let needle = "connect-src 'self'";
    if html.matches(needle).count() != 1 {
        bail!("{}: cannot find the policy's `{needle}` to add {origin} to", index.display());
    }
    std::fs::write(index, html.replace(needle, &format!("{needle} {origin}")))?;
    Ok(())
}

fn copy_tree(src: &Path, dst: &Path) -> Result<()> {
    if src.is_dir() {
        std::fs::create_dir_all(dst).with_context(|| format!("cannot create {}", dst.display()))?;
        for e in std::fs::read_dir(src).with_context(|| format!("cannot read {}", src.display()))? {
            let e = e?;
            copy_tree(&e.path(), &dst.join(e.file_name()))?;
        }
    } else {
        if let Some(p) = dst.parent() {
            std::fs::create_dir_all(p)?;
        }
        std::fs::copy(src, dst).with_context(|| format!("cannot copy {} to {}", src.display(), dst.display()))?;
    }
    Ok(())
}

fn dir_size(p: &Path) -> Result<u64> {
    let mut total = 0;
    for e in std::fs::read_dir(p)? {
        let e = e?;
        let m = e.metadata()?;
        total += if m.is_dir() { dir_size(&e.path())? } else { m.len() };
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_join_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.gguf");
        let data: Vec<u8> = (0..2_500_123u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&file, &data).unwrap();
        for (max, count) in [(1_000_000u64, 3usize), (2_500_123, 1), (2_500_122, 2), (5_000_000, 1)] {
            let out = dir.path().join(format!("p{max}"));
            let parts = split(&file, &out, "m", max).unwrap();
            assert_eq!(parts.len(), count, "max {max}");
            let mut joined = Vec::new();
            for p in &parts {
                let bytes = std::fs::read(out.join(p["url"].as_str().unwrap().trim_start_matches("models/"))).unwrap();
                assert!(bytes.len() as u64 <= max && bytes.len() as u64 == p["size"].as_u64().unwrap());
                joined.extend(bytes);
            }
            assert!(joined == data, "max {max}: the parts do not join to the file");
        }
    }

    #[test]
    fn a_folder_that_is_not_a_site_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("thesis.tex"), "mine").unwrap();
        let e = check_target(dir.path()).unwrap_err().to_string();
        assert!(e.contains("not made by `rocketjudge site`"), "{e}");
        std::fs::write(dir.path().join(MARKER), "{}").unwrap();
        check_target(dir.path()).unwrap();
    }

    #[test]
    fn the_model_origin_joins_connect_src() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index.html");
        std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../index.html"), &index).unwrap();
        allow_model_origin(&index, "https://models.example").unwrap();
        assert!(std::fs::read_to_string(&index).unwrap().contains("connect-src 'self' https://models.example;"));
    }
}
