//! Reusing what the session caches (issue 18, items 4 and 6): Parquet footers of data
//! files go through the session's file-metadata cache, so a second scan in the same
//! session reads no footer; position delete files and deletion vectors go through the
//! catalog provider's position delete cache, so a second scan reads no delete file.

use std::collections::HashMap;
use std::io::{Seek, SeekFrom, Write};
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::prelude::SessionContext;
use icefloe::catalog::{Catalog, TableIdent};
use icefloe::delete::is_deletion_vector;
use icefloe::scan::TableScan;
use icefloe::IcebergTableProvider;

use crate::dml::{create, lake, ok, Lake};
use crate::fixtures::{copy_table, files_with_suffix};
use crate::request_counts::run_with_metrics;

async fn sum_of_ids(ctx: &SessionContext) -> Result<i64, String> {
    let batches = ctx
        .sql("SELECT sum(id) FROM t")
        .await
        .map_err(|e| e.to_string())?
        .collect()
        .await
        .map_err(|e| e.to_string())?;
    let column = batches[0].column(0).as_primitive::<Int64Type>();
    assert!(!column.is_null(0));
    Ok(column.value(0))
}

/// A session with `provider` registered as `t`, holding caches of its own; the set of
/// checked data files among them.
fn with_own_caches(
    provider: IcebergTableProvider,
) -> (
    SessionContext,
    Arc<icefloe::scan::checked_files::CheckedFiles>,
) {
    let caches = icefloe::scan::cache::SessionCaches::default();
    let checked = Arc::clone(&caches.checked_files);
    let ctx = SessionContext::new();
    ctx.register_table("t", Arc::new(provider.with_caches(caches)))
        .expect("register");
    (ctx, checked)
}

/// Overwrite the last 8 bytes of a Parquet file (footer length and `PAR1` magic),
/// keeping its size: reading its footer again fails.
fn break_footer(path: &std::path::Path) {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open");
    file.seek(SeekFrom::End(-8)).expect("seek");
    file.write_all(b"\0\0\0\0XXXX").expect("write");
}

#[tokio::test]
async fn a_second_scan_in_a_session_reads_no_footer() {
    let dir = copy_table("sample_table");
    let location = dir.path().to_str().expect("utf-8");
    let ctx = SessionContext::new();
    let provider = IcebergTableProvider::open(location).await.expect("open");
    ctx.register_table("t", Arc::new(provider))
        .expect("register");
    let cache = ctx.runtime_env().cache_manager.get_file_metadata_cache();
    assert!(cache.list_entries().is_empty());

    let first = sum_of_ids(&ctx).await.expect("first scan");
    let data_files = files_with_suffix(&dir.path().join("data"), ".parquet");
    let entries = cache.list_entries();
    assert_eq!(entries.len(), data_files.len(), "{entries:?}");
    assert!(entries.values().all(|e| e.hits == 0));

    // the footers on disk are now unreadable; the session still has them
    for f in &data_files {
        break_footer(f);
    }
    assert_eq!(sum_of_ids(&ctx).await, Ok(first));
    let entries = cache.list_entries();
    assert_eq!(entries.len(), data_files.len());
    assert!(entries.values().all(|e| e.hits >= 1), "{entries:?}");

    // a new session reads the footers, and fails naming a file
    let fresh = SessionContext::new();
    let provider = IcebergTableProvider::open(location).await.expect("open");
    fresh
        .register_table("t", Arc::new(provider))
        .expect("register");
    let err = sum_of_ids(&fresh).await.unwrap_err();
    assert!(err.contains(".parquet"), "{err}");
}

/// Runs `q` (a query of one BIGINT column) and returns its values and its scan's request
/// metrics.
async fn ids_and_requests(ctx: &SessionContext, q: &str) -> (Vec<i64>, HashMap<String, usize>) {
    let (batches, metrics) = run_with_metrics(ctx, q).await;
    let ids = batches
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect();
    (ids, metrics)
}

/// The position delete files and deletion vectors the latest commit of `ice.ns.<name>`
/// added: how many, and the bytes a scan reads of them (whole files; a vector's blob
/// range), one GET each.
async fn added_delete_reads(lake: &Lake, name: &str) -> (usize, usize) {
    let table = lake
        .catalog
        .load_table(&TableIdent::parse(&format!("ns.{name}")))
        .await
        .expect("load");
    let snapshot = table.metadata().current_snapshot().cloned();
    let id = snapshot.as_ref().expect("snapshot").snapshot_id;
    let plan = TableScan::new(table, snapshot)
        .plan_files()
        .await
        .expect("plan");
    let added: Vec<_> = plan
        .delete_entries
        .iter()
        .filter(|d| d.snapshot_id == id)
        .collect();
    let bytes = added
        .iter()
        .map(|d| match is_deletion_vector(&d.data_file) {
            true => d.data_file.content_size_in_bytes.expect("blob size"),
            false => d.data_file.file_size_in_bytes,
        })
        .map(|n| usize::try_from(n).expect("size"))
        .sum();
    (added.len(), bytes)
}

