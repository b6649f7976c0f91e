//! Equality deletes resolved to deleted positions once per session
//! (`icefloe.equality_deletes`, issue 18 item 4): every snapshot of a table whose
//! equality deletes, position deletes and appends interleave reads the same rows
//! resolved as probed, in any order of time travel, and whole files deleted by
//! resolution are skipped.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::{Array, Int32Array, Int64Array};
use datafusion::arrow::datatypes::{DataType, Schema as ArrowSchema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::{SessionConfig, SessionContext};
use icefloe::datafusion::IcefloeOptions;
use icefloe::spec::{
    DataContentType, DataFile, NestedField, PartitionSpec, PrimitiveType, Schema, Type,
};
use icefloe::write::{data_file_from_parquet, LocalTableWriter};
use icefloe::IcebergTableProvider;

use crate::deletes::{commit_position_deletes, field_with_id, write_parquet_file};

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::required(2, "g", Type::Primitive(PrimitiveType::Int)),
        ],
    )
}

/// A data or equality delete file at `dir/name` holding `rows` (`id`, `g`); an equality
/// delete file holds `g` alone (the values of `rows`' `g`).
fn parquet_file(dir: &Path, name: &str, rows: &[(i64, i32)], content: DataContentType) -> DataFile {
    let path = dir.join(name);
    let batch = match content {
        DataContentType::EqualityDeletes => RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![field_with_id(
                "g",
                DataType::Int32,
                2,
            )])),
            vec![Arc::new(Int32Array::from_iter_values(
                rows.iter().map(|r| r.1),
            ))],
        ),
        _ => RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![
                field_with_id("id", DataType::Int64, 1),
                field_with_id("g", DataType::Int32, 2),
            ])),
            vec![
                Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
                Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.1))),
            ],
        ),
    }
    .expect("batch");
    // several row groups per data file
    write_parquet_file(&path, &batch, 16);
    let location = icefloe::io::normalize_location(&path.to_string_lossy()).expect("location");
    let ids = match content {
        DataContentType::EqualityDeletes => vec![2],
        _ => vec![],
    };
    data_file_from_parquet(&path, &location, &schema(), vec![], content, ids).expect("data file")
}

fn equality_delete(dir: &Path, g: i32) -> DataFile {
    parquet_file(
        dir,
        &format!("eq-g{g}.parquet"),
        &[(0, g)],
        DataContentType::EqualityDeletes,
    )
}

/// The ids each snapshot (1-based, in commit order) holds:
/// 1. `d1`: ids 0..70, `g = id % 7`;
/// 2. an equality delete of `g = 3`;
/// 3. position deletes of `d1`'s rows 3, 5 and 10 (3 and 10 already deleted by `g = 3`);
/// 4. `d2`: ids 100..121, `g = id % 7`, and `d3`: ids 200..210, `g = 6`;
/// 5. an equality delete of `g = 5`;
/// 6. an equality delete of `g = 6` (every row of `d3`).
fn live(snapshot: usize) -> BTreeSet<i64> {
    let d1 = (0..70).filter(|id| {
        let g = id % 7;
        !((snapshot >= 2 && g == 3)
            || (snapshot >= 3 && [3, 5, 10].contains(id))
            || (snapshot >= 5 && g == 5)
            || (snapshot >= 6 && g == 6))
    });
    let d2 = (100..121).filter(|id| {
        let g = id % 7;
        snapshot >= 4 && !((snapshot >= 5 && g == 5) || (snapshot >= 6 && g == 6))
    });
    let d3 = (200..210).filter(|_| (4..6).contains(&snapshot));
    d1.chain(d2).chain(d3).collect()
}

/// The table of [`live`]'s six snapshots in `dir`; returns its location and snapshot
/// ids in commit order.
fn interleaved_table(dir: &Path) -> (String, Vec<i64>) {
    let table = dir.join("table");
    let mut w = LocalTableWriter::create(
        &table,
        schema(),
        PartitionSpec::unpartitioned(),
        Default::default(),
    )
    .expect("create");
    let rows = |ids: std::ops::Range<i64>| -> Vec<(i64, i32)> {
        ids.map(|id| (id, (id % 7) as i32)).collect()
    };
    let d1 = parquet_file(dir, "d1.parquet", &rows(0..70), DataContentType::Data);
    let d1_location = d1.file_path.clone();
    let mut ids = vec![w.append(vec![d1]).expect("s1").snapshot_id];
    ids.push(
        w.row_delta(vec![], vec![equality_delete(dir, 3)])
            .expect("s2")
            .snapshot_id,
    );
    commit_position_deletes(
        &mut w,
        &schema(),
        &dir.join("pos.parquet"),
        &d1_location,
        &[3, 5, 10],
    );
    let d2 = parquet_file(dir, "d2.parquet", &rows(100..121), DataContentType::Data);
    let d3_rows: Vec<(i64, i32)> = (200..210).map(|id| (id, 6)).collect();
    let d3 = parquet_file(dir, "d3.parquet", &d3_rows, DataContentType::Data);
    let s4 = w.append(vec![d2, d3]).expect("s4").snapshot_id;
    let s5 = w
        .row_delta(vec![], vec![equality_delete(dir, 5)])
        .expect("s5")
        .snapshot_id;
    let s6 = w
        .row_delta(vec![], vec![equality_delete(dir, 6)])
        .expect("s6")
        .snapshot_id;
    let provider_snapshots = {
        let metadata = w.metadata();
        let mut all: Vec<(i64, i64)> = metadata
            .snapshots
            .iter()
            .map(|s| (s.sequence_number, s.snapshot_id))
            .collect();
        all.sort();
        all.into_iter().map(|(_, id)| id).collect::<Vec<_>>()
    };
    // the position delete commit is snapshot 3
    ids.push(provider_snapshots[2]);
    ids.extend([s4, s5, s6]);
    assert_eq!(ids, provider_snapshots);
    (table.to_string_lossy().into_owned(), ids)
}

