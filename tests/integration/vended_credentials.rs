//! Vended S3 credentials, per table, refreshed when they expire, against the real
//! SeaweedFS S3 + REST server ([`crate::seaweed`]).
//!
//! SeaweedFS 4.48 vends credentials only through its STS (an IAM role, `-s3.iam.config`),
//! with lifetimes of its STS's bounds; the tests need credentials that expire within
//! seconds. So a small HTTP forwarder on loopback plays the catalog's vending role in
//! front of the real REST server: it passes every request through, adds
//! `storage-credentials` (one of the server's real S3 identities, with
//! `s3.session-token-expires-at-ms` a few seconds ahead) to `loadTable` answers, lists
//! the `loadCredentials` endpoint in `GET /v1/config`, and answers
//! `GET …/tables/{t}/credentials` itself with the next identity (or a refusal), counting
//! the calls. The S3 server that checks the credentials is the real one; the client is
//! configured with no S3 keys of its own.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use datafusion::prelude::SessionContext;
use icefloe::catalog::{load_catalog, Catalog, Namespace, TableIdent};
use icefloe::ErrorKind;
use serde_json::{json, Value};

use crate::catalog::{attach, context};
use crate::seaweed::{self, Seaweed};

/// What the forwarder hands out.
#[derive(Debug, Clone)]
enum Vend {
    /// (access key, secret key, ms until it expires).
    Identity(String, String, i64),
    /// Refuse with this HTTP status.
    Refuse(u16),
}

/// The forwarder's settings and counters.
#[derive(Debug)]
struct Vending {
    /// What `loadTable` answers carry.
    on_load: Mutex<Vend>,
    /// What `…/credentials` answers.
    on_refresh: Mutex<Vend>,
    /// `…/credentials` requests answered.
    credentials_calls: AtomicUsize,
    /// Table locations by table path, as `loadTable` answered them.
    locations: Mutex<HashMap<String, String>>,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

fn credential_config(vend: &Vend) -> Option<Value> {
    match vend {
        Vend::Identity(key, secret, expires_in) => Some(json!({
            "s3.access-key-id": key,
            "s3.secret-access-key": secret,
            "s3.session-token-expires-at-ms": (now_ms() + expires_in).to_string(),
        })),
        Vend::Refuse(_) => None,
    }
}

/// Starts the forwarder to `upstream` (`127.0.0.1:PORT`); its `http://127.0.0.1:PORT`.
fn start_forwarder(upstream: &str, vending: Arc<Vending>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("forwarder port");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let upstream = upstream.to_string();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let upstream = upstream.clone();
            let vending = Arc::clone(&vending);
            std::thread::spawn(move || {
                let _ = serve(conn, &upstream, &vending);
            });
        }
    });
    url
}

/// One HTTP/1.1 message's head lines and body (Content-Length or chunked).
fn read_message(reader: &mut impl BufRead) -> std::io::Result<Option<(Vec<String>, Vec<u8>)>> {
    let mut head = vec![];
    let mut content_length = None;
    let mut chunked = false;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        if line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            content_length = v.trim().parse().ok();
        }
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
        head.push(line);
    }
    let mut body = vec![];
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .unwrap_or(0);
            let mut chunk = vec![0u8; n + 2];
            reader.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = content_length {
        body = vec![0u8; n];
        reader.read_exact(&mut body)?;
    } else if !head
        .first()
        .is_some_and(|l| l.starts_with("GET") || l.starts_with("HEAD") || l.starts_with("DELETE"))
    {
        reader.read_to_end(&mut body)?;
    }
    Ok(Some((head, body)))
}

fn respond(out: &mut TcpStream, status: &str, body: &[u8]) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )?;
    out.write_all(body)
}