/// The first scan `q` of `ice.ns.<name>` after a commit: its ids; the number of delete
/// files the commit added; the planning reads (GETs, bytes) reading them takes; and the
/// planning reads the scan made. A scan that matches no data file (`id < 0`, pruned by the
/// column bounds) reads the new manifest list and manifests first, so what the scan then
/// reads while planning is delete files alone.
async fn first_scan(
    lake: &Lake,
    name: &str,
    q: &str,
) -> (Vec<i64>, usize, (usize, usize), (usize, usize)) {
    let (none, _) = ids_and_requests(
        &lake.ctx,
        &format!("SELECT id FROM ice.ns.{name} WHERE id < 0"),
    )
    .await;
    assert!(none.is_empty());
    let (added, bytes) = added_delete_reads(lake, name).await;
    let (ids, metrics) = ids_and_requests(&lake.ctx, q).await;
    (ids, added, (added, bytes), planning_reads(&metrics))
}

fn planning_reads(metrics: &HashMap<String, usize>) -> (usize, usize) {
    (
        metrics["iceberg_planning_get_requests"],
        metrics["iceberg_planning_bytes_read"],
    )
}

/// Create `ice.ns.<name>` with `properties`, insert ids 1..=60 in one commit, then delete
/// every id divisible by 3 through SQL.
async fn sixty_rows_then_delete_every_third(lake: &Lake, name: &str, properties: &str) {
    create(lake, name, "", properties).await;
    let values: Vec<String> = (1..=60)
        .map(|i| format!("({i}, {}, 's{i}', {i}.5)", i % 4))
        .collect();
    let insert = format!("INSERT INTO ice.ns.{name} VALUES {}", values.join(", "));
    ok(&lake.ctx, &insert).await;
    ok(
        &lake.ctx,
        &format!("DELETE FROM ice.ns.{name} WHERE id % 3 = 0"),
    )
    .await;
}

/// In one session, a scan of a table with v2 position delete files or v3 deletion
/// vectors decodes each delete file once: the next scan reads none (no planning read at
/// all, the manifests being cached too) and returns the same rows; a `DELETE` through
/// SQL adds a new delete file (a new key), which the next scan reads, alone, and whose
/// rows are gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_scan_in_a_session_reads_no_delete_file() {
    let lake = lake().await;
    let tables = [
        (
            "v2_position_deletes",
            ", 'write.delete.mode'='merge-on-read'",
        ),
        (
            "v3_deletion_vectors",
            ", 'format-version'='3', 'write.delete.mode'='merge-on-read'",
        ),
    ];
    for (name, properties) in tables {
        sixty_rows_then_delete_every_third(&lake, name, properties).await;
        let q = format!("SELECT id FROM ice.ns.{name} ORDER BY id");
        let expected: Vec<i64> = (1..=60).filter(|i| i % 3 != 0).collect();

        let (ids, added, expected_reads, reads) = first_scan(&lake, name, &q).await;
        assert_eq!(ids, expected, "{name}");
        assert_eq!(added, 1, "{name}: one delete file or vector");
        assert_eq!(reads, expected_reads, "{name}");
        // the same session: no delete file (nor manifest) is read again
        let (ids, again) = ids_and_requests(&lake.ctx, &q).await;
        assert_eq!(ids, expected, "{name}");
        assert_eq!(planning_reads(&again), (0, 0), "{name}: {again:?}");

        // another DELETE commits a new delete file (v2: beside the first; v3: a new
        // vector replacing the file's old one); the next scan reads it and only it
        ok(
            &lake.ctx,
            &format!("DELETE FROM ice.ns.{name} WHERE id % 5 = 0"),
        )
        .await;
        let expected: Vec<i64> = (1..=60).filter(|i| i % 3 != 0 && i % 5 != 0).collect();
        let (ids, added, expected_reads, reads) = first_scan(&lake, name, &q).await;
        assert_eq!(ids, expected, "{name}");
        assert_eq!(added, 1, "{name}: one new delete file or vector");
        assert_eq!(reads, expected_reads, "{name}");
        let (ids, again) = ids_and_requests(&lake.ctx, &q).await;
        assert_eq!(ids, expected, "{name}");
        assert_eq!(planning_reads(&again), (0, 0), "{name}: {again:?}");
    }
    // v2 kept both position delete files live, v3 one vector for the data file
    let live = |name: &str| format!("SELECT count(*) AS n FROM ice.ns.\"{name}$delete_files\"");
    let v2 = ok(&lake.ctx, &live("v2_position_deletes")).await;
    assert!(v2.contains("| 2 "), "{v2}");
    let v3 = ok(&lake.ctx, &live("v3_deletion_vectors")).await;
    assert!(v3.contains("| 1 "), "{v3}");
}

/// A v3 `DELETE` on a data file that already has a deletion vector writes one vector
/// holding the old positions and the new, from the positions its planning loaded (through
/// the session's cache), without reading the old vector again: with the old vector's
/// Puffin file gone after a scan cached it, the `DELETE` still commits, and a new session
/// (nothing cached) reads the merged vector alone and sees both deletes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v3_delete_merges_the_old_vector_from_what_it_planned() {
    let lake = lake().await;
    let name = "v3_merge";
    let properties = ", 'format-version'='3', 'write.delete.mode'='merge-on-read'";
    sixty_rows_then_delete_every_third(&lake, name, properties).await;
    let q = format!("SELECT id FROM ice.ns.{name} ORDER BY id");
    let (ids, _) = ids_and_requests(&lake.ctx, &q).await;
    assert_eq!(ids, (1..=60).filter(|i| i % 3 != 0).collect::<Vec<i64>>());

    // the session has decoded the vector; its file is gone now
    let puffins = files_with_suffix(&lake.warehouse, ".puffin");
    assert_eq!(puffins.len(), 1, "{puffins:?}");
    std::fs::remove_file(&puffins[0]).expect("remove the old vector");

    ok(
        &lake.ctx,
        &format!("DELETE FROM ice.ns.{name} WHERE id % 5 = 0"),
    )
    .await;
    let expected: Vec<i64> = (1..=60).filter(|i| i % 3 != 0 && i % 5 != 0).collect();
    let (ids, _) = ids_and_requests(&lake.ctx, &q).await;
    assert_eq!(ids, expected);
    let fresh = crate::dml::session_over(&lake).await;
    let (ids, _) = ids_and_requests(&fresh, &q).await;
    assert_eq!(ids, expected, "a new session reads the merged vector");
    let live = format!("SELECT count(*) AS n FROM ice.ns.\"{name}$delete_files\"");
    assert!(ok(&fresh, &live).await.contains("| 1 "));
}

