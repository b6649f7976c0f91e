//! Per-batch position deletes (`PositionDeleteExec`) at the boundary of the file-index
//! column's width: 256 data files (a `UInt8` index, the last file at 255) and 257 (a
//! `UInt16` one), v2 position deletes and v3 deletion vectors, composed with equality
//! deletes, filters (pushed into the decoder or not), `LIMIT`, `ORDER BY`, `GROUP BY`, a
//! self-join, `_pos`, time travel and the DML scans. Every answer is compared with the
//! same statement over a `MemTable` of the true live rows.

use std::sync::Arc;

use datafusion::arrow::array::{Int32Array, Int64Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;

use crate::dml::{count, lake, ok, run, Lake};

/// The live rows `(id, p, _pos)` as a `MemTable` registered as `truth`.
fn register_truth(ctx: &SessionContext, rows: &[(i64, i32, i64)]) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("p", DataType::Int32, true),
        Field::new("_pos", DataType::Int64, true),
    ]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.2))),
        ],
    )
    .expect("batch");
    let _ = ctx.deregister_table("truth");
    ctx.register_table(
        "truth",
        Arc::new(MemTable::try_new(schema, vec![vec![batch]]).expect("memtable")),
    )
    .expect("register");
}

/// Commit one equality delete file on `id` (field id 1) per partition `p` of `by_p`,
/// deleting that partition's listed ids from `ns.<name>` (partitioned by `p`), as one
/// `RowDelta`.
async fn equality_deletes_by_partition(lake: &Lake, name: &str, by_p: &[(i32, Vec<i64>)]) {
    use datafusion::parquet::arrow::ArrowWriter;
    use icefloe::catalog::TableIdent;
    use icefloe::spec::{DataContentType, Literal};
    use icefloe::transaction::{RowDelta, Transaction};
    use std::collections::HashMap;

    let ident = TableIdent::parse(&format!("ns.{name}"));
    let table = lake.catalog.load_table(&ident).await.expect("load");
    let m = table.metadata();
    let dir = lake.dir.path().join("eq-deletes").join(name);
    std::fs::create_dir_all(&dir).expect("dir");
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)
        .with_metadata(HashMap::from([(
            "PARQUET:field_id".to_string(),
            "1".to_string(),
        )]))]));
    let mut files = vec![];
    for (p, ids) in by_p {
        let path = dir.join(format!("p{p}.parquet"));
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![Arc::new(Int64Array::from(ids.clone()))],
        )
        .expect("batch");
        let mut w = ArrowWriter::try_new(
            std::fs::File::create(&path).expect("file"),
            Arc::clone(&schema),
            None,
        )
        .expect("writer");
        w.write(&batch).expect("write");
        w.close().expect("close");
        files.push(
            icefloe::write::data_file_from_parquet(
                &path,
                &format!("file://{}", path.display()),
                m.current_schema(),
                vec![Some(Literal::Int(*p))],
                DataContentType::EqualityDeletes,
                vec![1],
            )
            .expect("delete file"),
        );
    }
    let delta = RowDelta::new(m.current_snapshot_id)
        .add_deletes(m.default_spec_id, files)
        .expect("deletes");
    Transaction::new(Arc::clone(&lake.catalog), ident, table.clone())
        .add_action(delta)
        .commit()
        .await
        .expect("commit equality deletes");
}

