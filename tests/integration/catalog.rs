//! Catalogs in SQL (issue 6): a SQLite catalog in the JDBC layout as PyIceberg and
//! Iceberg Java write it, the filesystem (Hadoop) catalog over the corpus, static tables,
//! and the errors naming unknown catalogs, namespaces and tables. The corpus-wide checks
//! (time travel cases, metadata tables) are in `catalog/corpus.rs`.

mod corpus;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::{SessionConfig, SessionContext};
use icefloe::catalog::{
    Catalog, FileSystemCatalog, Namespace, SqlCatalog, StaticCatalog, TableIdent,
};
use icefloe::datafusion::{register_iceberg_functions, IcebergCatalogProvider};
use icefloe::ErrorKind;

/// The corpus: `../shared/corpus` when present, else the few tables in testdata/corpus.
pub(crate) fn corpus_dir() -> PathBuf {
    let shared = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus"));
    if shared.is_dir() {
        shared
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/corpus")
    }
}

/// The corpus tables (folders with a cases.json), sorted.
pub(crate) fn corpus_tables() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("corpus dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("cases.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// The current metadata file of a corpus table (cases.json `metadata_file`).
pub(crate) fn metadata_file(table_dir: &Path) -> String {
    let cases: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(table_dir.join("cases.json")).expect("cases.json"),
    )
    .expect("json");
    table_dir
        .join(cases["metadata_file"].as_str().expect("metadata_file"))
        .to_string_lossy()
        .to_string()
}

pub(crate) fn context() -> SessionContext {
    let ctx = SessionContext::new_with_config(
        SessionConfig::new()
            .with_information_schema(true)
            .with_target_partitions(2),
    );
    register_iceberg_functions(&ctx);
    ctx
}

pub(crate) async fn attach(ctx: &SessionContext, name: &str, catalog: Arc<dyn Catalog>) {
    let provider = IcebergCatalogProvider::try_new(catalog)
        .await
        .expect("catalog provider");
    ctx.register_catalog(name, Arc::new(provider));
}