/// The ids of `ice.ns."<name>@<snapshot>"` (or the current snapshot), sorted.
async fn ids_at(
    ctx: &datafusion::prelude::SessionContext,
    name: &str,
    at: Option<i64>,
) -> Vec<i64> {
    let table = match at {
        Some(id) => format!("ice.ns.\"{name}@{id}\""),
        None if name.contains('@') => format!("ice.ns.\"{name}\""),
        None => format!("ice.ns.{name}"),
    };
    let batches = crate::dml::run(ctx, &format!("SELECT id FROM {table} ORDER BY id"))
        .await
        .unwrap_or_else(|e| panic!("{table}: {e}"));
    batches
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect()
}

/// A session keeps each data file's planned position deletes, keyed by the data file
/// and the delete files that apply to it. Time travel between snapshots where
/// different delete files (v2 files, file or partition granularity; v3 vectors replaced
/// by merged ones) apply to the same data files, in any order, with
/// `icefloe.position_deletes` switched within the session, and with a data file fully
/// deleted, answers what a fresh session answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planned_deletes_follow_the_snapshot_and_the_policy() {
    let lake = lake().await;
    let tables = [
        ("pd_v2_file", ", 'write.delete.mode'='merge-on-read'"),
        (
            "pd_v2_partition",
            ", 'write.delete.mode'='merge-on-read', 'write.delete.granularity'='partition'",
        ),
        (
            "pd_v3",
            ", 'format-version'='3', 'write.delete.mode'='merge-on-read'",
        ),
    ];
    for (name, properties) in tables {
        create(&lake, name, "", properties).await;
        let mut model: Vec<i64> = vec![];
        let mut snapshots: Vec<(i64, Vec<i64>)> = vec![];
        let steps = [
            "INSERT 1 40",
            "INSERT 41 80",
            "DELETE id % 3 = 0",
            "DELETE id % 5 = 0",
            "DELETE id > 70",
            "DELETE id <= 40",
            "DELETE id = 41",
        ];
        for step in steps {
            let words: Vec<&str> = step.splitn(2, ' ').collect();
            if words[0] == "INSERT" {
                let bounds: Vec<i64> = words[1].split(' ').map(|w| w.parse().unwrap()).collect();
                let values: Vec<String> = (bounds[0]..=bounds[1])
                    .map(|i| format!("({i}, {}, 's{i}', {i}.5)", i % 4))
                    .collect();
                ok(
                    &lake.ctx,
                    &format!("INSERT INTO ice.ns.{name} VALUES {}", values.join(", ")),
                )
                .await;
                model.extend(bounds[0]..=bounds[1]);
            } else {
                let condition = words[1];
                ok(
                    &lake.ctx,
                    &format!("DELETE FROM ice.ns.{name} WHERE {condition}"),
                )
                .await;
                // the model: evaluate the condition on the kept ids
                let keep = |i: i64| match condition {
                    "id % 3 = 0" => i % 3 != 0,
                    "id % 5 = 0" => i % 5 != 0,
                    "id > 70" => i <= 70,
                    "id <= 40" => i > 40,
                    "id = 41" => i != 41,
                    _ => unreachable!(),
                };
                model.retain(|i| keep(*i));
            }
            let id = lake
                .catalog
                .load_table(&TableIdent::parse(&format!("ns.{name}")))
                .await
                .expect("load")
                .metadata()
                .current_snapshot_id
                .expect("snapshot");
            // the writing session sees the new snapshot (planned deletes of the old one
            // in its cache)
            assert_eq!(ids_at(&lake.ctx, name, None).await, model, "{name}: {step}");
            snapshots.push((id, model.clone()));
        }
        // a branch at each snapshot: read through the session's caches (`t@<id>`
        // is not), so the same data files are planned with different delete files
        for (i, (id, _)) in snapshots.iter().enumerate() {
            ok(
                &lake.ctx,
                &format!("ALTER TABLE ice.ns.{name} CREATE BRANCH b{i} AS OF VERSION {id}"),
            )
            .await;
        }
        // both directions, each policy, the same session throughout
        let mut order: Vec<usize> = (0..snapshots.len()).rev().collect();
        order.extend(0..snapshots.len());
        order.extend([6, 2, 5, 3, 4, 2, 6]);
        for policy in ["auto", "filter", "selection", "auto", "filter"] {
            ok(
                &lake.ctx,
                &format!("SET icefloe.position_deletes = '{policy}'"),
            )
            .await;
            for i in &order {
                let (id, expected) = &snapshots[*i];
                assert_eq!(
                    &ids_at(&lake.ctx, &format!("{name}@b{i}"), None).await,
                    expected,
                    "{name} at branch b{i} ({id}), position_deletes = {policy}"
                );
                assert_eq!(
                    &ids_at(&lake.ctx, name, Some(*id)).await,
                    expected,
                    "{name} at snapshot {i} ({id}), position_deletes = {policy}"
                );
            }
        }
        // main set back and forth: the current table of the same session
        for i in [3, 6, 2, 4, 6] {
            let (id, expected) = &snapshots[i];
            ok(
                &lake.ctx,
                &format!("CALL ice.system.set_current_snapshot('ns.{name}', {id})"),
            )
            .await;
            assert_eq!(
                &ids_at(&lake.ctx, name, None).await,
                expected,
                "{name} rolled back to {i}"
            );
        }
        // a fresh session agrees
        let fresh = crate::dml::session_over(&lake).await;
        for (i, (id, expected)) in snapshots.iter().enumerate() {
            assert_eq!(
                &ids_at(&fresh, name, Some(*id)).await,
                expected,
                "{name} fresh {i}"
            );
        }
        ok(&lake.ctx, "SET icefloe.position_deletes = 'auto'").await;
    }
}

