//! Writes to format-version 3 tables: row lineage (spec: "Row Lineage"). Every data
//! file gets a range of row ids (`first_row_id` inherited from its manifest's, which the
//! manifest list assigns from the table's `next-row-id`), ranges of live files never
//! overlap, snapshots record `first-row-id` and `added-rows`, and PyIceberg and DuckDB
//! read the tables icefloe writes. Row-level changes keep row lineage: merge-on-read
//! `DELETE` writes deletion vectors; copy-on-write `DELETE`/`UPDATE` keep each rewritten
//! row's lineage (`copy_on_write_keeps_row_lineage`); merge-on-read `UPDATE` and `MERGE`
//! in both modes keep updated rows' `_row_id`, give them the new sequence number and
//! let inserted rows inherit theirs (`update_and_merge_keep_row_lineage`); compaction
//! keeps both values of every row (`compaction_keeps_row_lineage`). A table upgraded
//! from v2 gets ids for its earlier rows in its first v3 commit
//! (`upgrade_to_v3_assigns_row_ids_to_earlier_rows`). A copy of Spark's v3 table,
//! registered in a SQL catalog, takes writes and loads again
//! (`a_copied_v3_table_takes_writes_through_a_sql_catalog`).

use std::collections::{BTreeMap, HashMap, HashSet};

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

/// One live row's lineage as read (`_row_id`, `_last_updated_sequence_number`) and where
/// it lives: its file's `first_row_id` and data sequence number, its `_pos`, and the
/// values its file stores for it (spec: "Row Lineage").
#[derive(Debug, Clone)]
struct RowLineage {
    row_id: i64,
    seq: i64,
    first_row_id: i64,
    pos: i64,
    stored_row_id: Option<i64>,
    stored_seq: Option<i64>,
}

/// Every live row of `ice.ns.<name>` by `id`, checked to read as the spec says from
/// what its file stores (stored value, or `first_row_id` + `_pos` / the file's data
/// sequence number), row ids unique and below the table's `next-row-id`.
async fn lineage_of(lake: &crate::dml::Lake, name: &str) -> BTreeMap<i64, RowLineage> {
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::datatypes::Int64Type;
    let table = lake
        .catalog
        .load_table(&TableIdent::parse(&format!("ns.{name}")))
        .await
        .expect("load");
    let plan = TableScan::new(table.clone(), table.metadata().current_snapshot().cloned())
        .plan_files()
        .await
        .expect("plan");
    let files: HashMap<String, _> = plan
        .tasks
        .iter()
        .map(|t| (t.data_file().file_path.clone(), t.clone()))
        .collect();
    let batches = run(
        &lake.ctx,
        &format!(
            "SELECT id, _row_id, _last_updated_sequence_number, _file, _pos \
             FROM ice.ns.{name}"
        ),
    )
    .await
    .expect("lineage");
    let next = table.metadata().next_row_id.expect("next-row-id");
    let mut out = BTreeMap::new();
    let mut ids = HashSet::new();
    for b in &batches {
        let long = |i: usize| b.column(i).as_primitive::<Int64Type>().clone();
        let (id, row_id, seq, pos) = (long(0), long(1), long(2), long(4));
        let file = b.column(3).as_string::<i32>();
        for r in 0..b.num_rows() {
            assert!(
                row_id.is_valid(r) && seq.is_valid(r),
                "{name}: null lineage"
            );
            let task = &files[file.value(r)];
            let (stored_id, stored_row_id, stored_seq) =
                crate::metadata_columns::stored_row(&task.location, pos.value(r) as usize);
            assert_eq!(stored_id, id.value(r), "{name}: id at _pos");
            let first_row_id = task.data_file().first_row_id.expect("first_row_id");
            let row = RowLineage {
                row_id: row_id.value(r),
                seq: seq.value(r),
                first_row_id,
                pos: pos.value(r),
                stored_row_id,
                stored_seq,
            };
            assert_eq!(
                row.row_id,
                stored_row_id.unwrap_or(first_row_id + row.pos),
                "{name}: _row_id of id {}",
                id.value(r)
            );
            assert_eq!(
                row.seq,
                stored_seq.unwrap_or(task.entry.data_sequence_number),
                "{name}: _last_updated_sequence_number of id {}",
                id.value(r)
            );
            assert!(row.row_id < next, "{name}: row id {} >= {next}", row.row_id);
            assert!(
                ids.insert(row.row_id),
                "{name}: row id {} twice",
                row.row_id
            );
            out.insert(id.value(r), row);
        }
    }
    out
}

