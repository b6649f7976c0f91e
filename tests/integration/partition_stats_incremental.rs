//! `compute_partition_stats` computed incrementally from an ancestor's partition
//! statistics file (Java 1.10's `PartitionStatsHandler`): after every kind of commit —
//! appends, several commits between two calls, merge-on-read deletes and updates, a
//! delete of whole files, a partition spec change, compaction, a manifest rewrite,
//! snapshot expiry — the rows equal those of a full compute, the incremental path is taken
//! where it can give them (fewer manifests read) and refused where it cannot, and every
//! file written equals PyIceberg's reading of the manifests (`tests/interop/
//! partition_stats.py`).

use icefloe::catalog::TableIdent;
use icefloe::datafusion::maintenance::{
    partition_stats_fields, partition_stats_rows, StatsComputation,
};
use icefloe::maintenance::compute_partition_stats;

use crate::dml::{lake, ok, Lake};
use crate::partition_stats::{compute, files_agree};

/// The current snapshot's statistics as the procedure computes them equal a full
/// compute's; then the procedure writes them. How they were computed.
async fn step(lake: &Lake, name: &str, label: &str) -> StatsComputation {
    let table = lake
        .catalog
        .load_table(&TableIdent::parse(&format!("ns.{name}")))
        .await
        .expect("load");
    let snapshot = table
        .metadata()
        .current_snapshot()
        .expect("a snapshot")
        .clone();
    let (rows, how) = partition_stats_rows(&table, &snapshot)
        .await
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    let fields = partition_stats_fields(table.metadata());
    let full = compute_partition_stats(&table, &snapshot, &fields)
        .await
        .expect("full compute");
    assert!(!rows.is_empty(), "{label}");
    assert_eq!(rows, full, "{label}: computed {how:?}");
    compute(lake, &format!("'ns.{name}'"))
        .await
        .unwrap_or_else(|| panic!("{label}: a file"));
    how
}

fn incremental(how: &StatsComputation, label: &str) -> usize {
    match how {
        StatsComputation::Incremental { manifests_read, .. } => *manifests_read,
        other => panic!("{label}: computed {other:?}, expected incrementally"),
    }
}

fn full(how: &StatsComputation, label: &str, why: &str) {
    match how {
        StatsComputation::Full { reason: Some(r) } if r.contains(why) => {}
        other => panic!("{label}: computed {other:?}, expected in full ({why})"),
    }
}

