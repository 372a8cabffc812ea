//! How the CLI talks to the network: with the trust store and proxies the machine is configured
//! with, retrying what may pass, resuming what was cut, and failing with one line that names the
//! setting to check.
//!
//! - **Trust**: the platform's certificate store (on Linux `/etc/ssl/certs`; `SSL_CERT_FILE` and
//!   `SSL_CERT_DIR` replace it, as for OpenSSL and curl), plus the CA bundles pip is told to use
//!   (`PIP_CERT`, `cert` in pip.conf, `REQUESTS_CA_BUNDLE`). A TLS-inspecting proxy whose CA the
//!   machine trusts is trusted here too. Mozilla's roots serve only where the platform has none.
//! - **Proxies**: `HTTPS_PROXY` for https URLs, `HTTP_PROXY` for http, `ALL_PROXY` for both (lower
//!   case too), minus the hosts of `NO_PROXY` — chosen per URL, as curl and pip do. `http://`,
//!   `https://` and `socks4://`/`socks5://`/`socks5h://` proxies work; a setting that is none of these
//!   is an error naming the variable (never silently ignored).
//! - **Redirects**: followed, but a download that started on https never continues on plain http.
//! - **Retries**: connection failures, time-outs, HTTP 408/429/5xx and bodies cut short are tried
//!   again, up to [`ATTEMPTS`] times, waiting 1, 2, 4, 8 s between tries. TLS and DNS failures and
//!   other HTTP errors are final at once.
//! - **Resume**: a download goes to `<dest>.partial`; a later call continues it with an HTTP range
//!   request guarded by the validator (ETag / Last-Modified) of the first response, so a file that
//!   changed on the server starts over instead of being spliced.

pub mod pip;

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use sha2::{Digest, Sha256};
use ureq::tls::{Certificate, RootCerts, TlsConfig};
use ureq::Agent;
use url::Url;

/// Tries per request before giving up (transient failures only).
pub const ATTEMPTS: u32 = 5;
/// The longest text answer read (an index page, an API reply).
const MAX_TEXT: u64 = 64 << 20;

/// Where trusted certificates came from: said in TLS errors.
#[derive(Debug, Clone)]
struct Trust {
    sources: Vec<String>,
}

/// An HTTP client set up from the environment (see the module docs). Cheap to share.
pub struct Net {
    tls: TlsConfig,
    trust: Trust,
    proxies: Proxies,
    /// One agent per (proxy, https only).
    agents: Mutex<HashMap<(Option<String>, bool), Agent>>,
    user_agent: String,
    connect_timeout: Duration,
    read_timeout: Duration,
}

/// The proxy settings of the environment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Proxies {
    pub https: Option<String>,
    pub http: Option<String>,
    pub no_proxy: Vec<String>,
}

impl Proxies {
    /// Read `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY` (either case, upper first).
    pub fn from_env() -> Result<Self> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// The settings `get` gives; a proxy that cannot be used is an error naming its variable.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let var = |name: &str| -> Result<Option<String>> {
            let lower = name.to_ascii_lowercase();
            let Some((which, value)) =
                [name, lower.as_str()].into_iter().find_map(|k| get(k).filter(|v| !v.trim().is_empty()).map(|v| (k.to_string(), v)))
            else {
                return Ok(None);
            };
            if name != "NO_PROXY" {
                ureq::Proxy::new(value.trim()).map_err(|e| {
                    anyhow!(
                        "the proxy setting {which}={} cannot be used ({e}): write it as http://HOST:PORT, https://HOST:PORT or socks5://HOST:PORT, or unset it",
                        redact_str(&value)
                    )
                })?;
            }
            Ok(Some(value.trim().to_string()))
        };
        let all = var("ALL_PROXY")?;
        Ok(Proxies {
            https: var("HTTPS_PROXY")?.or_else(|| all.clone()),
            http: var("HTTP_PROXY")?.or(all),
            no_proxy: var("NO_PROXY")?
                .map(|v| v.split(',').map(|s| s.trim().to_ascii_lowercase()).filter(|s| !s.is_empty()).collect())
                .unwrap_or_default(),
        })
    }

    /// The proxy for `url`, or None to connect directly. `NO_PROXY` entries match a host exactly or
    /// as a domain suffix (`example.com` and `.example.com` both cover `a.example.com`), with an
    /// optional `:port`; `*` matches every host.
    pub fn for_url(&self, url: &Url) -> Option<&str> {
        let proxy = match url.scheme() {
            "https" => self.https.as_deref(),
            "http" => self.http.as_deref(),
            _ => None,
        }?;
        let host = url.host_str()?.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        let port = url.port_or_known_default();
        let bypass = self.no_proxy.iter().any(|entry| {
            if entry == "*" {
                return true;
            }
            let (pat, want_port) = match entry.rsplit_once(':') {
                Some((h, p)) if !h.contains(':') || h.ends_with(']') => (h, p.parse::<u16>().ok()),
                _ => (entry.as_str(), None),
            };
            let pat = pat.trim_start_matches("*.").trim_start_matches('.').trim_start_matches('[').trim_end_matches(']');
            let host_ok = host == pat || host.ends_with(&format!(".{pat}"));
            host_ok && want_port.is_none_or(|p| Some(p) == port)
        });
        (!bypass).then_some(proxy)
    }
}