pub(crate) async fn query(ctx: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>, String> {
    let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
    df.collect().await.map_err(|e| e.to_string())
}

/// The single i64 of a one-row, one-column result.
pub(crate) async fn scalar_i64(ctx: &SessionContext, sql: &str) -> i64 {
    let batches = query(ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let col = batches[0].column(0);
    let col = datafusion::arrow::compute::cast(col, &datafusion::arrow::datatypes::DataType::Int64)
        .expect("cast");
    col.as_primitive::<Int64Type>().value(0)
}

/// The first column of a result as strings.
pub(crate) async fn strings(ctx: &SessionContext, sql: &str) -> Vec<String> {
    let batches = query(ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut out = vec![];
    for b in batches {
        let col = datafusion::arrow::compute::cast(
            b.column(0),
            &datafusion::arrow::datatypes::DataType::Utf8,
        )
        .expect("cast");
        let col = col.as_string::<i32>();
        out.extend((0..col.len()).map(|i| {
            if col.is_null(i) {
                "NULL".to_string()
            } else {
                col.value(i).to_string()
            }
        }));
    }
    out
}

/// PyIceberg's `SqlCatalog` tables (SQLAlchemy models `IcebergTables`,
/// `IcebergNamespaceProperties`): the JDBC V0 layout, without `iceberg_type`.
const PYICEBERG_SCHEMA: &str = "
CREATE TABLE iceberg_tables (
    catalog_name VARCHAR(255) NOT NULL,
    table_namespace VARCHAR(255) NOT NULL,
    table_name VARCHAR(255) NOT NULL,
    metadata_location VARCHAR(1000),
    previous_metadata_location VARCHAR(1000),
    PRIMARY KEY (catalog_name, table_namespace, table_name)
);
CREATE TABLE iceberg_namespace_properties (
    catalog_name VARCHAR(255) NOT NULL,
    namespace VARCHAR(255) NOT NULL,
    property_key VARCHAR(255) NOT NULL,
    property_value VARCHAR(1000) NOT NULL,
    PRIMARY KEY (catalog_name, namespace, property_key)
);";

/// Iceberg Java's `JdbcCatalog` V1 layout: `iceberg_type` ('TABLE' / 'VIEW').
const JDBC_V1_SCHEMA: &str = "
CREATE TABLE iceberg_tables (
    catalog_name VARCHAR(255) NOT NULL,
    table_namespace VARCHAR(255) NOT NULL,
    table_name VARCHAR(255) NOT NULL,
    metadata_location VARCHAR(1000),
    previous_metadata_location VARCHAR(1000),
    iceberg_type VARCHAR(5),
    PRIMARY KEY (catalog_name, table_namespace, table_name)
);
CREATE TABLE iceberg_namespace_properties (
    catalog_name VARCHAR(255) NOT NULL,
    namespace VARCHAR(255) NOT NULL,
    property_key VARCHAR(255),
    property_value VARCHAR(1000),
    PRIMARY KEY (catalog_name, namespace, property_key)
);";

const TT: &str = "spark_v2_cow_time_travel";
const DAY: &str = "spark_v2_day_partitioned";

/// A catalog database written as PyIceberg writes it: namespace `corpus` (with the
/// `exists` property), two tables, a previous metadata location, and a second catalog
/// name in the same file. Returns the database path.
pub(crate) fn pyiceberg_catalog_db(dir: &Path) -> PathBuf {
    let db = dir.join("catalog.db");
    let conn = rusqlite::Connection::open(&db).expect("sqlite");
    conn.execute_batch(PYICEBERG_SCHEMA).expect("schema");
    let corpus = corpus_dir();
    let tt = corpus.join(TT);
    let day = corpus.join(DAY);
    conn.execute(
        "INSERT INTO iceberg_namespace_properties VALUES ('default', 'corpus', 'exists', 'true')",
        [],
    )
    .expect("ns");
    for (name, dir) in [(TT, &tt), (DAY, &day)] {
        if !dir.is_dir() {
            continue;
        }
        conn.execute(
            "INSERT INTO iceberg_tables VALUES ('default', 'corpus', ?1, ?2, ?3)",
            rusqlite::params![
                name,
                metadata_file(dir),
                format!("{}/metadata/v1.metadata.json", dir.display())
            ],
        )
        .expect("table");
    }
    conn.execute(
        "INSERT INTO iceberg_tables VALUES ('other', 'elsewhere', 'x', '/nonexistent/x/metadata/v1.metadata.json', NULL)",
        [],
    )
    .expect("other catalog");
    db
}

#[tokio::test]
async fn pyiceberg_sqlite_catalog_with_three_part_names() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = pyiceberg_catalog_db(tmp.path());
    let catalog = SqlCatalog::open("default", &db).expect("open");
    assert!(!catalog.is_v1_schema());
    assert_eq!(
        SqlCatalog::catalog_names(&db).unwrap(),
        ["default", "other"]
    );
    assert_eq!(
        catalog.list_namespaces().await.unwrap(),
        [Namespace::parse("corpus")]
    );
    let ctx = context();
    attach(&ctx, "pyi", Arc::new(catalog)).await;

    let has_tt = corpus_dir().join(TT).is_dir();
    if has_tt {
        assert_eq!(
            scalar_i64(&ctx, &format!("SELECT count(*) FROM pyi.corpus.{TT}")).await,
            2
        );
        // time travel by tag and by snapshot id through the catalog
        assert_eq!(
            scalar_i64(
                &ctx,
                &format!("SELECT count(*) FROM pyi.corpus.\"{TT}@v1-tag\"")
            )
            .await,
            20
        );
        assert_eq!(
            scalar_i64(
                &ctx,
                &format!("SELECT count(*) FROM pyi.corpus.\"{TT}@266969754585692143\"")
            )
            .await,
            16
        );
        assert_eq!(
            scalar_i64(
                &ctx,
                &format!("SELECT count(*) FROM iceberg_scan('pyi.corpus.{TT}', 'ref', 'v1-tag')")
            )
            .await,
            20
        );
        assert_eq!(
            scalar_i64(
                &ctx,
                &format!("SELECT count(*) FROM pyi.corpus.\"{TT}$snapshots\"")
            )
            .await,
            6
        );
    }
    let count = scalar_i64(&ctx, &format!("SELECT count(*) FROM pyi.corpus.{DAY}")).await;
    assert_eq!(count, 61);

    // information_schema and SHOW TABLES see the catalog's tables
    let mut tables = strings(
        &ctx,
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = 'pyi' AND table_schema = 'corpus'",
    )
    .await;
    tables.sort();
    let mut expected: Vec<String> = [DAY, TT]
        .iter()
        .filter(|t| corpus_dir().join(t).is_dir())
        .map(|t| t.to_string())
        .collect();
    expected.sort();
    assert_eq!(tables, expected);
    let shown = query(&ctx, "SHOW TABLES").await.expect("show tables");
    let shown = datafusion::arrow::util::pretty::pretty_format_batches(&shown)
        .unwrap()
        .to_string();
    assert!(shown.contains(DAY) && shown.contains("pyi"), "{shown}");

    // a two-part name resolves against the catalog once it is the default
    ctx.sql("SET datafusion.catalog.default_catalog = 'pyi'")
        .await
        .expect("set");
    assert_eq!(
        scalar_i64(&ctx, &format!("SELECT count(*) FROM corpus.{DAY}")).await,
        61
    );
}

#[tokio::test]
async fn unknown_catalog_namespace_and_table_are_named() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = pyiceberg_catalog_db(tmp.path());
    let catalog = SqlCatalog::open("default", &db).expect("open");

    let err = catalog
        .list_tables(&Namespace::parse("nope"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(
        err.to_string()
            .contains("namespace 'nope' in catalog 'default'"),
        "{err}"
    );
    let err = catalog
        .load_table(&TableIdent::parse("corpus.missing"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(
        err.to_string()
            .contains("table 'corpus.missing' in catalog 'default'"),
        "{err}"
    );
    let err = catalog
        .load_table(&TableIdent::parse("nope.t"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("namespace 'nope'"), "{err}");
    let err = SqlCatalog::open("default", tmp.path().join("absent.db")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.to_string().contains("absent.db"), "{err}");

    let ctx = context();
    attach(&ctx, "pyi", Arc::new(catalog)).await;
    for (sql, needle) in [
        ("SELECT * FROM nocat.corpus.t", "nocat"),
        ("SELECT * FROM pyi.nons.t", "nons"),
        ("SELECT * FROM pyi.corpus.missing", "missing"),
        (
            "SELECT * FROM iceberg_scan('pyi.corpus.missing')",
            "missing",
        ),
    ] {
        let err = query(&ctx, sql).await.unwrap_err();
        assert!(err.contains(needle), "{sql}: {err}");
    }
    let day = format!("pyi.corpus.\"{DAY}@no-such-tag\"");
    let err = query(&ctx, &format!("SELECT * FROM {day}"))
        .await
        .unwrap_err();
    assert!(err.contains("'no-such-tag'"), "{err}");
    let err = query(&ctx, &format!("SELECT * FROM pyi.corpus.\"{DAY}@1\""))
        .await
        .unwrap_err();
    assert!(err.contains("snapshot id 1 in table"), "{err}");
    let err = query(
        &ctx,
        &format!("SELECT * FROM pyi.corpus.\"{DAY}@1990-01-01T00:00:00Z\""),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("1990-01-01T00:00:00.000Z") && err.contains("first snapshot"),
        "{err}"
    );
    let err = query(
        &ctx,
        &format!("SELECT * FROM iceberg_scan('pyi.corpus.{DAY}', 'snapshot_id', 42)"),
    )
    .await
    .unwrap_err();
    assert!(err.contains("snapshot id 42"), "{err}");
    let err = query(
        &ctx,
        &format!("SELECT * FROM iceberg_metadata('pyi.corpus.{DAY}', 'bogus')"),
    )
    .await
    .unwrap_err();
    assert!(err.contains("'bogus'"), "{err}");
}

#[tokio::test]
async fn jdbc_v1_catalog_skips_views_and_nests_namespaces() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("jdbc.db");
    let conn = rusqlite::Connection::open(&db).expect("sqlite");
    conn.execute_batch(JDBC_V1_SCHEMA).expect("schema");
    let day = corpus_dir().join(DAY);
    conn.execute(
        "INSERT INTO iceberg_tables VALUES ('prod', 'a.b', 'events', ?1, NULL, 'TABLE')",
        [metadata_file(&day)],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO iceberg_tables VALUES ('prod', 'a.b', 'a_view', '/v.json', NULL, 'VIEW')",
        [],
    )
    .unwrap();
    drop(conn);
    let catalog = SqlCatalog::open("prod", &db).expect("open");
    assert!(catalog.is_v1_schema());
    let names: Vec<String> = catalog
        .list_namespaces()
        .await
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(names, ["a", "a.b"]);
    let tables = catalog.list_tables(&Namespace::parse("a.b")).await.unwrap();
    assert_eq!(tables, [TableIdent::parse("a.b.events")]);
    assert!(catalog
        .list_tables(&Namespace::parse("a"))
        .await
        .unwrap()
        .is_empty());
    let ctx = context();
    attach(&ctx, "prod", Arc::new(catalog)).await;
    assert_eq!(
        scalar_i64(&ctx, "SELECT count(*) FROM prod.\"a.b\".events").await,
        61
    );
    assert!(query(&ctx, "SELECT * FROM prod.\"a.b\".a_view")
        .await
        .is_err());
}

#[tokio::test]
async fn created_catalog_registers_tables() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("warehouse/catalog.db");
    let catalog = SqlCatalog::open_or_create("default", &db).expect("create");
    assert!(catalog.is_v1_schema());
    catalog
        .create_namespace(
            &Namespace::parse("ns"),
            &[("owner".to_string(), "me".to_string())].into(),
        )
        .await
        .unwrap();
    assert!(catalog
        .create_namespace(&Namespace::parse("ns"), &Default::default())
        .await
        .is_err());
    let ident = TableIdent::parse("ns.day");
    catalog
        .register_table(&ident, &metadata_file(&corpus_dir().join(DAY)))
        .await
        .unwrap();
    assert!(catalog
        .register_table(&ident, "/x.metadata.json")
        .await
        .is_err());
    let err = catalog
        .register_table(&TableIdent::parse("nope.t"), "/x.metadata.json")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("'nope'"), "{err}");
    // reopened through load_catalog, the name comes from the database
    let loaded = icefloe::catalog::load_catalog(&format!("sqlite:{}", db.display())).unwrap();
    assert_eq!(loaded.name(), "default");
    let table = loaded.load_table(&ident).await.unwrap();
    assert_eq!(table.metadata().snapshots.len(), 3);
}

#[tokio::test]
async fn filesystem_catalog_over_the_corpus() {
    let corpus = corpus_dir();
    let catalog = FileSystemCatalog::new("corpus", corpus.to_str().unwrap()).unwrap();
    let namespaces = catalog.list_namespaces().await.unwrap();
    assert!(namespaces.contains(&Namespace::root()), "{namespaces:?}");
    let tables = catalog.list_tables(&Namespace::root()).await.unwrap();
    assert_eq!(tables.len(), corpus_tables().len());
    let err = catalog
        .load_table(&TableIdent::parse("no_such_table"))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("table 'no_such_table' in catalog 'corpus'"),
        "{err}"
    );
    let err = catalog
        .list_tables(&Namespace::parse("nope"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);

    let ctx = context();
    attach(&ctx, "corpus", Arc::new(catalog)).await;
    assert_eq!(
        scalar_i64(&ctx, &format!("SELECT count(*) FROM corpus.default.{DAY}")).await,
        61
    );
    let n = scalar_i64(
        &ctx,
        "SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'corpus' AND table_schema = 'default'",
    )
    .await;
    assert_eq!(n as usize, corpus_tables().len());
}

#[tokio::test]
async fn hadoop_warehouse_with_namespaces_and_static_tables() {
    // a warehouse laid out as HadoopCatalog writes it: wh/db/day -> the corpus table
    let tmp = tempfile::tempdir().expect("tempdir");
    let src = corpus_dir().join(DAY);
    std::fs::create_dir_all(tmp.path().join("wh/db/nested")).unwrap();
    std::os::unix::fs::symlink(&src, tmp.path().join("wh/db/day")).unwrap();
    let catalog = FileSystemCatalog::new("wh", tmp.path().join("wh").to_str().unwrap()).unwrap();
    let names: Vec<String> = catalog
        .list_namespaces()
        .await
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(names, ["db", "db.nested"]);
    assert_eq!(
        catalog.list_tables(&Namespace::parse("db")).await.unwrap(),
        [TableIdent::parse("db.day")]
    );
    // Java's `HadoopCatalog.loadNamespaceMetadata`: the directory as `location`
    let wh = format!("file://{}", tmp.path().join("wh").display());
    assert_eq!(
        catalog
            .load_namespace_metadata(&Namespace::parse("db.nested"))
            .await
            .unwrap(),
        std::collections::HashMap::from([("location".to_string(), format!("{wh}/db/nested"))])
    );
    let err = catalog
        .load_namespace_metadata(&Namespace::parse("db.day"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    // it keeps no properties to change
    let err = catalog
        .update_namespace_properties(
            &Namespace::parse("db"),
            &std::collections::HashMap::from([("k".to_string(), "v".to_string())]),
            &[],
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
    assert!(err.to_string().contains("catalog 'wh'"), "{err}");

    let static_catalog =
        StaticCatalog::new("st").with_table(TableIdent::parse("s.day"), &metadata_file(&src));
    let ctx = context();
    attach(&ctx, "wh", Arc::new(catalog)).await;
    attach(&ctx, "st", Arc::new(static_catalog)).await;
    assert_eq!(scalar_i64(&ctx, "SELECT count(*) FROM wh.db.day").await, 61);
    assert_eq!(scalar_i64(&ctx, "SELECT count(*) FROM st.s.day").await, 61);
    let err = query(&ctx, "SELECT * FROM st.s.other").await.unwrap_err();
    assert!(err.contains("other"), "{err}");
    // a table location works in the table functions too
    let loc = src.to_str().unwrap();
    assert_eq!(
        scalar_i64(&ctx, &format!("SELECT count(*) FROM iceberg_scan('{loc}')")).await,
        61
    );
    assert_eq!(
        scalar_i64(
            &ctx,
            &format!("SELECT count(*) FROM iceberg_metadata('{loc}', 'snapshots')")
        )
        .await,
        3
    );
}

/// A config file's `type` of a catalog Iceberg Java, Spark or PyIceberg has and icefloe
/// does not open (`hive`, `glue`, …) is refused as unsupported, naming the catalog kind;
/// a type no engine has stays an unknown type (it was "unknown catalog type 'glue'" for
/// both).
#[test]
fn config_of_an_unsupported_catalog_type_names_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for (catalog_type, kind) in [
        ("hive", "Hive Metastore catalog"),
        ("glue", "AWS Glue catalog"),
        ("nessie", "Nessie catalog"),
        ("dynamodb", "DynamoDB catalog"),
    ] {
        let config = tmp.path().join(format!("{catalog_type}.properties"));
        std::fs::write(
            &config,
            format!("type={catalog_type}\nuri=thrift://h:9083\n"),
        )
        .unwrap();
        let Err(err) = icefloe::catalog::load_catalog(config.to_str().unwrap()) else {
            panic!("{catalog_type}: not refused");
        };
        assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
        let text = err.to_string();
        assert!(
            text.contains(&format!(
                "catalog type '{catalog_type}' ({kind}) is not supported by icefloe"
            )),
            "{text}"
        );
        assert!(
            text.contains("supported types: sql (also jdbc), hadoop, static, rest"),
            "{text}"
        );
    }
    let config = tmp.path().join("typo.properties");
    std::fs::write(&config, "type=sqll\nuri=c.db\n").unwrap();
    let Err(err) = icefloe::catalog::load_catalog(config.to_str().unwrap()) else {
        panic!("type=sqll: not refused");
    };
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(
        err.to_string().contains("unknown catalog type 'sqll'"),
        "{err}"
    );
}

/// Run the CLI in `cwd` (HOME there too, so no history lands elsewhere).
fn cli(cwd: &Path, args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_icefloe"))
        .args(args)
        .current_dir(cwd)
        .env("HOME", cwd)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run icefloe");
    let text = |b: &[u8]| String::from_utf8_lossy(b).to_string();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn cli_attaches_a_pyiceberg_sqlite_catalog() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = pyiceberg_catalog_db(tmp.path());
    // the file holds catalogs 'default' and 'other': 'default' is picked, or named
    let spec = format!("sqlite:{}?catalog=default", db.display());
    let day = corpus_dir().join(DAY);
    let sql = format!(
        "SELECT count(*) AS a FROM default.corpus.{DAY}; SELECT count(*) AS b FROM corpus.\"{DAY}$snapshots\"; \
         SELECT count(*) AS c FROM t"
    );
    let table = format!("t={}", day.display());
    let (ok, out, err) = cli(
        tmp.path(),
        &[
            "--catalog",
            &spec,
            "--table",
            &table,
            "--format",
            "csv",
            "-c",
            &sql,
        ],
    );
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines, ["a", "61", "b", "3", "c", "61"], "{out}");

    let (ok, _, err) = cli(
        tmp.path(),
        &["--catalog", &spec, "-c", "SELECT * FROM corpus.missing"],
    );
    assert!(!ok && err.contains("missing"), "{err}");
    let (ok, _, err) = cli(
        tmp.path(),
        &["--catalog", "/nonexistent/cat.json", "-c", "SELECT 1"],
    );
    assert!(!ok && err.contains("/nonexistent/cat.json"), "{err}");
    let typo = format!("sqlite:{}?catalog=prod", db.display());
    let (ok, _, err) = cli(tmp.path(), &["--catalog", &typo, "-c", "SELECT 1"]);
    assert!(
        !ok && err.contains("catalog 'prod'") && err.contains("default, other"),
        "{err}"
    );
}

#[test]
fn cli_default_catalog_is_created_only_on_request() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (ok, _, err) = cli(tmp.path(), &["-c", "SELECT 1"]);
    assert!(ok, "{err}");
    assert!(
        !tmp.path().join("warehouse").exists(),
        "a plain run must not create the default catalog"
    );
    let (ok, _, err) = cli(tmp.path(), &["--catalog", "-c", "SELECT 1"]);
    assert!(ok, "{err}");
    assert!(tmp.path().join("warehouse/catalog.db").is_file());
    // once it exists it is attached without the flag
    let (ok, out, err) = cli(
        tmp.path(),
        &[
            "--format",
            "csv",
            "-c",
            "SELECT current_catalog AS c FROM (SELECT 1)",
        ],
    );
    let _ = (ok, out, err);
    let (ok, out, err) = cli(
        tmp.path(),
        &[
            "--format",
            "csv",
            "-c",
            "SELECT DISTINCT table_catalog FROM information_schema.tables",
        ],
    );
    assert!(ok, "{err}");
    assert!(out.lines().any(|l| l == "default"), "{out}");
}

/// A tester's D8: `SHOW TABLES` listed the tables as the session first read the catalog
/// (a table another session or process created or dropped since was not seen, or still
/// seen), and every namespace's after `USE ns`. It lists the catalog as it is now, and,
/// as Spark's and Trino's do, the current namespace's tables once there is one (`USE`),
/// or `FROM|IN` a namespace's; with no current namespace, every table as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_tables_lists_the_current_namespace_as_the_catalog_holds_it_now() {
    use crate::dml::{lake, ok, run, session_over};
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(ctx, "CREATE SCHEMA ice.other").await;
    ok(ctx, "CREATE TABLE ice.ns.t (id INT)").await;
    ok(ctx, "CREATE TABLE ice.other.u (id INT)").await;
    // another session (or process) over the same catalog, attached now
    let elsewhere = session_over(&lake).await;
    ok(&elsewhere, "CREATE TABLE ice.ns.fresh (id INT)").await;
    ok(&elsewhere, "DROP TABLE ice.ns.t").await;
    let names = |text: String| -> Vec<String> {
        text.lines()
            .skip(3)
            .filter(|l| l.starts_with('|'))
            .map(|l| {
                l.split('|')
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(".")
            })
            .collect()
    };
    // no current namespace (the default schema `public`): every catalog table
    let all = names(ok(ctx, "SHOW TABLES").await);
    assert!(all.contains(&"ice.ns.fresh".to_string()), "{all:?}");
    assert!(all.contains(&"ice.other.u".to_string()), "{all:?}");
    assert!(!all.contains(&"ice.ns.t".to_string()), "{all:?}");
    ok(ctx, "USE ice.ns").await;
    assert_eq!(names(ok(ctx, "SHOW TABLES").await), ["ice.ns.fresh"]);
    ok(&elsewhere, "CREATE TABLE ice.ns.later (id INT)").await;
    assert_eq!(
        names(ok(ctx, "SHOW TABLES").await),
        ["ice.ns.fresh", "ice.ns.later"]
    );
    assert_eq!(
        names(ok(ctx, "SHOW TABLES IN other").await),
        ["ice.other.u"]
    );
    assert_eq!(
        names(ok(ctx, "SHOW TABLES FROM ice.other").await),
        ["ice.other.u"]
    );
    let e = run(ctx, "SHOW TABLES FROM nope")
        .await
        .expect_err("unknown namespace");
    assert!(
        e.contains("SHOW TABLES FROM nope: namespace 'nope' does not exist in catalog 'ice'"),
        "{e}"
    );
    // the current namespace dropped elsewhere
    ok(&elsewhere, "DROP TABLE ice.other.u").await;
    ok(&elsewhere, "DROP SCHEMA ice.other").await;
    ok(ctx, "USE ice.other").await;
    let e = run(ctx, "SHOW TABLES")
        .await
        .expect_err("dropped namespace");
    assert!(e.contains("namespace 'other' does not exist"), "{e}");
}

/// Helper J's note after D8: `information_schema.tables` (the CLI's view, read directly)
/// still listed the tables as the session first read the catalog. Its tables read the
/// Iceberg catalogs' lists again before each scan, as `SHOW TABLES` does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn information_schema_lists_the_catalog_as_it_holds_it_now() {
    use crate::dml::{lake, ok, session_over};
    let lake = lake().await;
    let ctx = session_over(&lake).await;
    icefloe::datafusion::information_schema::register_information_schema(&ctx)
        .expect("information_schema");
    ok(&ctx, "CREATE TABLE ice.ns.t (id INT)").await;
    let listed = |ctx: &SessionContext| {
        let ctx = ctx.clone();
        async move {
            let sql = "SELECT table_schema || '.' || table_name AS n \
                FROM ice.information_schema.tables \
                WHERE table_schema <> 'information_schema' ORDER BY n";
            let batches = crate::dml::run(&ctx, sql)
                .await
                .expect("information_schema");
            let mut names = vec![];
            for b in &batches {
                let col = datafusion::arrow::compute::cast(
                    b.column(0),
                    &datafusion::arrow::datatypes::DataType::Utf8,
                )
                .expect("cast");
                let col = col
                    .as_any()
                    .downcast_ref::<datafusion::arrow::array::StringArray>()
                    .expect("strings");
                names.extend(col.iter().map(|v| v.expect("name").to_string()));
            }
            names
        }
    };
    assert_eq!(listed(&ctx).await, ["ns.t"]);
    // another session (or process) over the same catalog
    let elsewhere = session_over(&lake).await;
    ok(&elsewhere, "CREATE SCHEMA ice.other").await;
    ok(&elsewhere, "CREATE TABLE ice.other.u (id INT)").await;
    ok(&elsewhere, "CREATE TABLE ice.ns.fresh (id INT)").await;
    ok(&elsewhere, "DROP TABLE ice.ns.t").await;
    assert_eq!(listed(&ctx).await, ["ns.fresh", "other.u"]);
    // and its columns
    ok(&elsewhere, "CREATE TABLE ice.ns.later (a BIGINT, b STRING)").await;
    let cols = ok(
        &ctx,
        "SELECT column_name FROM ice.information_schema.columns \
         WHERE table_schema = 'ns' AND table_name = 'later' ORDER BY ordinal_position",
    )
    .await;
    assert!(cols.contains("| a ") && cols.contains("| b "), "{cols}");
}

/// A catalog that counts its `list_namespaces` calls (each listing of the catalog reads
/// the namespaces once, then each namespace's tables).
struct CountingLists {
    inner: Arc<dyn Catalog>,
    listings: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Debug for CountingLists {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CountingLists").finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl Catalog for CountingLists {
    fn name(&self) -> &str {
        self.inner.name()
    }
    async fn list_namespaces(&self) -> icefloe::Result<Vec<Namespace>> {
        self.listings
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.list_namespaces().await
    }
    async fn list_tables(&self, namespace: &Namespace) -> icefloe::Result<Vec<TableIdent>> {
        self.inner.list_tables(namespace).await
    }
    async fn load_table(&self, ident: &TableIdent) -> icefloe::Result<icefloe::Table> {
        self.inner.load_table(ident).await
    }
    async fn commit_table(
        &self,
        ident: &TableIdent,
        commit: &icefloe::spec::TableCommit,
    ) -> icefloe::Result<icefloe::Table> {
        self.inner.commit_table(ident, commit).await
    }
}

/// `SHOW TABLES` reads the catalog's namespace and table lists once per statement (it
/// read them twice: once itself, once more through `information_schema`), in each of
/// its forms (no current namespace, after `USE`, `FROM ns`), with DataFusion's
/// `information_schema` and with icefloe's (the CLI's, which reads the lists itself);
/// and still lists a table another session created since.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_tables_lists_the_catalog_once_per_statement() {
    use crate::dml::{lake, ok};
    use std::sync::atomic::Ordering;
    let lake = lake().await;
    ok(&lake.ctx, "CREATE TABLE ice.ns.t (id INT)").await;
    for ours in [false, true] {
        let counting = Arc::new(CountingLists {
            inner: Arc::clone(&lake.catalog),
            listings: Default::default(),
        });
        let ctx = crate::dml::session_over(&lake).await;
        attach(&ctx, "counted", Arc::clone(&counting) as Arc<dyn Catalog>).await;
        if ours {
            icefloe::datafusion::information_schema::register_information_schema(&ctx)
                .expect("information_schema");
        }
        let mut table = 0;
        for statement in [
            "SHOW TABLES",
            "SHOW TABLES FROM counted.ns",
            "USE counted.ns",
            "SHOW TABLES",
        ] {
            table += 1;
            let name = format!("fresh_{}_{table}", u8::from(ours));
            ok(&lake.ctx, &format!("CREATE TABLE ice.ns.{name} (id INT)")).await;
            let before = counting.listings.load(Ordering::SeqCst);
            let shown = ok(&ctx, statement).await;
            let listings = counting.listings.load(Ordering::SeqCst) - before;
            if statement.starts_with("USE") {
                continue;
            }
            assert_eq!(
                listings, 1,
                "{statement} (icefloe's information_schema: {ours})"
            );
            let listed = shown.lines().any(|l| {
                let cells: Vec<&str> = l
                    .split('|')
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .collect();
                cells.starts_with(&["counted", "ns", name.as_str()])
            });
            assert!(listed, "{statement}: {shown}");
        }
    }
}

/// The rows of `sql` run through `sql::execute` (the CLI's path), rendered.
async fn executed(ctx: &SessionContext, sql: &str) -> String {
    let batches = icefloe::datafusion::sql::execute(ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    datafusion::arrow::util::pretty::pretty_format_batches(&batches)
        .expect("format")
        .to_string()
}

/// Spark names a table of a namespace of several levels `a.b.t`, or `cat.a.b.t` (a first
/// part that names no catalog starts the namespace). DataFusion read `a.b.t` as catalog
/// `a` and refused four parts, so every statement but icefloe's DDL failed on such names
/// ("catalog 'a' not found"). Each kind of statement now reads them as Spark does; a
/// column path of the same words (`a.b.t`: field `t` of field `b` of column `a`) keeps its
/// meaning.
#[tokio::test]
async fn tables_of_several_level_namespaces_are_named_as_in_spark() {
    let wh = crate::writes::warehouse().await;
    let ctx = &wh.ctx;
    for sql in [
        "CREATE SCHEMA a",
        "CREATE SCHEMA a.b",
        "CREATE TABLE a.b.t (x INT, a STRUCT<b: STRUCT<t: INT>>)",
        "INSERT INTO a.b.t VALUES (1, named_struct('b', named_struct('t', 4))), \
         (2, named_struct('b', named_struct('t', 5)))",
    ] {
        executed(ctx, sql).await;
    }
    let first = executed(ctx, "SELECT snapshot_id FROM A.B.T.snapshots").await;
    let first: i64 = first
        .lines()
        .nth(3)
        .and_then(|l| l.trim_matches(|c| c == '|' || c == ' ').parse().ok())
        .unwrap_or_else(|| panic!("{first}"));
    for sql in [
        "INSERT INTO cat.a.b.t SELECT x + 10, a FROM a.b.t",
        "UPDATE a.b.t SET x = 7 WHERE a.b.t = 5 AND x < 10",
        "DELETE FROM cat.a.b.t WHERE x = 11",
        "MERGE INTO a.b.t USING (SELECT 12 AS k) s ON t.x = s.k \
         WHEN MATCHED THEN UPDATE SET x = 20",
    ] {
        executed(ctx, sql).await;
    }
    let rows = executed(ctx, "SELECT x, a.b.t AS f FROM a.b.t ORDER BY x").await;
    assert_eq!(
        rows.lines().collect::<Vec<_>>(),
        [
            "+----+---+",
            "| x  | f |",
            "+----+---+",
            "| 1  | 4 |",
            "| 7  | 5 |",
            "| 20 | 5 |",
            "+----+---+",
        ],
        "{rows}"
    );
    // the quoted form names the same table
    assert_eq!(
        executed(ctx, "SELECT x, a.b.t AS f FROM cat.\"a.b\".t ORDER BY x").await,
        rows
    );
    let at_first = executed(
        ctx,
        &format!("SELECT sum(x) AS s FROM cat.a.b.t VERSION AS OF {first}"),
    )
    .await;
    assert!(at_first.contains("| 3 |"), "{at_first}");
    let snapshots = executed(ctx, "SELECT count(*) AS n FROM a.b.t.snapshots").await;
    assert!(snapshots.contains("| 5 |"), "{snapshots}");
    let described = executed(ctx, "DESCRIBE a.b.t").await;
    assert!(
        described.contains("| x ") && described.contains("| a "),
        "{described}"
    );
    executed(ctx, "TRUNCATE TABLE a.b.t").await;
    let counted = executed(ctx, "SELECT count(*) AS n FROM a.b.t").await;
    assert!(counted.contains("| 0 |"), "{counted}");
    // a namespace that does not exist stays DataFusion's error
    let err = icefloe::datafusion::sql::execute(ctx, "SELECT * FROM a.c.t")
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("table 'a.c.t' not found"), "{err}");
}

/// `CREATE [OR REPLACE] VIEW a.b.v` and `DROP VIEW [IF EXISTS] a.b.v` name a view of
/// namespace `a.b` as Spark does (`cat.a.b.v` too): DataFusion read `a` as a catalog
/// ("failed to resolve catalog: a"), and `DROP VIEW IF EXISTS a.b.v` looked for a view
/// named `a.b.v`, found none and kept the view of `a.b`.
#[tokio::test]
async fn views_of_several_level_namespaces_are_named_as_in_spark() {
    let wh = crate::writes::warehouse().await;
    let ctx = &wh.ctx;
    for sql in [
        "CREATE SCHEMA a",
        "CREATE SCHEMA a.b",
        "CREATE TABLE a.b.t (x INT)",
        "INSERT INTO a.b.t VALUES (1), (2)",
        "CREATE VIEW a.b.v AS SELECT x FROM a.b.t WHERE x > 1",
    ] {
        executed(ctx, sql).await;
    }
    let listed = executed(
        ctx,
        "SELECT table_schema, table_name, table_type FROM information_schema.tables \
         WHERE table_name = 'v'",
    )
    .await;
    assert!(
        listed.contains("| a.b          | v          | VIEW       |"),
        "{listed}"
    );
    let read = |sql: &'static str| async move { executed(ctx, sql).await };
    assert!(read("SELECT sum(x) AS s FROM a.b.v")
        .await
        .contains("| 2 |"));
    executed(
        ctx,
        "CREATE OR REPLACE VIEW cat.a.b.v AS SELECT x + 10 AS x FROM a.b.t",
    )
    .await;
    assert!(read("SELECT sum(x) AS s FROM \"a.b\".v")
        .await
        .contains("| 23 |"));
    executed(ctx, "DROP VIEW IF EXISTS a.b.v").await;
    let err = icefloe::datafusion::sql::execute(ctx, "SELECT * FROM \"a.b\".v")
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("not found"), "the view was kept: {err}");
    executed(ctx, "CREATE VIEW a.b.w AS SELECT 1 AS one").await;
    executed(ctx, "DROP VIEW cat.a.b.w").await;
    // the table stays
    assert!(read("SELECT count(*) AS n FROM a.b.t")
        .await
        .contains("| 2 |"));
}