async fn incremental_equals_full(version: u8) {
    let lake = lake().await;
    let name = format!("inc_v{version}");
    let t = format!("ice.ns.{name}");
    ok(
        &lake.ctx,
        &format!(
            "CREATE TABLE {t} (id BIGINT, k INT, s STRING) PARTITIONED BY (k) TBLPROPERTIES \
             ('format-version'='{version}', 'write.delete.mode'='merge-on-read', \
             'write.update.mode'='merge-on-read')"
        ),
    )
    .await;
    let insert = |rows: &str| format!("INSERT INTO {t} VALUES {rows}");
    let sql = |q: String| {
        let ctx = lake.ctx.clone();
        async move {
            ok(&ctx, &q).await;
        }
    };
    sql(insert("(1, 0, 'a'), (2, 1, 'b'), (3, 2, 'c'), (4, 0, 'd')")).await;
    let how = step(&lake, &name, "first").await;
    assert_eq!(how, StatsComputation::Full { reason: None });

    sql(insert("(5, 1, 'e'), (6, 2, 'f')")).await;
    assert_eq!(
        incremental(&step(&lake, &name, "append").await, "append"),
        1
    );

    // two commits between calls, one a new partition
    sql(insert("(7, 3, 'g')")).await;
    sql(insert("(8, 4, 'h'), (9, 0, 'i')")).await;
    let read = incremental(&step(&lake, &name, "two appends").await, "two appends");
    assert_eq!(read, 2);

    // merge-on-read: a position delete file (v2) or deletion vector (v3), data manifests kept
    sql(format!("DELETE FROM {t} WHERE id = 1")).await;
    incremental(&step(&lake, &name, "row delete").await, "row delete");
    sql(format!("UPDATE {t} SET s = 'u' WHERE id = 2")).await;
    incremental(&step(&lake, &name, "update").await, "update");

    // a whole partition's files deleted: their manifest is replaced
    sql(format!("DELETE FROM {t} WHERE k = 3")).await;
    full(
        &step(&lake, &name, "partition delete").await,
        "partition delete",
        "replaced",
    );
    sql(insert("(10, 3, 'j')")).await;
    step(&lake, &name, "append after the delete").await;

    // a new spec: the older file has no bucket field (null in its rows)
    sql(format!("ALTER TABLE {t} ADD PARTITION FIELD bucket(4, id)")).await;
    sql(insert("(11, 0, 'k'), (12, 5, 'l')")).await;
    incremental(&step(&lake, &name, "new spec").await, "new spec");

    sql(format!(
        "CALL ice.system.rewrite_data_files(table => 'ns.{name}', \
         options => map('rewrite-all', 'true'))"
    ))
    .await;
    full(
        &step(&lake, &name, "compaction").await,
        "compaction",
        "replaced",
    );
    // the next commit drops the compaction's manifests of deleted entries: the rows they
    // kept (last updates, partitions left empty) are no longer the full compute's
    sql(insert("(13, 1, 'm')")).await;
    full(
        &step(&lake, &name, "append after compaction").await,
        "append after compaction",
        "replaced",
    );
    sql(insert("(17, 2, 'q')")).await;
    incremental(&step(&lake, &name, "second append").await, "second append");

    sql(format!("CALL ice.system.rewrite_manifests('ns.{name}')")).await;
    full(
        &step(&lake, &name, "manifest rewrite").await,
        "manifest rewrite",
        "replaced",
    );

    // every file so far is PyIceberg's reading of the manifests (checked before the
    // expiry: a file keeps the snapshot ids of the last updates as they were when it was
    // written)
    if crate::interop::python().is_some() {
        let ident = format!("ns.{name}");
        let args = [
            lake.db.as_os_str(),
            lake.warehouse.as_os_str(),
            std::ffi::OsStr::new(&ident),
        ];
        let files = files_agree(&name, &args, version, None);
        assert!(files.len() >= 10, "{}", files.len());
    }

    // the rows' last updates expire: a full compute takes the latest snapshot left
    sql(insert("(14, 2, 'n')")).await;
    incremental(
        &step(&lake, &name, "append after the manifest rewrite").await,
        "append after the manifest rewrite",
    );
    sql(format!(
        "CALL ice.system.expire_snapshots(table => 'ns.{name}', \
         older_than => now() + INTERVAL '1' DAY, retain_last => 1)"
    ))
    .await;
    sql(insert("(15, 2, 'o')")).await;
    full(
        &step(&lake, &name, "after expiry").await,
        "after expiry",
        "expired",
    );
    sql(insert("(16, 4, 'p')")).await;
    incremental(&step(&lake, &name, "after the full compute").await, "last");

    // the ancestor's file is gone: a full compute, as Java falls back on a file it
    // cannot read
    let table = lake
        .catalog
        .load_table(&TableIdent::parse(&format!("ns.{name}")))
        .await
        .expect("load");
    for f in &table.metadata().partition_statistics {
        let path = f.statistics_path.trim_start_matches("file://");
        std::fs::remove_file(path).expect("remove the statistics file");
    }
    sql(insert("(18, 0, 'r')")).await;
    full(
        &step(&lake, &name, "file gone").await,
        "file gone",
        "cannot be used",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_stats_incremental_equals_full_compute_v2() {
    incremental_equals_full(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_stats_incremental_equals_full_compute_v3() {
    incremental_equals_full(3).await;
}

/// Snapshots of one millisecond (a writer whose clock ran ahead set the table's
/// `last-updated-ms` in the future, so every later commit takes that time): the latest
/// update of a partition is the later commit (higher sequence number), whichever
/// manifest is read first, so the incremental compute (the ancestor's row first) and
/// the full compute (the newest manifest first) agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_stats_of_snapshots_of_one_millisecond_name_the_later_commit() {
    let lake = lake().await;
    let t = "ice.ns.tie";
    ok(
        &lake.ctx,
        &format!("CREATE TABLE {t} (id BIGINT, k INT) PARTITIONED BY (k)"),
    )
    .await;
    ok(&lake.ctx, &format!("INSERT INTO {t} VALUES (1, 0)")).await;
    // the clock of the last writer ran ten minutes ahead
    let ident = TableIdent::parse("ns.tie");
    let table = lake.catalog.load_table(&ident).await.expect("load");
    let location = table.metadata_location().to_string();
    let path = location.trim_start_matches("file://");
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("metadata")).expect("json");
    let ahead = json["last-updated-ms"].as_i64().expect("last-updated-ms") + 600_000;
    json["last-updated-ms"] = ahead.into();
    std::fs::write(path, serde_json::to_vec(&json).expect("json")).expect("write metadata");
    let ctx = crate::dml::session_over(&lake).await;
    ok(&ctx, &format!("INSERT INTO {t} VALUES (2, 0), (3, 1)")).await;
    step(&lake, "tie", "first").await;
    ok(&ctx, &format!("INSERT INTO {t} VALUES (4, 0)")).await;
    let table = lake.catalog.load_table(&ident).await.expect("load");
    let snapshots: Vec<_> = table.metadata().snapshots.iter().collect();
    let last = snapshots.last().expect("a snapshot");
    assert_eq!(
        last.timestamp_ms, ahead,
        "the commits share one millisecond"
    );
    assert_eq!(snapshots[snapshots.len() - 2].timestamp_ms, ahead);
    incremental(&step(&lake, "tie", "second").await, "second");
    let (rows, _) = partition_stats_rows(&table, last).await.expect("rows");
    assert_eq!(rows[0].last_updated_snapshot_id, Some(last.snapshot_id));
    assert_ne!(rows[1].last_updated_snapshot_id, Some(last.snapshot_id));
    // PyIceberg's reading of the manifests names the later commit too
    if crate::interop::python().is_some() {
        let args = [
            lake.db.as_os_str(),
            lake.warehouse.as_os_str(),
            std::ffi::OsStr::new("ns.tie"),
        ];
        assert_eq!(files_agree("tie", &args, 2, None).len(), 2);
    }
}

/// Every snapshot's rows: as computed (incrementally where it can) equal to a full compute.
async fn every_snapshot_agrees(lake: &Lake, name: &str, label: &str) {
    let table = lake
        .catalog
        .load_table(&TableIdent::parse(&format!("ns.{name}")))
        .await
        .expect("load");
    let fields = partition_stats_fields(table.metadata());
    for s in &table.metadata().snapshots {
        let (rows, how) = partition_stats_rows(&table, s)
            .await
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        let full = compute_partition_stats(&table, s, &fields)
            .await
            .expect("full");
        assert_eq!(
            rows, full,
            "{label}: snapshot {} computed {how:?}",
            s.snapshot_id
        );
    }
}

/// Statistics files of a branch head and of main, merge-on-read deletes before and after
/// a v2→v3 upgrade (deletion vectors replacing position deletes), dropping and re-adding a
/// partition field, `INSERT OVERWRITE`, `TRUNCATE`, a rollback then new writes, and
/// expiry on a branch: after each, every snapshot's rows as computed (from the statistics
/// file of its latest ancestor that has one, where it can) equal a full compute's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_stats_of_every_snapshot_equal_a_full_compute_across_branches_and_rollbacks() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.seq (id BIGINT, k INT, s STRING) PARTITIONED BY (k) TBLPROPERTIES \
         ('format-version'='2', 'write.delete.mode'='merge-on-read')",
    )
    .await;
    let stmts = [
        "INSERT INTO ice.ns.seq VALUES (1, 0, 'a'), (2, 1, 'b')",
        "CALL ice.system.compute_partition_stats('ns.seq')",
        "ALTER TABLE ice.ns.seq CREATE BRANCH dev",
        "INSERT INTO ice.ns.seq.branch_dev VALUES (3, 2, 'c')",
        "DELETE FROM ice.ns.seq.branch_dev WHERE id = 1",
        "CALL ice.system.compute_partition_stats('ns.seq', {dev})",
        "INSERT INTO ice.ns.seq VALUES (4, 0, 'd')",
        "CALL ice.system.compute_partition_stats('ns.seq')",
        "DELETE FROM ice.ns.seq WHERE id = 2",
        "CALL ice.system.compute_partition_stats('ns.seq')",
        "ALTER TABLE ice.ns.seq SET TBLPROPERTIES ('format-version'='3')",
        "DELETE FROM ice.ns.seq WHERE id = 4",
        "CALL ice.system.compute_partition_stats('ns.seq')",
        "INSERT INTO ice.ns.seq VALUES (5, 3, 'e')",
        "ALTER TABLE ice.ns.seq DROP PARTITION FIELD k",
        "INSERT INTO ice.ns.seq VALUES (6, 3, 'f')",
        "CALL ice.system.compute_partition_stats('ns.seq')",
        "ALTER TABLE ice.ns.seq ADD PARTITION FIELD k",
        "INSERT INTO ice.ns.seq VALUES (7, 3, 'g')",
        "CALL ice.system.compute_partition_stats('ns.seq')",
        "INSERT OVERWRITE ice.ns.seq VALUES (8, 3, 'h')",
        "CALL ice.system.compute_partition_stats('ns.seq')",
        "INSERT INTO ice.ns.seq VALUES (9, 4, 'i')",
        "CALL ice.system.compute_partition_stats('ns.seq')",
        "TRUNCATE TABLE ice.ns.seq",
        "INSERT INTO ice.ns.seq VALUES (10, 4, 'j')",
        "CALL ice.system.compute_partition_stats('ns.seq')",
        "INSERT INTO ice.ns.seq VALUES (11, 5, 'k')",
        "CALL ice.system.compute_partition_stats('ns.seq')",
        "INSERT INTO ice.ns.seq VALUES (12, 5, 'l')",
        "CALL ice.system.rollback_to_snapshot('ns.seq', {parent})",
        "INSERT INTO ice.ns.seq VALUES (13, 5, 'm')",
        "CALL ice.system.compute_partition_stats('ns.seq')",
        "INSERT INTO ice.ns.seq VALUES (14, 6, 'n')",
        "CALL ice.system.compute_partition_stats('ns.seq', {dev})",
        "INSERT INTO ice.ns.seq.branch_dev VALUES (15, 6, 'o')",
        "CALL ice.system.expire_snapshots(table => 'ns.seq', older_than => now() + INTERVAL '1' DAY, retain_last => 3)",
        "INSERT INTO ice.ns.seq.branch_dev VALUES (16, 6, 'p')",
        "CALL ice.system.compute_partition_stats('ns.seq', {dev})",
        "INSERT INTO ice.ns.seq VALUES (17, 7, 'q')",
        "CALL ice.system.compute_partition_stats('ns.seq')",
    ];
    for q in stmts {
        let table = lake
            .catalog
            .load_table(&TableIdent::parse("ns.seq"))
            .await
            .expect("load");
        let m = table.metadata();
        let dev = m.refs.get("dev").map(|r| r.snapshot_id).unwrap_or(0);
        let parent = m
            .current_snapshot()
            .and_then(|s| s.parent_snapshot_id)
            .unwrap_or(0);
        let q = q
            .replace("{dev}", &dev.to_string())
            .replace("{parent}", &parent.to_string());
        let q = q.as_str();
        ok(&lake.ctx, q).await;
        every_snapshot_agrees(&lake, "seq", q).await;
    }
}
