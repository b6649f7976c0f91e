//! `rewrite_data_files` with `sort_order => 'zorder(…)'` (Spark's z-order compaction):
//! the rows stay, each new file holds a run of the rows in z-order, the files' bounds
//! cluster on every z-order column at once, and what cannot be z-ordered is refused
//! naming it, with the table unchanged.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int32Array, Int64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::arrow::record_batch::RecordBatch;
use icefloe::maintenance::zorder::{z_values, ZOrderOptions};

use crate::catalog::scalar_i64;
use crate::dml::{create, lake, ok, other_engines_agree, run, Lake};
use crate::maintenance::{answers, call, corpus_lake};

/// The `i64` values of column `c` of `batches`.
fn longs(batches: &[RecordBatch], c: usize) -> Vec<Option<i64>> {
    batches
        .iter()
        .flat_map(|b| {
            let v = cast(b.column(c), &DataType::Int64).expect("cast");
            let v = v.as_primitive::<Int64Type>().clone();
            (0..v.len())
                .map(|i| v.is_valid(i).then(|| v.value(i)))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Insert the 16 × 16 grid of `(id, k)` in a scrambled order, in 8 commits (8 files).
async fn insert_grid(lake: &Lake, name: &str) {
    let cells: Vec<i64> = (0..256).map(|i| (i * 97 + 31) % 256).collect();
    for chunk in cells.chunks(32) {
        let values: Vec<String> = chunk
            .iter()
            .map(|c| {
                let (id, k) = (c / 16, c % 16);
                format!("({id}, {k}, 's{id}', {k}.5)")
            })
            .collect();
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.{name} VALUES {}", values.join(", ")),
        )
        .await;
    }
}

/// Per data file, `(min id, max id, min k, max k)`.
async fn file_boxes(lake: &Lake, name: &str) -> Vec<[i64; 4]> {
    let batches = run(
        &lake.ctx,
        &format!(
            "SELECT min(id), max(id), min(k), max(k) FROM ice.ns.{name} GROUP BY _file \
             ORDER BY 1, 3"
        ),
    )
    .await
    .expect("boxes");
    let cols: Vec<Vec<Option<i64>>> = (0..4).map(|c| longs(&batches, c)).collect();
    (0..cols[0].len())
        .map(|r| [0, 1, 2, 3].map(|c| cols[c][r].expect("bound")))
        .collect()
}

fn area(boxes: &[[i64; 4]]) -> i64 {
    boxes
        .iter()
        .map(|b| (b[1] - b[0] + 1) * (b[3] - b[2] + 1))
        .sum()
}

async fn snapshots(lake: &Lake, name: &str) -> i64 {
    scalar_i64(
        &lake.ctx,
        &format!("SELECT count(*) FROM ice.ns.\"{name}$snapshots\""),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maintenance_zorder_writes_rows_in_z_order_and_clusters_files() {
    let lake = lake().await;
    let name = "z";
    create(&lake, name, "", "").await;
    insert_grid(&lake, name).await;
    let t = format!("ice.ns.{name}");
    let order = "ORDER BY id, k";
    let before = ok(&lake.ctx, &format!("SELECT * FROM {t} {order}")).await;
    let scrambled = file_boxes(&lake, name).await;
    assert_eq!(scrambled.len(), 8);
    // every scrambled file spans nearly the whole grid
    assert!(area(&scrambled) > 1500, "{scrambled:?}");
    let total = scalar_i64(
        &lake.ctx,
        &format!("SELECT sum(file_size_in_bytes) FROM ice.ns.\"{name}$files\""),
    )
    .await;
    let r = call(
        &lake,
        &format!(
            "CALL ice.system.rewrite_data_files(table => 'ns.{name}', strategy => 'sort', \
             sort_order => 'zorder(id, K)', options => map('rewrite-all', 'true', \
             'target-file-size-bytes', '{}'))",
            total / 4
        ),
    )
    .await;
    assert_eq!(r["rewritten_data_files_count"], 8, "{r:?}");
    let written = r["added_data_files_count"];
    assert!(written >= 3, "{r:?}");
    assert_eq!(
        ok(&lake.ctx, &format!("SELECT * FROM {t} {order}")).await,
        before
    );

    // the rows, file after file (files in the order of their first z-value) and in
    // each file by position, are the rows in z-order
    let batches = run(
        &lake.ctx,
        &format!("SELECT id, k, _file, _pos FROM {t} ORDER BY _file, _pos"),
    )
    .await
    .expect("rows");
    let (ids, ks) = (longs(&batches, 0), longs(&batches, 1));
    let files: Vec<String> = batches
        .iter()
        .flat_map(|b| {
            let f = cast(b.column(2), &DataType::Utf8).expect("file");
            let f = f.as_string::<i32>().clone();
            (0..f.len())
                .map(|i| f.value(i).to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids.clone())),
        Arc::new(Int32Array::from(
            ks.iter().map(|k| k.map(|k| k as i32)).collect::<Vec<_>>(),
        )),
    ];
    let z = z_values(&columns, &ZOrderOptions::default()).expect("z");
    let mut runs: Vec<(Vec<u8>, Vec<Vec<u8>>)> = vec![];
    for (i, file) in files.iter().enumerate() {
        if i == 0 || files[i - 1] != *file {
            runs.push((z.value(i).to_vec(), vec![]));
        }
        if let Some(last) = runs.last_mut() {
            last.1.push(z.value(i).to_vec());
        }
    }
    assert_eq!(runs.len() as i64, written);
    runs.sort();
    let in_files: Vec<Vec<u8>> = runs.into_iter().flat_map(|(_, v)| v).collect();
    let mut sorted = in_files.clone();
    sorted.sort();
    assert_eq!(in_files, sorted, "rows are not written in z-order");
    assert_eq!(in_files.len(), 256);

    // the files cluster on both columns (about a quarter of the grid each)
    let clustered = file_boxes(&lake, name).await;
    assert!(3 * area(&clustered) <= area(&scrambled), "{clustered:?}");
    // the files record no sort order (no table sort order describes a z-order)
    assert_eq!(
        scalar_i64(
            &lake.ctx,
            &format!(
                "SELECT count(*) FROM ice.ns.\"{name}$files\" \
                 WHERE sort_order_id IS NOT NULL AND sort_order_id <> 0"
            ),
        )
        .await,
        0
    );
    other_engines_agree(&lake, name).await;
}

/// Identity partition columns are left out of the z-order (constant per partition);
/// strings and NULLs order; v3 rows keep their lineage and deleted rows stay deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maintenance_zorder_skips_identity_partitions_and_keeps_v3_lineage() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.zp (id BIGINT, k INT, s STRING, d DOUBLE) PARTITIONED BY (k) \
         TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')",
    )
    .await;
    for b in 0..4 {
        let values: Vec<String> = (0..12)
            .map(|i| {
                let id = (i * 7 + b * 5) % 48;
                let s = if i % 5 == 0 {
                    "NULL".to_string()
                } else {
                    format!("'v{}'", (i * 3 + b) % 10)
                };
                format!("({id}, {}, {s}, {b}.25)", i % 2)
            })
            .collect();
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.zp VALUES {}", values.join(", ")),
        )
        .await;
    }
    ok(&lake.ctx, "DELETE FROM ice.ns.zp WHERE id % 5 = 0").await;
    let rows = "SELECT id, k, s, d, _row_id, _last_updated_sequence_number FROM ice.ns.zp \
                ORDER BY _row_id";
    let before = ok(&lake.ctx, rows).await;
    // only identity partition columns: nothing to order by
    let err = run(
        &lake.ctx,
        "CALL ice.system.rewrite_data_files(table => 'ns.zp', sort_order => 'zorder(k)')",
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("every column is the source of an identity partition field"),
        "{err}"
    );
    let r = call(
        &lake,
        "CALL ice.system.rewrite_data_files(table => 'ns.zp', sort_order => 'zorder(k, s, d)', \
         options => map('rewrite-all', 'true', 'var-length-contribution', '3'))",
    )
    .await;
    assert_eq!(r["rewritten_data_files_count"], 8, "{r:?}");
    assert_eq!(r["added_data_files_count"], 2, "{r:?}");
    assert_eq!(ok(&lake.ctx, rows).await, before);
    // within each partition's file the rows are in the z-order of (s, d): NULLs first
    let batches = run(
        &lake.ctx,
        "SELECT k, s, d FROM ice.ns.zp ORDER BY _file, _pos",
    )
    .await
    .expect("rows");
    let ks = longs(&batches, 0);
    let s: ArrayRef = datafusion::arrow::compute::concat(
        &batches
            .iter()
            .map(|b| b.column(1).as_ref())
            .collect::<Vec<_>>(),
    )
    .expect("s");
    let d: ArrayRef = datafusion::arrow::compute::concat(
        &batches
            .iter()
            .map(|b| b.column(2).as_ref())
            .collect::<Vec<_>>(),
    )
    .expect("d");
    let options = ZOrderOptions {
        var_length_contribution: 3,
        ..Default::default()
    };
    let z = z_values(&[s.clone(), d], &options).expect("z");
    for i in 1..z.len() {
        if ks[i] == ks[i - 1] {
            assert!(z.value(i - 1) <= z.value(i), "row {i} is out of z-order");
        }
    }
    assert!(s.is_null(0), "a NULL string orders first in its file");
    other_engines_agree(&lake, "zp").await;
}

/// What cannot be z-ordered is refused naming it; nothing is committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maintenance_zorder_errors_name_their_cause() {
    let lake = lake().await;
    let name = "ze";
    create(&lake, name, "", "").await;
    insert_grid(&lake, name).await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.zn (id BIGINT, st STRUCT<a: INT, b: STRING>) \
         TBLPROPERTIES ('format-version'='2')",
    )
    .await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.zn VALUES (1, named_struct('a', 1, 'b', 'x'))",
    )
    .await;
    let before = snapshots(&lake, name).await;
    let cases = [
        (
            format!("CALL ice.system.rewrite_data_files('ns.{name}', sort_order => 'zorder(nope, k)')"),
            "zorder column 'nope' is not a top-level column of the table (its columns: id, k, s, d)",
        ),
        (
            format!("CALL ice.system.rewrite_data_files('ns.{name}', sort_order => 'zorder()')"),
            "an empty column name",
        ),
        (
            format!("CALL ice.system.rewrite_data_files('ns.{name}', sort_order => 'zorder(id), k')"),
            "cannot be combined with other sort terms",
        ),
        (
            format!("CALL ice.system.rewrite_data_files('ns.{name}', strategy => 'zorder')"),
            "strategy => 'sort' with sort_order => 'zorder(column, …)'",
        ),
        (
            format!(
                "CALL ice.system.rewrite_data_files('ns.{name}', sort_order => 'zorder(id)', \
                 options => map('var-length-contribution', '0'))"
            ),
            "option 'var-length-contribution' is 0: it must be 1 to 1024",
        ),
        (
            // a contribution that would need gigabytes of z-values per batch
            format!(
                "CALL ice.system.rewrite_data_files('ns.{name}', sort_order => 'zorder(s)', \
                 options => map('rewrite-all', 'true', 'var-length-contribution', \
                 '1000000000'))"
            ),
            "option 'var-length-contribution' is 1000000000: it must be 1 to 1024",
        ),
        (
            format!("CALL ice.system.rewrite_data_files('ns.{name}', sort_order => 'zorder(id k)')"),
            "'k' is not part of a column name",
        ),
        (
            format!("CALL ice.system.rewrite_data_files('ns.{name}', sort_order => 'zorder(`id)')"),
            "it does not tokenize",
        ),
        (
            format!(
                "CALL ice.system.rewrite_data_files('ns.{name}', \
                 options => map('max-output-size', '4'))"
            ),
            "option 'max-output-size' applies to z-order rewrites only",
        ),
        (
            "CALL ice.system.rewrite_data_files('ns.zn', sort_order => 'zorder(id, st)')"
                .to_string(),
            "zorder column 'st' is of type struct",
        ),
        (
            "CALL ice.system.rewrite_data_files('ns.zn', sort_order => 'zorder(st.a)')"
                .to_string(),
            "zorder column 'st.a' is not a top-level column",
        ),
    ];
    for (q, expected) in cases {
        let err = run(&lake.ctx, &q).await.unwrap_err();
        assert!(err.contains(expected), "{q}: {err}");
    }
    assert_eq!(snapshots(&lake, name).await, before);
    // a valid z-order with a cut z-value still keeps every row
    let count = "SELECT count(*), sum(id), sum(k) FROM ice.ns.ze";
    let rows = ok(&lake.ctx, count).await;
    let r = call(
        &lake,
        &format!(
            "CALL ice.system.rewrite_data_files('ns.{name}', sort_order => 'zorder(s, d)', \
             options => map('rewrite-all', 'true', 'max-output-size', '1'))"
        ),
    )
    .await;
    assert_eq!(r["rewritten_data_files_count"], 8, "{r:?}");
    assert_eq!(ok(&lake.ctx, count).await, rows);
    assert_eq!(snapshots(&lake, name).await, before + 1);
}