/// Two tables of one session sharing data files (and the delete files of their common
/// history): each DELETE after the split writes delete files for one table alone, and
/// each table, read alternately, answers its own rows (the planned deletes of a data
/// file are kept per set of delete files, not per data file).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_sharing_data_files_keep_their_own_planned_deletes() {
    let lake = lake().await;
    for (name, properties) in [
        ("share_v2", ", 'write.delete.mode'='merge-on-read'"),
        (
            "share_v3",
            ", 'format-version'='3', 'write.delete.mode'='merge-on-read'",
        ),
    ] {
        sixty_rows_then_delete_every_third(&lake, name, properties).await;
        let location = lake
            .catalog
            .load_table(&TableIdent::parse(&format!("ns.{name}")))
            .await
            .expect("load")
            .metadata_location()
            .to_string();
        let other = format!("{name}_other");
        icefloe::catalog::SqlCatalog::open_or_create("default", &lake.db)
            .expect("catalog")
            .register_table(&TableIdent::parse(&format!("ns.{other}")), &location)
            .await
            .expect("register");
        let mut a: Vec<i64> = (1..=60).filter(|i| i % 3 != 0).collect();
        let mut b = a.clone();
        let check = |a: Vec<i64>, b: Vec<i64>| {
            let (ctx, name, other) = (&lake.ctx, name, other.clone());
            async move {
                for _ in 0..2 {
                    assert_eq!(ids_at(ctx, name, None).await, a, "{name}");
                    assert_eq!(ids_at(ctx, &other, None).await, b, "{other}");
                }
            }
        };
        check(a.clone(), b.clone()).await;
        ok(
            &lake.ctx,
            &format!("DELETE FROM ice.ns.{other} WHERE id % 5 = 0"),
        )
        .await;
        b.retain(|i| i % 5 != 0);
        check(a.clone(), b.clone()).await;
        ok(
            &lake.ctx,
            &format!("DELETE FROM ice.ns.{name} WHERE id % 7 = 0"),
        )
        .await;
        a.retain(|i| i % 7 != 0);
        check(a.clone(), b.clone()).await;
        ok(&lake.ctx, "SET icefloe.position_deletes = 'filter'").await;
        check(a.clone(), b.clone()).await;
        ok(&lake.ctx, "SET icefloe.position_deletes = 'auto'").await;
    }
}

/// A data file's footer checks (column chunks inside the file, stored types against the
/// table's) are made once per session: a second scan of the same files, reading other
/// columns, finds every file in the session's checked files and answers the same.
#[tokio::test]
async fn a_second_scan_skips_the_checks_of_files_that_passed() {
    let dir = copy_table("sample_table");
    let location = dir.path().to_str().expect("utf-8");
    let (ctx, checked) = with_own_caches(IcebergTableProvider::open(location).await.expect("open"));
    let data_files = files_with_suffix(&dir.path().join("data"), ".parquet").len() as u64;
    assert!(data_files > 1, "{data_files}");

    let first = sum_of_ids(&ctx).await.expect("first scan");
    let after_first = checked.stats();
    assert_eq!(after_first.hits, 0, "{after_first:?}");
    assert!(after_first.misses >= data_files, "{after_first:?}");
    assert_eq!(after_first.files as u64, data_files, "{after_first:?}");

    assert_eq!(sum_of_ids(&ctx).await, Ok(first));
    let ids = ok(
        &ctx,
        "SELECT count(*), count(DISTINCT v) FROM t WHERE id > 0",
    )
    .await;
    let after = checked.stats();
    assert_eq!(after.misses, after_first.misses, "{after:?}");
    assert!(after.hits >= 2 * data_files, "{after:?}");
    assert!(ids.contains('|'), "{ids}");
}