/// A column qualified by a table name of several-level namespace, as the statement names
/// the table (`a.b.t.x`, `cat.a.b.t.x`, a struct field `a.b.t.st.f`), resolves as in
/// Spark (a qualifier of four parts or more matches the end of the table's): DataFusion
/// reported "No field named a.b.t.x", in a `SELECT` and in a `MERGE`'s `ON`.
#[tokio::test]
async fn columns_qualified_by_several_level_table_names_resolve_as_in_spark() {
    let wh = crate::writes::warehouse().await;
    let ctx = &wh.ctx;
    for sql in [
        "CREATE SCHEMA a",
        "CREATE SCHEMA a.b",
        "CREATE TABLE a.b.t (x INT, st STRUCT<f: INT>)",
        "INSERT INTO a.b.t VALUES (1, named_struct('f', 10)), (2, named_struct('f', 20))",
        "CREATE TABLE a.b.u (x INT)",
        "INSERT INTO a.b.u VALUES (2), (3)",
        "MERGE INTO a.b.t USING a.b.u ON a.b.t.x = a.b.u.x \
         WHEN MATCHED THEN UPDATE SET x = a.b.u.x * 100 \
         WHEN NOT MATCHED THEN INSERT (x) VALUES (a.b.u.x)",
    ] {
        executed(ctx, sql).await;
    }
    let rows = executed(
        ctx,
        "SELECT a.b.t.x, cat.a.b.t.x AS y, a.b.t.st.f AS f FROM cat.a.b.t ORDER BY a.b.t.x",
    )
    .await;
    assert_eq!(
        rows.lines().collect::<Vec<_>>(),
        [
            "+-----+-----+----+",
            "| x   | y   | f  |",
            "+-----+-----+----+",
            "| 1   | 1   | 10 |",
            "| 3   | 3   |    |",
            "| 200 | 200 | 20 |",
            "+-----+-----+----+",
        ],
        "{rows}"
    );
}