/// Quoted column names are read as SQL identifiers: a name holding a comma, a space, a
/// parenthesis or a doubled quote is one column (Spark parses `zorder(…)`'s arguments as
/// identifiers).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maintenance_zorder_reads_quoted_column_names() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.zq (\"a,b\" BIGINT, \"x \"\"y\"\" (z)\" INT, plain INT) \
         TBLPROPERTIES ('format-version'='2')",
    )
    .await;
    for b in 0..4 {
        let values: Vec<String> = (0..16)
            .map(|i| format!("({}, {}, {b})", (i * 5 + b) % 16, (i * 11 + b * 3) % 16))
            .collect();
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.zq VALUES {}", values.join(", ")),
        )
        .await;
    }
    let rows = "SELECT * FROM ice.ns.zq ORDER BY 1, 2, 3";
    let before = ok(&lake.ctx, rows).await;
    let r = call(
        &lake,
        "CALL ice.system.rewrite_data_files(table => 'ns.zq', \
         sort_order => 'zorder(`a,b`, \"x \"\"y\"\" (z)\")', options => map('rewrite-all', 'true'))",
    )
    .await;
    assert_eq!(r["rewritten_data_files_count"], 4, "{r:?}");
    assert_eq!(r["added_data_files_count"], 1, "{r:?}");
    assert_eq!(ok(&lake.ctx, rows).await, before);
    // the file's rows are in the z-order of the two quoted columns
    let batches = run(
        &lake.ctx,
        "SELECT \"a,b\", \"x \"\"y\"\" (z)\" FROM ice.ns.zq ORDER BY _file, _pos",
    )
    .await
    .expect("rows");
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(longs(&batches, 0))),
        Arc::new(Int32Array::from(
            longs(&batches, 1)
                .iter()
                .map(|v| v.map(|v| v as i32))
                .collect::<Vec<_>>(),
        )),
    ];
    let z = z_values(&columns, &ZOrderOptions::default()).expect("z");
    assert_eq!(z.len(), 64);
    for i in 1..z.len() {
        assert!(z.value(i - 1) <= z.value(i), "row {i} is out of z-order");
    }
}