/// The table's current sequence number and `next-row-id`.
async fn sequence_and_next_row_id(lake: &crate::dml::Lake, name: &str) -> (i64, i64) {
    let table = lake
        .catalog
        .load_table(&TableIdent::parse(&format!("ns.{name}")))
        .await
        .expect("load");
    let m = table.metadata();
    (
        m.current_snapshot().expect("snapshot").sequence_number,
        m.next_row_id.expect("next-row-id"),
    )
}

/// (`_row_id`, `_last_updated_sequence_number`) by id.
fn values(rows: &BTreeMap<i64, RowLineage>) -> BTreeMap<i64, (i64, i64)> {
    rows.iter()
        .map(|(id, r)| (*id, (r.row_id, r.seq)))
        .collect()
}

/// Merge-on-read `UPDATE` and `MERGE` in both modes on a v3 table (spec: "Row Lineage"):
/// updated rows keep `_row_id` and take the statement's sequence number (stored as
/// null), inserted rows take their new file's `first_row_id` + position (stored as
/// null), copied rows keep both values (stored), deleted rows go; merge-on-read writes
/// one deletion vector per data file, an existing one merged in and replaced. Every
/// expected value is worked out from the inserts' row id ranges and the snapshots'
/// sequence numbers; PyIceberg and DuckDB read the same rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_and_merge_keep_row_lineage() {
    let lake = lake().await;
    create(
        &lake,
        "lin",
        "",
        ", 'format-version'='3', 'write.delete.mode'='merge-on-read', \
         'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'",
    )
    .await;
    let t = "ice.ns.lin";
    // seq 1: ids 1–3 take row ids 0–2; seq 2: ids 4–6 take 3–5
    ok(
        &lake.ctx,
        &format!("INSERT INTO {t} VALUES (1, 1, 'a', 1.0), (2, 1, 'b', 2.0), (3, 2, 'c', 3.0)"),
    )
    .await;
    ok(
        &lake.ctx,
        &format!("INSERT INTO {t} VALUES (4, 1, 'd', 4.0), (5, 3, 'e', 5.0), (6, 2, 'f', 6.0)"),
    )
    .await;
    let mut want: BTreeMap<i64, (i64, i64)> = [
        (1, (0, 1)),
        (2, (1, 1)),
        (3, (2, 1)),
        (4, (3, 2)),
        (5, (4, 2)),
        (6, (5, 2)),
    ]
    .into();
    assert_eq!(values(&lineage_of(&lake, "lin").await), want);
    let dvs_per_file = |lake: &crate::dml::Lake| {
        let ctx = lake.ctx.clone();
        async move {
            ok(
                &ctx,
                "SELECT count(*) AS dvs, count(DISTINCT referenced_data_file) AS files \
                 FROM ice.ns.\"lin$files\" WHERE content = 1",
            )
            .await
        }
    };

    // seq 3, merge-on-read UPDATE: 2 and 4 keep their row ids
    let n = ok(
        &lake.ctx,
        &format!("UPDATE {t} SET s = 'u' WHERE id IN (2, 4)"),
    )
    .await;
    assert!(n.contains("| 2 "), "{n}");
    let (seq, _) = sequence_and_next_row_id(&lake, "lin").await;
    assert_eq!(seq, 3);
    want.insert(2, (1, 3));
    want.insert(4, (3, 3));
    let rows = lineage_of(&lake, "lin").await;
    assert_eq!(values(&rows), want, "after the merge-on-read UPDATE");
    for id in [2, 4] {
        // stored: the row id; the sequence number null, inherited
        assert_eq!(rows[&id].stored_row_id, Some(want[&id].0), "id {id}");
        assert_eq!(rows[&id].stored_seq, None, "id {id}");
    }
    let dvs = dvs_per_file(&lake).await;
    assert!(dvs.contains("| 2   | 2     |"), "{dvs}");

    // seq 4: id 1's file already has a vector (id 2's): one vector holds both now
    ok(
        &lake.ctx,
        &format!("UPDATE {t} SET d = d + 10 WHERE id IN (1, 2)"),
    )
    .await;
    want.insert(1, (0, 4));
    want.insert(2, (1, 4));
    assert_eq!(
        values(&lineage_of(&lake, "lin").await),
        want,
        "second UPDATE"
    );
    let dvs = dvs_per_file(&lake).await;
    // the first insert's file, the second's, the first update's file (id 2 there)
    assert!(dvs.contains("| 3   | 3     |"), "{dvs}");
    let first_file_dv = ok(
        &lake.ctx,
        "SELECT f.record_count FROM ice.ns.\"lin$files\" f WHERE f.content = 1 \
         AND f.referenced_data_file IN (SELECT d.file_path FROM ice.ns.\"lin$files\" d \
         WHERE d.content = 0 AND d.first_row_id = 0)",
    )
    .await;
    assert!(first_file_dv.contains("| 2 "), "{first_file_dv}");

    // seq 5, merge-on-read MERGE: 2 updated, 5 deleted, 9 inserted
    let (_, next_before) = sequence_and_next_row_id(&lake, "lin").await;
    let n = ok(
        &lake.ctx,
        &format!(
            "MERGE INTO {t} t USING (SELECT * FROM (VALUES (2, 'm'), (5, 'x'), (9, 'n')) \
             AS v(id, s)) s ON t.id = s.id \
             WHEN MATCHED AND s.s = 'x' THEN DELETE \
             WHEN MATCHED THEN UPDATE SET s = s.s \
             WHEN NOT MATCHED THEN INSERT (id, k, s, d) VALUES (s.id, 0, s.s, 0.0)"
        ),
    )
    .await;
    assert!(n.contains("| 3 "), "{n}");
    let (seq, next_after) = sequence_and_next_row_id(&lake, "lin").await;
    assert_eq!(seq, 5);
    let rows = lineage_of(&lake, "lin").await;
    want.insert(2, (1, 5));
    want.remove(&5);
    // the inserted row: its new file's first row id (from this commit's range) + _pos
    let nine = &rows[&9];
    assert!(
        (next_before..next_after).contains(&nine.first_row_id),
        "{nine:?} in {next_before}..{next_after}"
    );
    assert_eq!((nine.stored_row_id, nine.stored_seq), (None, None));
    want.insert(9, (nine.first_row_id + nine.pos, 5));
    assert_eq!(values(&rows), want, "after the merge-on-read MERGE");
    assert_eq!(
        (rows[&2].stored_row_id, rows[&2].stored_seq),
        (Some(1), None)
    );
    let dvs = dvs_per_file(&lake).await;
    // each data file with deletes has one vector: both inserts' files, the first
    // update's (ids 2, 4: 2 deleted) and the second update's (ids 1, 2: 2 deleted)
    let counts = ok(
        &lake.ctx,
        "SELECT count(*) AS n FROM ice.ns.\"lin$files\" WHERE content = 1",
    )
    .await;
    let per_file = dvs
        .lines()
        .nth(3)
        .expect("row")
        .split('|')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>();
    assert_eq!(
        per_file[0], per_file[1],
        "one vector per data file: {dvs} {counts}"
    );

    // seq 6: a new file (ids 20–23), then seq 7, a copy-on-write MERGE over it: 21 and 9
    // updated, 22 and 3 deleted, 30 inserted; 20 and 23 are copied with their lineage
    ok(
        &lake.ctx,
        "ALTER TABLE ice.ns.lin SET TBLPROPERTIES ('write.merge.mode'='copy-on-write')",
    )
    .await;
    let (_, next_before) = sequence_and_next_row_id(&lake, "lin").await;
    ok(
        &lake.ctx,
        &format!(
            "INSERT INTO {t} VALUES (20, 5, 'p', 1.0), (21, 5, 'q', 2.0), (22, 5, 'r', 3.0), \
             (23, 5, 's', 4.0)"
        ),
    )
    .await;
    for (i, id) in [20, 21, 22, 23].into_iter().enumerate() {
        want.insert(id, (next_before + i as i64, 6));
    }
    assert_eq!(values(&lineage_of(&lake, "lin").await), want, "the insert");
    let (_, next_before) = sequence_and_next_row_id(&lake, "lin").await;
    let n = ok(
        &lake.ctx,
        &format!(
            "MERGE INTO {t} t USING (SELECT * FROM (VALUES (21, 'y'), (9, 'y'), (22, 'x'), \
             (3, 'x'), (30, 'n')) AS v(id, s)) s ON t.id = s.id \
             WHEN MATCHED AND s.s = 'x' THEN DELETE \
             WHEN MATCHED THEN UPDATE SET s = s.s \
             WHEN NOT MATCHED THEN INSERT (id, k, s, d) VALUES (s.id, 0, s.s, 0.0)"
        ),
    )
    .await;
    assert!(n.contains("| 5 "), "{n}");
    let (seq, next_after) = sequence_and_next_row_id(&lake, "lin").await;
    assert_eq!(seq, 7);
    let rows = lineage_of(&lake, "lin").await;
    for id in [21, 9] {
        want.insert(id, (want[&id].0, 7));
        assert_eq!(rows[&id].stored_seq, None, "id {id}");
    }
    want.remove(&22);
    want.remove(&3);
    let thirty = &rows[&30];
    assert!(
        (next_before..next_after).contains(&thirty.first_row_id),
        "{thirty:?}"
    );
    want.insert(30, (thirty.first_row_id + thirty.pos, 7));
    assert_eq!(values(&rows), want, "after the copy-on-write MERGE");
    for id in [20, 23] {
        // copied: both values stored as they were (inherited before)
        assert_eq!(
            (rows[&id].stored_row_id, rows[&id].stored_seq),
            (Some(want[&id].0), Some(6)),
            "id {id}"
        );
    }
    other_engines_agree(&lake, "lin").await;
}

