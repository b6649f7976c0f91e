//! Files a row-level statement leaves applying to nothing are removed in its commit:
//! statements that remove whole data files (`TRUNCATE`, `DELETE` without `WHERE`,
//! `DELETE` by identity partition) on tables holding data files whose rows are all
//! deleted already (by position deletes or a deletion vector) remove those files too,
//! with the delete files scoped to them, and the snapshot summary counts nothing left
//! behind; a deletion vector replaces the file-scoped v2 position delete files it takes
//! in (a table upgraded from v2). A commit that leaves a delete file older than every data
//! file it keeps drops that file too (a partition-scoped position delete file, an
//! equality delete file), as Iceberg Java's `MergingSnapshotProducer` does.

use crate::dml::{create, equality_delete_on, lake, ok, other_engines_agree, Lake};

/// `ns.<name>` (`id BIGINT, p INT`, identity-partitioned by `p` when `partitioned`) in
/// merge-on-read mode: three files, each of one `INSERT`; the file of `(1, 1)` has every
/// row deleted by a later `DELETE`.
async fn with_fully_deleted_file(lake: &Lake, name: &str, version: u8, partitioned: bool) {
    let partitioning = if partitioned {
        "PARTITIONED BY (p)"
    } else {
        ""
    };
    ok(
        &lake.ctx,
        &format!(
            "CREATE TABLE ice.ns.{name} (id BIGINT, p INT) {partitioning} TBLPROPERTIES \
             ('format-version'='{version}', 'write.delete.mode'='merge-on-read', \
             'write.delete.granularity'='partition')"
        ),
    )
    .await;
    for values in ["(1, 1)", "(2, 1)", "(3, 2)"] {
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.{name} VALUES {values}"),
        )
        .await;
    }
    ok(
        &lake.ctx,
        &format!("DELETE FROM ice.ns.{name} WHERE id = 1"),
    )
    .await;
}

/// `content, record_count` of every live file of `ns.<name>`, ordered.
async fn live_files(lake: &Lake, name: &str) -> String {
    ok(
        &lake.ctx,
        &format!(
            "SELECT content, record_count FROM ice.ns.\"{name}$files\" \
             ORDER BY content, record_count"
        ),
    )
    .await
}

/// The current snapshot's `total-data-files`, `total-delete-files`, `total-records`.
async fn totals(lake: &Lake, name: &str) -> String {
    ok(
        &lake.ctx,
        &format!(
            "SELECT summary['total-data-files'] AS f, summary['total-delete-files'] AS d, \
             summary['total-records'] AS r FROM ice.ns.\"{name}$snapshots\" \
             ORDER BY committed_at DESC LIMIT 1"
        ),
    )
    .await
}

