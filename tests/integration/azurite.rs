//! Iceberg tables on Azure storage locations, against a real Azurite (the Azure Storage
//! emulator, npm `azurite`, installed by `.ci/run` into `.ci/azurite/`): one blob
//! service per test process on a free 127.0.0.1 port, a temporary data directory, stopped
//! (and the directory removed) by a guard when the test process exits, as for
//! [`crate::seaweed`]. Containers are created through PyArrow's `AzureFileSystem` (the
//! interop venv). Without Azurite the tests print `SKIPPED` and return, except under CI.

use std::collections::HashMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use icefloe::catalog::{Catalog, Namespace, SqlCatalog, TableIdent};
use icefloe::OpenOptions;

use crate::guarded_server::{start_with_retries, Guarded};

/// Azurite's well-known development account and key (public, documented by Microsoft).
const ACCOUNT: &str = "devstoreaccount1";
const ACCOUNT_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// A running blob service.
#[derive(Debug)]
pub struct Azurite {
    /// `http://127.0.0.1:PORT/devstoreaccount1`, the account's blob endpoint.
    pub endpoint: String,
    port: u16,
    _guard: Guarded,
}

fn azurite_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/azurite/node_modules/.bin/azurite-blob")
}

/// The shared emulator, started on first call; `None` (after `SKIPPED`) when Azurite
/// is not installed, outside CI.
pub fn server() -> Option<&'static Azurite> {
    static SERVER: OnceLock<Result<Azurite, String>> = OnceLock::new();
    if !azurite_bin().exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "Azurite is not installed at {} (.ci/run installs it)",
            azurite_bin().display()
        );
        eprintln!("SKIPPED: Azurite not installed (.ci/run installs it into .ci/azurite)");
        return None;
    }
    crate::interop::python()?;
    match SERVER.get_or_init(start) {
        Ok(s) => Some(s),
        Err(e) => panic!("Azurite did not start: {e}"),
    }
}

fn start() -> Result<Azurite, String> {
    // A port picked free may be taken before Azurite binds it (Azurite then exits): up to
    // three starts, each on a fresh port.
    let (guard, port) = start_with_retries(
        "azurite",
        3,
        Duration::from_secs(30),
        |_| {
            let dir = tempfile::Builder::new()
                .prefix("icefloe-azurite-")
                .tempdir()
                .map_err(|e| format!("temp dir: {e}"))?
                // removed by the guard after the emulator stops
                .keep();
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map(|a| a.port())
                .map_err(|e| format!("no free port: {e}"))?;
            let args: Vec<String> = [
                "--blobHost",
                "127.0.0.1",
                "--blobPort",
                &port.to_string(),
                "--location",
                &dir.join("data").display().to_string(),
                "--silent",
                "--skipApiVersionCheck",
            ]
            .iter()
            .map(|a| a.to_string())
            .collect();
            let guard = Guarded::spawn("azurite", &azurite_bin(), &dir, "azurite.log", &args, &[])?;
            Ok((guard, port))
        },
        // listening, and still running (a port someone else holds answers too)
        |guard, port| std::net::TcpStream::connect(("127.0.0.1", *port)).is_ok() && !guard.exited(),
    )?;
    let server = Azurite {
        endpoint: format!("http://127.0.0.1:{port}/{ACCOUNT}"),
        port,
        _guard: guard,
    };
    eprintln!("azurite: {}", server.endpoint);
    Ok(server)
}