/// `rewrite_data_files` on a v3 table with deletion vectors, updated rows (stored row
/// ids) and appended rows (inherited ones): every row keeps both lineage values; the
/// new files store them; PyIceberg and DuckDB read the same rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_keeps_row_lineage() {
    let lake = lake().await;
    create(
        &lake,
        "packed",
        "PARTITIONED BY (k)",
        ", 'format-version'='3', 'write.delete.mode'='merge-on-read', \
         'write.update.mode'='merge-on-read'",
    )
    .await;
    let t = "ice.ns.packed";
    for b in 0..4 {
        ok(
            &lake.ctx,
            &format!(
                "INSERT INTO {t} SELECT value, CAST(value % 2 AS INT), 's', value * 1.0 \
                 FROM generate_series({}, {})",
                b * 10,
                b * 10 + 9
            ),
        )
        .await;
    }
    ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id % 7 = 0")).await;
    ok(
        &lake.ctx,
        &format!("UPDATE {t} SET s = 'u' WHERE id % 5 = 1"),
    )
    .await;
    let before = lineage_of(&lake, "packed").await;
    assert_eq!(before.len(), 40 - 6);
    // the rows the UPDATE wrote store their row ids; the others inherit
    assert!(before.values().any(|r| r.stored_row_id.is_some()));
    assert!(before.values().any(|r| r.stored_row_id.is_none()));
    let (seq_before, _) = sequence_and_next_row_id(&lake, "packed").await;
    let rows_before = ok(&lake.ctx, &format!("SELECT * FROM {t} ORDER BY id")).await;
    let r = ok(
        &lake.ctx,
        "CALL ice.system.rewrite_data_files(table => 'ns.packed', \
         options => map('rewrite-all', 'true'))",
    )
    .await;
    let rewritten: i64 = r
        .lines()
        .nth(3)
        .and_then(|l| l.split('|').nth(1))
        .and_then(|v| v.trim().parse().ok())
        .expect("rewritten_data_files_count");
    assert!(rewritten > 1, "{r}");
    let (seq_after, _) = sequence_and_next_row_id(&lake, "packed").await;
    assert_eq!(seq_after, seq_before + 1, "one replace snapshot");
    let after = lineage_of(&lake, "packed").await;
    assert_eq!(values(&after), values(&before), "lineage kept");
    assert!(
        after
            .values()
            .all(|r| r.stored_row_id == Some(r.row_id) && r.stored_seq == Some(r.seq)),
        "the new files store both values of every row"
    );
    let deletes = ok(
        &lake.ctx,
        "SELECT count(*) AS n FROM ice.ns.\"packed$files\" WHERE content = 1",
    )
    .await;
    assert!(deletes.contains("| 0 "), "{deletes}");
    assert_eq!(
        ok(&lake.ctx, &format!("SELECT * FROM {t} ORDER BY id")).await,
        rows_before
    );
    other_engines_agree(&lake, "packed").await;
}