impl Net {
    /// A client with the machine's trust store and proxies (see the module docs).
    pub fn from_env() -> Result<Self> {
        let pip = pip::PipConfig::load();
        let (tls, trust) = trust_from_env(&pip)?;
        Ok(Net {
            tls,
            trust,
            proxies: Proxies::from_env()?,
            agents: Mutex::new(HashMap::new()),
            user_agent: format!("rocketjudge/{}", env!("CARGO_PKG_VERSION")),
            connect_timeout: Duration::from_secs(30),
            read_timeout: Duration::from_secs(60),
        })
    }

    /// The same client with other time-outs: for connecting, and for each read.
    pub fn with_timeouts(mut self, connect: Duration, read: Duration) -> Self {
        self.connect_timeout = connect;
        self.read_timeout = read;
        self
    }

    /// The agent for `url`: its proxy, and for an https URL https only, so that a redirect to plain
    /// http is refused instead of followed.
    fn agent(&self, url: &Url) -> Agent {
        let proxy = self.proxies.for_url(url).map(str::to_string);
        let https_only = url.scheme() == "https";
        let mut agents = self.agents.lock().unwrap();
        agents
            .entry((proxy.clone(), https_only))
            .or_insert_with(|| {
                let config = Agent::config_builder()
                    .tls_config(self.tls.clone())
                    // Checked when the settings were read (Proxies::from_lookup).
                    .proxy(proxy.as_deref().map(|p| ureq::Proxy::new(p).expect("a proxy checked in Proxies::from_lookup")))
                    .https_only(https_only)
                    .http_status_as_error(false)
                    .timeout_connect(Some(self.connect_timeout))
                    .timeout_per_read(Some(self.read_timeout))
                    .user_agent(self.user_agent.as_str())
                    .build();
                Agent::new_with_config(config)
            })
            .clone()
    }

    /// GET `url` as text, retrying transient failures. HTTP errors are [`HttpStatus`] errors.
    pub fn get_text(&self, url: &Url) -> Result<String> {
        self.retrying(url, |_| {
            let mut resp = self.agent(url).get(url.as_str()).header("Accept", "text/html").call().map_err(|e| self.failure(url, e))?;
            let status = resp.status().as_u16();
            if status != 200 {
                return Err(status_failure(url, status));
            }
            resp.body_mut().with_config().limit(MAX_TEXT).read_to_string().map_err(|e| self.failure(url, e))
        })
    }

    /// POST a JSON body (an API call) once, with the headers given, and return the status and
    /// the reply (at most `max_reply` bytes). The caller decides what to retry. Transport errors are
    /// explained as for downloads; headers are never printed (they may hold a key).
    pub fn post_json(&self, url: &Url, headers: &[(&str, &str)], body: &str, max_reply: u64) -> Result<(u16, String)> {
        let mut req = self.agent(url).post(url.as_str()).header("Content-Type", "application/json");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let mut resp = req.send(body).map_err(|e| self.failure(url, e).error)?;
        let status = resp.status().as_u16();
        let text = resp.body_mut().with_config().limit(max_reply).read_to_string().map_err(|e| self.failure(url, e).error)?;
        Ok((status, text))
    }