/// Each query (`{t}` the table) answers over `table` as over `truth` with position
/// deletes applied per batch (`icefloe.position_deletes = 'filter'`), with filters pushed
/// into the decoder, and (`both_pushdowns`) without.
async fn same_as_truth(ctx: &SessionContext, table: &str, case: &str, both_pushdowns: bool) {
    const QUERIES: [&str; 7] = [
        "SELECT count(*) AS n, sum(id) AS s, sum(id * id % 1009) AS q FROM {t}",
        "SELECT id FROM {t} WHERE id BETWEEN 100 AND 700 AND p <> 3 ORDER BY id",
        "SELECT id, p FROM {t} ORDER BY id DESC LIMIT 7",
        "SELECT p, count(*) AS n, sum(id) AS s FROM {t} GROUP BY p ORDER BY p",
        "SELECT count(*) AS n, sum(a.id) AS s FROM {t} a JOIN {t} b ON a.id = b.id + 1",
        "SELECT id, p FROM {t} WHERE p >= 254 ORDER BY id",
        "SELECT id, _pos FROM {t} WHERE p >= 250 OR p < 3 ORDER BY id",
    ];
    let pushdowns: &[bool] = if both_pushdowns {
        &[true, false]
    } else {
        &[true]
    };
    ok(ctx, "SET icefloe.position_deletes = 'filter'").await;
    for pushdown in pushdowns {
        ok(
            ctx,
            &format!("SET datafusion.execution.parquet.pushdown_filters = {pushdown}"),
        )
        .await;
        let plan = ok(
            ctx,
            &format!("EXPLAIN {}", QUERIES[0].replace("{t}", table)),
        )
        .await;
        assert!(plan.contains("PositionDeleteExec"), "{case}: {plan}");
        for q in QUERIES {
            let want = ok(ctx, &q.replace("{t}", "truth")).await;
            let got = ok(ctx, &q.replace("{t}", table)).await;
            assert_eq!(got, want, "{case}, pushdown = {pushdown}: {q}");
        }
    }
    ok(ctx, "SET icefloe.position_deletes = 'auto'").await;
    ok(
        ctx,
        "SET datafusion.execution.parquet.pushdown_filters = false",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_batch_deletes_at_the_file_index_width_boundary_answer_the_live_rows() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    for version in [2, 3] {
        // the boundary on both sides in v2; the two-byte index in v3
        let sizes: &[i64] = if version == 2 { &[256, 257] } else { &[257] };
        for &files in sizes {
            let name = format!("b{files}_v{version}");
            let t = format!("ice.ns.{name}");
            let case = format!("v{version}, {files} files");
            ok(
                ctx,
                &format!(
                    "CREATE TABLE {t} (id BIGINT, p INT) PARTITIONED BY (p) TBLPROPERTIES \
                     ('format-version'='{version}', 'write.delete.mode'='merge-on-read', \
                     'write.update.mode'='merge-on-read')"
                ),
            )
            .await;
            let rows = files * 3;
            ok(
                ctx,
                &format!(
                    "INSERT INTO {t} SELECT value, CAST(value % {files} AS INT) \
                     FROM generate_series(0, {}) ORDER BY value",
                    rows - 1
                ),
            )
            .await;
            // each file holds ids p, p + files, p + 2 files at positions 0, 1, 2
            let all: Vec<(i64, i32, i64)> = (0..rows)
                .map(|id| (id, (id % files) as i32, id / files))
                .collect();
            // every file loses a row, at a position that differs between neighbours
            ok(
                ctx,
                &format!("DELETE FROM {t} WHERE id % 5 = 1 OR id / {files} = p % 3"),
            )
            .await;
            let deleted = |r: &(i64, i32, i64)| r.0 % 5 == 1 || r.2 == i64::from(r.1 % 3);
            let live: Vec<_> = all.iter().copied().filter(|r| !deleted(r)).collect();
            let n = count(
                ctx,
                &format!("SELECT count(*) FROM ice.ns.\"{name}$files\" WHERE content = 0"),
            )
            .await;
            assert_eq!(n, files, "{case}: data files");
            let before_equality = count(
                ctx,
                &format!(
                    "SELECT snapshot_id FROM ice.ns.\"{name}$snapshots\" \
                     ORDER BY committed_at DESC LIMIT 1"
                ),
            )
            .await;
            register_truth(ctx, &live);
            same_as_truth(ctx, &t, &case, true).await;
            if files == 256 {
                // the one-byte index at its last value; the rest on the two-byte one
                continue;
            }

            // equality deletes on top of the per-batch position deletes
            // (in the first and last files' partitions, and one in the middle)
            let parts: Vec<i32> = vec![0, 1, 100, files as i32 - 2, files as i32 - 1];
            let gone = |r: &(i64, i32, i64)| parts.contains(&r.1) && r.0 % 2 == 0;
            let by_p: Vec<(i32, Vec<i64>)> = parts
                .iter()
                .map(|p| {
                    let ids = all.iter().filter(|r| r.1 == *p && gone(r)).map(|r| r.0);
                    (*p, ids.collect())
                })
                .collect();
            equality_deletes_by_partition(&lake, &name, &by_p).await;
            let live: Vec<_> = live.into_iter().filter(|r| !gone(r)).collect();
            register_truth(ctx, &live);
            for equality in ["probe", "auto"] {
                ok(ctx, &format!("SET icefloe.equality_deletes = '{equality}'")).await;
                same_as_truth(
                    ctx,
                    &t,
                    &format!("{case}, equality_deletes = {equality}"),
                    false,
                )
                .await;
            }

            // time travel to the snapshot before the equality deletes
            let earlier: Vec<_> = all.iter().copied().filter(|r| !deleted(r)).collect();
            register_truth(ctx, &earlier);
            same_as_truth(
                ctx,
                &format!("{t} VERSION AS OF {before_equality}"),
                &format!("{case}, time travel"),
                false,
            )
            .await;

            // the DML scans read every file with its deletes
            ok(ctx, "SET icefloe.position_deletes = 'filter'").await;
            ok(
                ctx,
                &format!("UPDATE {t} SET id = id + 100000 WHERE id % 7 = 2"),
            )
            .await;
            ok(ctx, &format!("DELETE FROM {t} WHERE id % 13 = 4")).await;
            ok(ctx, "SET icefloe.position_deletes = 'auto'").await;
            let after: Vec<i64> = live
                .iter()
                .map(|r| if r.0 % 7 == 2 { r.0 + 100000 } else { r.0 })
                .filter(|id| id % 13 != 4)
                .collect();
            let want = format!("{} {}", after.len(), after.iter().sum::<i64>());
            let b = run(ctx, &format!("SELECT count(*), sum(id) FROM {t}"))
                .await
                .expect("scan");
            let got = {
                use datafusion::arrow::array::AsArray;
                use datafusion::arrow::datatypes::Int64Type;
                let v = |c: usize| b[0].column(c).as_primitive::<Int64Type>().value(0);
                format!("{} {}", v(0), v(1))
            };
            assert_eq!(got, want, "{case}: after UPDATE and DELETE");
        }
    }
}
