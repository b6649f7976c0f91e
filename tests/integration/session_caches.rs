//! Reusing what the DataFusion session caches (issue 18, item 6): Parquet footers of
//! data files go through the session's file-metadata cache, so a second scan in the
//! same session reads no footer.

use std::io::{Seek, SeekFrom, Write};
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::prelude::SessionContext;
use icefloe::IcebergTableProvider;

use crate::fixtures::{copy_table, files_with_suffix};

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