    /// Download `url` to `dest`, resuming `<dest>.partial` when one is left from an interrupted
    /// call, retrying transient failures (each retry continues where the last one stopped), and
    /// checking `sha256` when given. `label` prefixes the progress lines. On a SHA-256 mismatch the
    /// partial file is removed, so the next call starts over.
    pub fn download(&self, url: &Url, dest: &Path, sha256: Option<&str>, label: &str) -> Result<()> {
        self.download_checked(url, dest, sha256, label, |_| Ok(()))
    }

    /// [`Net::download`], with `complete` asked of the downloaded bytes before they are moved into
    /// place: a download it refuses is discarded (what a body cut short looks like when the server
    /// announced no length and no hash is known).
    pub fn download_checked(
        &self,
        url: &Url,
        dest: &Path,
        sha256: Option<&str>,
        label: &str,
        complete: impl Fn(&Path) -> Result<()>,
    ) -> Result<()> {
        let dir = dest.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let partial = partial_path(dest);
        let meta = partial_path(&partial.with_extension("validator"));
        let progress = Progress::new(label);
        self.retrying(url, |_| self.download_once(url, &partial, &meta, &progress))?;
        progress.finish(std::fs::metadata(&partial).map(|m| m.len()).unwrap_or(0));
        if let Some(want) = sha256 {
            let got = file_sha256(&partial)?;
            if !got.eq_ignore_ascii_case(want) {
                let _ = std::fs::remove_file(&partial);
                let _ = std::fs::remove_file(&meta);
                bail!("{}: SHA-256 {got} does not match the expected {want}; the download was discarded", redact(url));
            }
        }
        if let Err(e) = complete(&partial) {
            let _ = std::fs::remove_file(&partial);
            let _ = std::fs::remove_file(&meta);
            return Err(e.context(format!("{}: the download is not a whole file; it was discarded", redact(url))));
        }
        std::fs::rename(&partial, dest).with_context(|| format!("cannot move the download into {}", dest.display()))?;
        let _ = std::fs::remove_file(&meta);
        Ok(())
    }