/// A v2 table upgraded to v3 (spec: "Row Lineage for Upgraded Tables", "First Row ID
/// Assignment"): its rows have no `_row_id` until the first v3 commit, which gives every
/// data manifest without a `first_row_id` a range — the ones from before the upgrade
/// too, a copy-on-write `DELETE`'s deleted entry taking none — so every live row gets a
/// unique id and `next-row-id` counts them all; later commits keep those ids. DuckDB
/// reads the same lineage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_to_v3_assigns_row_ids_to_earlier_rows() {
    let lake = lake().await;
    create(&lake, "up", "PARTITIONED BY (k)", "").await;
    let t = "ice.ns.up";
    for values in [
        "(1, 1, 'a', 1.0), (2, 1, 'b', 2.0), (3, 2, 'c', 3.0)",
        "(4, 1, 'd', 4.0), (5, 3, 'e', 5.0)",
    ] {
        ok(&lake.ctx, &format!("INSERT INTO {t} VALUES {values}")).await;
    }
    // copy-on-write: the file of ids 1 and 2 is replaced (a deleted entry, no id)
    ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id = 2")).await;
    ok(
        &lake.ctx,
        &format!("ALTER TABLE {t} SET TBLPROPERTIES ('format-version'='3')"),
    )
    .await;
    let without_ids = ok(
        &lake.ctx,
        &format!("SELECT count(*) AS n FROM {t} WHERE _row_id IS NULL"),
    )
    .await;
    assert!(without_ids.contains("| 4 "), "{without_ids}");

    ok(
        &lake.ctx,
        &format!("INSERT INTO {t} VALUES (6, 2, 'f', 6.0)"),
    )
    .await;
    let first = lineage_of(&lake, "up").await;
    assert_eq!(first.keys().copied().collect::<Vec<_>>(), [1, 3, 4, 5, 6]);
    let (_, next) = sequence_and_next_row_id(&lake, "up").await;
    assert_eq!(
        next, 5,
        "every live row took an id in the first v3 snapshot"
    );
    let ids: std::collections::BTreeSet<i64> = first.values().map(|r| r.row_id).collect();
    assert_eq!(ids, (0..5).collect(), "{first:?}");
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.up"))
        .await
        .expect("load");
    let snapshot = table.metadata().current_snapshot().expect("snapshot");
    assert_eq!(
        (snapshot.first_row_id, snapshot.added_rows),
        (Some(0), Some(5))
    );

    // the next commit keeps them: every manifest has its range now
    ok(
        &lake.ctx,
        &format!("INSERT INTO {t} VALUES (7, 3, 'g', 7.0)"),
    )
    .await;
    let second = lineage_of(&lake, "up").await;
    let mut want = values(&first);
    let (seq, next) = sequence_and_next_row_id(&lake, "up").await;
    want.insert(7, (5, seq));
    assert_eq!(values(&second), want);
    assert_eq!(next, 6);

    if crate::interop::python().is_some() {
        let location = lake
            .catalog
            .load_table(&TableIdent::parse("ns.up"))
            .await
            .expect("load")
            .metadata_location()
            .to_string();
        let duck: Vec<(i64, i64, i64)> = crate::interop::duckdb_lineage(&location)
            .iter()
            .map(|r| {
                let n = |i: usize| r[i].as_i64().unwrap_or_else(|| panic!("DuckDB: {r}"));
                (n(0), n(1), n(2))
            })
            .collect();
        let ours: Vec<(i64, i64, i64)> = want.iter().map(|(id, (r, s))| (*id, *r, *s)).collect();
        assert_eq!(duck, ours, "DuckDB's lineage");
    }
    other_engines_agree(&lake, "up").await;
}

