//! `rocketjudge serve`: the app on 127.0.0.1, as any static host would serve it, plus the judge
//! models of the local cache under `/models/<name>.gguf`.
//!
//! Every response carries the Content-Security-Policy of the app (the same policy `index.html`
//! declares in a meta tag for static hosting): scripts, workers and connections only to this origin
//! and the model hosts given with --model-origin. Nothing the page holds can be sent anywhere else.

use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};

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
    let listener = TcpListener::bind((a.host, a.port)).map_err(|e| anyhow::anyhow!("cannot listen on {}:{}: {e}", a.host, a.port))?;
    let csp = content_security_policy(&a.model_origin);
    eprintln!("serving {} on http://{}:{}/ (Ctrl-C to stop)", root.display(), a.host, a.port);
    let site = Arc::new(Site { root, csp });
    for stream in listener.incoming().flatten() {
        let site = site.clone();
        std::thread::spawn(move || site.connection(stream));
    }
    Ok(())
}

/// What is served, and with which policy.
struct Site {
    root: PathBuf,
    csp: String,
}

/// A connection left idle this long is closed (browsers keep a few open between requests).
const IDLE: Duration = Duration::from_secs(120);

impl Site {
    /// Answer the requests of one connection, in order, on its own thread: a large download that the
    /// browser reads slowly holds up nothing else. (tiny_http, used before, could leave a new
    /// connection queued behind idle keep-alive ones, and a page load waited minutes for it.)
    fn connection(&self, stream: TcpStream) {
        let _ = stream.set_read_timeout(Some(IDLE));
        let Ok(write) = stream.try_clone() else { return };
        let mut reader = BufReader::new(stream);
        let mut out = BufWriter::new(write);
        while let Some(req) = read_request(&mut reader) {
            let keep = req.keep_alive;
            if self.respond(&req, &mut out).and_then(|_| out.flush()).is_err() || !keep {
                break;
            }
        }
    }

    fn respond(&self, req: &HttpRequest, out: &mut impl Write) -> std::io::Result<()> {
        if req.method != "GET" && req.method != "HEAD" {
            return self.simple(out, 405, "Method Not Allowed", "method not allowed", req);
        }
        let Some(path) = resolve(&self.root, &req.target) else {
            return self.simple(out, 404, "Not Found", "not found", req);
        };
        let Ok(mut f) = std::fs::File::open(&path) else {
            return self.simple(out, 500, "Internal Server Error", "cannot read file", req);
        };
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let range = req.range.as_deref().and_then(|r| parse_range(r, len));
        let (status, start, n) = match range {
            Some((a, b)) => (206, a, b - a + 1),
            None => (200, 0, len),
        };
        let mut head = self.head(status, if status == 206 { "Partial Content" } else { "OK" }, content_type(&path), n, req.keep_alive);
        head.push_str("Accept-Ranges: bytes\r\n");
        if let Some((a, b)) = range {
            head.push_str(&format!("Content-Range: bytes {a}-{b}/{len}\r\n"));
        }
        head.push_str("\r\n");
        out.write_all(head.as_bytes())?;
        if req.method == "GET" {
            f.seek(SeekFrom::Start(start))?;
            std::io::copy(&mut f.take(n), out)?;
        }
        Ok(())
    }

    /// A short text response.
    fn simple(&self, out: &mut impl Write, status: u16, reason: &str, body: &str, req: &HttpRequest) -> std::io::Result<()> {
        let mut head = self.head(status, reason, "text/plain; charset=utf-8", body.len() as u64, req.keep_alive);
        head.push_str("\r\n");
        out.write_all(head.as_bytes())?;
        if req.method != "HEAD" {
            out.write_all(body.as_bytes())?;
        }
        Ok(())
    }

    /// Status line and the headers every response carries.
    fn head(&self, status: u16, reason: &str, content_type: &str, len: u64, keep_alive: bool) -> String {
        format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Security-Policy: {}\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n\
             Cross-Origin-Opener-Policy: same-origin\r\nCross-Origin-Embedder-Policy: require-corp\r\nCache-Control: no-cache\r\n\
             Content-Type: {content_type}\r\nContent-Length: {len}\r\nConnection: {}\r\n",
            self.csp,
            if keep_alive { "keep-alive" } else { "close" }
        )
    }
}

/// The parts of a request this server uses.
struct HttpRequest {
    method: String,
    target: String,
    range: Option<String>,
    keep_alive: bool,
}

/// Read one request head (request line and headers; GET and HEAD carry no body). `None` at the end
/// of the connection, on a malformed head, or after a body of another method (which is answered 405
/// and the connection closed).
fn read_request(r: &mut impl BufRead) -> Option<HttpRequest> {
    let mut line = String::new();
    // Bound the head: a request line or header longer than this ends the connection.
    let mut read_line = |line: &mut String| -> Option<()> {
        line.clear();
        let n = r.by_ref().take(16 * 1024).read_line(line).ok()?;
        (n > 0 && line.ends_with('\n')).then_some(())
    };
    read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (method, target, version) = (parts.next()?.to_string(), parts.next()?.to_string(), parts.next()?.to_string());
    let mut req = HttpRequest { method, target, range: None, keep_alive: version == "HTTP/1.1" };
    let mut body = false;
    for _ in 0..100 {
        read_line(&mut line)?;
        let h = line.trim_end();
        if h.is_empty() {
            if body {
                req.keep_alive = false;
            }
            return Some(req);
        }
        let (name, value) = h.split_once(':')?;
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "range" => req.range = Some(value.to_string()),
            "connection" if value.eq_ignore_ascii_case("close") => req.keep_alive = false,
            "connection" if value.eq_ignore_ascii_case("keep-alive") => req.keep_alive = true,
            "content-length" | "transfer-encoding" => body = true,
            _ => {}
        }
    }
    None
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
    fn request_heads_keep_alive_and_end_where_they_should() {
        let mut r = std::io::Cursor::new(
            b"GET /a.js HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\n\r\nHEAD / HTTP/1.1\r\nConnection: close\r\n\r\n".to_vec(),
        );
        let a = read_request(&mut r).unwrap();
        assert_eq!((a.method.as_str(), a.target.as_str(), a.range.as_deref(), a.keep_alive), ("GET", "/a.js", Some("bytes=0-9"), true));
        let b = read_request(&mut r).unwrap();
        assert_eq!((b.method.as_str(), b.keep_alive), ("HEAD", false));
        assert!(read_request(&mut r).is_none(), "end of the connection");
        let http10 = read_request(&mut std::io::Cursor::new(b"GET / HTTP/1.0\r\n\r\n".to_vec())).unwrap();
        assert!(!http10.keep_alive);
        let post = read_request(&mut std::io::Cursor::new(b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc".to_vec())).unwrap();
        assert!(!post.keep_alive, "a body is never read: the connection closes after the 405");
        // A head that never ends, or a line beyond the bound, ends the connection.
        assert!(read_request(&mut std::io::Cursor::new(b"GET / HTTP/1.1\r\nHost: x".to_vec())).is_none());
        let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(20_000));
        assert!(read_request(&mut std::io::Cursor::new(long.into_bytes())).is_none());
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