/// A file that passed its checks under one name mapping is checked again under another:
/// a file without field ids whose `id` column passed as the table's `id`, read after the
/// mapping gives field 1 to its string column `s`, fails naming the file and both types
/// (had the session kept the file as checked, the string column would have been cast).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_passed_under_one_name_mapping_is_checked_again_under_another() {
    let lake = lake().await;
    let src = lake.dir.path().join("source");
    crate::add_files::source_files(&src).await;
    create(&lake, "u", "PARTITIONED BY (k)", "").await;
    ok(
        &lake.ctx,
        &format!(
            "CALL ice.system.add_files('ns.u', '`parquet`.`{}`')",
            src.display()
        ),
    )
    .await;
    let sum = "SELECT sum(id) AS n FROM ice.ns.u";
    let before = ok(&lake.ctx, sum).await;
    assert!(before.contains("| 15 |"), "{before}");
    // the same again: the files are known to pass
    assert_eq!(ok(&lake.ctx, sum).await, before);
    let mapping = r#"[{"field-id":1,"names":["s"]},{"field-id":2,"names":["k"]},{"field-id":3,"names":["id"]},{"field-id":4,"names":["d"]}]"#;
    ok(
        &lake.ctx,
        &format!(
            "ALTER TABLE ice.ns.u SET TBLPROPERTIES ('schema.name-mapping.default'='{mapping}')"
        ),
    )
    .await;
    let err = crate::dml::run(&lake.ctx, sum).await.expect_err("remapped");
    assert!(
        err.contains("column 'id' (field id 1) is stored as Utf8"),
        "{err}"
    );
    assert!(err.contains(&src.display().to_string()), "{err}");
}

/// `q`'s answer (or error) in `lake`'s session, checked equal to that of a new session
/// over the same catalog (nothing cached: every file checked); errors compared but for
/// the file they name.
async fn as_fresh(lake: &Lake, q: &str) -> Result<String, String> {
    let pretty = |b: Vec<datafusion::arrow::array::RecordBatch>| {
        datafusion::arrow::util::pretty::pretty_format_batches(&b)
            .expect("format")
            .to_string()
    };
    // which of several failing files a scan names first varies
    let without_file = |e: &String| match (e.find("data file '"), e.find("': ")) {
        (Some(start), Some(end)) if start < end => format!("{}{}", &e[..start], &e[end..]),
        _ => e.clone(),
    };
    let cached = crate::dml::run(&lake.ctx, q).await.map(pretty);
    let fresh = crate::dml::session_over(lake).await;
    let expected = crate::dml::run(&fresh, q).await.map(pretty);
    assert_eq!(
        cached.as_ref().map_err(without_file),
        expected.as_ref().map_err(without_file),
        "{q}: the session with cached checks differs"
    );
    cached
}

/// `CALL system.add_files` of the Parquet files under `dir` into `ns.<table>`.
async fn add_files(lake: &Lake, table: &str, dir: &std::path::Path) {
    ok(
        &lake.ctx,
        &format!(
            "CALL ice.system.add_files('ns.{table}', '`parquet`.`{}`')",
            dir.display()
        ),
    )
    .await;
}

async fn set_mapping(lake: &Lake, table: &str, mapping: &str) {
    ok(
        &lake.ctx,
        &format!(
            "ALTER TABLE ice.ns.{table} SET TBLPROPERTIES \
             ('schema.name-mapping.default'='{mapping}')"
        ),
    )
    .await;
}

