//! Planned data files keep the metrics `TableScan::with_column_stats` selects (and the
//! filter's); delete files and snapshots with deletes keep all; the manifest cache never
//! serves entries with fewer metrics than a plan asks for.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::cache::ManifestCache;
use super::TableScan;
use crate::expr::{BinaryOp, Predicate};
use crate::spec::{
    ColumnStats, DataContentType, DataFile, Literal, NestedField, PartitionSpec, PrimitiveType,
    Schema, Type,
};
use crate::write::bounds::literal_to_bytes;
use crate::write::{empty_data_file, LocalTableWriter};
use crate::Table;

/// A data file `n` of 10 rows whose `id` (field 1) runs from `10 n` to `10 n + 9` and
/// whose `v` (field 2) is `n`, with every metric for both columns.
fn data_file(n: i64) -> DataFile {
    let mut f = empty_data_file(
        &format!("file:///nowhere/{n}.parquet"),
        DataContentType::Data,
    );
    f.record_count = 10;
    for id in [1, 2] {
        f.column_sizes.insert(id, 100);
        f.value_counts.insert(id, 10);
        f.null_value_counts.insert(id, 0);
    }
    f.lower_bounds
        .insert(1, literal_to_bytes(&Literal::Long(10 * n)));
    f.upper_bounds
        .insert(1, literal_to_bytes(&Literal::Long(10 * n + 9)));
    f.lower_bounds
        .insert(2, literal_to_bytes(&Literal::Long(n)));
    f.upper_bounds
        .insert(2, literal_to_bytes(&Literal::Long(n)));
    f
}

/// An unpartitioned table (`id long, v long`) of one snapshot of data files 0..4.
fn table(dir: &Path) -> LocalTableWriter {
    let long = || Type::Primitive(PrimitiveType::Long);
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", long()),
            NestedField::required(2, "v", long()),
        ],
    );
    let mut w =
        LocalTableWriter::create(dir, schema, PartitionSpec::unpartitioned(), HashMap::new())
            .expect("create");
    w.append((0..4).map(data_file).collect()).expect("append");
    w
}

async fn open(dir: &Path) -> Table {
    Table::open(&dir.to_string_lossy()).await.expect("open")
}

fn scan(table: &Table) -> TableScan {
    TableScan::new(table.clone(), table.metadata().current_snapshot().cloned())
}

/// The field ids with metrics of each kind on `f`, checked to be the same for all six.
fn metric_ids(f: &DataFile) -> Vec<i32> {
    let ids: Vec<i32> = f.column_sizes.keys().copied().collect();
    for other in [
        f.value_counts.keys().copied().collect::<Vec<_>>(),
        f.null_value_counts.keys().copied().collect(),
        f.lower_bounds.keys().copied().collect(),
        f.upper_bounds.keys().copied().collect(),
    ] {
        assert_eq!(other, ids, "metrics of {}", f.file_path);
    }
    ids
}

async fn planned_ids(scan: &TableScan) -> Vec<Vec<i32>> {
    let plan = scan.plan_files().await.expect("plan");
    plan.tasks
        .iter()
        .map(|t| metric_ids(t.data_file()))
        .collect()
}

#[tokio::test]
async fn data_files_keep_the_selected_and_filtered_columns_metrics() {
    let dir = tempfile::tempdir().expect("tempdir");
    let _w = table(dir.path());
    let table = open(dir.path()).await;
    assert_eq!(planned_ids(&scan(&table)).await, vec![vec![1, 2]; 4]);
    let only_v = scan(&table).with_column_stats(ColumnStats::only([2]));
    assert_eq!(planned_ids(&only_v).await, vec![vec![2]; 4]);
    let none = scan(&table).with_column_stats(ColumnStats::none());
    assert_eq!(planned_ids(&none).await, vec![Vec::<i32>::new(); 4]);
    // A filter on `id` prunes by its metrics (files 2 and 3 hold id >= 25) and keeps them.
    let filtered = scan(&table)
        .with_column_stats(ColumnStats::none())
        .with_filter(Predicate::col_binary(
            BinaryOp::GtEq,
            "id",
            Literal::Long(25),
        ));
    let plan = filtered.plan_files().await.expect("plan");
    let kept: Vec<(String, Vec<i32>)> = plan
        .tasks
        .iter()
        .map(|t| (t.data_file().file_path.clone(), metric_ids(t.data_file())))
        .collect();
    assert_eq!(
        kept,
        vec![
            ("file:///nowhere/2.parquet".to_string(), vec![1]),
            ("file:///nowhere/3.parquet".to_string(), vec![1]),
        ]
    );
    assert_eq!(plan.metrics.data_files_skipped_by_metrics, 2);
}

#[tokio::test]
async fn the_cache_serves_a_plan_only_entries_with_the_metrics_it_asks_for() {
    let dir = tempfile::tempdir().expect("tempdir");
    let _w = table(dir.path());
    let table = open(dir.path()).await;
    let cache = Arc::new(ManifestCache::default());
    let cached = |stats: ColumnStats| {
        scan(&table)
            .with_manifest_cache(Arc::clone(&cache))
            .with_column_stats(stats)
    };
    // Entries read keeping `v`'s metrics are cached, and serve the same request again...
    assert_eq!(
        planned_ids(&cached(ColumnStats::only([2]))).await,
        vec![vec![2]; 4]
    );
    assert_eq!(
        planned_ids(&cached(ColumnStats::only([2]))).await,
        vec![vec![2]; 4]
    );
    assert_eq!((cache.stats().hits, cache.stats().misses), (1, 1));
    // ...but not a plan asking for every column's or for `id`'s: those read the manifest
    // again.
    assert_eq!(
        planned_ids(&cached(ColumnStats::All)).await,
        vec![vec![1, 2]; 4]
    );
    assert_eq!(
        planned_ids(&cached(ColumnStats::only([1]))).await,
        vec![vec![1, 2]; 4]
    );
    assert_eq!(
        cache.stats().misses,
        2,
        "the second read is served every metric"
    );
    assert_eq!(
        planned_ids(&cached(ColumnStats::none())).await,
        vec![vec![1, 2]; 4]
    );
}

#[tokio::test]
async fn with_deletes_every_metric_is_kept_and_delete_files_keep_theirs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = table(dir.path());
    let mut delete = empty_data_file(
        "file:///nowhere/eq.parquet",
        DataContentType::EqualityDeletes,
    );
    delete.equality_ids = vec![2];
    delete.record_count = 1;
    delete.value_counts.insert(2, 1);
    delete
        .lower_bounds
        .insert(2, literal_to_bytes(&Literal::Long(1)));
    delete
        .upper_bounds
        .insert(2, literal_to_bytes(&Literal::Long(1)));
    w.row_delta(vec![data_file(4)], vec![delete])
        .expect("delete commit");
    let table = open(dir.path()).await;
    let none = scan(&table).with_column_stats(ColumnStats::none());
    let plan = none.plan_files().await.expect("plan");
    assert_eq!(plan.tasks.len(), 5);
    for t in &plan.tasks {
        assert_eq!(metric_ids(t.data_file()), vec![1, 2]);
    }
    let [delete] = plan.delete_entries.as_slice() else {
        panic!("one delete file: {:?}", plan.delete_entries);
    };
    assert_eq!(
        delete
            .data_file
            .value_counts
            .keys()
            .copied()
            .collect::<Vec<_>>(),
        vec![2]
    );
    assert_eq!(
        delete
            .data_file
            .lower_bounds
            .keys()
            .copied()
            .collect::<Vec<_>>(),
        vec![2]
    );
}