fn serve(conn: TcpStream, upstream: &str, vending: &Vending) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let Some((head, body)) = read_message(&mut reader)? else {
        return Ok(());
    };
    let mut out = conn;
    let request_line = head.first().cloned().unwrap_or_default();
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let path_only = path.split('?').next().unwrap_or_default().to_string();
    let segments: Vec<&str> = path_only.split('/').collect();
    let n = segments.len();

    // GET …/tables/{t}/credentials: the forwarder's own answer
    if method == "GET" && n >= 3 && segments[n - 1] == "credentials" && segments[n - 3] == "tables"
    {
        vending.credentials_calls.fetch_add(1, Ordering::SeqCst);
        let table_path = segments[..n - 1].join("/");
        let location = vending
            .locations
            .lock()
            .unwrap()
            .get(&table_path)
            .cloned()
            .unwrap_or_else(|| seaweed::WAREHOUSE.to_string());
        let vend = vending.on_refresh.lock().unwrap().clone();
        return match (&vend, credential_config(&vend)) {
            (_, Some(config)) => respond(
                &mut out,
                "200 OK",
                json!({"storage-credentials": [{"prefix": location, "config": config}]})
                    .to_string()
                    .as_bytes(),
            ),
            (Vend::Refuse(status), None) => respond(
                &mut out,
                &format!("{status} Refused"),
                json!({"error": {"message": "credentials refused", "type": "NotAuthorizedException", "code": status}})
                    .to_string()
                    .as_bytes(),
            ),
            _ => unreachable!(),
        };
    }

    let mut up = TcpStream::connect(upstream)?;
    for line in &head {
        let lower = line.to_ascii_lowercase();
        if !lower.starts_with("connection:") && !lower.starts_with("accept-encoding:") {
            up.write_all(line.as_bytes())?;
        }
    }
    up.write_all(b"Connection: close\r\n\r\n")?;
    up.write_all(&body)?;
    let mut up_reader = BufReader::new(up);
    let Some((response_head, response_body)) = read_message(&mut up_reader)? else {
        return Ok(());
    };
    let status_line = response_head.first().cloned().unwrap_or_default();
    let status = status_line
        .split_whitespace()
        .skip(1)
        .collect::<Vec<_>>()
        .join(" ");
    let ok = status.starts_with("200");
    let is_config = method == "GET" && path_only.ends_with("/v1/config");
    let is_load = method == "GET" && n >= 2 && segments[n - 2] == "tables";
    let body = match serde_json::from_slice::<Value>(&response_body) {
        Ok(mut v) if ok && is_config => {
            let mut endpoints: Vec<Value> = v["endpoints"].as_array().cloned().unwrap_or_default();
            if endpoints.is_empty() {
                // the spec's defaults, which a server that lists none supports
                for e in [
                    "GET /v1/{prefix}/namespaces",
                    "POST /v1/{prefix}/namespaces",
                    "GET /v1/{prefix}/namespaces/{namespace}",
                    "HEAD /v1/{prefix}/namespaces/{namespace}",
                    "DELETE /v1/{prefix}/namespaces/{namespace}",
                    "POST /v1/{prefix}/namespaces/{namespace}/properties",
                    "GET /v1/{prefix}/namespaces/{namespace}/tables",
                    "POST /v1/{prefix}/namespaces/{namespace}/tables",
                    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
                    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
                    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
                    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
                    "POST /v1/{prefix}/namespaces/{namespace}/register",
                    "POST /v1/{prefix}/tables/rename",
                ] {
                    endpoints.push(json!(e));
                }
            }
            endpoints.push(json!(
                "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"
            ));
            v["endpoints"] = Value::Array(endpoints);
            serde_json::to_vec(&v).expect("json")
        }
        Ok(mut v) if ok && is_load => {
            let location = v["metadata"]["location"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            vending
                .locations
                .lock()
                .unwrap()
                .insert(path_only.clone(), location.clone());
            let vend = vending.on_load.lock().unwrap().clone();
            if let Some(config) = credential_config(&vend) {
                v["storage-credentials"] = json!([{"prefix": location, "config": config}]);
            }
            serde_json::to_vec(&v).expect("json")
        }
        _ => response_body,
    };
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )?;
    out.write_all(&body)
}

/// A catalog from `properties` as a user's config file would give them.
fn catalog_of(
    dir: &std::path::Path,
    name: &str,
    properties: &[(String, String)],
) -> Arc<dyn Catalog> {
    let text: String = properties
        .iter()
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect();
    let file = dir.join(format!("{name}.properties"));
    std::fs::write(&file, text).expect("config");
    load_catalog(file.to_str().expect("utf-8")).expect("catalog")
}

/// The server's catalog reached through the forwarder, with no S3 keys of its own:
/// every S3 request is signed with vended credentials.
fn vending_catalog(server: &Seaweed, forwarder: &str, dir: &std::path::Path) -> Arc<dyn Catalog> {
    let properties: Vec<(String, String)> = server
        .catalog_properties()
        .into_iter()
        .filter(|(k, _)| k != "s3.access-key-id" && k != "s3.secret-access-key")
        .map(|(k, v)| {
            if k == "uri" {
                (k, forwarder.to_string())
            } else {
                (k, v)
            }
        })
        .collect();
    catalog_of(dir, "vending", &properties)
}