/// One session reads files that passed their checks again under changed conditions, and
/// answers as a session without cached checks (each answer compared): the same files (no
/// field ids) added to two tables, one of which then maps `id` and `d` the other way round
/// (its reads and a `DELETE` rewriting its files fail naming both types, the other
/// table's read) and back; the same files and mapping in a table whose mapped column is
/// an `int` (fails); a struct's fields mapped the other way round (fails) and back; the
/// same struct file and mapping in a
/// table of the same Arrow schema whose struct fields have each other's ids (fails: kept
/// as checked, it read `s.x` 2.0 and `s.y` 1, the values cast); a table written with ids
/// read after type promotions, a drop and re-add of a column of the same name with
/// another type, and back in time at its first snapshot (no cast where a promotion is
/// read).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checked_files_follow_tables_mappings_and_schemas() {
    let lake = lake().await;
    let src = lake.dir.path().join("source");
    crate::add_files::source_files(&src).await;
    for t in ["u1", "u2"] {
        create(&lake, t, "PARTITIONED BY (k)", "").await;
        add_files(&lake, t, &src).await;
    }
    let read = |t: &str| format!("SELECT sum(id) AS n, sum(d) AS d, count(s) AS s FROM ice.ns.{t}");
    let first = as_fresh(&lake, &read("u1")).await.expect("u1");
    assert!(first.contains("| 15 | 14.0 | 4 |"), "{first}");
    assert_eq!(as_fresh(&lake, &read("u2")).await.as_ref(), Ok(&first));
    let swapped = r#"[{"field-id":1,"names":["d"]},{"field-id":2,"names":["k"]},{"field-id":3,"names":["s"]},{"field-id":4,"names":["id"]}]"#;
    set_mapping(&lake, "u2", swapped).await;
    let err = as_fresh(&lake, &read("u2")).await.expect_err("swapped");
    assert!(
        err.contains("is stored as Float64") || err.contains("is stored as Int64"),
        "{err}"
    );
    assert!(err.contains(&src.display().to_string()), "{err}");
    // nor rewritten with its values cast
    let err = as_fresh(&lake, "DELETE FROM ice.ns.u2 WHERE s = 'a'")
        .await
        .expect_err("delete");
    assert!(err.contains("is stored as"), "{err}");
    assert_eq!(as_fresh(&lake, &read("u1")).await.as_ref(), Ok(&first));
    let plain = r#"[{"field-id":1,"names":["id"]},{"field-id":2,"names":["k"]},{"field-id":3,"names":["s"]},{"field-id":4,"names":["d"]}]"#;
    set_mapping(&lake, "u2", plain).await;
    assert_eq!(as_fresh(&lake, &read("u2")).await.as_ref(), Ok(&first));
    // the same files and mapping in a table whose field 4 is an int
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.v (id BIGINT, k INT, s STRING, x INT) PARTITIONED BY (k)",
    )
    .await;
    add_files(&lake, "v", &src).await;
    set_mapping(&lake, "v", plain).await;
    let err = as_fresh(&lake, "SELECT sum(id) AS n, sum(x) AS x FROM ice.ns.v")
        .await
        .expect_err("x is an int");
    assert!(
        err.contains("column 'x' (field id 4) is stored as Float64"),
        "{err}"
    );

    // a struct's fields: by the mapping add_files set, then the other way round
    let nested = lake.dir.path().join("nested");
    std::fs::create_dir_all(&nested).expect("dir");
    let plain_ctx = SessionContext::new();
    let copy = format!(
        "COPY (SELECT CAST(1 AS BIGINT) AS id, named_struct('x', 1.5, 'y', CAST(2 AS BIGINT)) \
         AS s) TO '{}/f.parquet' STORED AS PARQUET",
        nested.display()
    );
    plain_ctx
        .sql(&copy)
        .await
        .expect("copy")
        .collect()
        .await
        .expect("copy");
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.n (id BIGINT, s STRUCT<x: DOUBLE, y: BIGINT>)",
    )
    .await;
    add_files(&lake, "n", &nested).await;
    let q = "SELECT id, s['x'] AS x, s['y'] AS y FROM ice.ns.n";
    let rows = as_fresh(&lake, q).await.expect("n");
    assert!(rows.contains("| 1  | 1.5 | 2 |"), "{rows}");
    let inner = |x: &str, y: &str| {
        format!(
            r#"[{{"field-id":1,"names":["id"]}},{{"field-id":2,"names":["s"],"fields":[{{"field-id":3,"names":["{x}"]}},{{"field-id":4,"names":["{y}"]}}]}}]"#
        )
    };
    set_mapping(&lake, "n", &inner("y", "x")).await;
    let err = as_fresh(&lake, q).await.expect_err("nested swapped");
    assert!(
        err.contains("column 's.x' (field id 3) is stored as Int64"),
        "{err}"
    );
    set_mapping(&lake, "n", &inner("x", "y")).await;
    assert_eq!(as_fresh(&lake, q).await.as_ref(), Ok(&rows));
    // a table of the same Arrow schema and mapping whose struct fields have the other
    // ids: `s.x` (a double) has field id 4, which the mapping gives the file's `y` (a long)
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.n2 (id BIGINT, s STRUCT<x: BIGINT, y: DOUBLE>)",
    )
    .await;
    for change in [
        "RENAME COLUMN s.x TO t",
        "RENAME COLUMN s.y TO x",
        "RENAME COLUMN s.t TO y",
        "ALTER COLUMN s.x FIRST",
    ] {
        ok(&lake.ctx, &format!("ALTER TABLE ice.ns.n2 {change}")).await;
    }
    add_files(&lake, "n2", &nested).await;
    set_mapping(&lake, "n2", &inner("x", "y")).await;
    let q2 = "SELECT id, s['x'] AS x, s['y'] AS y FROM ice.ns.n2";
    assert_eq!(as_fresh(&lake, q).await.as_ref(), Ok(&rows));
    let err = as_fresh(&lake, q2).await.expect_err("other nested ids");
    assert!(
        err.contains("column 's.x' (field id 4) is stored as Int64"),
        "{err}"
    );

    // files with field ids, through type promotions, a column replaced and time travel
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.p (a INT, f FLOAT, m DECIMAL(9, 2))",
    )
    .await;
    ok(&lake.ctx, "INSERT INTO ice.ns.p VALUES (1, 1.5, 1.25)").await;
    let q = "SELECT * FROM ice.ns.p ORDER BY a";
    as_fresh(&lake, q).await.expect("p");
    let first_snapshot = crate::dml::count(
        &lake.ctx,
        "SELECT min(snapshot_id) AS s FROM ice.ns.\"p$snapshots\"",
    )
    .await;
    for change in [
        "ALTER COLUMN a TYPE BIGINT",
        "ALTER COLUMN f TYPE DOUBLE",
        "ALTER COLUMN m TYPE DECIMAL(12, 2)",
    ] {
        ok(&lake.ctx, &format!("ALTER TABLE ice.ns.p {change}")).await;
        as_fresh(&lake, q).await.expect(change);
    }
    ok(&lake.ctx, "INSERT INTO ice.ns.p VALUES (2, 2.5, 2.25)").await;
    let promoted = as_fresh(&lake, q).await.expect("promoted");
    assert!(
        promoted.contains("| 1 | 1.5 | 1.25 |") && promoted.contains("| 2 | 2.5 | 2.25 |"),
        "{promoted}"
    );
    ok(&lake.ctx, "ALTER TABLE ice.ns.p DROP COLUMN f").await;
    ok(&lake.ctx, "ALTER TABLE ice.ns.p ADD COLUMN f STRING").await;
    ok(&lake.ctx, "INSERT INTO ice.ns.p VALUES (3, 3.25, 'x')").await;
    let replaced = as_fresh(&lake, q).await.expect("replaced");
    assert!(
        replaced.contains("| 1 | 1.25 |   |") && replaced.contains("| 3 | 3.25 | x |"),
        "{replaced}"
    );
    let old = as_fresh(
        &lake,
        &format!("SELECT * FROM ice.ns.p VERSION AS OF {first_snapshot}"),
    )
    .await
    .expect("time travel");
    assert!(old.contains("| 1 | 1.5 | 1.25 |"), "{old}");
}