    /// One request of a download: a range request when part of the file is already here.
    fn download_once(&self, url: &Url, partial: &Path, meta: &Path, progress: &Progress) -> Result<(), Failure> {
        let mut have = std::fs::metadata(partial).map(|m| m.len()).unwrap_or(0);
        let validator = std::fs::read_to_string(meta).ok().filter(|v| !v.is_empty());
        if have > 0 && validator.is_none() {
            // Without the validator of the bytes already here, a changed file cannot be told from the
            // same one: they are not resumed.
            eprintln!("{}: the part already downloaded has no validator (ETag or Last-Modified) to resume by; starting over", redact(url));
            have = 0;
        }
        let mut req = self.agent(url).get(url.as_str());
        if let (true, Some(v)) = (have > 0, &validator) {
            req = req.header("Range", format!("bytes={have}-")).header("If-Range", v.as_str());
        }
        let resp = req.call().map_err(|e| self.failure(url, e))?;
        let status = resp.status().as_u16();
        let (append, total) = match status {
            206 if have > 0 && validator_of(&resp).is_some_and(|v| Some(v) != validator.as_deref()) => {
                // A server that ignored If-Range: the rest is of another version of the file.
                return Err(self.restart(partial, meta, url, "the file changed on the server since the download began"));
            }
            206 if have > 0 => {
                // Only a range that starts exactly where the partial file ends may be appended.
                let range = resp.headers().get("content-range").and_then(|v| v.to_str().ok()).unwrap_or("");
                let (start, total) = parse_content_range(range).ok_or_else(|| {
                    Failure::final_(anyhow!(
                        "{}: the server answered a range request with an unreadable Content-Range `{range}`",
                        redact(url)
                    ))
                })?;
                if start != have {
                    return Err(self.restart(partial, meta, url, "the server resumed at another offset"));
                }
                (true, total)
            }
            200 => (false, content_length(&resp)),
            416 if have > 0 => return Err(self.restart(partial, meta, url, "the server refused to resume")),
            s => return Err(status_failure(url, s)),
        };
        if status == 200 && have > 0 {
            eprintln!("{}: the server sent the whole file again; starting over", redact(url));
        }
        if !append {
            let v = validator_of(&resp).unwrap_or("");
            std::fs::write(meta, v).map_err(|e| Failure::final_(anyhow!("cannot write {}: {e}", meta.display())))?;
        }
        let io_final = |e: std::io::Error| Failure::final_(anyhow!("cannot write {}: {e}", partial.display()));
        let mut out = if append {
            OpenOptions::new().append(true).open(partial).map_err(io_final)?
        } else {
            File::create(partial).map_err(io_final)?
        };
        let start = if append { have } else { 0 };
        let mut done = start;
        let mut reader = resp.into_body().into_reader();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) => {
                    // Keep what arrived: the retry resumes from it.
                    let _ = out.sync_data();
                    return Err(Failure::transient(anyhow!("{}: the download broke off after {} bytes: {e}", redact(url), done)));
                }
            };
            out.write_all(&buf[..n]).map_err(io_final)?;
            done += n as u64;
            progress.show(done, total);
        }
        out.sync_all().map_err(io_final)?;
        if let Some(t) = total {
            if done < t {
                return Err(Failure::transient(anyhow!("{}: the download ended after {done} of {t} bytes", redact(url))));
            }
        }
        Ok(())
    }

    fn restart(&self, partial: &Path, meta: &Path, url: &Url, why: &str) -> Failure {
        let _ = std::fs::remove_file(partial);
        let _ = std::fs::remove_file(meta);
        Failure::transient(anyhow!("{}: {why}; starting over", redact(url)))
    }

    /// Run `f` until it succeeds, fails for good, or [`ATTEMPTS`] tries have failed.
    fn retrying<T>(&self, url: &Url, mut f: impl FnMut(u32) -> Result<T, Failure>) -> Result<T> {
        let mut attempt = 0;
        loop {
            match f(attempt) {
                Ok(v) => return Ok(v),
                Err(Failure { error, transient: true }) if attempt + 1 < ATTEMPTS => {
                    let wait = Duration::from_secs(1 << attempt);
                    eprintln!("{error:#}; trying again in {} s ({}/{ATTEMPTS})", wait.as_secs(), attempt + 2);
                    std::thread::sleep(wait);
                    attempt += 1;
                }
                Err(Failure { error, transient: true }) => {
                    return Err(error.context(format!("{} failed {ATTEMPTS} times", redact(url))));
                }
                Err(Failure { error, .. }) => return Err(error),
            }
        }
    }

    /// A transport error, explained with the setting that governs it.
    fn failure(&self, url: &Url, e: ureq::Error) -> Failure {
        let shown = redact(url);
        let host = url.host_str().unwrap_or("?");
        let proxy = match self.proxies.for_url(url) {
            Some(p) => format!("through the proxy {} (HTTPS_PROXY/HTTP_PROXY/ALL_PROXY; NO_PROXY to bypass it)", redact_str(p)),
            None => "directly (no proxy applies: set HTTPS_PROXY if this network needs one)".to_string(),
        };
        // rustls reports a certificate it cannot verify as an I/O error of kind InvalidData.
        let tls = match &e {
            ureq::Error::Rustls(_) | ureq::Error::Tls(_) | ureq::Error::Pem(_) => true,
            ureq::Error::Io(io) => {
                let text = io.to_string().to_ascii_lowercase();
                io.kind() == std::io::ErrorKind::InvalidData && ["certificate", "handshake", "tls"].iter().any(|w| text.contains(w))
            }
            _ => false,
        };
        if tls {
            return Failure::final_(anyhow!(
                "cannot reach {shown}: TLS failed ({e}); the certificates trusted are {}. If a proxy inspects TLS on this \
                 network, put its CA in the system store or point SSL_CERT_FILE (or PIP_CERT) at a bundle that holds it",
                self.trust.sources.join(", ")
            ));
        }
        match e {
            ureq::Error::HostNotFound => {
                Failure::final_(anyhow!("cannot reach {shown}: the host {host} was not found (DNS); connecting {proxy}"))
            }
            ureq::Error::ConnectProxyFailed(ref why) => {
                Failure::transient(anyhow!("cannot reach {shown}: the proxy refused: {why}; {proxy}"))
            }
            // ureq follows only http(s) redirects: one to `file:` (or any other scheme) ends here too.
            ureq::Error::TooManyRedirects | ureq::Error::RedirectFailed => Failure::final_(anyhow!(
                "cannot reach {shown}: it redirected more than 10 times, or to a URL that is not http(s) (such as file:); only http(s) redirects are followed"
            )),
            ureq::Error::InvalidProxyUrl => Failure::final_(anyhow!("the proxy URL in HTTPS_PROXY/HTTP_PROXY/ALL_PROXY is not valid")),
            ureq::Error::RequireHttpsOnly(ref to) => Failure::final_(anyhow!(
                "{shown}: refused a redirect from https to plain http ({}): the download would no longer be private or authenticated",
                redact_str(to)
            )),
            ureq::Error::Io(ref io) if io.to_string().contains("lookup address") => {
                Failure::transient(anyhow!("cannot reach {shown}: the host {host} was not found (DNS: {io}); connecting {proxy}"))
            }
            ureq::Error::Io(_) | ureq::Error::Timeout(_) | ureq::Error::ConnectionFailed | ureq::Error::Protocol(_) => {
                Failure::transient(anyhow!("cannot reach {shown} ({e}); connecting {proxy}"))
            }
            other => Failure::final_(anyhow!("cannot reach {shown}: {other}")),
        }
    }
}

