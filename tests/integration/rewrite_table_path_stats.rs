//! `rewrite_table_path` of a table with partition statistics files that
//! `compute_partition_stats` wrote: the moved metadata names the copies at the target
//! prefix (the same bytes, the recorded sizes), `compute_partition_stats` on the moved
//! table answers the copied file of a snapshot that has one and computes the next
//! snapshot's incrementally from it, and PyIceberg's reading of the moved manifests
//! agrees with every file at the target.

use datafusion::arrow::array::AsArray;
use icefloe::catalog::TableIdent;
use icefloe::datafusion::maintenance::{partition_stats_rows, StatsComputation};

use crate::dml::{lake, ok, run};
use crate::partition_stats::{compute, files_agree, statistics_files};
use crate::rewrite_table_path::{
    build, call, copy_all_to_latest, file_list, local, target, Target,
};

/// The location `CALL dr.system.compute_partition_stats(...)` answers at the target.
async fn compute_at(to: &Target, name: &str) -> String {
    let q = format!("CALL dr.system.compute_partition_stats('ns.{name}')");
    let batches = run(&to.ctx, &q)
        .await
        .unwrap_or_else(|e| panic!("{q}: {e}"));
    let values: Vec<String> = batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_string::<i32>()
                .iter()
                .map(|v| v.expect("location").to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(values.len(), 1, "{q}: {values:?}");
    values[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_table_path_moves_partition_statistics_files() {
    let lake = lake().await;
    let name = "stats_moved";
    build(&lake, name, 2).await;
    let ident = TableIdent::parse(&format!("ns.{name}"));
    let table = lake.catalog.load_table(&ident).await.expect("load");
    let first = table.metadata().snapshots[0].snapshot_id;
    let current = compute(&lake, &format!("'ns.{name}'"))
        .await
        .expect("a file");
    let older = compute(&lake, &format!("'ns.{name}', {first}"))
        .await
        .expect("a file");
    let table = lake.catalog.load_table(&ident).await.expect("load");
    let source = table.metadata().location.clone();
    let sources = statistics_files(&table);
    assert_eq!(sources.len(), 2, "{current} {older}");

    let dest = tempfile::tempdir().expect("tempdir");
    let target_prefix = dest.path().join("moved").display().to_string();
    let (latest, list) = call(
        &lake,
        &format!(
            "table => 'ns.{name}', source_prefix => '{source}', target_prefix => \
             '{target_prefix}'"
        ),
    )
    .await
    .expect("rewrite_table_path");
    let list = file_list(&list);
    for (_, path, _) in &sources {
        assert!(list.contains_key(path), "{path} listed: {list:?}");
    }
    let metadata = copy_all_to_latest(&list, &latest);
    let to = target(dest.path()).await;
    to.catalog
        .register_table(&ident, &metadata)
        .await
        .expect("register");
    let moved = to.catalog.load_table(&ident).await.expect("load");
    let targets = statistics_files(&moved);
    assert_eq!(targets.len(), sources.len());
    for ((id, from, size), (moved_id, to_path, moved_size)) in sources.iter().zip(&targets) {
        assert_eq!((id, size), (moved_id, moved_size));
        assert_eq!(Some(to_path), list.get(from), "the copy of {from}");
        // under the target prefix, in the form of local path the source file is named in
        assert!(local(to_path).starts_with(&target_prefix), "{to_path}");
        assert_eq!(
            to_path.strip_suffix(local(to_path).to_str().expect("UTF-8")),
            from.strip_suffix(local(from).to_str().expect("UTF-8")),
            "{to_path} is named as {from} is"
        );
        let bytes = std::fs::read(local(to_path)).expect("copied");
        assert_eq!(bytes.len() as i64, *size, "{to_path}");
        assert_eq!(
            bytes,
            std::fs::read(local(from)).expect("source"),
            "{to_path}"
        );
    }
    // a snapshot with a file answers the copy
    let current_id = moved
        .metadata()
        .current_snapshot()
        .expect("current")
        .snapshot_id;
    let at_current = targets
        .iter()
        .find(|t| t.0 == current_id)
        .expect("the current snapshot's file");
    assert_eq!(compute_at(&to, name).await, at_current.1);

    // a new snapshot at the target: computed from the copied file
    ok(
        &to.ctx,
        &format!("INSERT INTO dr.ns.{name} VALUES (100, 0, 'n', 1.0), (101, 7, 'n', 2.0)"),
    )
    .await;
    let moved = to.catalog.load_table(&ident).await.expect("load");
    let snapshot = moved
        .metadata()
        .current_snapshot()
        .expect("current")
        .clone();
    let (_, how) = partition_stats_rows(&moved, &snapshot).await.expect("rows");
    assert_eq!(
        how,
        StatsComputation::Incremental {
            base_snapshot_id: current_id,
            manifests_read: 1
        }
    );
    let newest = compute_at(&to, name).await;
    assert!(local(&newest).starts_with(&target_prefix), "{newest}");
    if crate::interop::python().is_none() {
        return;
    }
    let ident = format!("ns.{name}");
    let args = [
        to.db.as_os_str(),
        to.warehouse.as_os_str(),
        std::ffi::OsStr::new(&ident),
    ];
    let files = files_agree(name, &args, 2, Some(&[(1000, "k")]));
    assert_eq!(files.len(), 3);
}
