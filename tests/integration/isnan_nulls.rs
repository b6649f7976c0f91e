//! Spark's `isnan(NULL)` is FALSE (`IsNaN`, `nullable = false`; Iceberg's `notNaN` holds
//! for NULL), so `NOT isnan(d)` keeps the rows whose `d` is NULL, in reads, in every
//! `DELETE` / `UPDATE` / `MERGE` condition and in a procedure's `where` string, whatever
//! the files and partitions pruning keeps (report Z67, fault 3: a filtered scan of an
//! identity partition on the column dropped the NULL partition, `not_nan` being false
//! for NULL, while the same filter over the rows held in memory kept it).

use std::sync::Arc;

use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::arrow::datatypes::Int32Type;
use datafusion::datasource::MemTable;

use crate::dml::{lake, ok, run, Lake};
use crate::maintenance::call;

/// `ice.ns.<name>` (id, d double, f float), one file per row: 1.5, NaN, NULL, -2.0, and
/// NULL again.
async fn table(lake: &Lake, name: &str, partitioning: &str) {
    ok(
        &lake.ctx,
        &format!(
            "CREATE TABLE ice.ns.{name} (id INT, d DOUBLE, f FLOAT) {partitioning} \
             TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', \
             'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')"
        ),
    )
    .await;
    for row in [
        "(1, 1.5, CAST(1.5 AS FLOAT))",
        "(2, 'NaN'::double, CAST('NaN' AS FLOAT))",
        "(3, NULL, NULL)",
        "(4, -2.0, CAST(-2.0 AS FLOAT))",
        "(5, NULL, NULL)",
    ] {
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.{name} VALUES {row}"),
        )
        .await;
    }
}

/// The sorted first (int) column of `sql`'s rows.
async fn ids(lake: &Lake, sql: &str) -> Vec<i32> {
    let batches: Vec<RecordBatch> = run(&lake.ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut out: Vec<i32> = batches
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int32Type>().values().to_vec())
        .collect();
    out.sort_unstable();
    out
}

/// (condition, the ids Spark selects from [`table`]'s rows)
const CONDITIONS: &[(&str, &[i32])] = &[
    ("isnan(d)", &[2]),
    ("NOT isnan(d)", &[1, 3, 4, 5]),
    ("NOT isnan(f)", &[1, 3, 4, 5]),
    ("NOT isnan(d) AND id > 2", &[3, 4, 5]),
    ("NOT isnan(d) OR id = 2", &[1, 2, 3, 4, 5]),
    // NULL OR false is NULL
    ("NOT (isnan(d) OR d < 0.0)", &[1]),
    ("isnan(d) = false", &[1, 3, 4, 5]),
    ("isnan(d) IS NULL", &[]),
    ("isnan(d) IS NOT TRUE", &[1, 3, 4, 5]),
    ("isnan(d) IS NOT FALSE", &[2]),
    ("NOT isnan(CAST(f AS DOUBLE))", &[1, 3, 4, 5]),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn isnan_of_null_is_false_in_reads_whatever_is_pruned() {
    let lake = lake().await;
    for (name, partitioning) in [
        ("flat", ""),
        ("by_d", "PARTITIONED BY (d)"),
        ("by_f", "PARTITIONED BY (f, bucket(2, id))"),
    ] {
        table(&lake, name, partitioning).await;
        // the rows held in memory: nothing to prune
        let rows = run(&lake.ctx, &format!("SELECT * FROM ice.ns.{name}"))
            .await
            .expect("rows");
        let mem = MemTable::try_new(rows[0].schema(), vec![rows]).expect("memtable");
        lake.ctx
            .register_table(format!("{name}_rows"), Arc::new(mem))
            .expect("register");
        for pruning in [true, false] {
            ok(
                &lake.ctx,
                &format!("SET datafusion.execution.parquet.pruning = {pruning}"),
            )
            .await;
            for (condition, want) in CONDITIONS {
                for from in [format!("ice.ns.{name}"), format!("{name}_rows")] {
                    let sql = format!("SELECT id FROM {from} WHERE {condition}");
                    assert_eq!(ids(&lake, &sql).await, *want, "{sql} (pruning {pruning})");
                    // a count may be answered from the planned files' row counts
                    let count =
                        format!("SELECT CAST(count(*) AS INT) FROM {from} WHERE {condition}");
                    let n = ids(&lake, &count).await;
                    assert_eq!(n, [want.len() as i32], "{count} (pruning {pruning})");
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn isnan_of_null_is_false_in_dml_and_procedure_conditions() {
    let lake = lake().await;
    for (i, partitioning) in ["", "PARTITIONED BY (d)"].into_iter().enumerate() {
        let t = |op: &str| format!("{op}{i}");
        let all = |name: &str| format!("SELECT id FROM ice.ns.{name}");
        // DELETE removes the NULL rows with the numbers, and keeps the NaN
        table(&lake, &t("del"), partitioning).await;
        ok(
            &lake.ctx,
            &format!("DELETE FROM ice.ns.{} WHERE NOT isnan(d)", t("del")),
        )
        .await;
        assert_eq!(ids(&lake, &all(&t("del"))).await, [2], "{partitioning}");
        table(&lake, &t("del_or"), partitioning).await;
        ok(
            &lake.ctx,
            &format!(
                "DELETE FROM ice.ns.{} WHERE NOT isnan(d) AND id > 3",
                t("del_or")
            ),
        )
        .await;
        assert_eq!(
            ids(&lake, &all(&t("del_or"))).await,
            [1, 2, 3],
            "{partitioning}"
        );
        // UPDATE sets the NULL rows too
        table(&lake, &t("upd"), partitioning).await;
        ok(
            &lake.ctx,
            &format!(
                "UPDATE ice.ns.{} SET id = id + 10 WHERE NOT isnan(d)",
                t("upd")
            ),
        )
        .await;
        assert_eq!(
            ids(&lake, &all(&t("upd"))).await,
            [2, 11, 13, 14, 15],
            "{partitioning}"
        );
        // MERGE: a matched row's condition
        table(&lake, &t("mrg"), partitioning).await;
        ok(
            &lake.ctx,
            &format!(
                "MERGE INTO ice.ns.{} t USING (SELECT 3 AS id UNION ALL SELECT 2 UNION ALL \
                 SELECT 1) s ON t.id = s.id \
                 WHEN MATCHED AND NOT isnan(t.d) THEN DELETE",
                t("mrg")
            ),
        )
        .await;
        assert_eq!(
            ids(&lake, &all(&t("mrg"))).await,
            [2, 4, 5],
            "{partitioning}"
        );
        // a procedure's `where` selects the files of NULL `d` too (one file per row)
        table(&lake, &t("call"), partitioning).await;
        let r = call(
            &lake,
            &format!(
                "CALL ice.system.rewrite_data_files(table => 'ns.{}', \
                 where => 'NOT isnan(d)', options => map('rewrite-all', 'true'))",
                t("call")
            ),
        )
        .await;
        // ids 1, 3, 4, 5: four files (one partition each when partitioned by `d`, the
        // NULL partition holding two)
        assert_eq!(
            r.get("rewritten_data_files_count"),
            Some(&4),
            "{partitioning}: {r:?}"
        );
    }
}
