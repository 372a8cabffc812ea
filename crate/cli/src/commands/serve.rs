//! `rocketjudge serve`: the app on 127.0.0.1, as any static host would serve it, plus the judge
//! models of the local cache under `/models/<name>.gguf`.
//!
//! Every response carries the Content-Security-Policy of the app (the same policy `index.html`
//! declares in a meta tag for static hosting): scripts, workers and connections only to this origin
//! and the model hosts given with --model-origin. Nothing the page holds can be sent anywhere else.

use std::io::Read;
use std::net::IpAddr;
use std::path::{Component, Path, PathBuf};

use anyhow::{bail, Context};
use tiny_http::{Header, Method, Response, Server, StatusCode};

use crate::{models, CliResult};

/// Serve the web app (index.html, web/, pkg/, benchmarks/) and the cached judge models.
#[derive(clap::Args)]
pub struct Args {
    /// Folder to serve (the repository root, or a built copy of the site).
    #[arg(long, default_value = ".")]
    dir: PathBuf,
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Address to listen on. Loopback by default: the page is for you.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Extra origins the page may download models from (added to connect-src), e.g. https://huggingface.co.
    #[arg(long)]
    model_origin: Vec<String>,
}

/// The policy of the app. `extra` origins are allowed for model downloads only (connect-src).
pub fn content_security_policy(extra: &[String]) -> String {
    let connect = std::iter::once("'self'".to_string()).chain(extra.iter().cloned()).collect::<Vec<_>>().join(" ");
    format!(
        "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' blob:; connect-src {connect}; \
         img-src 'self' data: blob:; style-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; \
         form-action 'none'; frame-ancestors 'none'"
    )
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "jsonl" => "application/jsonl; charset=utf-8",
        "wasm" => "application/wasm",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "md" | "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Map a URL path to a file under `root`, refusing anything that would leave it.
fn resolve(root: &Path, url_path: &str) -> Option<PathBuf> {
    let path = url_path.split(['?', '#']).next().unwrap_or("/");
    let decoded = percent_decode(path)?;
    if let Some(name) = decoded.strip_prefix("/models/").and_then(|n| n.strip_suffix(".gguf")) {
        if !models::manifest().models.iter().any(|m| m.name == name) {
            return None;
        }
        let p = models::model_file(name);
        return p.is_file().then_some(p);
    }
    let rel = Path::new(decoded.trim_start_matches('/'));
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return None;
    }
    let mut p = root.join(rel);
    if p.is_dir() {
        p = p.join("index.html");
    }
    p.is_file().then_some(p)
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

pub fn run(a: Args) -> CliResult {
    let root = a.dir.canonicalize().with_context(|| format!("cannot serve {}", a.dir.display()))?;
    if !root.join("index.html").is_file() {
        bail!("{} has no index.html", root.display());
    }
    let server = Server::http((a.host, a.port)).map_err(|e| anyhow::anyhow!("cannot listen on {}:{}: {e}", a.host, a.port))?;
    let csp = content_security_policy(&a.model_origin);
    eprintln!("serving {} on http://{}:{}/ (Ctrl-C to stop)", root.display(), a.host, a.port);
    let (root, csp) = (std::sync::Arc::new(root), std::sync::Arc::new(csp));
    for req in server.incoming_requests() {
        let (root, csp) = (root.clone(), csp.clone());
        std::thread::spawn(move || respond(req, &root, &csp));
    }
    Ok(())
}

/// Answer one request (on its own thread: a large download the browser reads slowly must not hold up
/// the page's other requests).
fn respond(req: tiny_http::Request, root: &Path, csp: &str) {
    let headers = |ct: &str| {
        let mut h = vec![
            Header::from_bytes("Content-Security-Policy", csp.as_bytes()).unwrap(),
            Header::from_bytes("X-Content-Type-Options", "nosniff").unwrap(),
            Header::from_bytes("Referrer-Policy", "no-referrer").unwrap(),
            // Cross-origin isolation lets the CPU fallback use threads where browsers allow it.
            Header::from_bytes("Cross-Origin-Opener-Policy", "same-origin").unwrap(),
            Header::from_bytes("Cross-Origin-Embedder-Policy", "require-corp").unwrap(),
            Header::from_bytes("Cache-Control", "no-cache").unwrap(),
        ];
        h.push(Header::from_bytes("Content-Type", ct).unwrap());
        h
    };
    if !matches!(req.method(), Method::Get | Method::Head) {
        let _ = req.respond(Response::from_string("method not allowed").with_status_code(StatusCode(405)));
        return;
    }
    match resolve(root, req.url()) {
        Some(path) => match std::fs::File::open(&path) {
            Ok(mut f) => {
                let len = f.metadata().map(|m| m.len()).unwrap_or(0);
                let range = req.headers().iter().find(|h| h.field.equiv("Range")).map(|h| h.value.as_str().to_string());
                let mut resp_headers = headers(content_type(&path));
                resp_headers.push(Header::from_bytes("Accept-Ranges", "bytes").unwrap());
                if let Some((start, end)) = range.as_deref().and_then(|r| parse_range(r, len)) {
                    use std::io::Seek;
                    let _ = f.seek(std::io::SeekFrom::Start(start));
                    resp_headers.push(Header::from_bytes("Content-Range", format!("bytes {start}-{end}/{len}")).unwrap());
                    let body = f.take(end - start + 1);
                    let r = Response::new(StatusCode(206), resp_headers, body, Some((end - start + 1) as usize), None);
                    let _ = req.respond(r);
                } else {
                    let r = Response::new(StatusCode(200), resp_headers, f, Some(len as usize), None);
                    let _ = req.respond(r);
                }
            }
            Err(_) => {
                let _ = req.respond(Response::from_string("cannot read file").with_status_code(StatusCode(500)));
            }
        },
        None => {
            let mut r = Response::from_string("not found").with_status_code(StatusCode(404));
            for h in headers("text/plain; charset=utf-8") {
                r.add_header(h);
            }
            let _ = req.respond(r);
        }
    }
}

/// `bytes=a-b`, `bytes=a-` or `bytes=-n` within a file of `len` bytes.
fn parse_range(r: &str, len: u64) -> Option<(u64, u64)> {
    let spec = r.strip_prefix("bytes=")?;
    let (a, b) = spec.split_once('-')?;
    let (start, end) = match (a.trim(), b.trim()) {
        ("", n) => (len.checked_sub(n.parse().ok()?)?, len.checked_sub(1)?),
        (a, "") => (a.parse().ok()?, len.checked_sub(1)?),
        (a, b) => (a.parse().ok()?, b.parse::<u64>().ok()?.min(len.checked_sub(1)?)),
    };
    (start <= end && end < len).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_cannot_escape_the_root() {
        let dir = std::env::temp_dir();
        assert!(resolve(&dir, "/../etc/passwd").is_none());
        assert!(resolve(&dir, "/%2e%2e/etc/passwd").is_none());
        assert!(resolve(&dir, "/models/../../x.gguf").is_none());
        assert!(resolve(&dir, "/models/not-a-model.gguf").is_none());
    }

    #[test]
    fn ranges() {
        assert_eq!(parse_range("bytes=0-99", 1000), Some((0, 99)));
        assert_eq!(parse_range("bytes=900-", 1000), Some((900, 999)));
        assert_eq!(parse_range("bytes=-100", 1000), Some((900, 999)));
        assert_eq!(parse_range("bytes=5-2", 1000), None);
        assert_eq!(parse_range("bytes=0-5000", 1000), Some((0, 999)));
    }

    #[test]
    fn policy_allows_only_self_and_given_origins() {
        let p = content_security_policy(&["https://huggingface.co".into()]);
        assert!(p.contains("connect-src 'self' https://huggingface.co;"));
        assert!(p.starts_with("default-src 'none';"));
    }
}
