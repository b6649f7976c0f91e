//! Tables where one data file is referenced by more than one live manifest entry —
//! `CALL system.add_files(…, check_duplicate_files => false)` of files already in the
//! table, as Spark's procedure (or a Java `AppendFiles` of the same `DataFile` twice)
//! makes them. A scan plans one task per entry (Java's `FileScanTask`s), so the file's
//! rows read once per entry; every statement and procedure keeps that count: compaction
//! reads every entry and removes the file by location (every entry at once, Java's
//! `ManifestFilterManager`), DML counts each changed row of each entry, a position delete
//! of (file, position) applies to every entry it is not older than (spec: "Scan
//! Planning"), and what cannot be written so is refused, never a lost or revived row.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use datafusion::prelude::SessionContext;
use icefloe::catalog::TableIdent;
use icefloe::scan::TableScan;
use icefloe::transaction::{RewriteFiles, Transaction};
use icefloe::ErrorKind;

use crate::add_files::source_files;
use crate::dml::{count, create, lake, ok, other_engines_agree, run, Lake};
use crate::maintenance::call;

/// Rows of `ns.<name>` in a fixed order (duplicates kept).
async fn rows(lake: &Lake, name: &str) -> String {
    ok(
        &lake.ctx,
        &format!("SELECT id, k, s, d FROM ice.ns.{name} ORDER BY id, s"),
    )
    .await
}

/// `CALL add_files` of `src`'s files into `ns.<name>`; `again`: with
/// `check_duplicate_files => false`.
async fn add(lake: &Lake, name: &str, src: &Path, again: bool) {
    let q = format!(
        "CALL ice.system.add_files(table => 'ns.{name}', source_table => '`parquet`.`{}`'{})",
        src.display(),
        if again {
            ", check_duplicate_files => false"
        } else {
            ""
        }
    );
    call(lake, &q).await;
}

/// The rows of [`source_files`] as three plain Parquet files `dir/k<k>.parquet`, `k` a
/// column, for unpartitioned tables.
async fn plain_files(dir: &Path) {
    let plain = SessionContext::new();
    for (k, values) in [
        (0, "(1, 'a', 1.5), (2, NULL, 2.5)"),
        (1, "(3, 'c', NULL), (4, 'd', 4.5)"),
        (2, "(5, 'e', 5.5)"),
    ] {
        let copy = format!(
            "COPY (SELECT CAST(column1 AS BIGINT) AS id, CAST({k} AS INT) AS k, \
             column2 AS s, CAST(column3 AS DOUBLE) AS d FROM (VALUES {values})) \
             TO '{}/k{k}.parquet' STORED AS PARQUET",
            dir.display()
        );
        plain
            .sql(&copy)
            .await
            .expect("copy")
            .collect()
            .await
            .expect("copy");
    }
}

/// The five rows in three files under `dir`: Hive partition directories when
/// `partitioned` (see [`source_files`]), else [`plain_files`].
async fn source(dir: &Path, partitioned: bool) {
    if partitioned {
        source_files(dir).await;
    } else {
        plain_files(dir).await;
    }
}

/// `ns.<name>` (see [`create`]) with the five rows of [`source`] added twice: ten
/// rows, three data files each referenced by two live entries. Returns the source
/// directory.
async fn added_twice(lake: &Lake, name: &str, partitioning: &str, properties: &str) -> PathBuf {
    let src = lake.dir.path().join(format!("source_{name}"));
    source(&src, !partitioning.is_empty()).await;
    create(lake, name, partitioning, properties).await;
    add(lake, name, &src, false).await;
    add(lake, name, &src, true).await;
    let q = format!("SELECT count(*) FROM ice.ns.{name}");
    assert_eq!(count(&lake.ctx, &q).await, 10, "{name}");
    src
}

/// The rows of [`source_files`], each `times` times, as [`rows`] prints them.
fn expected(times: usize) -> String {
    let rows = [
        "| 1  | 0 | a | 1.5 |",
        "| 2  | 0 |   | 2.5 |",
        "| 3  | 1 | c |     |",
        "| 4  | 1 | d | 4.5 |",
        "| 5  | 2 | e | 5.5 |",
    ];
    let mut out = "+----+---+---+-----+\n| id | k | s | d   |\n+----+---+---+-----+\n".to_string();
    for r in rows {
        for _ in 0..times {
            out.push_str(r);
            out.push('\n');
        }
    }
    out.push_str("+----+---+---+-----+");
    out
}

