//! `rocketjudge serve`: the app on 127.0.0.1, as any static host would serve it, plus the judge
//! models of the local cache under `/models/<name>.gguf`.
//!
//! Built on hyper (HTTP/1.1, through axum's router and middleware) with tower-http's `ServeFile`
//! for the file semantics (ranges, 416, conditional requests, HEAD). What this module adds:
//! - **A closed set of files** ([`crate::app::is_app_file`]): the page, `web/`, the wasm packages,
//!   the bundled benchmark and the models; never a dotfile, `.git`, `target/` or a source file, and
//!   never a file a symlink takes outside `--dir`.
//! - **Loopback Host names only** (plus `--host` and `--allow-host`): a page on another site that
//!   rebinds its DNS name to 127.0.0.1 gets 403, so it cannot read what is served here.
//! - **Bounded connections**: a deadline for each request head (also the idle limit between
//!   requests), a write timeout (a client that stops reading is dropped), and a cap on open
//!   connections, on two worker threads. At the cap a newcomer takes the slot of the connection that
//!   has waited longest without a request under way, so a flood of slow heads cannot shut a user
//!   out; only when every slot is sending a response is a newcomer answered a whole 503.
//! - **The policy on every response** ([`crate::app::header_policy`], the same `web/csp.js` the pages
//!   and `sw.js` use), cross-origin isolation (COOP/COEP), nosniff, no referrer, no caching.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::AbortHandle;
use tower::ServiceExt;
use tower_http::services::ServeFile;
use tower_http::set_header::SetResponseHeaderLayer;

use super::CliResult;
use crate::{app, models};

/// Serve the web app (index.html, web/, pkg/, benchmarks/) and the cached judge models.
#[derive(clap::Args)]
pub struct Args {
    /// Folder to serve (the repository root, or a built copy of the site). Only the app's files in it
    /// are served.
    #[arg(long, default_value = ".")]
    dir: PathBuf,
    /// Port to listen on (0: any free one, named in the first line printed).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Address to listen on. Loopback by default: the page is for you.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// A host name the server answers to besides localhost, the loopback addresses and --host (a
    /// name this machine has on your network, with --host 0.0.0.0). Repeat for more.
    #[arg(long)]
    allow_host: Vec<String>,
    /// Extra origins the page may download models from (added to connect-src), e.g. https://huggingface.co.
    #[arg(long, value_parser = parse_origin)]
    model_origin: Vec<String>,
    /// Seconds a client has to send a whole request head; also how long an idle connection stays open.
    #[arg(long, default_value_t = 20, hide = true)]
    head_timeout: u64,
    /// Seconds a response may wait for the client to read before the connection is dropped.
    #[arg(long, default_value_t = 60, hide = true)]
    write_timeout: u64,
    /// Open connections served at once; more are answered 503.
    #[arg(long, default_value_t = 128, hide = true)]
    max_connections: usize,
}

pub fn run(a: Args) -> CliResult {
    let root = a.dir.canonicalize().with_context(|| format!("cannot serve {}", a.dir.display()))?;
    if !root.join("index.html").is_file() {
        bail!("{} has no index.html", root.display());
    }
    if a.max_connections == 0 || a.head_timeout == 0 || a.write_timeout == 0 {
        bail!("--max-connections, --head-timeout and --write-timeout must be at least 1");
    }
    let listener =
        std::net::TcpListener::bind((a.host, a.port)).map_err(|e| anyhow::anyhow!("cannot listen on {}:{}: {e}", a.host, a.port))?;
    listener.set_nonblocking(true)?;
    if !a.host.is_loopback() {
        eprintln!(
            "warning: listening on {} reaches beyond this computer: anyone who can connect may use the page and download the judge models. \
             Leave out --host to listen on 127.0.0.1 only.",
            a.host
        );
    }
    let site = Arc::new(Site::new(root, allowed_hosts(a.host, &a.allow_host)));
    let limits =
        Limits { head: Duration::from_secs(a.head_timeout), write: Duration::from_secs(a.write_timeout), connections: a.max_connections };
    eprintln!("serving {} on http://{}/ (Ctrl-C to stop)", site.root.display(), listener.local_addr()?);
    // Two threads answer every connection; file reads run on a small pool beside them.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).max_blocking_threads(8).enable_all().build()?;
    runtime.block_on(async move { accept(TcpListener::from_std(listener)?, router(site, &a.model_origin), limits).await })
}

