//! Interop, the other way: tables icefloe writes (INSERT, INSERT OVERWRITE, several
//! partition transforms) into a SQLite catalog are read by PyIceberg 0.12 (through the same
//! catalog) and DuckDB 1.5.5 (`iceberg_scan` of the metadata file), at every snapshot, and
//! give the rows icefloe gives; PyIceberg's planned files and snapshot list equal ours.

use std::collections::HashMap;
use std::sync::Arc;

use icefloe::catalog::{Catalog, Namespace, SqlCatalog, TableCreation, TableIdent};
use icefloe::spec::{
    NestedField, PartitionField, PartitionSpec, PrimitiveType, Schema, Transform, Type,
};
use serde_json::Value;

use crate::catalog::{attach, context, strings};
use crate::interop::{
    assert_same_rows, duckdb_read_at, icefloe_rows, pyiceberg_read, pyiceberg_read_at, python,
};

fn p(t: PrimitiveType) -> Type {
    Type::Primitive(t)
}

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", p(PrimitiveType::Long)),
            NestedField::optional(2, "i", p(PrimitiveType::Int)),
            NestedField::optional(3, "b", p(PrimitiveType::Boolean)),
            NestedField::optional(4, "f", p(PrimitiveType::Float)),
            NestedField::optional(5, "d", p(PrimitiveType::Double)),
            NestedField::optional(
                6,
                "dec",
                p(PrimitiveType::Decimal {
                    precision: 10,
                    scale: 2,
                }),
            ),
            NestedField::optional(7, "dt", p(PrimitiveType::Date)),
            NestedField::optional(8, "ts", p(PrimitiveType::Timestamp)),
            NestedField::optional(9, "tstz", p(PrimitiveType::Timestamptz)),
            NestedField::optional(10, "s", p(PrimitiveType::String)),
            NestedField::optional(11, "bin", p(PrimitiveType::Binary)),
        ],
    )
}

fn field(source_id: i32, id: i32, name: &str, transform: Transform) -> PartitionField {
    PartitionField {
        source_id,
        field_id: Some(id),
        name: name.into(),
        transform,
    }
}

const BATCH1: &str = "(1, 10, true, 1.5, 2.25, 12.30, DATE '2026-01-01', \
    TIMESTAMP '2026-01-01 10:00:00', TIMESTAMPTZ '2026-01-01 10:00:00+00:00', 'apple', X'0102'), \
    (2, NULL, false, 'NaN', '-Infinity', -0.05, DATE '1969-12-31', \
    TIMESTAMP '1969-12-31 23:59:59.999999', NULL, 'äpfel', X''), \
    (3, -7, NULL, NULL, -0.0, NULL, NULL, NULL, TIMESTAMPTZ '2026-03-04 05:06:07.123456+00:00', NULL, NULL)";
const BATCH2: &str = "(4, 40, true, -1.25, 1e300, 99999999.99, DATE '2026-02-28', \
    TIMESTAMP '2026-02-28 23:00:00', TIMESTAMPTZ '2026-02-28 23:00:00+00:00', 'banana', X'ff'), \
    (5, 50, false, 0.0, 0.5, 0.01, DATE '2026-01-01', TIMESTAMP '2026-01-01 01:00:00', \
    TIMESTAMPTZ '2026-01-01 01:00:00+00:00', 'apricot', X'00')";
const OVERWRITE: &str = "(6, 60, true, 6.5, 6.25, 6.00, DATE '2026-01-01', \
    TIMESTAMP '2026-01-01 12:00:00', TIMESTAMPTZ '2026-01-01 12:00:00+00:00', 'avocado', X'06')";