/// A format-version 3 table may not have a top-level column named as a row lineage field
/// (`_row_id`, `_last_updated_sequence_number`): its rewritten files would hold two
/// fields of that name, which PyIceberg refuses to read. `CREATE TABLE`, CTAS, `ADD
/// COLUMN`, `RENAME COLUMN` and the upgrade to v3 refuse it, naming the column; a nested
/// field of that name and a v2 table's column are fine. A v3 table that has one anyway
/// (written by another engine) takes reads and appends, and its row-level changes and
/// compaction are refused rather than writing such files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v3_columns_may_not_take_row_lineage_names() {
    let lake = lake().await;
    let v3 = "TBLPROPERTIES ('format-version'='3')";
    ok(&lake.ctx, &format!("CREATE TABLE ice.ns.ok3 (id INT) {v3}")).await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.ok2 (id INT, _row_id BIGINT) TBLPROPERTIES ('format-version'='2')",
    )
    .await;
    ok(
        &lake.ctx,
        &format!("CREATE TABLE ice.ns.nested (id INT, st STRUCT<_row_id: BIGINT>) {v3}"),
    )
    .await;
    let rule = "has the name of a row lineage field of format version 3";
    for (statement, column) in [
        (
            format!("CREATE TABLE ice.ns.bad (id INT, _row_id BIGINT) {v3}"),
            "_row_id",
        ),
        (
            format!("CREATE TABLE ice.ns.bad {v3} AS SELECT 1 AS _last_updated_sequence_number"),
            "_last_updated_sequence_number",
        ),
        (
            "ALTER TABLE ice.ns.ok3 ADD COLUMN _row_id BIGINT".to_string(),
            "_row_id",
        ),
        (
            "ALTER TABLE ice.ns.ok3 RENAME COLUMN id TO _last_updated_sequence_number".to_string(),
            "_last_updated_sequence_number",
        ),
        (
            "ALTER TABLE ice.ns.ok2 SET TBLPROPERTIES ('format-version'='3')".to_string(),
            "_row_id",
        ),
    ] {
        let e = run(&lake.ctx, &statement).await.expect_err(&statement);
        assert!(
            e.contains(&format!("column '{column}'")) && e.contains(rule),
            "{statement}: {e}"
        );
    }
    for (name, version, columns) in [
        ("ok3", 3, "id"),
        ("ok2", 2, "id,_row_id"),
        ("nested", 3, "id,st"),
    ] {
        let table = lake
            .catalog
            .load_table(&TableIdent::parse(&format!("ns.{name}")))
            .await
            .expect("load");
        let m = table.metadata();
        assert_eq!(m.format_version as i32, version, "{name}");
        let names: Vec<&str> = m
            .current_schema()
            .columns()
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(names.join(","), columns, "{name}");
    }
    assert!(!lake
        .catalog
        .table_exists(&TableIdent::parse("ns.bad"))
        .await
        .expect("exists"));
    // renamed first, the table upgrades
    ok(
        &lake.ctx,
        "ALTER TABLE ice.ns.ok2 RENAME COLUMN _row_id TO r",
    )
    .await;
    ok(
        &lake.ctx,
        "ALTER TABLE ice.ns.ok2 SET TBLPROPERTIES ('format-version'='3')",
    )
    .await;

    // a v3 table given such a column by another engine: its metadata edited in place
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.other (id INT, zzrid BIGINT) TBLPROPERTIES \
         ('format-version'='3', 'write.delete.mode'='merge-on-read')",
    )
    .await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.other VALUES (1, 100), (2, 200)",
    )
    .await;
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.other"))
        .await
        .expect("load");
    let path = table.metadata_location().trim_start_matches("file://");
    let json = std::fs::read_to_string(path).expect("metadata");
    std::fs::write(path, json.replace("\"zzrid\"", "\"_row_id\"")).expect("edit");
    ok(&lake.ctx, "INSERT INTO ice.ns.other VALUES (3, 300)").await;
    let rows = ok(&lake.ctx, "SELECT * FROM ice.ns.other ORDER BY id").await;
    assert_eq!(
        rows,
        "+----+---------+\n| id | _row_id |\n+----+---------+\n| 1  | 100     |\n\
         | 2  | 200     |\n| 3  | 300     |\n+----+---------+"
    );
    for (statement, verb) in [
        ("UPDATE ice.ns.other SET id = 10 WHERE id = 1", "UPDATE"),
        ("DELETE FROM ice.ns.other WHERE id = 1", "DELETE"),
        (
            "MERGE INTO ice.ns.other t USING (SELECT 1 AS id) s ON t.id = s.id \
             WHEN MATCHED THEN DELETE",
            "MERGE",
        ),
    ] {
        let e = run(&lake.ctx, statement).await.expect_err(statement);
        assert!(
            e.contains(&format!("{verb} on 'ns.other': column '_row_id'")) && e.contains(rule),
            "{statement}: {e}"
        );
    }
    let e = run(
        &lake.ctx,
        "CALL ice.system.rewrite_data_files(table => 'ns.other', \
         options => map('rewrite-all', 'true'))",
    )
    .await
    .expect_err("compaction");
    assert!(e.contains("column '_row_id'") && e.contains(rule), "{e}");
    let rows_after = ok(&lake.ctx, "SELECT * FROM ice.ns.other ORDER BY id").await;
    assert_eq!(rows_after, rows);
}

