//! The web app as files: which files make it (what `rocketjudge site` copies and `rocketjudge serve`
//! answers, nothing else), and its Content-Security-Policy, defined once in `web/csp.js`.

use std::path::Path;

use anyhow::{bail, Result};

/// The app's files and folders, relative to the repository root (after `scripts/build-web.sh`).
pub const FILES: &[&str] = &["index.html", "bench.html", "sw.js", "web", "pkg", "pkg-threads", "benchmarks/mt-bench", "README.md"];

/// The pages, each repeating the policy in a `<meta>` tag.
pub const PAGES: [&str; 3] = ["index.html", "bench.html", "web/formats.html"];

/// Where the policy is defined (and, in a static copy, read by `sw.js`).
pub const POLICY_FILE: &str = "web/csp.js";

/// `web/csp.js` as compiled in: the one definition of the policy.
const POLICY_JS: &str = include_str!("../../../web/csp.js");

/// Whether `rel` (a `/`-separated path below the served folder, no leading `/`) is one of the
/// app's files: below an entry of [`FILES`], or the models folder (`models/manifest.json`, a judge
/// `models/NAME.gguf` and the parts `models/NAME.gguf.partNNN` of a static copy). No part of the path
/// may be hidden (`.git`, `.env`, …), empty, `.` or `..`.
pub fn is_app_file(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    if parts.iter().any(|p| p.is_empty() || p.starts_with('.')) {
        return false;
    }
    if let ["models", name] = parts.as_slice() {
        return *name == "manifest.json" || model_file_name(name);
    }
    FILES.iter().any(|f| {
        let f: Vec<&str> = f.split('/').collect();
        parts.len() >= f.len() && parts[..f.len()] == f[..]
    })
}

/// `NAME.gguf` or `NAME.gguf.partNNN`.
fn model_file_name(name: &str) -> bool {
    match name.split_once(".gguf") {
        Some((stem, rest)) => {
            !stem.is_empty()
                && (rest.is_empty() || rest.strip_prefix(".part").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())))
        }
        None => false,
    }
}

/// The string constant `key: "…"` of `web/csp.js`.
fn policy_part(key: &str) -> &'static str {
    let start = format!("{key}: \"");
    let line =
        POLICY_JS.lines().map(str::trim).find_map(|l| l.strip_prefix(start.as_str())).unwrap_or_else(|| panic!("web/csp.js has no {key}"));
    line.strip_suffix("\",").unwrap_or_else(|| panic!("web/csp.js: {key} must be one line ending in \","))
}

/// The policy as the pages' `<meta>` tags carry it.
pub fn meta_policy() -> &'static str {
    policy_part("policy")
}

/// The policy as a response header: the meta policy plus what only a header can say; `extra`
/// origins are allowed for model downloads (connect-src).
pub fn header_policy(extra: &[String]) -> String {
    format!("{}; {}", with_connect_origins(meta_policy(), extra), policy_part("headerOnly"))
}

/// `policy` with `origins` added to its connect-src.
pub fn with_connect_origins(policy: &str, origins: &[String]) -> String {
    let needle = "connect-src 'self'";
    let mut added = String::from(needle);
    for o in origins {
        added.push(' ');
        added.push_str(o);
    }
    policy.replacen(needle, &added, 1)
}

/// Add `origin` to the connect-src of the policy in a page or `web/csp.js` (`site --model-base`):
/// exactly one `connect-src 'self'` must be there.
pub fn allow_origin_in_file(path: &Path, origin: &str) -> Result<()> {
    let text = std::fs::read_to_string(path)?;
    let needle = "connect-src 'self'";
    if text.matches(needle).count() != 1 {
        bail!("{}: cannot find the policy's `{needle}` to add {origin} to", path.display());
    }
    std::fs::write(path, with_connect_origins(&text, &[origin.to_string()]))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(rel: &str) -> String {
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel)).unwrap()
    }

    #[test]
    fn every_page_carries_the_one_policy() {
        let meta = meta_policy();
        assert!(meta.starts_with("default-src 'none';") && meta.contains("connect-src 'self';"), "{meta}");
        for page in PAGES {
            let html = repo(page);
            let tag = format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{meta}\">");
            assert_eq!(html.matches("Content-Security-Policy").count(), 1, "{page}: one policy tag");
            assert!(html.contains(&tag), "{page}: its policy tag differs from web/csp.js");
        }
        // sw.js takes the header policy from web/csp.js itself.
        let sw = repo("sw.js");
        assert!(
            sw.contains("importScripts('web/csp.js')") && sw.contains("'Content-Security-Policy', CSP"),
            "sw.js must add web/csp.js's policy"
        );
        assert_eq!(header_policy(&[]), format!("{meta}; frame-ancestors 'none'"));
        assert!(header_policy(&["https://huggingface.co".into()]).contains("connect-src 'self' https://huggingface.co;"));
    }

    #[test]
    fn the_app_is_a_closed_set_of_files() {
        for ok in [
            "index.html",
            "sw.js",
            "web/app.js",
            "web/vendor/wllama/x.wasm",
            "pkg/a_bg.wasm",
            "benchmarks/mt-bench/queries.jsonl",
            "models/manifest.json",
            "models/qwen.gguf",
            "models/qwen.gguf.part007",
            "README.md",
        ] {
            assert!(is_app_file(ok), "{ok}");
        }
        for no in [
            ".git/config",
            "Cargo.toml",
            "target/release/rocketjudge",
            "web/.hidden",
            "web/../Cargo.toml",
            "web//app.js",
            "",
            "web/",
            "models/x.bin",
            "models/.gguf",
            "models/a.gguf.part",
            "models/a.gguf.partx",
            "benchmarks/other/x",
            "benchmarks",
            "crate/cli/src/main.rs",
            ".env",
            "scripts/app.sh",
        ] {
            assert!(!is_app_file(no), "{no}");
        }
    }

    #[test]
    fn a_model_origin_joins_the_policy_file_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("csp.js");
        std::fs::write(&file, POLICY_JS).unwrap();
        allow_origin_in_file(&file, "https://models.example").unwrap();
        assert!(std::fs::read_to_string(&file).unwrap().contains("connect-src 'self' https://models.example;"));
        assert!(allow_origin_in_file(&dir.path().join("missing.js"), "https://x").is_err());
    }
}