/// An error, and whether trying again may help.
struct Failure {
    error: anyhow::Error,
    transient: bool,
}

impl Failure {
    fn final_(error: anyhow::Error) -> Self {
        Failure { error, transient: false }
    }
    fn transient(error: anyhow::Error) -> Self {
        Failure { error, transient: true }
    }
}

/// An HTTP status that ended a request (after retries for 408/429/5xx).
#[derive(Debug)]
pub struct HttpStatus {
    pub url: String,
    pub status: u16,
}

impl std::fmt::Display for HttpStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hint = match self.status {
            401 | 403 => " (check the credentials in the URL or the index setting)",
            404 => " (not found)",
            407 => " (the proxy wants credentials: put them in HTTPS_PROXY as http://user:password@host:port)",
            _ => "",
        };
        write!(f, "{} answered HTTP {}{hint}", self.url, self.status)
    }
}

impl std::error::Error for HttpStatus {}

fn is_transient_status(status: u16) -> bool {
    status == 408 || status == 429 || status >= 500
}

fn status_failure(url: &Url, status: u16) -> Failure {
    let e = anyhow::Error::new(HttpStatus { url: redact(url), status });
    if is_transient_status(status) {
        Failure::transient(e)
    } else {
        Failure::final_(e)
    }
}

/// `<path>.partial`, keeping the whole file name (`a.gguf` → `a.gguf.partial`).
pub fn partial_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".partial");
    PathBuf::from(s)
}

/// The strong validator a response carries (its ETag, else its Last-Modified): what a later range
/// request sends as If-Range. A weak ETag cannot guard a range request (RFC 9110 §13.1.5): none then.
fn validator_of(resp: &ureq::http::Response<ureq::Body>) -> Option<&str> {
    ["etag", "last-modified"].iter().find_map(|h| resp.headers().get(*h).and_then(|v| v.to_str().ok())).filter(|v| !v.starts_with("W/"))
}

fn content_length(resp: &ureq::http::Response<ureq::Body>) -> Option<u64> {
    resp.headers().get("content-length").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse().ok())
}

/// `bytes START-END/TOTAL` → (START, TOTAL if known).
fn parse_content_range(v: &str) -> Option<(u64, Option<u64>)> {
    let rest = v.trim().strip_prefix("bytes")?.trim_start();
    let (range, total) = rest.split_once('/')?;
    let start = range.split_once('-')?.0.trim().parse().ok()?;
    Some((start, total.trim().parse().ok()))
}