/// A tester's D3: `rewrite_data_files` planned one file per location, so the second
/// entry of a file looked fully deleted and its rows were dropped (4 rows became 2; the
/// `replace` summary said deleted-records 4, added-records 2). Java reads every task and
/// removes the file by location: the rows stay, ten before and after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_data_files_keeps_the_rows_of_every_entry() {
    let lake = lake().await;
    for (name, partitioning, written) in [("plain", "", 1), ("by_k", "PARTITIONED BY (k)", 3)] {
        added_twice(&lake, name, partitioning, "").await;
        assert_eq!(rows(&lake, name).await, expected(2), "{name}");
        other_engines_agree(&lake, name).await;

        // each location is two tasks (Java counts them against min-input-files: one file
        // added twice alone is a group of two), read twice; Spark counts a rewritten
        // file once (`DataFileSet`) and its bytes per task
        let r = call(
            &lake,
            &format!(
                "CALL ice.system.rewrite_data_files(table => 'ns.{name}', \
                 options => map('min-input-files', '2'))"
            ),
        )
        .await;
        assert_eq!(
            (r["rewritten_data_files_count"], r["added_data_files_count"]),
            (3, written),
            "{name}: {r:?}"
        );
        let sizes = count(
            &lake.ctx,
            &format!(
                "SELECT sum(data_file.file_size_in_bytes) FROM ice.ns.\"{name}$all_entries\" \
                 WHERE status = 2"
            ),
        )
        .await;
        assert_eq!(r["rewritten_bytes_count"], sizes, "{name}");
        assert_eq!(rows(&lake, name).await, expected(2), "{name}");
        // a replace changes no row: its summary says so, and only the new files are live
        let summary = ok(
            &lake.ctx,
            &format!("SELECT summary FROM ice.ns.\"{name}$snapshots\" WHERE operation = 'replace'"),
        )
        .await;
        assert!(
            summary.contains("added-records: 10") && summary.contains("deleted-records: 10"),
            "{name}: {summary}"
        );
        assert!(
            summary.contains("deleted-data-files: 6"),
            "{name}: {summary}"
        );
        let live = format!("SELECT count(*) FROM ice.ns.\"{name}$files\"");
        assert_eq!(count(&lake.ctx, &live).await, written, "{name}");
        other_engines_agree(&lake, name).await;
    }
}

/// A rewrite through the API that read one entry of a file referenced twice would drop
/// the other's rows when the file is removed by location: the commit refuses it, naming
/// the file, and the table is unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewrite_reading_one_of_two_entries_is_refused() {
    let lake = lake().await;
    added_twice(&lake, "t", "", "").await;
    let ident = TableIdent::parse("ns.t");
    let table = lake.catalog.load_table(&ident).await.expect("load");
    let plan = TableScan::new(table.clone(), table.metadata().current_snapshot().cloned())
        .plan_files()
        .await
        .expect("plan");
    assert_eq!(plan.tasks.len(), 6);
    let task = &plan.tasks[0];
    let old = task.data_file().clone();
    let bytes = table.file_io().read(&old.file_path).await.expect("read");
    let mut new = old.clone();
    new.file_path = old.file_path.replace(".parquet", "-copy.parquet");
    table
        .file_io()
        .write(&new.file_path, Bytes::from(bytes.to_vec()))
        .await
        .expect("write");
    let rewrite = RewriteFiles::new(table.metadata().current_snapshot_id)
        .delete_data_file(task.entry.spec_id, old.clone())
        .expect("data file")
        .add_data_files(table.metadata().default_spec_id, vec![new])
        .expect("data file");
    let location = table.metadata_location().to_string();
    let err = Transaction::new(Arc::clone(&lake.catalog), ident.clone(), table)
        .add_action(rewrite)
        .commit()
        .await
        .expect_err("one of two entries read");
    assert_eq!(err.kind(), ErrorKind::ValidationFailed, "{err}");
    let text = err.to_string();
    assert!(
        text.contains(&old.file_path)
            && text.contains("referenced by 2 live manifest entries")
            && text.contains("the rewrite read 1"),
        "{text}"
    );
    let now = lake.catalog.load_table(&ident).await.expect("load");
    assert_eq!(now.metadata_location(), location);
    assert_eq!(rows(&lake, "t").await, expected(2));
}