fn session(equality: &str) -> SessionContext {
    let mut options = IcefloeOptions::default();
    options.equality_deletes.set_word(equality).expect("policy");
    SessionContext::new_with_config(
        SessionConfig::new()
            .with_target_partitions(2)
            .with_option_extension(options),
    )
}

async fn ids(ctx: &SessionContext, sql: &str) -> BTreeSet<i64> {
    let batches = ctx
        .sql(sql)
        .await
        .expect("plan")
        .collect()
        .await
        .expect("run");
    let mut out = BTreeSet::new();
    for b in &batches {
        let column = b
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .expect("ids");
        assert_eq!(column.null_count(), 0);
        for id in column.values() {
            assert!(out.insert(*id), "{id} twice in {sql}");
        }
    }
    out
}

/// Resolved once and kept, probed each time, or resolved always: the same rows at every
/// snapshot, visited in an order where a snapshot with a position delete is resolved
/// before the one without it (so positions kept must not depend on position deletes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolved_equality_deletes_read_the_same_rows_at_every_snapshot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (location, snapshots) = interleaved_table(dir.path());
    for equality in ["auto", "probe", "resolve"] {
        let ctx = session(equality);
        let latest = IcebergTableProvider::open(&location).await.expect("open");
        for (round, order) in [[3, 2, 6, 4, 5, 1], [1, 2, 3, 4, 5, 6]].iter().enumerate() {
            for s in order {
                let case = format!("equality_deletes = {equality}, snapshot {s}, round {round}");
                let provider = latest
                    .clone()
                    .with_snapshot_id(snapshots[s - 1])
                    .expect("snapshot");
                ctx.deregister_table("t").expect("deregister");
                ctx.register_table("t", Arc::new(provider.clone()))
                    .expect("register");
                assert_eq!(ids(&ctx, "SELECT id FROM t").await, live(*s), "{case}");
                let m = provider.last_delete_metrics().expect("scanned");
                let filtered = ids(&ctx, "SELECT id FROM t WHERE id < 50 OR id >= 205").await;
                let want: BTreeSet<i64> = live(*s)
                    .into_iter()
                    .filter(|id| *id < 50 || *id >= 205)
                    .collect();
                assert_eq!(filtered, want, "{case}");
                // files with equality deletes: d1 from snapshot 2, d2 from 5, d3 from 6
                // (`g = 5` is outside d3's bounds of `g`, so it does not apply to d3)
                let with_equality = match s {
                    1 => 0,
                    2..=4 => 1,
                    5 => 2,
                    _ => 3,
                };
                let resolved = if equality == "probe" {
                    0
                } else {
                    with_equality
                };
                assert_eq!(m.data_files_equality_resolved, resolved, "{case}: {m:?}");
                // d3 is skipped whole at snapshot 6 (it was resolved to every row)
                assert_eq!(
                    m.data_files_fully_deleted,
                    usize::from(*s == 6 && equality != "probe"),
                    "{case}: {m:?}"
                );
            }
        }
    }
}

/// Under `auto`, a `LIMIT` scan probes the files nobody resolved yet and uses what an
/// earlier scan resolved; `resolve` resolves under `LIMIT` too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_probes_unless_resolved_before() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (location, _) = interleaved_table(dir.path());
    let all = live(6);
    for equality in ["auto", "resolve"] {
        let ctx = session(equality);
        let provider = IcebergTableProvider::open(&location).await.expect("open");
        ctx.register_table("t", Arc::new(provider.clone()))
            .expect("register");
        let limited = ids(&ctx, "SELECT id FROM t LIMIT 7").await;
        assert_eq!(limited.len(), 7, "{equality}");
        assert!(limited.is_subset(&all), "{equality}: {limited:?}");
        // (which files a LIMIT plans depends on its manifests: at least one)
        let m = provider.last_delete_metrics().expect("scanned");
        assert_eq!(
            m.data_files_equality_resolved == 0,
            equality == "auto",
            "{equality}: {m:?}"
        );
        assert_eq!(ids(&ctx, "SELECT id FROM t").await, all, "{equality}");
        let limited = ids(&ctx, "SELECT id FROM t LIMIT 7").await;
        assert!(limited.is_subset(&all), "{equality}: {limited:?}");
        let m = provider.last_delete_metrics().expect("scanned");
        assert!(m.data_files_equality_resolved >= 1, "{equality}: {m:?}");
    }
}

/// A bad `icefloe.equality_deletes` is an error naming the option, when it is set.
#[tokio::test]
async fn an_unknown_equality_delete_policy_is_an_error() {
    let ctx = session("auto");
    let err = match ctx.sql("SET icefloe.equality_deletes = 'sometimes'").await {
        Ok(_) => panic!("SET of a bad policy succeeded"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("icefloe.equality_deletes cannot be 'sometimes'"),
        "{err}"
    );
}
