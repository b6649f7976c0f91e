//! The metadata tables hold what Iceberg Java's (so Spark's) hold, on tables other
//! engines wrote: values the manifests keep apart stay apart (`{}` and null metrics maps),
//! also after icefloe rewrote the manifests. The comparisons with PyIceberg's `inspect`
//! tables are in `interop.rs`.

use datafusion::arrow::array::{Array, AsArray, MapArray};

use crate::catalog::query;
use crate::dml::ok;
use crate::maintenance::corpus_lake;

/// The metrics maps of `data_file`, as `$files` names them (spec: "Manifests").
const METRIC_MAPS: [&str; 6] = [
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "lower_bounds",
    "upper_bounds",
];

/// For each row of `sql` (`content`, then the six metrics maps): the content and, per
/// map, `None` for null or its number of entries.
async fn metric_maps(
    ctx: &datafusion::prelude::SessionContext,
    sql: &str,
) -> Vec<(i32, Vec<Option<usize>>)> {
    let batches = query(ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut out = vec![];
    for b in &batches {
        let content = b
            .column(0)
            .as_primitive::<datafusion::arrow::datatypes::Int32Type>();
        let maps: Vec<&MapArray> = (1..b.num_columns()).map(|i| b.column(i).as_map()).collect();
        for r in 0..b.num_rows() {
            let sizes = maps
                .iter()
                .map(|m| m.is_valid(r).then(|| m.value_length(r) as usize))
                .collect();
            out.push((content.value(r), sizes));
        }
    }
    out.sort();
    out
}

/// Spark's v3 table: Spark writes every data file's `nan_value_counts` as an empty map
/// (the table has no float column) and leaves every metrics map of a deletion vector
/// out. Java's `$files` and `$entries` show the first as `{}` and the others as null;
/// so do icefloe's (they showed `{}` as null), before and after `rewrite_manifests`
/// rewrote the manifests (which wrote `{}` back as null).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_metrics_maps_are_empty_not_null_as_in_java() {
    let t = "spark_v3_deletion_vectors";
    let (_copies, lake, _catalog) = corpus_lake(&[t]).await;
    let maps = METRIC_MAPS.join(", ");
    let entry_maps = METRIC_MAPS
        .iter()
        .map(|m| format!("data_file.{m}"))
        .collect::<Vec<_>>()
        .join(", ");
    let files_sql = format!("SELECT content, {maps} FROM corpus.ns.\"{t}$files\"");
    let entries_sql = format!(
        "SELECT data_file.content, {entry_maps} FROM corpus.ns.\"{t}$entries\" WHERE status < 2"
    );
    let check = |rows: &[(i32, Vec<Option<usize>>)], what: &str| {
        assert!(rows.iter().any(|r| r.0 == 0), "{what}: no data file");
        assert!(rows.iter().any(|r| r.0 == 1), "{what}: no deletion vector");
        for (content, sizes) in rows {
            if *content == 0 {
                // column_sizes … null_value_counts have entries, nan_value_counts none
                assert!(
                    sizes[..3].iter().all(|s| s.is_some_and(|n| n > 0)),
                    "{what}: {sizes:?}"
                );
                assert_eq!(sizes[3], Some(0), "{what}: nan_value_counts is {{}}");
            } else {
                assert_eq!(sizes, &vec![None; 6], "{what}: a deletion vector's maps");
            }
        }
    };
    let files = metric_maps(&lake.ctx, &files_sql).await;
    check(&files, "$files");
    let entries = metric_maps(&lake.ctx, &entries_sql).await;
    check(&entries, "$entries");
    assert_eq!(files, entries);

    let manifests_sql = format!("SELECT path FROM corpus.ns.\"{t}$manifests\" ORDER BY path");
    let manifests = crate::catalog::strings(&lake.ctx, &manifests_sql).await;
    ok(
        &lake.ctx,
        &format!("CALL corpus.system.rewrite_manifests('ns.{t}')"),
    )
    .await;
    let written = crate::catalog::strings(&lake.ctx, &manifests_sql).await;
    assert_ne!(written, manifests, "the manifests are rewritten");
    let rewritten = metric_maps(&lake.ctx, &files_sql).await;
    assert_eq!(rewritten, files, "$files after rewrite_manifests");
    assert_eq!(
        metric_maps(&lake.ctx, &entries_sql).await,
        entries,
        "$entries after rewrite_manifests"
    );
}

/// `SHOW COLUMNS` of a metadata table lists its columns (DataFusion answered it from
/// `information_schema.columns`, which lists no metadata table: no rows), in DataFusion's
/// shape and with `information_schema`'s types (no field-id metadata in the map types);
/// `DESCRIBE TABLE EXTENDED` names a metadata table as Spark does (`cat.ns.t.files`,
/// not icefloe's `t$files`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_tables_show_their_columns_and_spark_name() {
    let lake = crate::dml::lake().await;
    let ctx = &lake.ctx;
    ok(ctx, "CREATE TABLE ice.ns.t (id BIGINT NOT NULL, s STRING)").await;
    ok(ctx, "INSERT INTO ice.ns.t VALUES (1, 'a')").await;
    let snapshots = ok(ctx, "SHOW COLUMNS FROM ice.ns.\"t$snapshots\"").await;
    let names: Vec<&str> = snapshots
        .lines()
        .skip(3)
        .filter_map(|l| l.split('|').nth(4).map(str::trim))
        .filter(|n| !n.is_empty())
        .collect();
    assert_eq!(
        names,
        [
            "committed_at",
            "snapshot_id",
            "parent_id",
            "operation",
            "manifest_list",
            "summary"
        ],
        "{snapshots}"
    );
    assert!(
        snapshots.contains("| ice           | ns           | t$snapshots | snapshot_id   | Int64"),
        "{snapshots}"
    );
    let files = ok(ctx, "SHOW COLUMNS IN ice.ns.\"t$files\"").await;
    let column_sizes = files.lines().find_map(|l| {
        let cells: Vec<&str> = l.split('|').map(str::trim).collect();
        (cells.get(4) == Some(&"column_sizes")).then(|| cells[1..].join(" | "))
    });
    assert_eq!(
        column_sizes.as_deref(),
        Some(
            "ice | ns | t$files | column_sizes | Map(\"key_value\": non-null Struct(\"key\": \
             non-null Int32, \"value\": Int64), unsorted) | YES | "
        ),
        "{files}"
    );
    assert!(!files.contains("field_id"), "{files}");
    // a listed table: DataFusion's answer, as before
    assert_eq!(
        ok(ctx, "SHOW COLUMNS FROM ice.ns.t").await,
        "+---------------+--------------+------------+-------------+-----------+-------------+\n\
         | table_catalog | table_schema | table_name | column_name | data_type | is_nullable |\n\
         +---------------+--------------+------------+-------------+-----------+-------------+\n\
         | ice           | ns           | t          | id          | Int64     | NO          |\n\
         | ice           | ns           | t          | s           | Utf8View  | YES         |\n\
         +---------------+--------------+------------+-------------+-----------+-------------+"
    );
    for (name, spark) in [
        ("ice.ns.\"t$snapshots\"", "ice.ns.t.snapshots"),
        ("ice.ns.\"t$files\"", "ice.ns.t.files"),
    ] {
        let described = ok(ctx, &format!("DESCRIBE TABLE EXTENDED {name}")).await;
        let row = described
            .lines()
            .find(|l| l.starts_with("| Name "))
            .unwrap_or_else(|| panic!("{described}"));
        assert_eq!(
            row.split('|').nth(2).map(str::trim),
            Some(spark),
            "{described}"
        );
    }
}