/// A SQLite catalog whose database file is deleted while open says so: SQLite keeps
/// using the unlinked file and refuses writes as "attempt to write a readonly database",
/// which named the wrong cause (found by a tester).
#[tokio::test]
async fn a_sqlite_catalog_deleted_while_open_says_so() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("gone.db");
    let catalog = SqlCatalog::open_or_create("default", &db).expect("create");
    catalog
        .create_namespace(&Namespace::parse("a"), &std::collections::HashMap::new())
        .await
        .expect("namespace");
    std::fs::remove_file(&db).expect("rm");
    let e = catalog
        .create_namespace(&Namespace::parse("b"), &std::collections::HashMap::new())
        .await
        .expect_err("the file is gone");
    assert!(
        e.to_string().contains("the database file no longer exists"),
        "{e}"
    );
}

/// A namespace level or table name a catalog makes a directory of must be one directory
/// (a tester's): `ns.".."` was created at the warehouse root (its `remove_orphan_files`
/// listed every table's files and the catalog database), `ns.""` at the namespace's
/// directory, `ns."x/y"` and `"ns.x".y` shared one directory, and in a filesystem
/// catalog `a.".."` made the warehouse itself a table. Refused on both catalogs, naming
/// the name, with nothing written; a `LOCATION` given keeps any name, and the filesystem
/// catalog also refuses names beginning with `.`, which it does not list.
#[tokio::test]
async fn names_that_are_not_one_directory_are_refused() {
    use icefloe::catalog::TableCreation;
    use icefloe::spec::{NestedField, PrimitiveType, Schema, Type};
    use std::collections::HashMap;

    let tmp = tempfile::tempdir().unwrap();
    let warehouse = tmp.path().join("wh");
    std::fs::create_dir_all(&warehouse).unwrap();
    let sql = SqlCatalog::open_or_create("sq", tmp.path().join("c.db"))
        .unwrap()
        .with_warehouse(warehouse.to_str().unwrap())
        .unwrap();
    let fs = FileSystemCatalog::new("fs", tmp.path().join("hadoop").to_str().unwrap()).unwrap();
    std::fs::create_dir_all(tmp.path().join("hadoop")).unwrap();
    let creation = || {
        TableCreation::new(Schema::new(
            0,
            vec![NestedField::optional(
                1,
                "i",
                Type::Primitive(PrimitiveType::Int),
            )],
        ))
    };
    let ns = Namespace::parse("ns");
    let catalogs: [&dyn Catalog; 2] = [&sql, &fs];
    for catalog in catalogs {
        catalog
            .create_namespace(&ns, &HashMap::new())
            .await
            .unwrap();
        for name in ["..", ".", "", "x/y"] {
            let err = catalog
                .create_table(&TableIdent::new(ns.clone(), name), creation())
                .await
                .expect_err(name);
            assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{name}: {err}");
            assert!(
                err.to_string()
                    .contains(&format!("table name '{name}' cannot be a directory")),
                "{err}"
            );
            let level = Namespace::new(vec!["ns".to_string(), name.to_string()]);
            let err = catalog
                .create_namespace(&level, &HashMap::new())
                .await
                .expect_err(name);
            // an empty level is no namespace in any catalog (`Namespace::check_creatable`)
            let expected = if name.is_empty() {
                "cannot create namespace 'ns.': a namespace level cannot be empty".to_string()
            } else {
                format!("namespace name '{name}' cannot be a directory")
            };
            assert!(err.to_string().contains(&expected), "{err}");
        }
        catalog
            .create_table(&TableIdent::new(ns.clone(), "ok"), creation())
            .await
            .unwrap();
        assert_eq!(
            catalog.list_tables(&ns).await.unwrap(),
            [TableIdent::parse("ns.ok")]
        );
    }
    let err = fs
        .create_table(&TableIdent::new(ns.clone(), ".hidden"), creation())
        .await
        .expect_err(".hidden");
    assert!(err.to_string().contains("begins with '.'"), "{err}");
    // nothing was written but the two tables
    let mut written: Vec<String> = walk(tmp.path())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.strip_prefix(tmp.path()).unwrap().display().to_string())
        .map(|p| p.split("/metadata/").next().unwrap().to_string())
        .collect();
    written.sort();
    assert_eq!(written, ["hadoop/ns/ok", "wh/ns/ok"]);
    // a rename or a register to such a name is refused as well (a tester's)
    for name in ["..", "", "a/b"] {
        let to = TableIdent::new(ns.clone(), name);
        let err = sql
            .rename_table(&TableIdent::parse("ns.ok"), &to)
            .await
            .expect_err(name);
        assert!(err.to_string().contains("cannot be a directory"), "{err}");
        let ok_table = sql.load_table(&TableIdent::parse("ns.ok")).await.unwrap();
        let err = sql
            .register_table(&to, ok_table.metadata_location())
            .await
            .expect_err(name);
        assert!(err.to_string().contains("cannot be a directory"), "{err}");
    }
    // a default location inside another table's directory (table `ns.ok.u` of namespace
    // `ns.ok`, beside table `ns.ok`), or holding a namespace's tables (table `ns.sub`
    // beside namespace `ns.sub`), is refused; Java's JdbcCatalog lets the files of two
    // tables mix there (a tester's)
    let inner_ns = Namespace::parse("ns.ok");
    sql.create_namespace(&inner_ns, &HashMap::new())
        .await
        .unwrap();
    let err = sql
        .create_table(&TableIdent::new(inner_ns.clone(), "u"), creation())
        .await
        .expect_err("inside ns.ok");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(
        err.to_string()
            .contains("lies inside the directory of table 'ns.ok'"),
        "{err}"
    );
    sql.create_namespace(&Namespace::parse("ns.sub"), &HashMap::new())
        .await
        .unwrap();
    let err = sql
        .create_table(&TableIdent::parse("ns.sub"), creation())
        .await
        .expect_err("holding ns.sub");
    assert!(
        err.to_string()
            .contains("is the directory of namespace 'ns.sub''s tables"),
        "{err}"
    );
    // a table whose location is given may have any name
    let mut given = creation();
    given.location = Some(tmp.path().join("elsewhere").display().to_string());
    sql.create_table(&TableIdent::new(ns.clone(), ".."), given)
        .await
        .unwrap();
    let mut given = creation();
    given.location = Some(tmp.path().join("elsewhere2").display().to_string());
    sql.create_table(&TableIdent::new(inner_ns, "u"), given)
        .await
        .unwrap();
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = vec![];
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