/// A write planned on a v2 table that another commit upgrades to v3 before it commits:
/// appends and copy-on-write changes commit on the v3 table; a merge-on-read `DELETE`,
/// `UPDATE` or `MERGE` (v2 position delete files, which v3 does not take) fails saying
/// the table was upgraded to v3 by another commit while it ran, not blaming a
/// `format-version` its user never set; nothing of it commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_racing_an_upgrade_to_v3_name_the_upgrade() {
    use crate::dml::{execute_planned, planned};
    use icefloe::spec::FormatVersion;
    let lake = lake().await;
    let cases = [
        (
            "copy-on-write",
            "INSERT INTO {t} VALUES (3, 1, 'c', 1.0)",
            None,
        ),
        ("copy-on-write", "DELETE FROM {t} WHERE id = 1", None),
        ("copy-on-write", "UPDATE {t} SET s = 'x' WHERE id = 2", None),
        (
            "merge-on-read",
            "INSERT INTO {t} VALUES (3, 1, 'c', 1.0)",
            None,
        ),
        (
            "merge-on-read",
            "DELETE FROM {t} WHERE id = 1",
            Some("DELETE"),
        ),
        (
            "merge-on-read",
            "UPDATE {t} SET s = 'x' WHERE id = 2",
            Some("UPDATE"),
        ),
        (
            "merge-on-read",
            "MERGE INTO {t} USING (SELECT 2 AS id) src ON {t}.id = src.id \
             WHEN MATCHED THEN UPDATE SET s = 'm'",
            Some("MERGE"),
        ),
    ];
    for (i, (mode, statement, refused)) in cases.into_iter().enumerate() {
        let name = format!("r{i}");
        let t = format!("ice.ns.{name}");
        create(
            &lake,
            &name,
            "",
            &format!(
                ", 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}', \
                 'write.merge.mode'='{mode}'"
            ),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (1, 1, 'a', 1.0), (2, 2, 'b', 2.0)"),
        )
        .await;
        let statement = statement.replace("{t}", &t);
        let plan = planned(&lake.ctx, &statement).await;
        ok(
            &lake.ctx,
            &format!("ALTER TABLE {t} SET TBLPROPERTIES ('format-version'='3')"),
        )
        .await;
        let upgraded = lake
            .catalog
            .load_table(&TableIdent::parse(&format!("ns.{name}")))
            .await
            .expect("table")
            .metadata_location()
            .to_string();
        let result = execute_planned(&lake.ctx, plan).await;
        let now = lake
            .catalog
            .load_table(&TableIdent::parse(&format!("ns.{name}")))
            .await
            .expect("table");
        assert_eq!(now.metadata().format_version, FormatVersion::V3);
        match refused {
            None => {
                result.unwrap_or_else(|e| panic!("{statement}: {e}"));
            }
            Some(verb) => {
                let e = result.expect_err(&statement).to_string();
                assert!(
                    e.contains(&format!(
                        "{verb} on 'ns.{name}': the table was upgraded from format version 2 \
                         to 3 by another commit while this row delta ran, and its position \
                         delete file '"
                    )),
                    "{statement}: {e}"
                );
                assert!(!e.contains("to a format-version 3 table"), "{e}");
                assert_eq!(now.metadata_location(), upgraded, "{statement}");
                assert_eq!(
                    ok(&lake.ctx, &format!("SELECT id, s FROM {t} ORDER BY id")).await,
                    "+----+---+\n| id | s |\n+----+---+\n| 1  | a |\n| 2  | b |\n+----+---+",
                    "{statement}"
                );
            }
        }
    }
}