/// `--model-origin`: an http(s) origin (scheme, host, optional port; nothing after them), as the
/// policy's connect-src names it. Anything else is refused rather than pasted into the header.
fn parse_origin(value: &str) -> Result<String, String> {
    let want = "an origin such as https://huggingface.co (scheme, host and port only)";
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("`{}` holds spaces or control characters; expected {want}", value.escape_debug()));
    }
    let url = url::Url::parse(value).map_err(|e| format!("`{}` is not a URL ({e}); expected {want}", value.escape_debug()))?;
    let bare =
        url.path() == "/" && url.query().is_none() && url.fragment().is_none() && url.username().is_empty() && url.password().is_none();
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() || !bare {
        return Err(format!("`{}` is not {want}", value.escape_debug()));
    }
    Ok(url.origin().ascii_serialization())
}

/// What the server allows a connection.
struct Limits {
    head: Duration,
    write: Duration,
    connections: usize,
}

/// What the accept loop knows of each open connection: whether a response is under way, and since
/// when it has been waiting for a request (accepted, or its last response sent).
struct Conn {
    busy: AtomicUsize,
    /// Milliseconds since the server started.
    waiting_since: AtomicU64,
}

/// The open connections, by number, with the handle that closes each.
type Open = Arc<Mutex<HashMap<u64, (Arc<Conn>, AbortHandle)>>>;

/// Milliseconds since `start`.
fn millis(start: Instant) -> u64 {
    start.elapsed().as_millis() as u64
}