/// A file with an INT96 column whose first scan reads only its other column (nothing of
/// the INT96 column checked against the nanosecond range) is checked again when a later
/// scan reads the INT96 column: its value outside the range fails that scan, naming it,
/// each time (had the file been kept as checked, the value would have wrapped to another
/// time).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn int96_files_are_checked_for_each_projection() {
    if crate::interop::python().is_none() {
        return;
    }
    let lake = lake().await;
    let out = lake.dir.path().join("out");
    crate::interop::run_script(
        "foreign_parquet.py",
        &[out.as_os_str(), std::ffi::OsStr::new("int96_out_of_range")],
    );
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.late (id INT, ts TIMESTAMP(9)) TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    add_files(&lake, "late", &out.join("late")).await;
    for _ in 0..2 {
        let ids = as_fresh(&lake, "SELECT id FROM ice.ns.late ORDER BY id")
            .await
            .expect("ids");
        assert!(ids.contains("| 2  |"), "{ids}");
        let err = as_fresh(&lake, "SELECT * FROM ice.ns.late")
            .await
            .expect_err("out of range");
        assert!(
            err.contains("/late/f.parquet'")
                && err.contains("column 'ts' (field id 2) holds the INT96 timestamp 2300-01-01"),
            "{err}"
        );
    }
}

/// A file whose stored row lineage column `_row_id` (field id 2147483540) is a string
/// passes its checks in a scan that reads only the table's columns, and is checked again
/// when a scan reads `_row_id` (the stored lineage columns join the scan's table schema):
/// that read fails naming the column and both types, in the session that read it before
/// as in a new one (kept as checked, the strings would have been cast).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_passed_without_lineage_columns_is_checked_when_they_are_read() {
    use datafusion::arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::parquet::arrow::ArrowWriter;
    let lake = lake().await;
    let src = lake.dir.path().join("lineage");
    std::fs::create_dir_all(&src).expect("dir");
    let field = |name: &str, data_type: DataType, id: i64| {
        Field::new(name, data_type, true).with_metadata(HashMap::from([(
            "PARQUET:field_id".to_string(),
            id.to_string(),
        )]))
    };
    let schema = Arc::new(Schema::new(vec![
        field("id", DataType::Int64, 1),
        field("_row_id", DataType::Utf8, 2147483540),
    ]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
            Arc::new(StringArray::from(vec![None::<&str>, None])),
        ],
    )
    .expect("batch");
    let file = std::fs::File::create(src.join("f.parquet")).expect("file");
    let mut writer = ArrowWriter::try_new(file, schema, None).expect("writer");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.l (id BIGINT) TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    add_files(&lake, "l", &src).await;
    let ids = as_fresh(&lake, "SELECT id FROM ice.ns.l ORDER BY id")
        .await
        .expect("ids");
    assert!(ids.contains("| 2  |"), "{ids}");
    let err = as_fresh(&lake, "SELECT id, _row_id FROM ice.ns.l ORDER BY id")
        .await
        .expect_err("a string _row_id");
    assert!(
        err.contains(
            "column '_row_id' (field id 2147483540) is stored as Utf8, which does not read as \
             the table's type long"
        ) && !err.contains("__icefloe"),
        "{err}"
    );
}

/// A file whose column chunk holds only nulls (no `min_value` / `max_value`, which the
/// `parquet` crate reads as deprecated statistics) has no bounds to distrust: it is kept
/// as checked, and a second scan skips its checks (it was checked, and its footer
/// rebuilt, in every scan).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_with_chunks_of_nulls_are_kept_as_checked() {
    let lake = lake().await;
    create(&lake, "nulls", "", "").await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.nulls VALUES (1, 1, NULL, 1.5), (2, 2, NULL, NULL)",
    )
    .await;
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.nulls"))
        .await
        .expect("load");
    let (ctx, checked) = with_own_caches(IcebergTableProvider::try_new(table).expect("provider"));
    let q = "SELECT sum(id) AS n, count(s) AS s FROM t";
    let first = ok(&ctx, q).await;
    assert!(first.contains("| 3 | 0 |"), "{first}");
    assert_eq!(checked.stats().files, 1, "{:?}", checked.stats());
    assert_eq!(ok(&ctx, q).await, first);
    assert_eq!(checked.stats().hits, 1, "{:?}", checked.stats());
}