/// A tester's D9: the count a DELETE or UPDATE returns is the number of rows its scan
/// changed — each entry's copy of a row counts (copy-on-write and merge-on-read, position
/// deletes and deletion vectors), as `SELECT count(*)` before and after shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_counts_every_changed_row_of_every_entry() {
    let lake = lake().await;
    let mor = ", 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read'";
    let v3 = format!("{mor}, 'format-version'='3'");
    for (name, properties) in [("cow", ""), ("mor", mor), ("dv", v3.as_str())] {
        let src = added_twice(&lake, name, "", properties).await;
        let t = format!("ice.ns.{name}");
        let changed = |q: &str| format!("{q} -- {name}");
        let q = format!("DELETE FROM {t} WHERE id = 1");
        assert_eq!(count(&lake.ctx, &q).await, 2, "{}", changed(&q));
        let q = format!("UPDATE {t} SET s = 'x' WHERE id = 2");
        assert_eq!(count(&lake.ctx, &q).await, 2, "{}", changed(&q));
        assert_eq!(
            ok(
                &lake.ctx,
                &format!("SELECT id, s FROM {t} WHERE k = 0 ORDER BY id")
            )
            .await,
            "+----+---+\n| id | s |\n+----+---+\n| 2  | x |\n| 2  | x |\n+----+---+",
            "{name}"
        );
        assert_eq!(
            count(&lake.ctx, &format!("SELECT count(*) FROM {t}")).await,
            8
        );
        // the k = 1 and k = 2 files a third time (k = 0's was rewritten or has deletes
        // only its two entries' copies share): three copies of id 3
        add(&lake, name, &src.join("k1.parquet"), true).await;
        let q = format!("DELETE FROM {t} WHERE id = 3");
        assert_eq!(count(&lake.ctx, &q).await, 3, "{}", changed(&q));
        let q = format!("UPDATE {t} SET d = -d WHERE id = 4");
        assert_eq!(count(&lake.ctx, &q).await, 3, "{}", changed(&q));
        assert_eq!(
            ok(
                &lake.ctx,
                &format!("SELECT id, d FROM {t} WHERE id > 2 ORDER BY id")
            )
            .await,
            "+----+------+\n| id | d    |\n+----+------+\n| 4  | -4.5 |\n| 4  | -4.5 |\n\
             | 4  | -4.5 |\n| 5  | 5.5  |\n| 5  | 5.5  |\n+----+------+",
            "{name}"
        );
        if name != "dv" {
            other_engines_agree(&lake, name).await;
        }
    }
}