/// Accept connections forever, each served on its own task. At the cap, a newcomer takes the slot
/// of the connection that has waited longest without a request under way (a client that sends its
/// head a byte at a time, an idle keep-alive): a flood of slow heads ages out as fast as it arrives
/// and never shuts a real request out. Only when every slot is serving a response is a newcomer
/// refused, with a whole 503.
async fn accept(listener: TcpListener, app: Router, limits: Limits) -> CliResult {
    let open: Open = Arc::default();
    let start = Instant::now();
    let refusing = Arc::new(Semaphore::new(REFUSALS_AT_ONCE));
    let mut warned = false;
    for id in 0u64.. {
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            Err(e) => {
                // Out of file descriptors or memory: say so once, wait, go on (never exit).
                if !warned {
                    eprintln!("warning: cannot accept a connection ({e}); refusing new ones until resources free up");
                    warned = true;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let mut table = open.lock().unwrap();
        if table.len() >= limits.connections {
            let oldest_idle = table
                .iter()
                .filter(|(_, (c, _))| c.busy.load(Ordering::Acquire) == 0)
                .min_by_key(|(k, (c, _))| (c.waiting_since.load(Ordering::Acquire), **k))
                .map(|(k, _)| *k);
            match oldest_idle.and_then(|k| table.remove(&k)) {
                Some((_, handle)) => handle.abort(),
                None => {
                    drop(table);
                    refuse(stream, &refusing);
                    continue;
                }
            }
        }
        let conn = Arc::new(Conn { busy: AtomicUsize::new(0), waiting_since: AtomicU64::new(millis(start)) });
        let task =
            tokio::spawn(serve_connection(stream, app.clone(), conn.clone(), start, (limits.head, limits.write), Leave(open.clone(), id)));
        table.insert(id, (conn, task.abort_handle()));
    }
    Ok(())
}

/// Takes a connection out of the table when its task ends or is aborted.
struct Leave(Open, u64);

impl Drop for Leave {
    fn drop(&mut self) {
        self.0.lock().unwrap().remove(&self.1);
    }
}

/// Serve one connection: HTTP/1.1 with a deadline for each request head and a write timeout; each
/// response marks the connection busy until its last byte is handed to the socket.
async fn serve_connection(
    stream: TcpStream,
    app: Router,
    conn: Arc<Conn>,
    start: Instant,
    (head, write): (Duration, Duration),
    _leave: Leave,
) {
    let _ = stream.set_nodelay(true);
    let mut io = tokio_io_timeout::TimeoutStream::new(stream);
    io.set_write_timeout(Some(write));
    let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
        let (app, conn) = (app.clone(), conn.clone());
        async move {
            let busy = Busy::new(conn, start);
            let response = app.oneshot(req.map(Body::new)).await?;
            Ok::<_, std::convert::Infallible>(response.map(|body| Body::new(Tracked { body, _busy: busy })))
        }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(head)
        .max_header_size(16 * 1024)
        .max_buf_size(64 * 1024)
        .serve_connection(TokioIo::new(Box::pin(io)), service)
        .await;
}

/// A response under way on a connection: from its request's head until its body is dropped (sent,
/// or the connection gone).
struct Busy {
    conn: Arc<Conn>,
    start: Instant,
}

impl Busy {
    fn new(conn: Arc<Conn>, start: Instant) -> Busy {
        conn.busy.fetch_add(1, Ordering::AcqRel);
        Busy { conn, start }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.conn.waiting_since.store(millis(self.start), Ordering::Release);
        self.conn.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that keeps its connection marked busy while it lives.
struct Tracked {
    body: Body,
    _busy: Busy,
}

impl http_body::Body for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// Refusals being written at once; beyond them a connection is closed without an answer.
const REFUSALS_AT_ONCE: usize = 256;

/// Answer a connection beyond the cap with a whole 503 and close it cleanly: the answer, then the
/// end of our side, then whatever the client still sends is read (for at most 2 s) so that closing
/// never resets a connection whose request arrived unread.
fn refuse(mut stream: TcpStream, refusing: &Arc<Semaphore>) {
    const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 37\r\nRetry-After: 1\r\nConnection: close\r\n\r\ntoo many connections; try again soon\n";
    let Ok(permit) = refusing.clone().try_acquire_owned() else {
        let _ = stream.try_write(BUSY);
        return;
    };
    tokio::spawn(async move {
        let _permit = permit;
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            stream.write_all(BUSY).await?;
            stream.shutdown().await?;
            let mut sink = [0u8; 4096];
            while stream.read(&mut sink).await? > 0 {}
            Ok::<_, std::io::Error>(())
        })
        .await;
    });
}

/// The host names a request may carry: loopback names, `--host` and `--allow-host`.
fn allowed_hosts(host: IpAddr, extra: &[String]) -> Vec<String> {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "[::1]"].map(String::from).to_vec();
    if !host.is_unspecified() {
        hosts.push(match host {
            IpAddr::V6(v6) => format!("[{v6}]"),
            IpAddr::V4(v4) => v4.to_string(),
        });
    }
    hosts.extend(extra.iter().map(|h| h.to_ascii_lowercase()));
    hosts
}

/// What is served.
struct Site {
    root: PathBuf,
    hosts: Vec<String>,
    /// The manifest's judges, whose cached files answer `/models/NAME.gguf` (read once).
    judges: Vec<String>,
}

impl Site {
    fn new(root: PathBuf, hosts: Vec<String>) -> Site {
        Site { root, hosts, judges: models::manifest().models.into_iter().map(|m| m.name).collect() }
    }

    /// Whether a `Host` header names this server: an allowed name, with any port.
    fn host_allowed(&self, value: &str) -> bool {
        let value = value.to_ascii_lowercase();
        let name = match value.rsplit_once(':') {
            Some((n, port)) if !n.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) && (n.ends_with(']') || !n.contains(':')) => n,
            _ => value.as_str(),
        };
        self.hosts.iter().any(|h| h == name)
    }

    /// The file for a request path, or None when it is not one of the app's files here: the path is
    /// percent-decoded, checked against the closed set, and resolved through symlinks, which must
    /// stay inside the served folder and land on an app file. `/models/NAME.gguf` of a manifest
    /// judge not in the folder comes from the local model cache.
    fn file_for(&self, url_path: &str) -> Option<PathBuf> {
        let decoded = percent_encoding::percent_decode_str(url_path).decode_utf8().ok()?;
        let rel = decoded.strip_prefix('/')?;
        let rel = if rel.is_empty() { "index.html" } else { rel };
        if rel.contains('\\') || rel.contains('\0') || !app::is_app_file(rel) {
            return None;
        }
        let path = self.root.join(rel);
        if let Ok(real) = path.canonicalize() {
            let inside = real.strip_prefix(&self.root).ok()?;
            let inside = inside.to_str()?;
            return (real.is_file() && app::is_app_file(inside)).then_some(real);
        }
        let name = rel.strip_prefix("models/")?.strip_suffix(".gguf")?;
        self.judges.iter().any(|m| m == name).then(|| models::model_file(name)).filter(|p| p.is_file())
    }
}

/// The app: files from the closed set, behind the Host check, with the headers every response carries.
fn router(site: Arc<Site>, model_origins: &[String]) -> Router {
    let headers: [(header::HeaderName, String); 6] = [
        (header::CONTENT_SECURITY_POLICY, app::header_policy(model_origins)),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff".into()),
        (header::REFERRER_POLICY, "no-referrer".into()),
        (header::HeaderName::from_static("cross-origin-opener-policy"), "same-origin".into()),
        (header::HeaderName::from_static("cross-origin-embedder-policy"), "require-corp".into()),
        (header::CACHE_CONTROL, "no-cache".into()),
    ];
    let mut r = Router::new().fallback(serve_file).layer(middleware::from_fn_with_state(site.clone(), check_host)).with_state(site);
    for (name, value) in headers {
        r = r.layer(SetResponseHeaderLayer::overriding(name, HeaderValue::from_str(&value).expect("a valid header value")));
    }
    r
}