/// `id` → `_row_id` of every row of `t`.
async fn row_ids(ctx: &datafusion::prelude::SessionContext, t: &str) -> BTreeMap<i64, i64> {
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::datatypes::Int64Type;
    let batches = run(ctx, &format!("SELECT id, _row_id FROM {t}"))
        .await
        .expect("row ids");
    let mut out = BTreeMap::new();
    for b in &batches {
        let (id, row_id) = (
            b.column(0).as_primitive::<Int64Type>(),
            b.column(1).as_primitive::<Int64Type>(),
        );
        for r in 0..b.num_rows() {
            out.insert(id.value(r), row_id.value(r));
        }
    }
    out
}

/// A copy of Spark's v3 table (deletion vectors, row lineage) registered in a SQL
/// catalog, as a user tries the corpus: its metadata still names the location Spark
/// wrote it at, which reads map to the copy (`allow_moved_paths`), and every write goes
/// into the copy too. The catalog row must then name the new metadata file where it
/// was written. Before, it named it under the old location, where nothing exists, so
/// after the first `DELETE` the table could not be loaded again ("file … does not
/// exist"). Now a `DELETE` (a deletion vector merged with Spark's), an `UPDATE` and an
/// `INSERT` each commit, a fresh catalog on the same database loads the table, and the
/// rows and their `_row_id`s are the expected ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copied_v3_table_takes_writes_through_a_sql_catalog() {
    let lake = lake().await;
    let copy = tempfile::tempdir().expect("tempdir");
    let src = crate::catalog::corpus_dir().join("spark_v3_deletion_vectors");
    crate::fixtures::copy_dir(&src, copy.path());
    lake.catalog
        .register_table(
            &TableIdent::parse("ns.dv"),
            &crate::catalog::metadata_file(copy.path()),
        )
        .await
        .expect("register");
    let t = "ice.ns.dv";
    let before = row_ids(&lake.ctx, t).await;
    assert_eq!(before.len(), 50, "Spark's rows");
    let mut ids = before.keys().copied();
    let (gone, changed) = (ids.next().expect("a row"), ids.next().expect("a row"));

    ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id = {gone}")).await;
    ok(
        &lake.ctx,
        &format!("UPDATE {t} SET v = v + 1 WHERE id = {changed}"),
    )
    .await;
    let location = lake
        .catalog
        .load_table(&TableIdent::parse("ns.dv"))
        .await
        .expect("load after the commits")
        .metadata_location()
        .to_string();
    let path = std::path::PathBuf::from(location.strip_prefix("file://").expect("a file URL"));
    assert!(
        path.starts_with(copy.path()) && path.is_file(),
        "the catalog names {location}, not a file in the copy {}",
        copy.path().display()
    );

    let mut want = before.clone();
    want.remove(&gone);
    assert_eq!(row_ids(&lake.ctx, t).await, want, "rows and row ids kept");
    ok(
        &lake.ctx,
        &format!("INSERT INTO {t} (id, grp, v) VALUES (1000, 'z', 1)"),
    )
    .await;
    // another session, through a catalog opened afresh on the same database
    use icefloe::catalog::Catalog as _;
    let fresh = icefloe::catalog::SqlCatalog::open_or_create("default", &lake.db).expect("catalog");
    let table = fresh
        .load_table(&TableIdent::parse("ns.dv"))
        .await
        .expect("load in a fresh catalog");
    assert_eq!(
        table
            .metadata()
            .current_snapshot()
            .expect("snapshot")
            .operation(),
        Some("append")
    );
    let n = ok(&lake.ctx, &format!("SELECT count(*) AS n FROM {t}")).await;
    assert!(n.contains("| 50 "), "{n}");
    let v = ok(
        &lake.ctx,
        &format!("SELECT count(*) AS n FROM {t} WHERE id = {changed}"),
    )
    .await;
    assert!(v.contains("| 1 "), "{v}");
}