/// A URL for messages and records: scheme, host and path only — no user name, password, query
/// string or fragment, any of which may hold a secret (a key, a signed-URL token).
pub fn redact(url: &Url) -> String {
    let mut u = url.clone();
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

/// [`redact`] for a string that may not parse as a URL.
pub fn redact_str(s: &str) -> String {
    match Url::parse(s) {
        Ok(u) => redact(&u),
        Err(_) => {
            let no_query = s.split(['?', '#']).next().unwrap_or("");
            match no_query.split_once("://") {
                Some((scheme, rest)) => format!("{scheme}://{}", rest.rsplit_once('@').map_or(rest, |(_, host)| host)),
                None => no_query.rsplit_once('@').map_or(no_query, |(_, h)| h).to_string(),
            }
        }
    }
}

/// The root certificates: the platform store (or `SSL_CERT_FILE`/`SSL_CERT_DIR`), plus pip's and
/// requests' CA bundles when set; Mozilla's roots only when none of those yields a certificate.
fn trust_from_env(pip: &pip::PipConfig) -> Result<(TlsConfig, Trust)> {
    let mut certs: Vec<Certificate<'static>> = Vec::new();
    let mut sources = Vec::new();
    let native = rustls_native_certs::load_native_certs();
    if !native.certs.is_empty() {
        let from = match (std::env::var_os("SSL_CERT_FILE"), std::env::var_os("SSL_CERT_DIR")) {
            (Some(f), _) => format!("SSL_CERT_FILE={}", f.to_string_lossy()),
            (None, Some(d)) => format!("SSL_CERT_DIR={}", d.to_string_lossy()),
            _ => "the system store".to_string(),
        };
        sources.push(format!("{from} ({} certificates)", native.certs.len()));
        certs.extend(native.certs.iter().map(|c| Certificate::from_der(c.as_ref()).to_owned()));
    }
    let mut bundles: Vec<(String, PathBuf)> = Vec::new();
    if let Some(c) = &pip.cert {
        bundles.push(("pip's cert".into(), c.clone()));
    }
    if let Some(c) = std::env::var_os("REQUESTS_CA_BUNDLE") {
        bundles.push(("REQUESTS_CA_BUNDLE".into(), c.into()));
    }
    // A bundle already loaded (pip and requests often name the file SSL_CERT_FILE names) is read once.
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let mut loaded: Vec<PathBuf> = std::env::var_os("SSL_CERT_FILE").map(|f| canonical(Path::new(&f))).into_iter().collect();
    for (what, path) in bundles {
        if loaded.contains(&canonical(&path)) {
            continue;
        }
        loaded.push(canonical(&path));
        let bytes = std::fs::read(&path).with_context(|| format!("cannot read the CA bundle {} ({what})", path.display()))?;
        let before = certs.len();
        for item in ureq::tls::parse_pem(&bytes) {
            if let Ok(ureq::tls::PemItem::Certificate(c)) = item {
                certs.push(c);
            }
        }
        sources.push(format!("{} ({what}, {} certificates)", path.display(), certs.len() - before));
    }
    if certs.is_empty() {
        sources.push("Mozilla's roots (no system store was found)".into());
        return Ok((TlsConfig::builder().root_certs(RootCerts::WebPki).build(), Trust { sources }));
    }
    Ok((TlsConfig::builder().root_certs(RootCerts::new_with_certs(&certs)).build(), Trust { sources }))
}

/// SHA-256 of a file, streamed, as lower-case hex.
pub fn file_sha256(path: &Path) -> Result<String> {
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Download progress on stderr: a line redrawn in place on a terminal, otherwise one line per
/// download (and a line every 10 s for long ones), so logs stay short.
struct Progress {
    label: String,
    tty: bool,
    start: Instant,
    last: Mutex<Instant>,
}

impl Progress {
    fn new(label: &str) -> Self {
        let now = Instant::now();
        Progress { label: label.to_string(), tty: std::io::stderr().is_terminal(), start: now, last: Mutex::new(now) }
    }

    fn show(&self, done: u64, total: Option<u64>) {
        let mut last = self.last.lock().unwrap();
        let every = if self.tty { Duration::from_millis(200) } else { Duration::from_secs(10) };
        if last.elapsed() < every {
            return;
        }
        *last = Instant::now();
        let text = match total {
            Some(t) => format!("{}: {:.1} / {:.1} MB", self.label, done as f64 / 1e6, t as f64 / 1e6),
            None => format!("{}: {:.1} MB", self.label, done as f64 / 1e6),
        };
        if self.tty {
            eprint!("\r\x1b[K{text}");
        } else {
            eprintln!("{text}");
        }
    }

    fn finish(&self, bytes: u64) {
        let secs = self.start.elapsed().as_secs_f64();
        let line = format!("{}: {:.1} MB in {secs:.1} s", self.label, bytes as f64 / 1e6);
        if self.tty {
            eprintln!("\r\x1b[K{line}");
        } else {
            eprintln!("{line}");
        }
    }
}

/// Shared handle for commands that make several requests.
pub fn shared() -> Result<Arc<Net>> {
    static NET: std::sync::OnceLock<Arc<Net>> = std::sync::OnceLock::new();
    if let Some(n) = NET.get() {
        return Ok(n.clone());
    }
    let n = Arc::new(Net::from_env()?);
    Ok(NET.get_or_init(|| n).clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn try_proxies(vars: &[(&str, &str)]) -> Result<Proxies> {
        let vars: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Proxies::from_lookup(|k| vars.get(k).cloned())
    }

    fn proxies(vars: &[(&str, &str)]) -> Proxies {
        try_proxies(vars).unwrap()
    }

    #[test]
    fn a_proxy_setting_that_cannot_be_used_is_an_error_naming_it() {
        for (var, value) in [
            ("HTTPS_PROXY", "http://[bad"),
            ("all_proxy", "ftp://proxy:21"),
            ("HTTP_PROXY", "http://user:secret@[::1"),
            ("ALL_PROXY", "no scheme at all:x"),
        ] {
            let e = try_proxies(&[(var, value)]).unwrap_err().to_string();
            assert!(e.contains(&format!("{var}=")) && e.contains("cannot be used"), "{var}={value}: {e}");
            assert!(!e.contains("secret"), "the message shows no password: {e}");
        }
        let socks = proxies(&[("ALL_PROXY", "socks5h://127.0.0.1:1080")]);
        assert_eq!(socks.https.as_deref(), Some("socks5h://127.0.0.1:1080"));
        assert_eq!(proxies(&[("HTTPS_PROXY", "  ")]), Proxies::default(), "an empty setting is none");
    }

    #[test]
    fn proxy_per_scheme_and_no_proxy() {
        let p = proxies(&[("HTTPS_PROXY", "http://proxy:3128"), ("no_proxy", "localhost, .corp.example ,10.0.0.1:8443")]);
        let u = |s: &str| Url::parse(s).unwrap();
        assert_eq!(p.for_url(&u("https://pypi.org/simple/")), Some("http://proxy:3128"));
        assert_eq!(p.for_url(&u("http://pypi.org/simple/")), None, "HTTP_PROXY is not set");
        assert_eq!(p.for_url(&u("https://localhost:8000/x")), None);
        assert_eq!(p.for_url(&u("https://index.corp.example/x")), None);
        assert_eq!(p.for_url(&u("https://corp.example/x")), None);
        assert_eq!(p.for_url(&u("https://notcorp.example/x")), Some("http://proxy:3128"));
        assert_eq!(p.for_url(&u("https://10.0.0.1:8443/x")), None);
        assert_eq!(p.for_url(&u("https://10.0.0.1/x")), Some("http://proxy:3128"), "NO_PROXY names port 8443 only");
        let all = proxies(&[("all_proxy", "http://a:1"), ("HTTP_PROXY", "http://h:2"), ("NO_PROXY", "*")]);
        assert_eq!(all.https.as_deref(), Some("http://a:1"));
        assert_eq!(all.http.as_deref(), Some("http://h:2"));
        assert_eq!(all.for_url(&u("https://pypi.org/")), None);
    }

    #[test]
    fn content_range_and_redaction() {
        assert_eq!(parse_content_range("bytes 100-199/200"), Some((100, Some(200))));
        assert_eq!(parse_content_range("bytes 5-9/*"), Some((5, None)));
        assert_eq!(parse_content_range("items 1-2/3"), None);
        assert_eq!(redact(&Url::parse("https://me:secret@idx.example/simple/?token=x#f").unwrap()), "https://idx.example/simple/");
        assert_eq!(redact_str("http://u:p@proxy:3128"), "http://proxy:3128/");
        assert_eq!(partial_path(Path::new("/a/b.gguf")), PathBuf::from("/a/b.gguf.partial"));
    }
}