/// Z-order rewrites of corpus tables other engines wrote (equality deletes, partitioned
/// or not, position deletes, v3 deletion vectors) on all their top-level primitive
/// columns: every conformance query answers the same afterwards and no delete file is
/// left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maintenance_zorder_keeps_the_rows_of_corpus_tables() {
    let tables = [
        "spark_v2_equality_deletes",
        "spark_v2_equality_deletes_partitioned",
        "eq_delete_upsert_chain_small",
        "spark_v2_mor_position_deletes",
        "spark_v3_deletion_vectors",
        "pyiceberg_v2_types_uuid_time",
    ];
    let (_copies, lake, _catalog) = corpus_lake(&tables).await;
    for t in tables {
        let before = answers(&lake, t).await;
        let schema = lake
            .ctx
            .sql(&format!("SELECT * FROM corpus.ns.{t}"))
            .await
            .expect("plan")
            .schema()
            .as_arrow()
            .clone();
        let columns: Vec<String> = schema
            .fields()
            .iter()
            .filter(|f| !f.data_type().is_nested())
            .map(|f| format!("`{}`", f.name()))
            .collect();
        let r = call(
            &lake,
            &format!(
                "CALL corpus.system.rewrite_data_files(table => 'ns.{t}', \
                 sort_order => 'zorder({})', options => map('rewrite-all', 'true'))",
                columns.join(", ")
            ),
        )
        .await;
        assert!(r["rewritten_data_files_count"] > 0, "{t}: {r:?}");
        assert_eq!(answers(&lake, t).await, before, "{t}: {columns:?}");
        assert_eq!(
            scalar_i64(
                &lake.ctx,
                &format!("SELECT count(*) FROM corpus.ns.\"{t}$delete_files\""),
            )
            .await,
            0,
            "{t}: delete files left"
        );
    }
}