async fn session(catalog: Arc<dyn Catalog>) -> SessionContext {
    let config = icefloe::datafusion::register_iceberg_options(context().state().config().clone());
    let ctx = SessionContext::new_with_config(config);
    icefloe::datafusion::register_iceberg_functions(&ctx);
    attach(&ctx, "lake", catalog).await;
    ctx
}

/// The `id`s of `SELECT id FROM table ORDER BY id`, or the error's text.
async fn ids(ctx: &SessionContext, table: &str) -> Result<Vec<i64>, String> {
    use datafusion::arrow::array::{Array, Int64Array};
    let q = format!("SELECT id FROM {table} ORDER BY id");
    let df = icefloe::datafusion::sql::execute(ctx, &q)
        .await
        .map_err(|e| e.to_string())?;
    let batches = df.collect().await.map_err(|e| e.to_string())?;
    let mut out = vec![];
    for b in batches {
        let col = b
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .expect("id is BIGINT");
        out.extend((0..col.len()).map(|i| col.value(i)));
    }
    Ok(out)
}

/// A table written through the catalog with the admin's own keys (no forwarder).
async fn write_table(server: &Seaweed, dir: &std::path::Path, ns: &str, name: &str) {
    let admin = catalog_of(dir, "admin", &server.catalog_properties());
    if !admin
        .namespace_exists(&Namespace::parse(ns))
        .await
        .expect("namespace exists?")
    {
        admin
            .create_namespace(&Namespace::parse(ns), &HashMap::new())
            .await
            .expect("namespace");
    }
    let ctx = session(admin).await;
    let t = format!("lake.{ns}.{name}");
    for q in [
        format!("CREATE TABLE {t} (id BIGINT, name VARCHAR)"),
        format!("INSERT INTO {t} VALUES (1, 'a'), (2, 'b')"),
        format!("INSERT INTO {t} VALUES (3, 'c')"),
    ] {
        icefloe::datafusion::sql::execute(&ctx, &q)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"))
            .collect()
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
}

/// How long the first vended credential lives.
const SHORT_MS: i64 = 4_000;

/// A table loaded through a catalog that vends a credential expiring in seconds: the
/// first query reads with it; after it expired, a query on the same loaded table (the
/// same session, the same store) fetched a fresh credential from the `loadCredentials`
/// endpoint and returns the same rows; the fresh credential is what S3 sees (one the
/// server does not know is refused by the server).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_vended_credentials_are_refreshed() {
    let Some(server) = seaweed::server() else {
        return;
    };
    let ns = seaweed::unique_namespace("vend");
    let dir = tempfile::tempdir().expect("tempdir");
    write_table(server, dir.path(), &ns, "t").await;
    let (first, second) = (&server.vended_identities[0], &server.vended_identities[1]);
    let vending = Arc::new(Vending {
        on_load: Mutex::new(Vend::Identity(first.0.clone(), first.1.clone(), SHORT_MS)),
        on_refresh: Mutex::new(Vend::Identity(
            second.0.clone(),
            second.1.clone(),
            3_600_000,
        )),
        credentials_calls: AtomicUsize::new(0),
        locations: Mutex::default(),
    });
    let forwarder = start_forwarder(
        server.rest_uri.trim_start_matches("http://"),
        Arc::clone(&vending),
    );
    let catalog = vending_catalog(server, &forwarder, dir.path());
    // a long-lived table provider: loaded once, queried across the credential's expiry
    let table = catalog
        .load_table(&TableIdent::new(Namespace::parse(&ns), "t"))
        .await
        .expect("load");
    // the table's FileIO holds the credential for the table's location, and shows no secret
    let io = table.file_io();
    assert_eq!(io.storage_credentials().len(), 1);
    assert_eq!(
        io.storage_credentials()[0].prefix,
        table.metadata().location
    );
    let debug = format!("{io:?}");
    assert!(
        !debug.contains(&first.1) && !debug.contains(&second.1),
        "{debug}"
    );
    let ctx = SessionContext::new();
    ctx.register_table(
        "t",
        Arc::new(icefloe::datafusion::IcebergTableProvider::try_new(table).expect("provider")),
    )
    .expect("register");
    let t = "t";
    assert_eq!(
        ids(&ctx, t).await.expect("read with the vended credential"),
        vec![1, 2, 3]
    );

    tokio::time::sleep(Duration::from_millis(SHORT_MS as u64 + 500)).await;
    assert_eq!(
        ids(&ctx, t)
            .await
            .expect("read after the first credential expired"),
        vec![1, 2, 3]
    );
    let calls = vending.credentials_calls.load(Ordering::SeqCst);
    assert_eq!(calls, 1, "one refresh from the loadCredentials endpoint");
    // the fresh credential lasts an hour: no further refresh
    assert_eq!(ids(&ctx, t).await.expect("read again"), vec![1, 2, 3]);
    assert_eq!(vending.credentials_calls.load(Ordering::SeqCst), 1);

    // a second table whose refresh hands out a key S3 does not know: S3 refuses it,
    // so the refreshed credential is the one requests are signed with
    write_table(server, dir.path(), &ns, "u").await;
    *vending.on_load.lock().unwrap() = Vend::Identity(first.0.clone(), first.1.clone(), SHORT_MS);
    *vending.on_refresh.lock().unwrap() = Vend::Identity(
        "icefloe-unknown-key".into(),
        "unknown-secret".into(),
        3_600_000,
    );
    let table = catalog
        .load_table(&TableIdent::new(Namespace::parse(&ns), "u"))
        .await
        .expect("load u");
    ctx.register_table(
        "u",
        Arc::new(icefloe::datafusion::IcebergTableProvider::try_new(table).expect("provider")),
    )
    .expect("register");
    assert_eq!(ids(&ctx, "u").await.expect("read u"), vec![1, 2, 3]);
    tokio::time::sleep(Duration::from_millis(SHORT_MS as u64 + 500)).await;
    let err = ids(&ctx, "u")
        .await
        .expect_err("S3 refuses the unknown key");
    assert!(
        err.contains("InvalidAccessKeyId") || err.to_lowercase().contains("access"),
        "{err}"
    );
    assert!(
        !err.contains("unknown-secret") && !err.contains(&first.1),
        "{err}"
    );
    assert_eq!(vending.credentials_calls.load(Ordering::SeqCst), 2);
}

