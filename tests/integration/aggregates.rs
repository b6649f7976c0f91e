//! `min`/`max` whose answers DataFusion 55's name-based optimizations got wrong, on
//! Iceberg tables with exact per-file statistics (icefloe turns both off where it puts in
//! its `min`/`max`, `src/datafusion/min_max.rs`).

use datafusion::prelude::SessionContext;

use crate::dml::{lake, ok, session_over, Lake};

/// `ns.<name>` (a, b, x, pad) in three files: the true minima in a one-row file, a file
/// of 200 rows, and a large file where `a` and `x` are all NULL, so that a scan partition
/// may read the NULLs first.
async fn null_file_last(lake: &Lake, name: &str) {
    ok(
        &lake.ctx,
        &format!("CREATE TABLE ice.ns.{name} (a INT, b INT, x INT, pad STRING)"),
    )
    .await;
    for insert in [
        "VALUES (1, 9, 1, 'x')".to_string(),
        "SELECT 10, 1, 2, repeat('y', 50) || CAST(value AS VARCHAR) FROM generate_series(1, 200)"
            .to_string(),
        "SELECT NULL AS a, 5 AS b, NULL AS x, repeat('z', 100) || CAST(value AS VARCHAR) \
         FROM generate_series(1, 1000)"
            .to_string(),
    ] {
        ok(&lake.ctx, &format!("INSERT INTO ice.ns.{name} {insert}")).await;
    }
}

/// `text` without spaces.
fn squeezed(text: &str) -> String {
    text.replace(' ', "")
}

async fn session(lake: &Lake, partitions: usize, deferred: bool) -> SessionContext {
    let ctx = session_over(lake).await;
    ok(
        &ctx,
        &format!("SET datafusion.execution.target_partitions = {partitions}"),
    )
    .await;
    if deferred {
        ok(&ctx, "SET icefloe.deferred_planning_min_files = 1").await;
    }
    ctx
}

/// An ungrouped `min`/`max` reads every file that may hold the answer: DataFusion's
/// dynamic filter left out an aggregate whose bound was still NULL (`a < 1 OR b < 5`
/// became `b < 5`) and pruned the file holding `min(a)`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ungrouped_min_max_read_every_file_that_may_answer() {
    let lake = lake().await;
    null_file_last(&lake, "ab").await;
    for partitions in [1, 2, 4] {
        for deferred in [false, true] {
            let ctx = session(&lake, partitions, deferred).await;
            // repeated: which partition reads which file first varies between runs
            for _ in 0..4 {
                let got = ok(&ctx, "SELECT min(a) AS a, min(b) AS b FROM ice.ns.ab").await;
                assert!(got.contains("| 1 | 1 |"), "{partitions} {deferred}: {got}");
                let got = ok(&ctx, "SELECT min(x) AS lo, max(x) AS hi FROM ice.ns.ab").await;
                assert!(
                    got.contains("| 1  | 2  |"),
                    "{partitions} {deferred}: {got}"
                );
            }
        }
    }
}

/// `GROUP BY … ORDER BY max(x) DESC LIMIT n` and `ORDER BY min(x) LIMIT n` over NaN give
/// the groups and values of the full aggregate, sorted: DataFusion's TopK over groups
/// compared NaN by IEEE rules, evicted the better group and lost its earlier values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn top_groups_by_min_or_max_over_nan_are_the_sorted_aggregate() {
    let lake = lake().await;
    ok(&lake.ctx, "CREATE TABLE ice.ns.g (g INT, x DOUBLE)").await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.g VALUES (1, -1.0::double), (2, 'NaN'::double), (1, 5.0::double), \
         (3, 2.0::double)",
    )
    .await;
    for partitions in [1, 2] {
        let ctx = session(&lake, partitions, false).await;
        for (sql, expected) in [
            (
                "SELECT g, min(x) AS m FROM ice.ns.g GROUP BY g ORDER BY min(x) LIMIT 1",
                "|1|-1.0|",
            ),
            (
                "SELECT g, max(x) AS m FROM ice.ns.g GROUP BY g ORDER BY max(x) DESC LIMIT 1",
                "|2|NaN|",
            ),
            (
                "SELECT g, min(x) AS m FROM ice.ns.g GROUP BY g ORDER BY min(x) LIMIT 2",
                "|1|-1.0|\n|3|2.0|",
            ),
        ] {
            let got = ok(&ctx, sql).await;
            assert!(
                squeezed(&got).contains(expected),
                "{partitions}: {sql}: {got}"
            );
        }
    }
}