const NO_FILES: &str = "++\n++";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_whole_file_removal_takes_fully_deleted_files_and_their_deletes() {
    let lake = lake().await;
    for version in [2u8, 3] {
        for (i, statement) in ["TRUNCATE TABLE", "DELETE FROM"].iter().enumerate() {
            let name = format!("t{version}_{i}");
            with_fully_deleted_file(&lake, &name, version, false).await;
            let count = ok(&lake.ctx, &format!("{statement} ice.ns.{name}")).await;
            if *statement == "DELETE FROM" {
                // the rows left: the already deleted one is not counted again
                assert!(
                    count.contains("| 2     |"),
                    "{statement} v{version}: {count}"
                );
            }
            assert_eq!(
                live_files(&lake, &name).await,
                NO_FILES,
                "{statement} v{version}"
            );
            assert_eq!(
                totals(&lake, &name).await,
                "+---+---+---+\n| f | d | r |\n+---+---+---+\n| 0 | 0 | 0 |\n+---+---+---+",
                "{statement} v{version}"
            );
        }
        // by partition: p = 1 holds the fully deleted file and a live one
        let name = format!("p{version}");
        with_fully_deleted_file(&lake, &name, version, true).await;
        let count = ok(&lake.ctx, &format!("DELETE FROM ice.ns.{name} WHERE p = 1")).await;
        assert!(count.contains("| 1     |"), "v{version}: {count}");
        assert_eq!(
            live_files(&lake, &name).await,
            "+---------+--------------+\n| content | record_count |\n\
             +---------+--------------+\n| 0       | 1            |\n+---------+--------------+",
            "partition v{version}"
        );
        assert_eq!(
            totals(&lake, &name).await,
            "+---+---+---+\n| f | d | r |\n+---+---+---+\n| 1 | 0 | 1 |\n+---+---+---+",
            "partition v{version}"
        );
        let rows = ok(&lake.ctx, &format!("SELECT id FROM ice.ns.{name}")).await;
        assert_eq!(rows, "+----+\n| id |\n+----+\n| 3  |\n+----+");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_copy_on_write_truncate_takes_fully_deleted_files() {
    let lake = lake().await;
    with_fully_deleted_file(&lake, "t", 3, false).await;
    ok(
        &lake.ctx,
        "ALTER TABLE ice.ns.t SET TBLPROPERTIES ('write.delete.mode'='copy-on-write')",
    )
    .await;
    ok(&lake.ctx, "TRUNCATE TABLE ice.ns.t").await;
    assert_eq!(live_files(&lake, "t").await, NO_FILES);
    assert_eq!(
        totals(&lake, "t").await,
        "+---+---+---+\n| f | d | r |\n+---+---+---+\n| 0 | 0 | 0 |\n+---+---+---+"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_deletion_vector_replaces_file_scoped_v2_position_deletes() {
    let lake = lake().await;
    // two data files; v2 position deletes: file-scoped for the first, partition-scoped
    // (covering both files) in the second table
    for (name, granularity) in [("f", "file"), ("p", "partition")] {
        ok(
            &lake.ctx,
            &format!(
                "CREATE TABLE ice.ns.{name} (id BIGINT) TBLPROPERTIES ('format-version'='2', \
                 'write.delete.mode'='merge-on-read', 'write.delete.granularity'='{granularity}')"
            ),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.{name} SELECT value FROM generate_series(1, 20)"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.{name} SELECT value FROM generate_series(21, 30)"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("DELETE FROM ice.ns.{name} WHERE id % 3 = 0"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("ALTER TABLE ice.ns.{name} SET TBLPROPERTIES ('format-version'='3')"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("DELETE FROM ice.ns.{name} WHERE id = 1"),
        )
        .await;
        let deletes = ok(
            &lake.ctx,
            &format!(
                "SELECT file_format, record_count FROM ice.ns.\"{name}$delete_files\" \
                 ORDER BY file_format, record_count"
            ),
        )
        .await;
        let expected = match granularity {
            // the first file's v2 delete file is in its DV now; the second's stays
            "file" => {
                "+-------------+--------------+\n| file_format | record_count |\n\
                 +-------------+--------------+\n| PARQUET     | 4            |\n\
                 | PUFFIN      | 7            |\n+-------------+--------------+"
            }
            // one partition-scoped file covers both data files: it stays
            _ => {
                "+-------------+--------------+\n| file_format | record_count |\n\
                 +-------------+--------------+\n| PARQUET     | 10           |\n\
                 | PUFFIN      | 7            |\n+-------------+--------------+"
            }
        };
        assert_eq!(deletes, expected, "{granularity}");
        let count = ok(
            &lake.ctx,
            &format!("SELECT count(*) AS n FROM ice.ns.{name}"),
        )
        .await;
        assert_eq!(
            count, "+----+\n| n  |\n+----+\n| 19 |\n+----+",
            "{granularity}"
        );
    }
}

/// `key=value` of the current snapshot's summary of `ns.<name>` for each of `keys`
/// (`key=-` when absent).
async fn summary_of(lake: &Lake, name: &str, keys: &[&str]) -> Vec<String> {
    let table = lake
        .catalog
        .load_table(&icefloe::catalog::TableIdent::parse(&format!("ns.{name}")))
        .await
        .expect("load");
    let summary = &table
        .metadata()
        .current_snapshot()
        .expect("a current snapshot")
        .summary;
    keys.iter()
        .map(|k| format!("{k}={}", summary.get(*k).map_or("-", String::as_str)))
        .collect()
}

const DELETE_COUNTS: [&str; 7] = [
    "removed-delete-files",
    "removed-position-delete-files",
    "removed-position-deletes",
    "removed-equality-delete-files",
    "removed-equality-deletes",
    "total-position-deletes",
    "total-equality-deletes",
];

const ONE_DATA_FILE_PER_ROW: &str = "+---------+--------------+\n| content | record_count |\n\
     +---------+--------------+\n| 0       | 1            |\n| 0       | 1            |\n\
     +---------+--------------+";

/// Tester N64 fault 6: a v2 partition-scoped position delete file stayed live after
/// static `INSERT OVERWRITE`s removed both data files it applied to (summaries counted
/// it, planning kept it). The overwrite that removes the last of them drops it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_overwrite_drops_position_deletes_older_than_every_data_file_left() {
    let lake = lake().await;
    create(
        &lake,
        "t",
        "",
        ", 'write.delete.mode'='merge-on-read', 'write.delete.granularity'='partition'",
    )
    .await;
    for statement in [
        "INSERT INTO ice.ns.t VALUES (1, 1, 'a', 1.0), (2, 1, 'b', 2.0), (3, 1, 'c', 3.0)",
        "INSERT INTO ice.ns.t VALUES (4, 2, 'd', 4.0), (5, 2, 'e', 5.0), (6, 2, 'f', 6.0)",
        "DELETE FROM ice.ns.t WHERE id IN (2, 5)",
        "ALTER TABLE ice.ns.t ADD PARTITION FIELD k",
        "INSERT OVERWRITE ice.ns.t PARTITION (k = 1) SELECT 100, 'x', 1.5",
    ] {
        ok(&lake.ctx, statement).await;
    }
    // the delete file still applies to the data file of k = 2
    assert_eq!(
        live_files(&lake, "t").await,
        "+---------+--------------+\n| content | record_count |\n\
         +---------+--------------+\n| 0       | 1            |\n| 0       | 3            |\n\
         | 1       | 2            |\n+---------+--------------+"
    );
    assert_eq!(
        summary_of(&lake, "t", &DELETE_COUNTS).await,
        [
            "removed-delete-files=-",
            "removed-position-delete-files=-",
            "removed-position-deletes=-",
            "removed-equality-delete-files=-",
            "removed-equality-deletes=-",
            "total-position-deletes=2",
            "total-equality-deletes=0",
        ]
    );
    ok(
        &lake.ctx,
        "INSERT OVERWRITE ice.ns.t PARTITION (k = 2) SELECT 101, 'y', 2.5",
    )
    .await;
    assert_eq!(live_files(&lake, "t").await, ONE_DATA_FILE_PER_ROW);
    assert_eq!(
        totals(&lake, "t").await,
        "+---+---+---+\n| f | d | r |\n+---+---+---+\n| 2 | 0 | 2 |\n+---+---+---+"
    );
    assert_eq!(
        summary_of(&lake, "t", &DELETE_COUNTS).await,
        [
            "removed-delete-files=1",
            "removed-position-delete-files=1",
            "removed-position-deletes=2",
            "removed-equality-delete-files=-",
            "removed-equality-deletes=-",
            "total-position-deletes=0",
            "total-equality-deletes=0",
        ]
    );
    let rows = ok(&lake.ctx, "SELECT id, k FROM ice.ns.t ORDER BY id").await;
    assert_eq!(
        rows,
        "+-----+---+\n| id  | k |\n+-----+---+\n| 100 | 1 |\n| 101 | 2 |\n+-----+---+"
    );
    other_engines_agree(&lake, "t").await;
}

/// An equality delete file applies to data files of lower data sequence numbers only: the
/// overwrite that removes the last of those drops it (`e`), and so does one that leaves
/// no data file at all (`none`: every delete file committed before applies to nothing).
/// PyIceberg, which refuses to read equality deletes, then reads the table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_overwrite_drops_equality_deletes_older_than_every_data_file_left() {
    let lake = lake().await;
    for name in ["e", "none"] {
        create(&lake, name, "", ", 'write.delete.mode'='copy-on-write'").await;
        for values in [
            "(1, 1, 'a', 1.0), (2, 1, 'b', 2.0)",
            "(3, 2, 'c', 3.0), (4, 2, 'd', 4.0)",
        ] {
            ok(
                &lake.ctx,
                &format!("INSERT INTO ice.ns.{name} VALUES {values}"),
            )
            .await;
        }
        equality_delete_on(&lake, name, "id", &[2, 3]).await;
    }
    ok(&lake.ctx, "ALTER TABLE ice.ns.e ADD PARTITION FIELD k").await;
    ok(
        &lake.ctx,
        "INSERT OVERWRITE ice.ns.e PARTITION (k = 1) SELECT 100, 'x', 1.5",
    )
    .await;
    // the delete file still applies to the data file of k = 2
    assert_eq!(
        summary_of(&lake, "e", &DELETE_COUNTS).await,
        [
            "removed-delete-files=-",
            "removed-position-delete-files=-",
            "removed-position-deletes=-",
            "removed-equality-delete-files=-",
            "removed-equality-deletes=-",
            "total-position-deletes=0",
            "total-equality-deletes=2",
        ]
    );
    let rows = ok(&lake.ctx, "SELECT id FROM ice.ns.e ORDER BY id").await;
    assert_eq!(rows, "+-----+\n| id  |\n+-----+\n| 4   |\n| 100 |\n+-----+");
    ok(
        &lake.ctx,
        "INSERT OVERWRITE ice.ns.e PARTITION (k = 2) SELECT 101, 'y', 2.5",
    )
    .await;
    assert_eq!(live_files(&lake, "e").await, ONE_DATA_FILE_PER_ROW);
    ok(
        &lake.ctx,
        "INSERT OVERWRITE ice.ns.none SELECT * FROM ice.ns.none WHERE false",
    )
    .await;
    assert_eq!(live_files(&lake, "none").await, NO_FILES);
    for name in ["e", "none"] {
        assert_eq!(
            summary_of(&lake, name, &DELETE_COUNTS).await,
            [
                "removed-delete-files=1",
                "removed-position-delete-files=-",
                "removed-position-deletes=-",
                "removed-equality-delete-files=1",
                "removed-equality-deletes=2",
                "total-position-deletes=0",
                "total-equality-deletes=0",
            ],
            "{name}"
        );
        other_engines_agree(&lake, name).await;
    }
    assert_eq!(
        totals(&lake, "e").await,
        "+---+---+---+\n| f | d | r |\n+---+---+---+\n| 2 | 0 | 2 |\n+---+---+---+"
    );
    assert_eq!(
        totals(&lake, "none").await,
        "+---+---+---+\n| f | d | r |\n+---+---+---+\n| 0 | 0 | 0 |\n+---+---+---+"
    );
}
