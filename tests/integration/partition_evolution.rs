//! Partition evolution and write order through icefloe's statement layer on a SQLite
//! catalog: rows stay right across specs and after new writes, `DELETE`/`UPDATE` over
//! files of several specs, every file under the spec it was written with; PyIceberg
//! 0.12 (through the same catalog) and DuckDB read the evolved tables alike, PyIceberg
//! parses the specs and the sort order, and the Parquet files written after `WRITE
//! ORDERED BY` are sorted. A PyIceberg-written (and PyIceberg-evolved) table evolves the
//! same way.

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, Int64Array, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use icefloe::catalog::{Catalog, SqlCatalog, TableIdent};
use serde_json::{json, Value};

use crate::catalog::{attach, context, strings};
use crate::dml::{create, lake, ok, other_engines_agree, run};
use crate::interop::{assert_same_rows, duckdb_read, icefloe_rows, pyiceberg_read, python};

/// `(spec id, [field id, name, transform])` of every spec, as PyIceberg parsed them.
fn specs_of(pyi: &Value) -> BTreeMap<i64, Vec<(i64, String, String)>> {
    pyi["specs"]
        .as_array()
        .expect("specs")
        .iter()
        .map(|s| {
            let fields = s["fields"]
                .as_array()
                .expect("fields")
                .iter()
                .map(|f| {
                    (
                        f["field-id"].as_i64().expect("field-id"),
                        f["name"].as_str().expect("name").to_string(),
                        f["transform"].as_str().expect("transform").to_string(),
                    )
                })
                .collect();
            (s["spec-id"].as_i64().expect("spec-id"), fields)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evolved_specs_write_read_and_change_rows_alike() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    create(&lake, "pe", "PARTITIONED BY (k)", "").await;
    ok(ctx, "INSERT INTO ice.ns.pe VALUES (1, 0, 'apple', 1.5), (2, 1, 'banana', 2.5), (3, NULL, NULL, NULL)").await;
    ok(
        ctx,
        "ALTER TABLE ice.ns.pe ADD PARTITION FIELD bucket(4, id)",
    )
    .await;
    ok(
        ctx,
        "INSERT INTO ice.ns.pe VALUES (4, 0, 'cherry', 4.5), (5, 2, 'apricot', -1.0)",
    )
    .await;
    ok(
        ctx,
        "ALTER TABLE ice.ns.pe REPLACE PARTITION FIELD k WITH truncate(2, s) AS s2",
    )
    .await;
    ok(
        ctx,
        "INSERT INTO ice.ns.pe VALUES (6, 3, 'avocado', 6.0), (7, 3, 'blueberry', NULL)",
    )
    .await;
    ok(
        ctx,
        "ALTER TABLE ice.ns.pe DROP PARTITION FIELD id_bucket_4",
    )
    .await;
    ok(ctx, "INSERT INTO ice.ns.pe VALUES (8, 1, 'date', 8.0)").await;
    let files = strings(
        ctx,
        "SELECT concat(CAST(spec_id AS VARCHAR), ':', CAST(record_count AS VARCHAR)) \
         FROM ice.ns.\"pe$files\" ORDER BY spec_id, record_count",
    )
    .await;
    // spec 0 (k): 3 partitions; spec 1 (k, id_bucket_4); spec 2 (id_bucket_4, s2); spec 3 (s2)
    assert_eq!(files.first().map(String::as_str), Some("0:1"));
    assert_eq!(files.last().map(String::as_str), Some("3:1"));
    let spec_ids: std::collections::BTreeSet<&str> =
        files.iter().filter_map(|f| f.split(':').next()).collect();
    assert_eq!(
        spec_ids.into_iter().collect::<Vec<_>>(),
        ["0", "1", "2", "3"]
    );
    // bad input: a clear error, the table unchanged
    let before = lake
        .catalog
        .metadata_location(&TableIdent::parse("ns.pe"))
        .await
        .expect("location");
    for (sql, needle) in [
        (
            "ALTER TABLE ice.ns.pe ADD PARTITION FIELD months(s)",
            "transform month cannot apply to column 's' of type string",
        ),
        (
            "ALTER TABLE ice.ns.pe DROP PARTITION FIELD k",
            "partition field k is not in the current partition spec 3 (s2: truncate[2])",
        ),
        (
            "ALTER TABLE ice.ns.pe ADD PARTITION FIELD truncate(2, s) AS again",
            "the spec already has 's2' (truncate[2])",
        ),
        (
            "ALTER TABLE ice.ns.pe DROP COLUMN s",
            "cannot drop column 's': the current partition spec uses it",
        ),
        (
            "INSERT INTO ice.ns.pe.branch_dev VALUES (9, 1, 'x', 1.0)",
            "branch or tag 'dev'",
        ),
    ] {
        let err = run(ctx, sql).await.expect_err(sql);
        assert!(err.contains(needle), "{sql}: {err}");
    }
    assert_eq!(
        lake.catalog
            .metadata_location(&TableIdent::parse("ns.pe"))
            .await
            .expect("location"),
        before
    );
    // row changes over files of four specs: the condition on s prunes by s2 in spec 2
    // and 3 files, by nothing in the others
    ok(ctx, "DELETE FROM ice.ns.pe WHERE s LIKE 'ap%' OR id = 8").await;
    ok(ctx, "UPDATE ice.ns.pe SET d = 0.5 WHERE k IN (0, 3)").await;
    assert_eq!(
        strings(
            ctx,
            "SELECT concat_ws('|', CAST(id AS VARCHAR), coalesce(s, 'null'), \
             coalesce(CAST(d AS VARCHAR), 'null')) FROM ice.ns.pe ORDER BY id"
        )
        .await,
        [
            "2|banana|2.5",
            "3|null|null",
            "4|cherry|0.5",
            "6|avocado|0.5",
            "7|blueberry|0.5"
        ]
    );
    other_engines_agree(&lake, "pe").await;
    if python().is_none() {
        return;
    }
    let pyi = pyiceberg_read(&lake.db, &lake.warehouse, "ns.pe");
    assert_eq!(pyi["default_spec_id"], 3);
    let specs = specs_of(&pyi);
    assert_eq!(
        specs,
        BTreeMap::from([
            (0, vec![(1000, "k".into(), "identity".into())]),
            (
                1,
                vec![
                    (1000, "k".into(), "identity".into()),
                    (1001, "id_bucket_4".into(), "bucket[4]".into())
                ]
            ),
            (
                2,
                vec![
                    (1001, "id_bucket_4".into(), "bucket[4]".into()),
                    (1002, "s2".into(), "truncate[2]".into())
                ]
            ),
            (3, vec![(1002, "s2".into(), "truncate[2]".into())]),
        ])
    );
    // PyIceberg's planned files carry the spec ids our $files shows
    let ours: BTreeMap<String, i64> = strings(
        ctx,
        "SELECT concat(file_path, ' ', CAST(spec_id AS VARCHAR)) FROM ice.ns.\"pe$data_files\"",
    )
    .await
    .into_iter()
    .map(|l| {
        let (p, s) = l.rsplit_once(' ').expect("pair");
        (p.to_string(), s.parse().expect("spec id"))
    })
    .collect();
    let theirs: BTreeMap<String, i64> = pyi["file_specs"]
        .as_object()
        .expect("file_specs")
        .iter()
        .map(|(p, s)| (p.clone(), s.as_i64().expect("spec id")))
        .collect();
    assert_eq!(ours, theirs);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_ordered_by_sorts_parquet_files_and_pyiceberg_reads_the_order() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    create(&lake, "so", "PARTITIONED BY (k)", "").await;
    ok(
        ctx,
        "ALTER TABLE ice.ns.so WRITE ORDERED BY s DESC NULLS LAST, id",
    )
    .await;
    ok(
        ctx,
        "INSERT INTO ice.ns.so SELECT value AS id, CAST(value % 2 AS INT) AS k, \
         CASE WHEN value % 7 = 0 THEN NULL ELSE chr(CAST(97 + (value * 11) % 26 AS INT)) END \
         AS s, CAST(value AS DOUBLE) AS d FROM generate_series(1, 200)",
    )
    .await;
    let paths = strings(
        ctx,
        "SELECT file_path FROM ice.ns.\"so$files\" WHERE sort_order_id = 1",
    )
    .await;
    let all = strings(ctx, "SELECT file_path FROM ice.ns.\"so$files\"").await;
    assert_eq!(paths.len(), all.len(), "every file records order 1");
    assert!(paths.len() >= 2, "one file per k at least: {paths:?}");
    let mut total = 0;
    for path in &paths {
        let local = path.strip_prefix("file://").unwrap_or(path);
        let file = std::fs::File::open(local).expect("data file");
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .expect("parquet")
            .build()
            .expect("reader");
        let mut keys: Vec<(Option<String>, i64)> = vec![];
        for batch in reader {
            let batch = batch.expect("batch");
            let s = cast(batch.column_by_name("s").expect("s"), &DataType::Utf8).expect("cast");
            let s = s.as_any().downcast_ref::<StringArray>().expect("strings");
            let id = batch.column_by_name("id").expect("id");
            let id = id.as_any().downcast_ref::<Int64Array>().expect("ids");
            for i in 0..batch.num_rows() {
                keys.push((s.is_valid(i).then(|| s.value(i).to_string()), id.value(i)));
            }
        }
        // s descending, nulls last, then id ascending
        let mut sorted = keys.clone();
        sorted.sort_by(|a, b| match (&a.0, &b.0) {
            (None, None) => a.1.cmp(&b.1),
            (None, _) => std::cmp::Ordering::Greater,
            (_, None) => std::cmp::Ordering::Less,
            (Some(x), Some(y)) => y.cmp(x).then(a.1.cmp(&b.1)),
        });
        assert_eq!(keys, sorted, "{path} is not in the table's order");
        total += keys.len();
    }
    assert_eq!(total, 200);
    if python().is_none() {
        return;
    }
    let pyi = pyiceberg_read(&lake.db, &lake.warehouse, "ns.so");
    assert_eq!(
        pyi["sort_order"],
        json!({"order-id": 1, "fields": [
            {"source-id": 3, "transform": "identity", "direction": "desc", "null-order": "nulls-last"},
            {"source-id": 1, "transform": "identity", "direction": "asc", "null-order": "nulls-first"}
        ]})
    );
    other_engines_agree(&lake, "so").await;
}

/// A table PyIceberg wrote and evolved itself (schema changes, identity partition on
/// `cat`), partitioned further by icefloe and written to; PyIceberg and DuckDB read it
/// alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyiceberg_written_tables_take_partition_evolution() {
    if python().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("catalog.db");
    let warehouse = tmp.path().join("warehouse");
    std::fs::create_dir_all(&warehouse).expect("warehouse");
    let written = crate::interop::pyiceberg_write(&db, &warehouse);
    let catalog: Arc<dyn Catalog> =
        Arc::new(SqlCatalog::open("default", &db).expect("icefloe opens PyIceberg's catalog"));
    let ctx = context();
    attach(&ctx, "ice", Arc::clone(&catalog)).await;
    let ident = "interop.evolve_v2";
    let before = catalog
        .load_table(&TableIdent::parse(ident))
        .await
        .expect("table");
    let m = before.metadata();
    let spec_count = m.partition_specs.len();
    let schema = serde_json::to_value(m.current_schema()).expect("schema");
    let first = schema["fields"][0]["name"]
        .as_str()
        .expect("name")
        .to_string();
    let first_type = schema["fields"][0]["type"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(
        ["int", "long"].contains(&first_type.as_str()),
        "{ident}: first column {first} is {first_type}: {}",
        written["tables"]["evolve_v2"]["schema"]
    );
    ok(
        &ctx,
        &format!("ALTER TABLE ice.{ident} ADD PARTITION FIELD bucket(3, {first})"),
    )
    .await;
    let after = catalog
        .load_table(&TableIdent::parse(ident))
        .await
        .expect("table");
    let m = after.metadata();
    assert_eq!(m.partition_specs.len(), spec_count + 1);
    let new_field = m
        .default_partition_spec()
        .expect("spec")
        .fields
        .last()
        .expect("field")
        .clone();
    assert_eq!(new_field.name, format!("{first}_bucket_3"));
    assert_eq!(new_field.field_id, Some(m.last_partition_id));
    let columns: Vec<String> = schema["fields"]
        .as_array()
        .expect("fields")
        .iter()
        .map(|f| f["name"].as_str().expect("name").to_string())
        .collect();
    ok(
        &ctx,
        &format!(
            "INSERT INTO ice.{ident} SELECT {first} + 1000, {} FROM ice.{ident}",
            columns[1..]
                .iter()
                .map(|c| format!("\"{c}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
    .await;
    let pyi = pyiceberg_read(&db, &warehouse, ident);
    assert_eq!(pyi["default_spec_id"], m.default_spec_id);
    let ours = icefloe_rows(&ctx, &format!("ice.{ident}"), &schema).await;
    assert_same_rows(
        &format!("{ident}: icefloe vs PyIceberg"),
        pyi["rows"].as_array().expect("rows"),
        &ours,
    );
    let duck = duckdb_read(pyi["metadata_location"].as_str().expect("location"));
    assert_same_rows(
        &format!("{ident}: icefloe vs DuckDB"),
        duck["rows"].as_array().expect("rows"),
        &ours,
    );
    // every file written after the change is under the new spec
    let new_specs: Vec<i64> = pyi["file_specs"]
        .as_object()
        .expect("file_specs")
        .values()
        .filter_map(Value::as_i64)
        .collect();
    assert!(
        new_specs.contains(&i64::from(m.default_spec_id)),
        "{new_specs:?}"
    );
}

/// v1: a partition field dropped (kept as a `void` field) and added back under the same
/// name in a later statement renames the `void` field `k_1000`, as Java's
/// `BaseUpdatePartitionSpec` does; rows written under each spec read back right, and
/// PyIceberg parses the specs and reads the rows alike (DuckDB too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_partition_field_dropped_and_added_back_by_name() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(
        ctx,
        "CREATE TABLE ice.ns.v1 (id BIGINT, k INT, s STRING, d DOUBLE) PARTITIONED BY (k) \
         TBLPROPERTIES ('format-version'='1')",
    )
    .await;
    ok(ctx, "INSERT INTO ice.ns.v1 VALUES (1, 10, 'a', 1.5)").await;
    ok(ctx, "ALTER TABLE ice.ns.v1 DROP PARTITION FIELD k").await;
    ok(ctx, "INSERT INTO ice.ns.v1 VALUES (2, 20, 'b', 2.5)").await;
    ok(ctx, "ALTER TABLE ice.ns.v1 ADD PARTITION FIELD k").await;
    ok(
        ctx,
        "INSERT INTO ice.ns.v1 VALUES (3, 30, 'c', NULL), (4, 10, NULL, 4.5)",
    )
    .await;
    let m = lake
        .catalog
        .load_table(&TableIdent::parse("ns.v1"))
        .await
        .expect("table")
        .metadata()
        .clone();
    let fields: Vec<(i32, String, String)> = m
        .default_partition_spec()
        .expect("spec")
        .fields
        .iter()
        .map(|f| {
            (
                f.field_id.expect("id"),
                f.name.clone(),
                f.transform.to_string(),
            )
        })
        .collect();
    assert_eq!(
        fields,
        [
            (1000, "k_1000".into(), "void".into()),
            (1001, "k".into(), "identity".into())
        ]
    );
    assert_eq!(
        strings(
            ctx,
            "SELECT concat_ws('|', CAST(id AS VARCHAR), CAST(k AS VARCHAR)) FROM ice.ns.v1 \
             ORDER BY id"
        )
        .await,
        ["1|10", "2|20", "3|30", "4|10"]
    );
    // files of the three specs; pruning by k reads the rows of every spec
    assert_eq!(
        strings(
            ctx,
            "SELECT concat(CAST(spec_id AS VARCHAR), ':', CAST(record_count AS VARCHAR)) \
             FROM ice.ns.\"v1$files\" ORDER BY spec_id, record_count"
        )
        .await,
        ["0:1", "1:1", "2:1", "2:1"]
    );
    assert_eq!(
        strings(
            ctx,
            "SELECT CAST(id AS VARCHAR) AS i FROM ice.ns.v1 WHERE k = 10 ORDER BY i"
        )
        .await,
        ["1", "4"]
    );
    other_engines_agree(&lake, "v1").await;
    if python().is_none() {
        return;
    }
    let pyi = pyiceberg_read(&lake.db, &lake.warehouse, "ns.v1");
    assert_eq!(pyi["default_spec_id"], 2);
    assert_eq!(
        specs_of(&pyi).get(&2),
        Some(&vec![
            (1000, "k_1000".into(), "void".into()),
            (1001, "k".into(), "identity".into())
        ])
    );
}

/// The first column of the answer to `q` (through icefloe's statement layer, which
/// reads metadata columns), as strings.
async fn first_column(ctx: &datafusion::prelude::SessionContext, q: &str) -> Vec<String> {
    let batches = run(ctx, q).await.unwrap_or_else(|e| panic!("{q}: {e}"));
    let mut out = vec![];
    for b in &batches {
        let c = cast(b.column(0), &DataType::Utf8).expect("cast");
        let c = c.as_any().downcast_ref::<StringArray>().expect("strings");
        out.extend(c.iter().map(|v| v.unwrap_or("NULL").to_string()));
    }
    out
}

/// The field names of struct column `column` in the answer to `q`.
async fn struct_fields(
    ctx: &datafusion::prelude::SessionContext,
    q: &str,
    column: &str,
) -> Vec<String> {
    let batches = run(ctx, q).await.unwrap_or_else(|e| panic!("{q}: {e}"));
    let schema = batches.first().map(|b| b.schema()).expect("a batch");
    match schema.field_with_name(column).expect(column).data_type() {
        DataType::Struct(fields) => fields.iter().map(|f| f.name().clone()).collect(),
        other => panic!("{q}: {column} is {other}"),
    }
}

/// The unified partition type of `$files`, `$partitions` and `_partition` follows Java's
/// `Partitioning.partitionType`: fields by id, named as the latest spec holding them names
/// them (a v1 `void` field renamed `k_1000` when `k` is added back shows as `k_1000`),
/// fields of dropped columns left out; a v2 field taking the name of an earlier, dropped
/// field keeps it and the older one shows as `b_1000`. Every name is unique, so a filter
/// on `partition.<name>` means one field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unified_partition_type_names_every_field_once() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    for q in [
        "CREATE TABLE ice.ns.o (id BIGINT, k STRING) PARTITIONED BY (k) \
         TBLPROPERTIES ('format-version'='1')",
        "INSERT INTO ice.ns.o VALUES (1, 'b')",
        "ALTER TABLE ice.ns.o DROP PARTITION FIELD k",
        "ALTER TABLE ice.ns.o ADD PARTITION FIELD k",
        "INSERT INTO ice.ns.o VALUES (4, 'c')",
        "CREATE TABLE ice.ns.dn (id INT, s STRING) TBLPROPERTIES ('format-version'='2')",
        "ALTER TABLE ice.ns.dn ADD PARTITION FIELD bucket(4, id) AS b",
        "INSERT INTO ice.ns.dn VALUES (1, 'abc')",
        "ALTER TABLE ice.ns.dn DROP PARTITION FIELD b",
        "ALTER TABLE ice.ns.dn ADD PARTITION FIELD truncate(2, s) AS b",
        "INSERT INTO ice.ns.dn VALUES (2, 'xyz')",
    ] {
        ok(ctx, q).await;
    }
    for (t, names) in [("o", ["k_1000", "k"]), ("dn", ["b_1000", "b"])] {
        for (q, column) in [
            (
                format!("SELECT partition FROM ice.ns.\"{t}$files\""),
                "partition",
            ),
            (
                format!("SELECT partition FROM ice.ns.\"{t}$partitions\""),
                "partition",
            ),
            (format!("SELECT _partition FROM ice.ns.{t}"), "_partition"),
        ] {
            assert_eq!(struct_fields(ctx, &q, column).await, names, "{q}");
        }
    }
    let cases = [
        // v1: the file written before the drop has k_1000, the one after k
        (
            "SELECT CAST(count(*) AS VARCHAR) FROM ice.ns.\"o$files\" WHERE partition.k = 'c'",
            vec!["1"],
        ),
        (
            "SELECT CAST(spec_id AS VARCHAR) FROM ice.ns.\"o$files\" \
             WHERE partition.k_1000 = 'b'",
            vec!["0"],
        ),
        (
            "SELECT concat_ws('|', partition.k_1000, partition.k) FROM ice.ns.\"o$partitions\" \
             ORDER BY 1",
            vec!["b", "c"],
        ),
        (
            "SELECT CAST(id AS VARCHAR) FROM ice.ns.o WHERE _partition.k = 'c'",
            vec!["4"],
        ),
        (
            "SELECT CAST(id AS VARCHAR) FROM ice.ns.o WHERE _partition['k_1000'] = 'b'",
            vec!["1"],
        ),
        // v2: b is the truncate field of the current spec, b_1000 the old bucket field
        (
            "SELECT CAST(count(*) AS VARCHAR) FROM ice.ns.\"dn$files\" WHERE partition.b = 'xy'",
            vec!["1"],
        ),
        (
            "SELECT CAST(spec_id AS VARCHAR) FROM ice.ns.\"dn$files\" \
             WHERE partition.b_1000 IS NOT NULL",
            vec!["1"],
        ),
        (
            "SELECT CAST(id AS VARCHAR) FROM ice.ns.dn o WHERE o._partition.b = 'xy'",
            vec!["2"],
        ),
    ];
    for (q, want) in cases {
        assert_eq!(first_column(ctx, q).await, want, "{q}");
    }
    // the source of the old bucket field dropped: the field stays, typed by the older
    // schema that has its source, so the old files' values stay readable (Java leaves
    // such fields out; icefloe keeps them, see `unified_partition`)
    ok(ctx, "ALTER TABLE ice.ns.dn DROP COLUMN id").await;
    assert_eq!(
        struct_fields(
            ctx,
            "SELECT partition FROM ice.ns.\"dn$files\"",
            "partition"
        )
        .await,
        ["b_1000", "b"]
    );
    assert_eq!(
        strings(
            ctx,
            "SELECT CAST(count(*) AS VARCHAR) FROM ice.ns.\"dn$files\" \
             WHERE partition.b_1000 IS NOT NULL"
        )
        .await,
        ["1"]
    );
    assert_eq!(
        strings(
            ctx,
            "SELECT coalesce(partition.b, 'null') FROM ice.ns.\"dn$files\" ORDER BY 1"
        )
        .await,
        ["null", "xy"]
    );
    assert_eq!(
        strings(ctx, "SELECT s FROM ice.ns.dn ORDER BY s").await,
        ["abc", "xyz"]
    );
}