/// What Spark and PyIceberg wrote (the corpus tables: every Spark primitive type, nested
/// types, merge-on-read position deletes, deletion vectors, uuid/time/fixed) reads the same
/// when a second scan in the session finds its files among the checked ones, and every file
/// kept after the first scan is found by the second; the Spark tables' files are kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_written_tables_read_the_same_with_their_files_checked_once() {
    for (table, spark) in [
        ("corpus/spark_v1_types_identity", true),
        ("corpus/spark_v2_nested", true),
        ("corpus/spark_v2_mor_position_deletes", true),
        ("corpus/spark_v3_deletion_vectors", true),
        ("corpus/pyiceberg_v2_types_uuid_time", false),
    ] {
        let location = crate::fixtures::testdata(table);
        let location = location.to_str().expect("utf-8");
        let (ctx, checked) =
            with_own_caches(IcebergTableProvider::open(location).await.expect("open"));
        let sorted = |text: String| {
            let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
            lines.sort();
            lines
        };
        let first = sorted(ok(&ctx, "SELECT * FROM t").await);
        let after_first = checked.stats();
        assert_eq!(after_first.hits, 0, "{table}: {after_first:?}");
        if spark {
            assert!(after_first.files > 0, "{table}: {after_first:?}");
        }
        let second = sorted(ok(&ctx, "SELECT * FROM t").await);
        assert_eq!(first, second, "{table}");
        let after = checked.stats();
        assert!(
            after.hits >= after_first.files as u64,
            "{table}: {after_first:?} then {after:?}"
        );
        // a session without the first scan's cache answers the same
        let fresh = SessionContext::new();
        let provider = IcebergTableProvider::open(location).await.expect("open");
        fresh
            .register_table("t", Arc::new(provider))
            .expect("register");
        assert_eq!(
            sorted(ok(&fresh, "SELECT * FROM t").await),
            first,
            "{table}"
        );
    }
}

/// Writes `f.parquet` in `dir`: columns `id` (BIGINT) and `v` (STRING) holding `rows`,
/// uncompressed and without dictionaries, so that files of three 2-letter rows have
/// one size. Returns the file's size in bytes.
fn write_id_v(dir: &std::path::Path, rows: &[(i64, &str)]) -> u64 {
    use datafusion::arrow::array::{Int64Array, RecordBatch, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::parquet::arrow::ArrowWriter;
    use datafusion::parquet::basic::Compression;
    use datafusion::parquet::file::properties::WriterProperties;
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("v", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))),
        ],
    )
    .expect("batch");
    let properties = WriterProperties::builder()
        .set_compression(Compression::UNCOMPRESSED)
        .set_dictionary_enabled(false)
        .set_created_by("icefloe test".to_string())
        .build();
    let path = dir.join("f.parquet");
    let file = std::fs::File::create(&path).expect("create");
    let mut writer = ArrowWriter::try_new(file, schema, Some(properties)).expect("writer");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
    std::fs::metadata(&path).expect("size").len()
}

/// Tester U66, fault 1: a data file removed from the table and added again at the same
/// path with other contents of the same size (legal: `add_files` checks only live files)
/// is read as the new manifest entry describes, in the session that cached the old
/// file's footer and checks, as a new session reads it (before: `id > 5` found no rows,
/// pruned by the old footer's statistics, max id 3). In format versions 1 (sequence
/// numbers all 0) and 2. An unchanged table still hits the footer cache and the checked
/// files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_re_added_at_its_path_with_new_contents_of_the_same_size_is_read_anew() {
    for version in [1, 2] {
        let lake = lake().await;
        let src = lake.dir.path().join("source");
        std::fs::create_dir_all(&src).expect("source");
        let first = write_id_v(&src, &[(1, "aa"), (2, "bb"), (3, "cc")]);
        ok(
            &lake.ctx,
            &format!(
                "CREATE TABLE ice.ns.a (id BIGINT, v STRING) \
                 TBLPROPERTIES ('format-version'='{version}')"
            ),
        )
        .await;
        ok(
            &lake.ctx,
            &format!(
                "CALL ice.system.add_files('ns.a', '`parquet`.`{}`')",
                src.join("f.parquet").display()
            ),
        )
        .await;
        let gt = "SELECT id, v FROM ice.ns.a WHERE id > 0 ORDER BY id";
        assert!(as_fresh(&lake, gt)
            .await
            .expect("read")
            .contains("| 3  | cc |"));
        // again, unchanged: the footer and the checks are the cached ones
        let footers = lake
            .ctx
            .runtime_env()
            .cache_manager
            .get_file_metadata_cache();
        let hits = || {
            footers
                .list_entries()
                .values()
                .map(|e| e.hits)
                .sum::<usize>()
        };
        let before = hits();
        assert!(as_fresh(&lake, gt)
            .await
            .expect("read")
            .contains("| 3  | cc |"));
        assert!(hits() > before, "v{version}: no footer hit");

        ok(&lake.ctx, "DELETE FROM ice.ns.a WHERE id > 0").await;
        let second = write_id_v(&src, &[(7, "xx"), (8, "yy"), (9, "zz")]);
        assert_eq!(first, second, "the same size");
        ok(
            &lake.ctx,
            &format!(
                "CALL ice.system.add_files('ns.a', '`parquet`.`{}`')",
                src.join("f.parquet").display()
            ),
        )
        .await;
        let rows = as_fresh(&lake, "SELECT id FROM ice.ns.a WHERE id > 5 ORDER BY id")
            .await
            .expect("read");
        assert!(
            rows.contains("| 7  |") && rows.contains("| 9  |"),
            "v{version}: {rows}"
        );
        let yy = as_fresh(&lake, "SELECT count(*) AS n FROM ice.ns.a WHERE v = 'yy'")
            .await
            .expect("read");
        assert!(yy.contains("| 1 |"), "v{version}: {yy}");
    }
}