/// A position delete applies to every entry of its data file that is not newer than it
/// (spec: "Scan Planning"). A file added again after a row of it was deleted has one
/// entry without the row, one with: a v2 position delete of another row still suits
/// both, but after an upgrade to v3 one deletion vector cannot hold both entries'
/// deleted rows — refused, with the table unchanged, and copy-on-write does it.
/// Compacting the old position delete would give it the new sequence number and delete
/// the row from the newer entry too: refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_of_a_file_added_again_after_a_delete() {
    let lake = lake().await;
    let mor = ", 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read'";
    for name in ["pos", "dv"] {
        let src = lake.dir.path().join(format!("source_{name}"));
        plain_files(&src).await;
        create(&lake, name, "", mor).await;
        let t = format!("ice.ns.{name}");
        add(&lake, name, &src, false).await;
        let q = format!("DELETE FROM {t} WHERE id = 1");
        assert_eq!(count(&lake.ctx, &q).await, 1);
        add(&lake, name, &src, true).await;
        if name == "dv" {
            // (on v3 a deletion vector older than an entry of its file is refused by
            // readers, Java's `DeleteFileIndex` too: the v2 delete came first)
            ok(
                &lake.ctx,
                &format!("ALTER TABLE {t} SET TBLPROPERTIES ('format-version'='3')"),
            )
            .await;
        }
        // the newer entries keep id 1
        assert_eq!(
            ok(
                &lake.ctx,
                &format!("SELECT id FROM {t} WHERE k = 0 ORDER BY id")
            )
            .await,
            "+----+\n| id |\n+----+\n| 1  |\n| 2  |\n| 2  |\n+----+",
            "{name}"
        );
        let before = rows(&lake, name).await;
        let q = format!("DELETE FROM {t} WHERE id = 2");
        if name == "dv" {
            let err = run(&lake.ctx, &q)
                .await
                .expect_err("one vector, two entries");
            assert!(
                err.contains("a deletion vector for data file")
                    && err.contains("k0.parquet")
                    && err.contains("different rows deleted"),
                "{err}"
            );
            assert_eq!(rows(&lake, name).await, before);
            ok(
                &lake.ctx,
                &format!("ALTER TABLE {t} SET TBLPROPERTIES ('write.delete.mode'='copy-on-write')"),
            )
            .await;
        }
        assert_eq!(count(&lake.ctx, &q).await, 2, "{name}");
        assert_eq!(
            ok(
                &lake.ctx,
                &format!("SELECT id FROM {t} WHERE k = 0 ORDER BY id")
            )
            .await,
            "+----+\n| id |\n+----+\n| 1  |\n+----+",
            "{name}"
        );
        assert_eq!(
            count(&lake.ctx, &format!("SELECT count(*) FROM {t}")).await,
            7
        );
    }
    // `pos` has the first DELETE's position delete (applies to the older entry of the
    // k = 0 file only) and the second's (both): rewriting the first would delete id 1
    // from the newer entry
    let before = rows(&lake, "pos").await;
    let err = run(
        &lake.ctx,
        "CALL ice.system.rewrite_position_delete_files(table => 'ns.pos', \
         options => map('rewrite-all', 'true'))",
    )
    .await
    .expect_err("a delete of only the older entry");
    assert!(
        err.contains("apply to only some of the live manifest entries")
            && err.contains("k0.parquet"),
        "{err}"
    );
    assert_eq!(rows(&lake, "pos").await, before);
    // (no other engine here: PyIceberg 0.12 and DuckDB apply the first DELETE's
    // position delete, data sequence number 2, to the newer entry, 3, too and lose its
    // id 1, against the spec's rule that Java's `DeleteFileIndex` follows)
    let seqs = ok(
        &lake.ctx,
        "SELECT data_file.content AS content, sequence_number FROM ice.ns.\"pos$entries\" \
         WHERE data_file.file_path LIKE '%k0.parquet' OR data_file.content = 1 \
         ORDER BY sequence_number",
    )
    .await;
    assert_eq!(
        seqs,
        "+---------+-----------------+\n| content | sequence_number |\n\
         +---------+-----------------+\n| 0       | 1               |\n| 1       | 2               |\n\
         | 0       | 3               |\n| 1       | 4               |\n+---------+-----------------+"
    );
}

/// Position deletes written after every entry of a file compact as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_position_delete_files_of_a_file_added_twice() {
    let lake = lake().await;
    let mor = ", 'write.delete.mode'='merge-on-read', 'write.delete.granularity'='file'";
    added_twice(&lake, "t", "", mor).await;
    for id in [1, 4] {
        let q = format!("DELETE FROM ice.ns.t WHERE id = {id}");
        assert_eq!(count(&lake.ctx, &q).await, 2);
    }
    let before = rows(&lake, "t").await;
    let r = call(
        &lake,
        "CALL ice.system.rewrite_position_delete_files(table => 'ns.t', \
         options => map('rewrite-all', 'true'))",
    )
    .await;
    assert_eq!(r["rewritten_delete_files_count"], 2, "{r:?}");
    assert_eq!(rows(&lake, "t").await, before);
    assert_eq!(count(&lake.ctx, "SELECT count(*) FROM ice.ns.t").await, 6);
    other_engines_agree(&lake, "t").await;
}

