//! Schema evolution against tables other engines wrote, beyond `evolution.rs` and
//! `alter.rs`: equality deletes (Spark, Iceberg Java's `RowDelta`) whose delete columns
//! icefloe drops, promotes or renames afterwards still delete the rows they deleted, in
//! reads, time travel, `DELETE`/`UPDATE` and compaction, as Spark read them before.
//! And icefloe's schema and partition evolution interleaved with `DELETE`/`UPDATE`/`MERGE`
//! in both write modes on v2 and v3, read alike by PyIceberg and DuckDB at every snapshot.

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::prelude::SessionContext;
use icefloe::datafusion::sql::execute;
use serde_json::Value;

use crate::catalog::corpus_dir;
use crate::maintenance::corpus_lake;

async fn run(ctx: &SessionContext, sql: &str) {
    execute(ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// The first column of `sql`'s rows (run through `sql::execute`) as text, `NULL` for null.
async fn strings(ctx: &SessionContext, sql: &str) -> Vec<String> {
    let batches = execute(ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut out = vec![];
    for b in batches {
        let col = datafusion::arrow::compute::cast(b.column(0), &DataType::Utf8).expect("cast");
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

/// `id:v` of each row of case `name` of the corpus table's `cases.json` (Spark's answer,
/// rows `[id, region, name, v]`).
fn spark_rows(table: &str, name: &str) -> Vec<String> {
    let path = corpus_dir().join(table).join("cases.json");
    let cases: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("cases.json")).expect("JSON");
    let case = cases["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("{table}: no case {name}"));
    case["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| format!("{}:{}", r[0], r[3]))
        .collect()
}

/// Spark's `spark_v2_equality_deletes` (unpartitioned, v2) holds equality deletes on
/// `id`, on `name` (a null key) and on `(region, v)`. Dropping `name` and `region` (and
/// promoting `id` to `bigint`, renaming `v`) must not bring deleted rows back: the delete
/// files name their columns by field id, and Iceberg Java 1.11, iceberg-go and Trino apply
/// them through the table's schema history. Before, a scan refused the table ("equality
/// deletes on field id 3 …, which is not a top-level column of the schema being read")
/// unless the session had already resolved the deletes before the drop. Both equality
/// delete policies (probe per batch, resolve to positions) and a fresh session each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn equality_deletes_apply_after_their_columns_are_dropped() {
    let table = "spark_v2_equality_deletes";
    let live = spark_rows(table, "all");
    assert_eq!(live.len(), 22, "Spark's rows");
    for policy in ["probe", "resolve"] {
        let (_copies, lake, _catalog) = corpus_lake(&[table]).await;
        let ctx = &lake.ctx;
        let t = format!("corpus.ns.{table}");
        run(ctx, &format!("SET icefloe.equality_deletes = '{policy}'")).await;
        for sql in [
            format!("ALTER TABLE {t} DROP COLUMN name"),
            format!("ALTER TABLE {t} DROP COLUMN region"),
            format!("ALTER TABLE {t} ALTER COLUMN id TYPE BIGINT"),
            format!("ALTER TABLE {t} RENAME COLUMN v TO value"),
        ] {
            run(ctx, &sql).await;
        }
        let rows = format!(
            "SELECT CAST(id AS VARCHAR) || ':' || CAST(value AS VARCHAR) FROM {t} ORDER BY id"
        );
        assert_eq!(
            strings(ctx, &rows).await,
            live,
            "{policy}: rows after the drops"
        );
        let ids = format!("SELECT CAST(id AS VARCHAR) AS i FROM {t} ORDER BY id");
        let live_ids: Vec<String> = live
            .iter()
            .map(|r| r.split(':').next().expect("id").to_string())
            .collect();
        assert_eq!(strings(ctx, &ids).await, live_ids, "{policy}: id alone");
        // with metadata columns (another scan path)
        let with_pos = format!(
            "SELECT CAST(id AS VARCHAR) AS i FROM {t} WHERE _pos >= 0 AND _file <> '' ORDER BY id"
        );
        assert_eq!(
            strings(ctx, &with_pos).await,
            live_ids,
            "{policy}: _pos, _file"
        );
        assert_eq!(
            strings(ctx, &format!("SELECT count(*) FROM {t}")).await,
            ["22"],
            "{policy}: count"
        );
        assert_eq!(
            strings(ctx, &format!("SELECT CAST(id AS VARCHAR) FROM {t} WHERE id IN (2, 3, 9, 18, 27) OR value = 90")).await,
            Vec::<String>::new(),
            "{policy}: deleted rows stay deleted under a filter"
        );
        // time travel reads the snapshot's schema (the columns are there) and its deletes
        let multi = spark_rows(table, "tt_s6_eq_multi");
        let at = format!(
            "SELECT CAST(id AS VARCHAR) || ':' || CAST(v AS VARCHAR) FROM {t} \
             FOR SYSTEM_VERSION AS OF 8053753396815826810 ORDER BY id, name"
        );
        assert_eq!(strings(ctx, &at).await, multi, "{policy}: time travel");

        // a column added under a dropped name is a new field: null in the old files
        run(ctx, &format!("ALTER TABLE {t} ADD COLUMN name VARCHAR")).await;
        assert_eq!(
            strings(
                ctx,
                &format!("SELECT CAST(count(*) AS VARCHAR) || '/' || CAST(count(name) AS VARCHAR) FROM {t}")
            )
            .await,
            ["22/0"],
            "{policy}: re-added name"
        );

        // row-level changes (the table is merge-on-read for DELETE) and a compaction read
        // the files through the same deletes
        run(ctx, &format!("DELETE FROM {t} WHERE id = 5")).await;
        run(
            ctx,
            &format!("UPDATE {t} SET value = value + 1, name = 'x' WHERE id = 6"),
        )
        .await;
        let mut expected: Vec<String> = live.iter().filter(|r| *r != "5:50").cloned().collect();
        let six = expected.iter().position(|r| r == "6:60").expect("row 6");
        expected[six] = "6:61".into();
        assert_eq!(
            strings(ctx, &rows).await,
            expected,
            "{policy}: after DELETE and UPDATE"
        );
        run(
            ctx,
            &format!("CALL corpus.system.rewrite_data_files(table => 'ns.{table}')"),
        )
        .await;
        assert_eq!(
            strings(ctx, &rows).await,
            expected,
            "{policy}: after compaction"
        );
        assert_eq!(
            strings(ctx, &format!("SELECT name FROM {t} WHERE name IS NOT NULL")).await,
            ["x"],
            "{policy}: the new name column"
        );
    }
}

/// Spark's `spark_v2_equality_deletes_partitioned` (identity `region`) holds
/// partition-scoped equality deletes on `id` and on `name`. With the partition field
/// dropped and then its source `region` and the delete column `name` dropped, the deletes
/// still apply, each to its own partition's files (spec: a delete file of a partitioned
/// spec applies to data files of the same spec and partition).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_scoped_equality_deletes_apply_after_their_columns_are_dropped() {
    let table = "spark_v2_equality_deletes_partitioned";
    let live: Vec<String> = spark_rows(table, "all")
        .iter()
        .map(|r| r.split(':').next().expect("id").to_string())
        .collect();
    assert_eq!(live.len(), 26, "Spark's rows");
    let (_copies, lake, _catalog) = corpus_lake(&[table]).await;
    let ctx = &lake.ctx;
    let t = format!("corpus.ns.{table}");
    for sql in [
        format!("ALTER TABLE {t} DROP PARTITION FIELD region"),
        format!("ALTER TABLE {t} DROP COLUMN region"),
        format!("ALTER TABLE {t} DROP COLUMN name"),
    ] {
        run(ctx, &sql).await;
    }
    let ids = format!("SELECT CAST(id AS VARCHAR) AS i FROM {t} ORDER BY id");
    assert_eq!(strings(ctx, &ids).await, live);
    run(ctx, &format!("DELETE FROM {t} WHERE id = 1")).await;
    assert_eq!(strings(ctx, &ids).await, live[1..].to_vec(), "after DELETE");
}

/// icefloe's rows of `table` at `snapshot_id` (`FOR SYSTEM_VERSION AS OF`: the snapshot's
/// schema), canonical as [`crate::interop::canonical_rows`] types them by `schema`.
async fn icefloe_rows_at(
    ctx: &SessionContext,
    table: &str,
    snapshot_id: i64,
    schema: &Value,
) -> Vec<Value> {
    let sql = format!("SELECT * FROM {table} FOR SYSTEM_VERSION AS OF {snapshot_id}");
    let batches = execute(ctx, &sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    crate::interop::canonical_rows(&batches, schema)
}

/// Schema and partition evolution interleaved with row-level changes, in merge-on-read
/// (v2 position deletes, v3 deletion vectors) and copy-on-write: promotions (int→long,
/// float→double, decimal(5,2)→decimal(10,2)), a column dropped and added back under its
/// name with another type (a new field: null in the old files), a nested field renamed
/// and one added, a partition field added on a promoted column, the partition source
/// column renamed and its field dropped; `DELETE`, `UPDATE` and `MERGE` between them.
/// PyIceberg and DuckDB (`iceberg_scan`) read every snapshot as icefloe does (each in its
/// snapshot's schema), and the final rows hold the expected values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evolution_between_row_changes_reads_alike_at_every_snapshot() {
    use crate::interop::{assert_same_rows, duckdb_read_at, pyiceberg_read_at, python};
    use icefloe::catalog::TableIdent;
    if python().is_none() {
        return;
    }
    for (version, mode) in [
        ("2", "merge-on-read"),
        ("3", "merge-on-read"),
        ("2", "copy-on-write"),
    ] {
        let lake = crate::dml::lake().await;
        let ctx = &lake.ctx;
        let t = "ice.ns.ev";
        let what = format!("v{version} {mode}");
        let statements = [
            format!(
                "CREATE TABLE {t} (id INT, f FLOAT, d DECIMAL(5, 2), s VARCHAR, \
                 st STRUCT<a INT, b VARCHAR>) PARTITIONED BY (bucket(4, id)) \
                 TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='{mode}', \
                 'write.update.mode'='{mode}', 'write.merge.mode'='{mode}')"
            ),
            format!(
                "INSERT INTO {t} VALUES (1, 1.5, 1.25, 'a', named_struct('a', 10, 'b', 'x')), \
                 (2, 2.5, 2.50, 'b', named_struct('a', 20, 'b', 'y')), (3, 3.5, 3.75, 'c', NULL)"
            ),
            format!("ALTER TABLE {t} ALTER COLUMN id TYPE BIGINT"),
            format!("ALTER TABLE {t} ALTER COLUMN f TYPE DOUBLE"),
            format!("ALTER TABLE {t} ALTER COLUMN d TYPE DECIMAL(10, 2)"),
            format!("DELETE FROM {t} WHERE id = 2"),
            format!("ALTER TABLE {t} DROP COLUMN s"),
            format!("ALTER TABLE {t} ADD COLUMN s INT"),
            format!(
                "INSERT INTO {t} VALUES (5000000000, 5.5, 12345678.90, \
                 named_struct('a', 50, 'b', 'z'), 55)"
            ),
            format!("ALTER TABLE {t} RENAME COLUMN st.a TO aa"),
            format!("ALTER TABLE {t} ADD COLUMN st.c DOUBLE"),
            format!("UPDATE {t} SET s = 7, d = d + 1 WHERE id = 1"),
            format!("ALTER TABLE {t} ADD PARTITION FIELD truncate(2, d)"),
            format!("ALTER TABLE {t} RENAME COLUMN id TO key"),
            format!(
                "MERGE INTO {t} USING (SELECT * FROM (VALUES (3, 9.5), (6, 6.5)) v(k, f)) src \
                 ON {t}.key = src.k WHEN MATCHED THEN UPDATE SET f = src.f \
                 WHEN NOT MATCHED THEN INSERT (key, f) VALUES (src.k, src.f)"
            ),
            format!("ALTER TABLE {t} DROP PARTITION FIELD bucket(4, key)"),
            format!("DELETE FROM {t} WHERE key = 3"),
            format!("INSERT INTO {t} (key, d, s) VALUES (7, 0.01, 70)"),
        ];
        for sql in &statements {
            run(ctx, sql).await;
        }
        // the values: old files read through the promotions, the re-added `s` null in
        // the files written before it, the renamed struct field kept
        let text = format!(
            "SELECT concat_ws('|', CAST(key AS VARCHAR), coalesce(CAST(f AS VARCHAR), 'null'), \
             coalesce(CAST(d AS VARCHAR), 'null'), coalesce(CAST(st.aa AS VARCHAR), 'null'), \
             coalesce(st.b, 'null'), coalesce(CAST(st.c AS VARCHAR), 'null'), \
             coalesce(CAST(s AS VARCHAR), 'null')) FROM {t} ORDER BY key"
        );
        assert_eq!(
            strings(ctx, &text).await,
            [
                "1|1.5|2.25|10|x|null|7",
                "6|6.5|null|null|null|null|null",
                "7|null|0.01|null|null|null|70",
                "5000000000|5.5|12345678.90|50|z|null|55",
            ],
            "{what}"
        );

        let table = lake
            .catalog
            .load_table(&TableIdent::parse("ns.ev"))
            .await
            .expect("table");
        let metadata = table.metadata();
        assert_eq!(metadata.snapshots.len(), 7, "{what}: snapshots");
        for snapshot in &metadata.snapshots {
            let id = snapshot.snapshot_id;
            let pyi = pyiceberg_read_at(&lake.db, &lake.warehouse, "ns.ev", id);
            let ours = icefloe_rows_at(ctx, t, id, &pyi["schema"]).await;
            let expected = pyi["rows"].as_array().expect("rows");
            assert_same_rows(
                &format!("{what} at {id}: icefloe vs PyIceberg"),
                expected,
                &ours,
            );
            let duck = duckdb_read_at(table.metadata_location(), id);
            let duck = duck["rows"].as_array().expect("rows");
            assert_same_rows(&format!("{what} at {id}: icefloe vs DuckDB"), duck, &ours);
        }
    }
}