fn text(status: StatusCode, body: &'static str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response()
}

/// Refuse a request whose Host is not this server's (DNS rebinding).
async fn check_host(State(site): State<Arc<Site>>, req: Request, next: Next) -> Response {
    let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok());
    match host {
        Some(h) if site.host_allowed(h) => next.run(req).await,
        _ => text(
            StatusCode::FORBIDDEN,
            "this server answers only to localhost, its loopback addresses and the names given to --host/--allow-host\n",
        ),
    }
}

async fn serve_file(State(site): State<Arc<Site>>, req: Request) -> Response {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
        r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    let Some(path) = site.file_for(req.uri().path()) else {
        return text(StatusCode::NOT_FOUND, "not found\n");
    };
    let mut req = req;
    if let Some(validator) = req.headers().get(header::IF_RANGE) {
        // tower-http answers Range whatever If-Range says; a client resuming a file that has changed
        // since would splice two versions. RFC 9110 §13.1.5: unless the validator is this file's
        // Last-Modified exactly (no ETags are sent here, so an entity tag never matches), the Range
        // is ignored and the whole file sent.
        let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok().map(httpdate::fmt_http_date);
        if modified.as_deref() != validator.to_str().ok() {
            req.headers_mut().remove(header::RANGE);
        }
    }
    match ServeFile::new(path).oneshot(req).await {
        Ok(r) => r.map(Body::new),
        Err(e) => match e {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site_at(root: &std::path::Path) -> Site {
        Site::new(root.canonicalize().unwrap(), allowed_hosts("127.0.0.1".parse().unwrap(), &[]))
    }

    #[test]
    fn a_model_origin_is_an_origin_or_refused() {
        assert_eq!(parse_origin("https://huggingface.co").unwrap(), "https://huggingface.co");
        assert_eq!(parse_origin("https://Models.Example:8443/").unwrap(), "https://models.example:8443");
        for no in [
            "https://a.example; script-src *",
            "https://a.example\nX-Injected: 1",
            "https://a.example/path",
            "https://a.example/?q",
            "https://user@a.example",
            "javascript:alert(1)",
            "file:///etc",
            "a.example",
            "*",
            " https://a.example",
        ] {
            let e = parse_origin(no).unwrap_err();
            assert!(e.contains("an origin such as"), "{no}: {e}");
            assert!(!e.contains('\n'), "{no}: the message is one line: {e}");
        }
    }

    #[test]
    fn host_names_are_loopback_or_given() {
        let s = site_at(&std::env::temp_dir());
        for ok in ["localhost", "localhost:8080", "127.0.0.1:1", "[::1]:8080", "LOCALHOST:80", "[::1]"] {
            assert!(s.host_allowed(ok), "{ok}");
        }
        for no in ["attacker.example", "attacker.example:8080", "127.0.0.1.attacker.example", "localhost.:80", "", "::1", "10.0.0.2:8080"] {
            assert!(!s.host_allowed(no), "{no}");
        }
        let lan = Site::new(PathBuf::new(), allowed_hosts("0.0.0.0".parse().unwrap(), &["judge.lan".into()]));
        assert!(lan.host_allowed("judge.lan:8080") && !lan.host_allowed("0.0.0.0:8080"));
    }

    #[test]
    fn paths_resolve_inside_the_closed_set() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("web")).unwrap();
        std::fs::write(root.join("index.html"), "<p>").unwrap();
        std::fs::write(root.join("web/app.js"), "").unwrap();
        let s = site_at(root);
        assert!(s.file_for("/").unwrap().ends_with("index.html"));
        assert!(s.file_for("/web/app.js").is_some() && s.file_for("/web/%61pp.js").is_some());
        for no in [
            "/../etc/passwd",
            "/%2e%2e/etc/passwd",
            "/web/..%2f..%2fetc/passwd",
            "/models/../../x.gguf",
            "/models/not-a-model.gguf",
            "/web%5capp.js",
            "/web/app.js%00",
        ] {
            assert!(s.file_for(no).is_none(), "{no}");
        }
    }
}