/// `$files` and `$entries` list each live entry (Java's metadata tables read manifest
/// entries), `count(*)` answered from metadata counts each; expiring the snapshot of the
/// first add keeps the file the second still references, and `remove_orphan_files`
/// leaves it; after a compaction and expiry it is no longer referenced and goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_and_file_cleanup_of_a_file_added_twice() {
    let lake = lake().await;
    // the source files inside the table's location, old enough to be orphans
    let table_dir = lake.warehouse.join("ns").join("t");
    let src = table_dir.join("data").join("imported");
    plain_files(&src).await;
    create(&lake, "t", "", "").await;
    add(&lake, "t", &src, false).await;
    add(&lake, "t", &src, true).await;
    let mut imported = vec![];
    for f in std::fs::read_dir(&src).expect("dir") {
        let path = f.expect("entry").path();
        crate::fixtures::set_mtime(&path, crate::fixtures::days_ago(4));
        imported.push(path);
    }
    assert_eq!(imported.len(), 3);
    for (q, n) in [
        ("SELECT count(*) FROM ice.ns.\"t$files\"", 6),
        (
            "SELECT count(DISTINCT file_path) FROM ice.ns.\"t$files\"",
            3,
        ),
        (
            "SELECT count(*) FROM ice.ns.\"t$entries\" WHERE status = 1",
            6,
        ),
        ("SELECT sum(record_count) FROM ice.ns.\"t$files\"", 10),
        ("SELECT count(*) FROM ice.ns.t", 10),
    ] {
        assert_eq!(count(&lake.ctx, q).await, n, "{q}");
    }
    let r = call(
        &lake,
        "CALL ice.system.expire_snapshots(table => 'ns.t', \
         older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)",
    )
    .await;
    assert_eq!(r["deleted_data_files_count"], 0, "{r:?}");
    let orphans = run(
        &lake.ctx,
        "CALL ice.system.remove_orphan_files(table => 'ns.t')",
    )
    .await
    .expect("orphans");
    assert_eq!(orphans.iter().map(|b| b.num_rows()).sum::<usize>(), 0);
    assert!(imported.iter().all(|p| p.exists()));
    assert_eq!(rows(&lake, "t").await, expected(2));

    call(
        &lake,
        "CALL ice.system.rewrite_data_files(table => 'ns.t', \
         options => map('rewrite-all', 'true'))",
    )
    .await;
    let r = call(
        &lake,
        "CALL ice.system.expire_snapshots(table => 'ns.t', \
         older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)",
    )
    .await;
    assert_eq!(r["deleted_data_files_count"], 3, "{r:?}");
    assert!(imported.iter().all(|p| !p.exists()));
    assert_eq!(rows(&lake, "t").await, expected(2));
    other_engines_agree(&lake, "t").await;
}

/// On v3, adding a file again after a deletion vector hit it would leave the vector older
/// than the new entry, which readers refuse (the table would not read): `add_files` with
/// `check_duplicate_files => false` refuses it naming the file, and commits nothing. A file
/// without a vector is still added again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adding_a_file_a_deletion_vector_applies_to_again_is_refused() {
    let lake = lake().await;
    let src = lake.dir.path().join("source_v3dv");
    plain_files(&src).await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.v3dv (id BIGINT, k INT, s STRING, d DOUBLE) \
         TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')",
    )
    .await;
    add(&lake, "v3dv", &src, false).await;
    assert_eq!(
        count(&lake.ctx, "DELETE FROM ice.ns.v3dv WHERE id = 1").await,
        1
    );
    let snapshots = "SELECT count(*) FROM ice.ns.\"v3dv$snapshots\"";
    let before = (rows(&lake, "v3dv").await, count(&lake.ctx, snapshots).await);
    let q = format!(
        "CALL ice.system.add_files(table => 'ns.v3dv', source_table => '`parquet`.`{}`', \
         check_duplicate_files => false)",
        src.display()
    );
    let err = run(&lake.ctx, &q)
        .await
        .expect_err("a vector applies to k0");
    assert!(
        err.contains("cannot add '") && err.contains("k0.parquet' again: a deletion vector"),
        "{err}"
    );
    assert_eq!(
        (rows(&lake, "v3dv").await, count(&lake.ctx, snapshots).await),
        before
    );
    // a file no vector applies to is added again (one file as the source)
    ok(
        &lake.ctx,
        &format!(
            "CALL ice.system.add_files(table => 'ns.v3dv', source_table => '`parquet`.`{}`', \
             check_duplicate_files => false)",
            src.join("k1.parquet").display()
        ),
    )
    .await;
    assert_eq!(
        count(&lake.ctx, "SELECT count(*) FROM ice.ns.v3dv").await,
        6
    );
    assert_eq!(
        count(&lake.ctx, "SELECT count(*) FROM ice.ns.v3dv WHERE k = 1").await,
        4
    );
}
