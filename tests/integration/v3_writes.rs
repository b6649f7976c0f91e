//! Writes to format-version 3 tables: row lineage (spec: "Row Lineage"). Every data
//! file gets a range of row ids (`first_row_id` inherited from its manifest's, which the
//! manifest list assigns from the table's `next-row-id`), ranges of live files never
//! overlap, snapshots record `first-row-id` and `added-rows`, and PyIceberg and DuckDB
//! read the tables icefloe writes. Row-level changes: merge-on-read `DELETE` writes
//! deletion vectors; copy-on-write `DELETE`/`UPDATE` keep each rewritten row's lineage
//! (see `copy_on_write_keeps_row_lineage`); merge-on-read `UPDATE` and `MERGE` are
//! refused.

use icefloe::catalog::TableIdent;
use icefloe::scan::TableScan;

use crate::dml::{create, lake, ok, other_engines_agree, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v3_writes_assign_row_ids_and_read_alike() {
    let lake = lake().await;
    create(
        &lake,
        "v3",
        "PARTITIONED BY (k)",
        ", 'format-version'='3', 'commit.manifest.min-count-to-merge'='2'",
    )
    .await;
    // `create` asks for format-version 2 first; the later key wins
    let t = "ice.ns.v3";
    for values in [
        "(1, 1, 'a', 1.0), (2, 1, 'b', 2.0), (3, 2, 'c', 3.0)",
        "(4, 1, 'd', 4.0), (5, 3, 'e', 5.0)",
        "(6, 1, 'f', 6.0)",
    ] {
        ok(&lake.ctx, &format!("INSERT INTO {t} VALUES {values}")).await;
    }
    ok(
        &lake.ctx,
        "SET icefloe.partition_overwrite_mode = 'dynamic'",
    )
    .await;
    ok(
        &lake.ctx,
        &format!("INSERT OVERWRITE {t} VALUES (7, 2, 'g', 7.0)"),
    )
    .await;
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.v3"))
        .await
        .expect("load");
    let m = table.metadata();
    assert_eq!(m.format_version as i32, 3, "format version");
    // snapshots take consecutive ranges of row ids
    let mut snapshots = m.snapshots.clone();
    snapshots.sort_by_key(|s| s.sequence_number);
    let mut next = 0;
    for s in &snapshots {
        let first = s.first_row_id.expect("v3 snapshot first-row-id");
        assert_eq!(first, next, "snapshot {}", s.snapshot_id);
        next = first + s.added_rows.expect("v3 snapshot added-rows");
    }
    assert_eq!(m.next_row_id, Some(next));
    // every live data file has a range of its own, below next-row-id
    let plan = TableScan::new(table.clone(), m.current_snapshot().cloned())
        .plan_files()
        .await
        .expect("plan");
    let mut ranges: Vec<(i64, i64)> = plan
        .tasks
        .iter()
        .map(|task| {
            let f = task.data_file();
            let first = f.first_row_id.expect("inherited first_row_id");
            (first, first + f.record_count)
        })
        .collect();
    ranges.sort();
    assert_eq!(ranges.len(), 5, "{ranges:?}");
    for pair in ranges.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "overlapping row ids: {ranges:?}");
    }
    assert!(ranges.iter().all(|r| r.1 <= next), "{ranges:?} vs {next}");
    let rows = ok(&lake.ctx, &format!("SELECT id FROM {t} ORDER BY id")).await;
    assert_eq!(
        rows,
        "+----+\n| id |\n+----+\n| 1  |\n| 2  |\n| 4  |\n| 5  |\n| 6  |\n| 7  |\n+----+"
    );
    other_engines_agree(&lake, "v3").await;
    // a MERGE (its new rows would need row lineage kept) is refused by name, nothing
    // committed
    let before = m.current_snapshot_id;
    let e = run(
        &lake.ctx,
        &format!(
            "MERGE INTO {t} t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE"
        ),
    )
    .await
    .expect_err("v3 MERGE");
    assert!(e.contains("format-version 3"), "{e}");
    let after = lake
        .catalog
        .load_table(&TableIdent::parse("ns.v3"))
        .await
        .expect("load")
        .metadata()
        .current_snapshot_id;
    assert_eq!(after, before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v3_merge_on_read_deletes_write_one_deletion_vector_per_data_file() {
    let lake = lake().await;
    create(
        &lake,
        "dv",
        "PARTITIONED BY (k)",
        ", 'format-version'='3', 'write.delete.mode'='merge-on-read'",
    )
    .await;
    let t = "ice.ns.dv";
    ok(
        &lake.ctx,
        &format!(
            "INSERT INTO {t} SELECT value, CAST(value % 2 AS INT), NULL, value * 1.0 \
             FROM generate_series(1, 10)"
        ),
    )
    .await;
    let mut expected = vec![];
    for (q, ids) in [
        ("DELETE FROM {t} WHERE id = 1", "2,3,4,5,6,7,8,9,10"),
        // the same data file again: its vector is replaced by one holding both deletes
        ("DELETE FROM {t} WHERE id IN (3, 5)", "2,4,6,7,8,9,10"),
        ("DELETE FROM {t} WHERE id = 10", "2,4,6,7,8,9"),
    ] {
        ok(&lake.ctx, &q.replace("{t}", t)).await;
        let rows = ok(
            &lake.ctx,
            &format!("SELECT string_agg(CAST(id AS VARCHAR), ',' ORDER BY id) AS ids FROM {t}"),
        )
        .await;
        assert!(rows.contains(ids), "{q}: {rows}");
        let id = lake
            .catalog
            .load_table(&TableIdent::parse("ns.dv"))
            .await
            .expect("load")
            .metadata()
            .current_snapshot_id
            .expect("snapshot");
        expected.push((id, ids));
    }
    // one live deletion vector per data file with deletes, Puffin, cardinality as rows
    let dvs = ok(
        &lake.ctx,
        "SELECT file_format, record_count FROM ice.ns.\"dv$files\" WHERE content = 1 \
         ORDER BY record_count",
    )
    .await;
    assert_eq!(
        dvs,
        "+-------------+--------------+\n| file_format | record_count |\n+-------------+--------------+\n\
         | PUFFIN      | 1            |\n| PUFFIN      | 3            |\n+-------------+--------------+"
    );
    for (id, ids) in &expected {
        let rows = ok(
            &lake.ctx,
            &format!("SELECT string_agg(CAST(id AS VARCHAR), ',' ORDER BY id) AS ids FROM ice.ns.\"dv@{id}\""),
        )
        .await;
        assert!(rows.contains(ids), "at {id}: {rows}");
    }
    other_engines_agree(&lake, "dv").await;
    // new rows of a merge-on-read UPDATE or a MERGE would need row lineage kept:
    // refused by name
    ok(
        &lake.ctx,
        "ALTER TABLE ice.ns.dv SET TBLPROPERTIES ('write.update.mode'='merge-on-read')",
    )
    .await;
    for q in [
        "UPDATE ice.ns.dv SET d = 0",
        "MERGE INTO ice.ns.dv t USING (SELECT 2 AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE",
    ] {
        let e = run(&lake.ctx, q).await.expect_err(q);
        assert!(e.contains("format-version 3"), "{q}: {e}");
    }
}

/// Copy-on-write `DELETE` and `UPDATE` on a v3 table (spec: "Row Lineage"): rows copied
/// into a rewritten file keep `_row_id` and `_last_updated_sequence_number`; updated rows
/// keep `_row_id` and take the new snapshot's sequence number; the rewritten files store
/// both; PyIceberg and DuckDB read the same rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_on_write_keeps_row_lineage() {
    let lake = lake().await;
    create(&lake, "cow", "PARTITIONED BY (k)", ", 'format-version'='3'").await;
    let t = "ice.ns.cow";
    for values in [
        "(1, 1, 'a', 1.0), (2, 1, 'b', 2.0), (3, 2, 'c', 3.0)",
        "(4, 1, 'd', 4.0), (5, 3, 'e', 5.0), (6, 2, 'f', 6.0)",
    ] {
        ok(&lake.ctx, &format!("INSERT INTO {t} VALUES {values}")).await;
    }
    let lineage = |lake: &crate::dml::Lake| {
        let ctx = lake.ctx.clone();
        async move {
            let batches = run(
                &ctx,
                "SELECT id, _row_id, _last_updated_sequence_number, s FROM ice.ns.cow ORDER BY id",
            )
            .await
            .expect("lineage");
            let mut out = std::collections::BTreeMap::new();
            for b in &batches {
                use datafusion::arrow::array::AsArray;
                use datafusion::arrow::datatypes::Int64Type;
                let c = |i: usize| b.column(i).as_primitive::<Int64Type>().clone();
                let (id, row_id, seq) = (c(0), c(1), c(2));
                let s = datafusion::arrow::compute::cast(
                    b.column(3),
                    &datafusion::arrow::datatypes::DataType::Utf8,
                )
                .unwrap();
                let s = s.as_string::<i32>();
                for r in 0..b.num_rows() {
                    out.insert(
                        id.value(r),
                        (row_id.value(r), seq.value(r), s.value(r).to_string()),
                    );
                }
            }
            out
        }
    };
    let before = lineage(&lake).await;
    assert_eq!(before.len(), 6);
    // DELETE rewrites partition k=1's files (ids 1, 2, 4): 1 and 4 are copied
    ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id = 2")).await;
    let after_delete = lineage(&lake).await;
    let mut want = before.clone();
    want.remove(&2);
    assert_eq!(after_delete, want, "copied rows keep their lineage");
    // UPDATE: id 3 updated (new sequence number), id 6 copied with it
    ok(&lake.ctx, &format!("UPDATE {t} SET s = 'z' WHERE id = 3")).await;
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.cow"))
        .await
        .expect("load");
    let seq = table
        .metadata()
        .current_snapshot()
        .expect("snapshot")
        .sequence_number;
    let after_update = lineage(&lake).await;
    let mut want = after_delete.clone();
    let (row_id, _, _) = want[&3].clone();
    want.insert(3, (row_id, seq, "z".to_string()));
    assert_eq!(
        after_update, want,
        "the updated row keeps its id, takes seq {seq}"
    );
    // the rewritten files store both columns, by their reserved field ids
    let plan = TableScan::new(table.clone(), table.metadata().current_snapshot().cloned())
        .plan_files()
        .await
        .expect("plan");
    let mut stored = 0;
    for task in &plan.tasks {
        let path = task
            .location
            .strip_prefix("file://")
            .unwrap_or(&task.location);
        let file = std::fs::File::open(path).expect("data file");
        let builder =
            datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                file,
            )
            .expect("parquet");
        let ids: Vec<String> = builder
            .schema()
            .fields()
            .iter()
            .filter_map(|f| f.metadata().get("PARQUET:field_id").cloned())
            .collect();
        if ids.contains(&"2147483540".to_string()) {
            assert!(ids.contains(&"2147483539".to_string()), "{path}: {ids:?}");
            stored += 1;
        }
    }
    assert_eq!(stored, 2, "the two rewritten files store lineage");
    // row ids stay unique and below next-row-id
    let next = table.metadata().next_row_id.expect("next-row-id");
    let ids: std::collections::BTreeSet<i64> = after_update.values().map(|v| v.0).collect();
    assert_eq!(ids.len(), after_update.len());
    assert!(ids.iter().all(|i| *i < next), "{ids:?} < {next}");
    other_engines_agree(&lake, "cow").await;
}