/// A vended credential that expired and cannot be refreshed (the catalog refuses): a
/// query fails with a permission error naming the table and its location, with no
/// secret in it; nothing is sent to S3 with the expired credential.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_unrefreshable_credentials_are_a_clear_error() {
    let Some(server) = seaweed::server() else {
        return;
    };
    let ns = seaweed::unique_namespace("vendx");
    let dir = tempfile::tempdir().expect("tempdir");
    write_table(server, dir.path(), &ns, "t").await;
    let first = &server.vended_identities[0];
    let vending = Arc::new(Vending {
        on_load: Mutex::new(Vend::Identity(first.0.clone(), first.1.clone(), SHORT_MS)),
        on_refresh: Mutex::new(Vend::Refuse(403)),
        credentials_calls: AtomicUsize::new(0),
        locations: Mutex::default(),
    });
    let forwarder = start_forwarder(
        server.rest_uri.trim_start_matches("http://"),
        Arc::clone(&vending),
    );
    let catalog = vending_catalog(server, &forwarder, dir.path());
    let ident = TableIdent::new(Namespace::parse(&ns), "t");
    let table = catalog.load_table(&ident).await.expect("load");
    let location = table.metadata().location.clone();
    let manifest_list = table
        .metadata()
        .current_snapshot()
        .expect("snapshot")
        .manifest_list
        .clone()
        .expect("a v2 snapshot has a manifest list");
    assert!(table.file_io().read(&manifest_list).await.is_ok());
    tokio::time::sleep(Duration::from_millis(SHORT_MS as u64 + 500)).await;
    let err = table
        .file_io()
        .read(&manifest_list)
        .await
        .expect_err("expired and refused");
    let text = format!("{err}");
    assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{text}");
    assert!(
        text.contains(&format!("table '{ident}'"))
            && text.contains(&location)
            && text.contains("expired")
            && text.contains("403"),
        "{text}"
    );
    let debug = format!("{err:?}");
    for secret in [&first.1, &server.secret_key] {
        assert!(
            !text.contains(secret.as_str()) && !debug.contains(secret.as_str()),
            "{debug}"
        );
    }
    assert!(vending.credentials_calls.load(Ordering::SeqCst) >= 1);

    let ctx = session(Arc::clone(&catalog)).await;
    // a query through the catalog loads the table again: the fresh (short) credential
    // that load vends goes to the table's provider, and the read works
    let rows = ids(&ctx, &format!("lake.{ns}.t")).await;
    assert_eq!(rows.expect("a fresh load vends again"), vec![1, 2, 3]);
    assert!(table.file_io().read(&manifest_list).await.is_ok());
}
