//! Writes to format-version 3 tables: row lineage (spec: "Row Lineage"). Every data
//! file gets a range of row ids (`first_row_id` inherited from its manifest's, which the
//! manifest list assigns from the table's `next-row-id`), ranges of live files never
//! overlap, snapshots record `first-row-id` and `added-rows`, and PyIceberg and DuckDB
//! read the tables icefloe writes. Row-level changes on v3 are refused (no deletion
//! vectors written yet).

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
    // row-level changes are refused by name, nothing committed
    let before = m.current_snapshot_id;
    let e = run(&lake.ctx, &format!("DELETE FROM {t} WHERE id = 1"))
        .await
        .expect_err("v3 DELETE");
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
