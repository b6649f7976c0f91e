//! Writing format-version 1 tables: v1 manifests and manifest lists (no sequence numbers,
//! no delete files). A v1 table created by icefloe, one PyIceberg wrote, and copies of the
//! v1 corpus tables Spark and PyIceberg wrote take `INSERT`, `INSERT OVERWRITE` and
//! copy-on-write `DELETE`/`UPDATE`; merge-on-read is refused; PyIceberg and DuckDB read
//! the tables icefloe wrote.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::prelude::{SessionConfig, SessionContext};
use icefloe::catalog::{Catalog, Namespace, SqlCatalog, TableIdent};
use icefloe::spec::FormatVersion;
use serde_json::{json, Value};

use crate::catalog::{attach, corpus_dir, metadata_file, scalar_i64};
use crate::interop::{assert_same_rows, duckdb_read, icefloe_rows, pyiceberg_read, python};

async fn run(ctx: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>, String> {
    let df = icefloe::datafusion::sql::execute(ctx, sql)
        .await
        .map_err(|e| e.to_string())?;
    df.collect().await.map_err(|e| e.to_string())
}

async fn ok(ctx: &SessionContext, sql: &str) {
    run(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
}

fn session() -> SessionContext {
    let config = icefloe::datafusion::register_iceberg_options(
        SessionConfig::new().with_target_partitions(2),
    );
    let ctx = SessionContext::new_with_config(config);
    icefloe::register_iceberg_factory(&ctx);
    ctx
}

async fn sql_catalog(db: &Path, warehouse: &Path) -> Arc<dyn Catalog> {
    let catalog = SqlCatalog::open_or_create("default", db)
        .expect("catalog")
        .with_warehouse(&warehouse.to_string_lossy())
        .expect("warehouse");
    Arc::new(catalog)
}

/// `ident`'s rows through icefloe, and through PyIceberg and DuckDB when the interop
/// venv is there; all equal `expected`. Returns the table's format version.
async fn read_alike(
    ctx: &SessionContext,
    catalog: &Arc<dyn Catalog>,
    db: &Path,
    warehouse: &Path,
    ident: &str,
    expected: &[Value],
) -> FormatVersion {
    let table = catalog
        .load_table(&TableIdent::parse(ident))
        .await
        .expect("load");
    let schema = serde_json::to_value(table.metadata().current_schema()).expect("schema");
    let ours = icefloe_rows(ctx, &format!("ice.{ident}"), &schema).await;
    assert_same_rows(&format!("{ident}: icefloe"), expected, &ours);
    if python().is_some() {
        let pyi = pyiceberg_read(db, warehouse, ident);
        assert_eq!(pyi["format_version"], 1, "{ident}");
        assert_same_rows(
            &format!("{ident}: PyIceberg"),
            pyi["rows"].as_array().expect("rows"),
            expected,
        );
        let duck = duckdb_read(table.metadata_location());
        assert_same_rows(
            &format!("{ident}: DuckDB"),
            duck["rows"].as_array().expect("rows"),
            expected,
        );
    }
    table.metadata().format_version
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_table_created_by_icefloe_takes_every_copy_on_write_change() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (db, warehouse) = (tmp.path().join("c.db"), tmp.path().join("wh"));
    std::fs::create_dir_all(&warehouse).expect("warehouse");
    let catalog = sql_catalog(&db, &warehouse).await;
    catalog
        .create_namespace(&Namespace::parse("ns"), &HashMap::new())
        .await
        .expect("ns");
    let ctx = session();
    attach(&ctx, "ice", Arc::clone(&catalog)).await;
    ok(
        &ctx,
        "CREATE TABLE ice.ns.t (id BIGINT, cat VARCHAR, v DOUBLE) PARTITIONED BY (cat) \
         TBLPROPERTIES ('format-version'='1')",
    )
    .await;
    ok(
        &ctx,
        "INSERT INTO ice.ns.t VALUES (1, 'a', 1.5), (2, 'b', 2.5), (3, 'a', NULL)",
    )
    .await;
    ok(
        &ctx,
        "INSERT INTO ice.ns.t VALUES (4, 'c', 4.0), (5, NULL, 5.0)",
    )
    .await;
    let expected = [
        json!([1, "a", 1.5]),
        json!([2, "b", 2.5]),
        json!([3, "a", null]),
        json!([4, "c", 4.0]),
        json!([5, null, 5.0]),
    ];
    let v = read_alike(&ctx, &catalog, &db, &warehouse, "ns.t", &expected).await;
    assert_eq!(v, FormatVersion::V1);

    // merge-on-read: v1 has no delete files, refused before anything is written
    ok(
        &ctx,
        "ALTER TABLE ice.ns.t SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')",
    )
    .await;
    let before = catalog
        .metadata_location(&TableIdent::parse("ns.t"))
        .await
        .expect("location");
    let err = run(&ctx, "DELETE FROM ice.ns.t WHERE id = 1")
        .await
        .expect_err("merge-on-read on v1");
    assert!(err.contains("format-version 1"), "{err}");
    assert!(err.contains("write.delete.mode"), "{err}");
    assert_eq!(
        catalog
            .metadata_location(&TableIdent::parse("ns.t"))
            .await
            .expect("location"),
        before
    );
    // copy-on-write works
    ok(
        &ctx,
        "ALTER TABLE ice.ns.t SET TBLPROPERTIES ('write.delete.mode'='copy-on-write')",
    )
    .await;
    ok(&ctx, "DELETE FROM ice.ns.t WHERE id = 1").await;
    ok(&ctx, "UPDATE ice.ns.t SET v = 30.0 WHERE id = 3").await;
    ok(&ctx, "SET icefloe.partition_overwrite_mode = 'dynamic'").await;
    ok(&ctx, "INSERT OVERWRITE ice.ns.t VALUES (6, 'c', 6.0)").await;
    let expected = [
        json!([2, "b", 2.5]),
        json!([3, "a", 30.0]),
        json!([5, null, 5.0]),
        json!([6, "c", 6.0]),
    ];
    let v = read_alike(&ctx, &catalog, &db, &warehouse, "ns.t", &expected).await;
    assert_eq!(v, FormatVersion::V1);
    // every snapshot has sequence number 0, and the operations are the ones run
    let mut ops: Vec<String> =
        crate::catalog::strings(&ctx, "SELECT operation FROM ice.ns.\"t$snapshots\"").await;
    ops.sort();
    assert_eq!(
        ops,
        ["append", "append", "overwrite", "overwrite", "overwrite"]
    );
    // schema evolution and compaction of the v1 table, in place
    ok(&ctx, "ALTER TABLE ice.ns.t ADD COLUMN w INT").await;
    ok(&ctx, "INSERT INTO ice.ns.t VALUES (7, 'a', 7.0, 70)").await;
    ok(&ctx, "CALL ice.system.rewrite_data_files('ns.t')").await;
    let expected = [
        json!([2, "b", 2.5, null]),
        json!([3, "a", 30.0, null]),
        json!([5, null, 5.0, null]),
        json!([6, "c", 6.0, null]),
        json!([7, "a", 7.0, 70]),
    ];
    let v = read_alike(&ctx, &catalog, &db, &warehouse, "ns.t", &expected).await;
    assert_eq!(v, FormatVersion::V1);
    let t = catalog
        .load_table(&TableIdent::parse("ns.t"))
        .await
        .expect("load");
    assert!(t
        .metadata()
        .snapshots
        .iter()
        .all(|s| s.sequence_number == 0));
    assert_eq!(t.metadata().last_sequence_number, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_table_pyiceberg_wrote_is_appended_to_and_read_alike() {
    if python().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let (db, warehouse) = (tmp.path().join("c.db"), tmp.path().join("wh"));
    std::fs::create_dir_all(&warehouse).expect("warehouse");
    let written = crate::interop::pyiceberg_write(&db, &warehouse);
    let catalog: Arc<dyn Catalog> = Arc::new(SqlCatalog::open("default", &db).expect("catalog"));
    let ctx = session();
    attach(&ctx, "ice", Arc::clone(&catalog)).await;
    ok(
        &ctx,
        "INSERT INTO ice.interop.part_v1 VALUES \
         (500, 'a', TIMESTAMPTZ '2024-03-02 00:00:00+00:00', 1.5), (501, NULL, NULL, NULL)",
    )
    .await;
    ok(&ctx, "DELETE FROM ice.interop.part_v1 WHERE id < 3").await;
    let mut expected: Vec<Value> = written["tables"]["part_v1"]["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r[0].as_i64().expect("id") >= 3)
        .cloned()
        .collect();
    assert_eq!(expected.len(), 15);
    expected.push(json!([500, "a", "2024-03-02T00:00:00.000000Z", 1.5]));
    expected.push(json!([501, null, null, null]));
    let v = read_alike(
        &ctx,
        &catalog,
        &db,
        &warehouse,
        "interop.part_v1",
        &expected,
    )
    .await;
    assert_eq!(v, FormatVersion::V1);
}

/// A copy of corpus table `t` registered in a SQLite catalog (paths remapped to the copy).
pub(crate) async fn corpus_copy(dir: &Path, t: &str) -> (Arc<dyn Catalog>, PathBuf) {
    let copy = dir.join(t);
    crate::fixtures::copy_dir(&corpus_dir().join(t), &copy);
    let stored: Value = serde_json::from_str(
        &std::fs::read_to_string(copy.join("cases.json")).expect("cases.json"),
    )
    .expect("json");
    let prefix = stored["stored_path_prefix"].as_str().expect("prefix");
    let remap = vec![
        (prefix.to_string(), copy.to_string_lossy().to_string()),
        (
            format!("file:///tmp/iceberg-corpus/{t}"),
            copy.to_string_lossy().to_string(),
        ),
    ];
    let catalog = SqlCatalog::open_or_create("corpus", dir.join("corpus.db"))
        .expect("catalog")
        .with_open_options(icefloe::OpenOptions {
            remap,
            ..Default::default()
        });
    if !catalog
        .namespace_exists(&Namespace::parse("ns"))
        .await
        .expect("ns")
    {
        catalog
            .create_namespace(&Namespace::parse("ns"), &HashMap::new())
            .await
            .expect("ns");
    }
    catalog
        .register_table(
            &TableIdent::parse(&format!("ns.{t}")),
            &metadata_file(&copy),
        )
        .await
        .expect("register");
    (Arc::new(catalog), copy)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_corpus_tables_spark_and_pyiceberg_wrote_take_appends() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // the second is in ../shared/corpus only (testdata/corpus has the first)
    let tables: Vec<&str> = ["spark_v1_types_identity", "pyiceberg_v1_transforms"]
        .into_iter()
        .filter(|t| corpus_dir().join(t).is_dir())
        .collect();
    assert!(tables.contains(&"spark_v1_types_identity"), "{tables:?}");
    for t in tables {
        let (catalog, _) = corpus_copy(tmp.path(), t).await;
        let ctx = session();
        attach(&ctx, "ice", Arc::clone(&catalog)).await;
        let table = format!("ice.ns.{t}");
        let count = |ctx: SessionContext, table: String| async move {
            scalar_i64(&ctx, &format!("SELECT count(*) FROM {table}")).await
        };
        let before = count(ctx.clone(), table.clone()).await;
        let ids = scalar_i64(&ctx, &format!("SELECT count(DISTINCT id) FROM {table}")).await;
        // every row again: the table's own values, every type and partition it has
        ok(&ctx, &format!("INSERT INTO {table} SELECT * FROM {table}")).await;
        assert_eq!(count(ctx.clone(), table.clone()).await, 2 * before, "{t}");
        assert_eq!(
            scalar_i64(&ctx, &format!("SELECT count(DISTINCT id) FROM {table}")).await,
            ids,
            "{t}"
        );
        // each row is there twice, equal in every column
        let pairs = scalar_i64(
            &ctx,
            &format!(
                "SELECT count(*) FROM (SELECT * FROM {table} GROUP BY ALL HAVING count(*) = 2)"
            ),
        )
        .await;
        assert_eq!(pairs, before, "{t}");
        let m = catalog
            .load_table(&TableIdent::parse(&format!("ns.{t}")))
            .await
            .expect("load");
        assert_eq!(m.metadata().format_version, FormatVersion::V1, "{t}");
        assert_eq!(m.metadata().last_sequence_number, 0, "{t}");
    }
}

/// A v1 table keeps a dropped partition field as `void`; its source column can then be
/// dropped too, and the table still takes every write (Java's
/// `PartitionSpec.checkCompatibility` skips void fields). A tester's table was refused
/// both ways round: dropping the column named the void field, and after PyIceberg
/// dropped it `INSERT`/`DELETE` failed. `SHOW CREATE TABLE` leaves void fields out, as
/// Spark does (it wrote `void(k), void(k)`, which did not run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_void_partition_field_needs_no_source_column() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (db, warehouse) = (tmp.path().join("c.db"), tmp.path().join("wh"));
    std::fs::create_dir_all(&warehouse).expect("warehouse");
    let catalog = sql_catalog(&db, &warehouse).await;
    for ns in ["ns", "copy"] {
        catalog
            .create_namespace(&Namespace::parse(ns), &HashMap::new())
            .await
            .expect("ns");
    }
    let ctx = session();
    attach(&ctx, "ice", Arc::clone(&catalog)).await;
    for sql in [
        "CREATE TABLE ice.ns.v (id BIGINT, k STRING) PARTITIONED BY (k) \
         TBLPROPERTIES ('format-version'='1')",
        "INSERT INTO ice.ns.v VALUES (1, 'a'), (3, 'b')",
        // twice void: `SHOW CREATE TABLE` wrote both
        "ALTER TABLE ice.ns.v DROP PARTITION FIELD k",
        "ALTER TABLE ice.ns.v ADD PARTITION FIELD k",
        "ALTER TABLE ice.ns.v DROP PARTITION FIELD k",
        "ALTER TABLE ice.ns.v DROP COLUMN k",
        "INSERT INTO ice.ns.v VALUES (2)",
        "DELETE FROM ice.ns.v WHERE id = 1",
        "UPDATE ice.ns.v SET id = 4 WHERE id = 3",
    ] {
        ok(&ctx, sql).await;
    }
    // read by icefloe and PyIceberg (DuckDB 1.5.5 cannot read a spec whose source
    // column is gone: "Can't change source type (STRUCT(k_1000 VARCHAR, k VARCHAR)) to
    // target type NULL", as for the tables the README names)
    let read = |expected: Vec<Value>| {
        let (ctx, catalog) = (ctx.clone(), Arc::clone(&catalog));
        let (db, warehouse) = (db.clone(), warehouse.clone());
        async move {
            let table = catalog
                .load_table(&TableIdent::parse("ns.v"))
                .await
                .expect("load");
            let schema = serde_json::to_value(table.metadata().current_schema()).expect("schema");
            let ours = icefloe_rows(&ctx, "ice.ns.v", &schema).await;
            assert_same_rows("icefloe", &expected, &ours);
            if python().is_some() {
                let pyi = pyiceberg_read(&db, &warehouse, "ns.v");
                assert_same_rows(
                    "PyIceberg",
                    pyi["rows"].as_array().expect("rows"),
                    &expected,
                );
            }
        }
    };
    read(vec![json!([2]), json!([4])]).await;
    let text = run(&ctx, "SHOW CREATE TABLE ice.ns.v").await.expect("show");
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&text)
        .expect("format")
        .to_string();
    assert!(
        !text.contains("void") && !text.contains("PARTITIONED"),
        "{text}"
    );
    // it runs: an unpartitioned table of the same columns
    ok(
        &ctx,
        "CREATE TABLE ice.copy.v (id BIGINT) TBLPROPERTIES ('format-version'='1')",
    )
    .await;
    // the column back, partitioned by again: the void field is renamed, writes go on
    for sql in [
        "ALTER TABLE ice.ns.v ADD COLUMN k STRING",
        "ALTER TABLE ice.ns.v ADD PARTITION FIELD k",
        "INSERT INTO ice.ns.v VALUES (5, 'z')",
    ] {
        ok(&ctx, sql).await;
    }
    read(vec![json!([2, null]), json!([4, null]), json!([5, "z"])]).await;
}