fn schema_json() -> Value {
    serde_json::to_value(schema()).expect("schema JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interop_tables_icefloe_writes_read_alike_in_pyiceberg_and_duckdb() {
    if python().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("catalog.db");
    let warehouse = tmp.path().join("warehouse");
    std::fs::create_dir_all(&warehouse).expect("warehouse");
    let catalog = SqlCatalog::open_or_create("default", &db)
        .expect("catalog")
        .with_warehouse(&warehouse.to_string_lossy())
        .expect("warehouse");
    catalog
        .create_namespace(&Namespace::parse("ns"), &HashMap::new())
        .await
        .expect("namespace");
    let catalog: Arc<dyn Catalog> = Arc::new(catalog);
    let specs = [
        ("plain", vec![]),
        (
            "parts",
            vec![
                field(10, 1000, "s_trunc", Transform::Truncate(2)),
                field(1, 1001, "id_bucket", Transform::Bucket(4)),
                field(7, 1002, "dt_month", Transform::Month),
            ],
        ),
        (
            "times",
            vec![
                field(8, 1000, "ts_hour", Transform::Hour),
                field(9, 1001, "tstz_day", Transform::Day),
                field(7, 1002, "dt_year", Transform::Year),
                field(3, 1003, "b", Transform::Identity),
            ],
        ),
    ];
    let ctx = context();
    let ctx = {
        // INSERT OVERWRITE in dynamic mode needs the option registered
        let state = ctx.state();
        let config = icefloe::datafusion::register_iceberg_options(state.config().clone());
        let ctx = datafusion::prelude::SessionContext::new_with_config(config);
        icefloe::datafusion::register_iceberg_functions(&ctx);
        ctx
    };
    for (name, fields) in &specs {
        let mut c = TableCreation::new(schema());
        c.partition_spec = PartitionSpec {
            spec_id: 0,
            fields: fields.clone(),
        };
        catalog
            .create_table(&TableIdent::parse(&format!("ns.{name}")), c)
            .await
            .expect("create");
    }
    attach(&ctx, "ice", Arc::clone(&catalog)).await;
    for (name, _) in &specs {
        let t = format!("ice.ns.{name}");
        for sql in [
            format!("INSERT INTO {t} VALUES {BATCH1}"),
            format!("INSERT INTO {t} VALUES {BATCH2}"),
            "SET icefloe.partition_overwrite_mode = 'dynamic'".to_string(),
            format!("INSERT OVERWRITE {t} VALUES {OVERWRITE}"),
            "SET icefloe.partition_overwrite_mode = 'static'".to_string(),
        ] {
            // through `sql::execute`, which reads the exponent literal `1e300` as a double
            // in a session with exact decimal literals (`register_iceberg_options`)
            icefloe::datafusion::sql::execute(&ctx, &sql)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"))
                .collect()
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        let ident = format!("ns.{name}");
        let schema = schema_json();
        let pyi = pyiceberg_read(&db, &warehouse, &ident);
        let ice = icefloe_rows(&ctx, &t, &schema).await;
        assert_eq!(pyi["schema"]["fields"], schema["fields"], "{ident}: schema");
        assert_same_rows(
            &format!("{ident}: icefloe vs PyIceberg"),
            &pyi["rows"].as_array().expect("rows").clone(),
            &ice,
        );
        // files PyIceberg plans = files we list
        let mut ours = strings(
            &ctx,
            &format!("SELECT file_path FROM ice.ns.\"{name}$files\""),
        )
        .await;
        ours.sort();
        let mut theirs: Vec<String> = pyi["files"]
            .as_array()
            .expect("files")
            .iter()
            .map(|f| f["file_path"].as_str().expect("path").to_string())
            .collect();
        theirs.sort();
        assert_eq!(ours, theirs, "{ident}: live files");
        // every snapshot, in all three readers
        let snapshots = pyi["snapshots"].as_array().expect("snapshots").clone();
        assert_eq!(snapshots.len(), 3, "{ident}: {snapshots:?}");
        let ops: Vec<&str> = snapshots
            .iter()
            .map(|s| s["operation"].as_str().unwrap_or("?"))
            .collect();
        assert_eq!(ops, ["append", "append", "overwrite"], "{ident}");
        let location = pyi["metadata_location"]
            .as_str()
            .expect("location")
            .to_string();
        for s in &snapshots {
            let id = s["snapshot_id"].as_i64().expect("id");
            let ours = icefloe_rows(&ctx, &format!("ice.ns.\"{name}@{id}\""), &schema).await;
            let py = pyiceberg_read_at(&db, &warehouse, &ident, id);
            assert_same_rows(
                &format!("{ident}@{id}: icefloe vs PyIceberg"),
                &py["rows"].as_array().expect("rows").clone(),
                &ours,
            );
            let duck = duckdb_read_at(&location, id);
            assert_same_rows(
                &format!("{ident}@{id}: icefloe vs DuckDB"),
                &duck["rows"].as_array().expect("rows").clone(),
                &ours,
            );
        }
    }
}
