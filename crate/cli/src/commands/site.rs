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

use super::CliResult;
use crate::app;
use crate::models::{self, manifest::MANIFEST};

/// What marks a folder as made by this command (it may then be replaced).
const MARKER: &str = ".rocketjudge-site.json";

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
    check_outside(&app, &a.out)?;

    let parent = a.out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    let name = a.out.file_name().and_then(|n| n.to_str()).context("--out must name a folder")?;
    let building = parent.join(format!(".{name}.building"));
    let old = parent.join(format!(".{name}.old"));
    clear_own(&building)?;
    clear_own(&old)?;
    // Marked at once: a build interrupted here leaves a folder the next run knows it may remove.
    std::fs::create_dir_all(&building).with_context(|| format!("cannot create {}", building.display()))?;
    std::fs::write(building.join(MARKER), r#"{"building": true}"#)?;
    for rel in app::FILES {
        if app.join(rel).exists() {
            copy_app(&app, Path::new(rel), &building)?;
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
        for file in app::PAGES.iter().chain([&app::POLICY_FILE]) {
            app::allow_origin_in_file(&building.join(file), &b.origin().ascii_serialization())?;
        }
    }
    let marker = json!({ "built_by": format!("rocketjudge {}", env!("CARGO_PKG_VERSION")), "models": a.models, "part_mb": a.part_mb, "model_base": a.model_base });
    std::fs::write(building.join(MARKER), serde_json::to_string_pretty(&marker)?)?;

    // Swap the finished folder in; the old one (made by this command, checked above) goes.
    if a.out.exists() {
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

/// Refuse an --out that the build itself copies: inside one of the app's folders ([`app::FILES`]) a
/// site would be copied into the next site, and into itself. The app folder and its other
/// folders are fine (`site --out site` in the repository).
fn check_outside(app: &Path, out: &Path) -> Result<()> {
    // The nearest existing folder of --out, resolved: --out itself need not exist yet.
    let absolute = std::path::absolute(out).with_context(|| format!("cannot resolve --out {}", out.display()))?;
    let existing = absolute.ancestors().find(|p| p.exists()).unwrap_or(Path::new("/"));
    let rest = absolute.strip_prefix(existing).unwrap_or(Path::new(""));
    let resolved = existing.canonicalize().with_context(|| format!("cannot resolve {}", existing.display()))?.join(rest);
    if app.starts_with(&resolved) {
        bail!("--out {} holds the app folder {}; choose a folder outside it (nothing was changed)", out.display(), app.display());
    }
    for rel in app::FILES {
        if resolved.starts_with(app.join(rel)) {
            bail!(
                "--out {} is inside the app's {rel}, which a site build copies: the next build would copy this site into itself; \
                 choose a folder outside {rel} (nothing was changed)",
                out.display()
            );
        }
    }
    Ok(())
}

/// Remove a folder this command left beside --out (`.NAME.building`, `.NAME.old`): only when it is
/// empty or carries the marker; anything else there is refused, and nothing is changed.
fn clear_own(dir: &Path) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(dir) else { return Ok(()) };
    let ours = meta.is_dir() && (dir.join(MARKER).is_file() || std::fs::read_dir(dir)?.next().is_none());
    if !ours {
        bail!("{} is in the way and was not made by `rocketjudge site`; move it elsewhere (nothing was changed)", dir.display());
    }
    std::fs::remove_dir_all(dir).with_context(|| format!("cannot remove {}", dir.display()))
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

/// Copy the app's file or folder `rel` from `app` into `out`, keeping only the app's files
/// ([`app::is_app_file`]: no hidden ones). A symlink is followed only to a file inside `app` (and
/// copied as a file); one that leads elsewhere, or to a folder, is skipped with a warning naming it.
fn copy_app(app: &Path, rel: &Path, out: &Path) -> Result<()> {
    let src = app.join(rel);
    let Some(rel_str) = rel.to_str() else {
        eprintln!("warning: skipped {}: not a UTF-8 name", src.display());
        return Ok(());
    };
    let meta = std::fs::symlink_metadata(&src).with_context(|| format!("cannot read {}", src.display()))?;
    if meta.is_dir() {
        for e in std::fs::read_dir(&src).with_context(|| format!("cannot read {}", src.display()))? {
            copy_app(app, &rel.join(e?.file_name()), out)?;
        }
        return Ok(());
    }
    if !app::is_app_file(rel_str) {
        return Ok(());
    }
    if meta.file_type().is_symlink() {
        let target = src.canonicalize().ok();
        match target.filter(|t| t.starts_with(app) && t.is_file()) {
            Some(_) => {}
            None => {
                let to = std::fs::read_link(&src).map(|t| t.display().to_string()).unwrap_or_default();
                eprintln!("warning: skipped {}: a symlink to {to}, which is not a file inside {}", src.display(), app.display());
                return Ok(());
            }
        }
    } else if !meta.is_file() {
        eprintln!("warning: skipped {}: not a regular file", src.display());
        return Ok(());
    }
    let dst = out.join(rel);
    if let Some(p) = dst.parent() {
        std::fs::create_dir_all(p).with_context(|| format!("cannot create {}", p.display()))?;
    }
    std::fs::copy(&src, &dst).with_context(|| format!("cannot copy {} to {}", src.display(), dst.display()))?;
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
        app::allow_origin_in_file(&index, "https://models.example").unwrap();
        assert!(std::fs::read_to_string(&index).unwrap().contains("connect-src 'self' https://models.example;"));
    }

    #[test]
    fn only_app_files_inside_the_tree_are_copied() {
        let dir = tempfile::tempdir().unwrap();
        let (app, out) = (dir.path().join("app"), dir.path().join("out"));
        std::fs::create_dir_all(app.join("web/sub")).unwrap();
        std::fs::write(app.join("web/app.js"), "app").unwrap();
        std::fs::write(app.join("web/.secret"), "no").unwrap();
        std::fs::write(dir.path().join("outside.txt"), "outside").unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside.txt"), app.join("web/out.js")).unwrap();
        std::os::unix::fs::symlink("/etc", app.join("web/etc")).unwrap();
        std::os::unix::fs::symlink(app.join("web/app.js"), app.join("web/sub/alias.js")).unwrap();
        std::os::unix::fs::symlink(app.join("web"), app.join("web/sub/loop")).unwrap();
        let app = app.canonicalize().unwrap();
        copy_app(&app, Path::new("web"), &out).unwrap();
        let mut got: Vec<String> = Vec::new();
        let mut stack = vec![out.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let e = e.unwrap();
                let meta = std::fs::symlink_metadata(e.path()).unwrap();
                assert!(!meta.file_type().is_symlink(), "{} is a symlink in the site", e.path().display());
                if meta.is_dir() {
                    stack.push(e.path());
                } else {
                    got.push(e.path().strip_prefix(&out).unwrap().display().to_string());
                }
            }
        }
        got.sort();
        assert_eq!(got, ["web/app.js", "web/sub/alias.js"]);
        assert_eq!(std::fs::read_to_string(out.join("web/sub/alias.js")).unwrap(), "app");
    }

    #[test]
    fn only_folders_this_command_marked_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = dir.path().join(".site.building");
        std::fs::create_dir_all(&theirs).unwrap();
        std::fs::write(theirs.join("notes.txt"), "mine").unwrap();
        let e = clear_own(&theirs).unwrap_err().to_string();
        assert!(e.contains("not made by `rocketjudge site`") && theirs.join("notes.txt").is_file(), "{e}");
        let file = dir.path().join(".site.old");
        std::fs::write(&file, "a file").unwrap();
        assert!(clear_own(&file).is_err() && file.is_file());
        let ours = dir.path().join(".other.building");
        std::fs::create_dir_all(ours.join("web")).unwrap();
        std::fs::write(ours.join(MARKER), r#"{"building": true}"#).unwrap();
        clear_own(&ours).unwrap();
        assert!(!ours.exists());
        clear_own(&dir.path().join("absent")).unwrap();
    }
}