impl Azurite {
    /// Create a container (through PyArrow's `AzureFileSystem`).
    pub fn create_container(&self, name: &str) {
        let py = crate::interop::python().expect("venv checked by server()");
        let script = format!(
            "import pyarrow.fs as f\n\
             fs = f.AzureFileSystem(account_name='{ACCOUNT}', account_key='{ACCOUNT_KEY}', \
             blob_storage_authority='127.0.0.1:{port}', blob_storage_scheme='http', \
             dfs_storage_authority='127.0.0.1:{port}', dfs_storage_scheme='http')\n\
             fs.create_dir('{name}')\n",
            port = self.port
        );
        let out = Command::new(py)
            .args(["-c", &script])
            .output()
            .expect("run python");
        assert!(
            out.status.success(),
            "create container {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The Iceberg FileIO properties for this emulator, with Iceberg Java's names.
    pub fn adls_properties(&self) -> HashMap<String, String> {
        HashMap::from([
            (
                "adls.auth.shared-key.account.name".to_string(),
                ACCOUNT.to_string(),
            ),
            (
                "adls.auth.shared-key.account.key".to_string(),
                ACCOUNT_KEY.to_string(),
            ),
            (
                format!("adls.connection-string.{ACCOUNT}"),
                self.endpoint.clone(),
            ),
        ])
    }
}

/// A SQLite catalog whose warehouse is `warehouse` on an object store reached with the
/// FileIO `properties`: create a table, append twice, delete a row; the rows read back,
/// and the table's metadata and data files are on the store.
pub async fn round_trip(properties: HashMap<String, String>, warehouse: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = SqlCatalog::open_or_create("az", dir.path().join("catalog.db"))
        .expect("db")
        .with_warehouse(warehouse)
        .expect("warehouse")
        .with_open_options(OpenOptions {
            storage_properties: properties.clone(),
            ..Default::default()
        });
    catalog
        .create_namespace(&Namespace::parse("ns"), &HashMap::new())
        .await
        .expect("namespace");
    let catalog: Arc<dyn Catalog> = Arc::new(catalog);
    let ctx = crate::catalog::context();
    crate::catalog::attach(&ctx, "az", Arc::clone(&catalog)).await;
    let run = |q: String| {
        let ctx = ctx.clone();
        async move {
            icefloe::datafusion::sql::execute(&ctx, &q)
                .await
                .unwrap_or_else(|e| panic!("{q}: {e}"))
                .collect()
                .await
                .unwrap_or_else(|e| panic!("{q}: {e}"))
        }
    };
    run("CREATE TABLE az.ns.t (id BIGINT, name VARCHAR)".into()).await;
    run("INSERT INTO az.ns.t VALUES (1, 'a'), (2, 'b')".into()).await;
    run("INSERT INTO az.ns.t VALUES (3, 'c')".into()).await;
    run("DELETE FROM az.ns.t WHERE id = 2".into()).await;
    let rows = run("SELECT id, name FROM az.ns.t ORDER BY id".into()).await;
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&rows)
        .expect("format")
        .to_string();
    assert_eq!(
        text,
        "+----+------+\n| id | name |\n+----+------+\n| 1  | a    |\n| 3  | c    |\n+----+------+"
    );
    let table = catalog
        .load_table(&TableIdent::parse("ns.t"))
        .await
        .expect("load");
    let location = table.metadata_location();
    assert!(location.starts_with(warehouse), "{location}");
    // the metadata file is really on the store: read it back through a fresh FileIO
    let io = icefloe::io::FileIO::new(properties);
    let metadata = io.read(location).await.expect("metadata on Azurite");
    assert!(metadata.starts_with(b"{"), "{location}");
    let listed = io
        .list_files(&format!("{warehouse}/ns/t/data"))
        .await
        .expect("list data files");
    // every data file the current snapshot reads is listed on the store
    let listed: Vec<String> = listed.into_iter().map(|f| f.location).collect();
    let plan =
        icefloe::scan::TableScan::new(table.clone(), table.metadata().current_snapshot().cloned())
            .plan_files()
            .await
            .expect("plan");
    assert_eq!(
        plan.tasks
            .iter()
            .map(|t| t.data_file().record_count)
            .sum::<i64>(),
        2
    );
    for task in &plan.tasks {
        let path = task
            .location
            .split_once("/ns/t/data/")
            .expect("under data/")
            .1;
        assert!(
            listed.iter().any(|l| l.ends_with(path)),
            "{} not in {listed:?}",
            task.location
        );
    }
}

/// abfss:// (Iceberg's ADLS form), wasbs:// (the Hadoop blob form) and abfs://: a table
/// written and read through a SQLite catalog whose warehouse is on Azurite.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_on_azure_locations() {
    let Some(server) = server() else {
        return;
    };
    let container = format!("icefloe{}", std::process::id());
    server.create_container(&container);
    for warehouse in [
        format!("abfss://{container}@{ACCOUNT}.dfs.core.windows.net/abfss-wh"),
        format!("wasbs://{container}@{ACCOUNT}.blob.core.windows.net/wasbs-wh"),
        format!("abfs://{container}@{ACCOUNT}.dfs.core.windows.net/abfs-wh"),
    ] {
        round_trip(server.adls_properties(), &warehouse).await;
    }
}
