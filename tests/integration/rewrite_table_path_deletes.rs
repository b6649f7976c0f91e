//! `rewrite_table_path` and the delete files it rewrites: the copied manifests record the
//! metrics of the rewritten Parquet position delete files (their footers and rows read
//! back here), not the source files' (the moved `file_path` values change the column's
//! bytes and bounds), and the moved table reads alike in icefloe, PyIceberg and DuckDB.

use std::collections::HashMap;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use icefloe::catalog::{Catalog, TableIdent};
use icefloe::scan::TableScan;
use icefloe::spec::{DataContentType, DataFileFormat};

use crate::dml::{lake, ok};
use crate::rewrite_table_path::{
    build, call, copy_all_to_latest, file_list, local, none_names, same_at_every_snapshot,
    sizes_are_the_copies, target,
};

/// The field id of a position delete file's `file_path` column.
const FILE_PATH_ID: i32 = 2147483546;

/// What a Parquet file holds, by leaf field id: compressed bytes, values, nulls; its row
/// group starts; and the least and greatest `file_path`.
struct Footer {
    sizes: HashMap<i32, i64>,
    values: HashMap<i32, i64>,
    nulls: HashMap<i32, i64>,
    offsets: Vec<i64>,
    paths: Option<(String, String)>,
}

fn footer(path: &std::path::Path) -> Footer {
    let bytes = bytes::Bytes::from(std::fs::read(path).expect("read delete file"));
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes).expect("parquet");
    let meta = builder.metadata().clone();
    let descr = meta.file_metadata().schema_descr();
    let (mut sizes, mut values, mut nulls) = (HashMap::new(), HashMap::new(), HashMap::new());
    let mut offsets = vec![];
    for rg in meta.row_groups() {
        let first = rg.column(0);
        offsets.push(
            first
                .dictionary_page_offset()
                .unwrap_or(first.data_page_offset()),
        );
        for (i, c) in rg.columns().iter().enumerate() {
            let id = descr.column(i).self_type().get_basic_info().id();
            *sizes.entry(id).or_insert(0) += c.compressed_size();
            *values.entry(id).or_insert(0) += c.num_values();
            let n = c
                .statistics()
                .and_then(|s| s.null_count_opt())
                .expect("null count") as i64;
            *nulls.entry(id).or_insert(0) += n;
        }
    }
    let mut paths: Option<(String, String)> = None;
    for batch in builder.build().expect("reader") {
        let batch = batch.expect("batch");
        let column = batch.column_by_name("file_path").expect("file_path");
        let column = column.as_string::<i32>();
        for i in 0..column.len() {
            let v = column.value(i).to_string();
            paths = Some(match paths {
                None => (v.clone(), v),
                Some((lo, hi)) => (lo.min(v.clone()), hi.max(v)),
            });
        }
    }
    Footer {
        sizes,
        values,
        nulls,
        offsets,
        paths,
    }
}

/// Every live Parquet position delete file of every snapshot of `ident` in `catalog`:
/// the manifest's metrics are those of the file (its footer and rows). Returns how many
/// files had `file_path` bounds (a file of several data files has different ones).
pub(crate) async fn delete_metrics_are_the_files(
    catalog: &dyn Catalog,
    ident: &str,
) -> (usize, usize) {
    let table = catalog
        .load_table(&TableIdent::parse(ident))
        .await
        .expect("load");
    let (mut checked, mut spanning) = (0, 0);
    for snapshot in table.metadata().snapshots.clone() {
        let plan = TableScan::new(table.clone(), Some(snapshot))
            .plan_files()
            .await
            .expect("plan");
        for entry in &plan.delete_entries {
            let f = &entry.data_file;
            if f.file_format != DataFileFormat::Parquet
                || f.content != DataContentType::PositionDeletes
            {
                continue;
            }
            let what = &f.file_path;
            let path = local(what);
            let actual = footer(&path);
            let len = std::fs::metadata(&path).expect("copied").len() as i64;
            assert_eq!(f.file_size_in_bytes, len, "file_size_in_bytes of {what}");
            assert_eq!(f.split_offsets, actual.offsets, "split_offsets of {what}");
            assert!(!f.column_sizes.is_empty(), "column_sizes of {what}");
            for (name, recorded, real) in [
                ("column_sizes", &f.column_sizes, &actual.sizes),
                ("value_counts", &f.value_counts, &actual.values),
                ("null_value_counts", &f.null_value_counts, &actual.nulls),
            ] {
                for (id, v) in recorded.iter() {
                    assert_eq!(Some(v), real.get(id), "{name}[{id}] of {what}");
                }
            }
            let (lo, hi) = actual.paths.clone().expect("rows");
            for (name, bounds, real) in [
                ("lower", &f.lower_bounds, &lo),
                ("upper", &f.upper_bounds, &hi),
            ] {
                if let Some(b) = bounds.get(&FILE_PATH_ID) {
                    assert_eq!(
                        std::str::from_utf8(b).expect("utf-8"),
                        real.as_str(),
                        "{name} bound of file_path of {what}"
                    );
                }
            }
            if f.lower_bounds.get(&FILE_PATH_ID) != f.upper_bounds.get(&FILE_PATH_ID) {
                spanning += 1;
            }
            checked += 1;
        }
    }
    (checked, spanning)
}

/// A v2 table with position delete files of one data file each and, after
/// `write.delete.granularity` = `partition`, of several, moved to a longer prefix: each
/// rewritten delete file's column sizes (the source's were smaller: shorter paths),
/// value and null counts, row group offsets, size and `file_path` bounds in the copied
/// manifests are the copy's; the table reads alike in three engines at every snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_table_path_records_the_metrics_of_rewritten_position_delete_files() {
    let lake = lake().await;
    let name = "pd_metrics";
    build(&lake, name, 2).await;
    let t = format!("ice.ns.{name}");
    ok(
        &lake.ctx,
        &format!("ALTER TABLE {t} SET TBLPROPERTIES ('write.delete.granularity'='partition')"),
    )
    .await;
    // ids 1 and 13 (k = 1) and 4 and 22 (k = 0) lie in different data files
    ok(
        &lake.ctx,
        &format!("DELETE FROM {t} WHERE id IN (1, 4, 13, 22)"),
    )
    .await;
    let ident = format!("ns.{name}");
    let (checked, spanning) = delete_metrics_are_the_files(lake.catalog.as_ref(), &ident).await;
    assert!(checked > 0 && spanning > 0, "{checked} {spanning}");
    let source = lake
        .catalog
        .load_table(&TableIdent::parse(&ident))
        .await
        .expect("load")
        .metadata()
        .location
        .clone();
    let dest = tempfile::tempdir().expect("tempdir");
    let target_prefix = dest
        .path()
        .join("moved")
        .join("a_longer_directory_than_the_source_had")
        .display()
        .to_string();
    let (latest, list) = call(
        &lake,
        &format!(
            "table => '{ident}', source_prefix => '{source}', target_prefix => '{target_prefix}'"
        ),
    )
    .await
    .expect("rewrite_table_path");
    let metadata = copy_all_to_latest(&file_list(&list), &latest);
    none_names(
        &local(&target_prefix),
        &local(&source).display().to_string(),
    );
    let to = target(dest.path()).await;
    to.catalog
        .register_table(&TableIdent::parse(&ident), &metadata)
        .await
        .expect("register");
    let moved = delete_metrics_are_the_files(to.catalog.as_ref(), &ident).await;
    assert_eq!(moved, (checked, spanning), "the same delete files");
    sizes_are_the_copies(&to.ctx, name).await;
    same_at_every_snapshot(&lake, &to, name, &metadata).await;
}

/// Table `name` (format `version`, merge-on-read deletes) moved by a full rewrite with the
/// prefixes in one form of local path (`file:///x` when `uri_first`, else `/x`), then,
/// after an insert and a delete from a data file the first copy holds, by an incremental
/// one (`start_version`) with the prefixes in the other form: the new delete file names
/// the data file as its copy's manifest entry does (engines compare paths as text; the
/// moved paths keep the form of the source paths), so the moved table reads alike in
/// icefloe, PyIceberg and DuckDB at every snapshot, the deleted row gone.
async fn incremental_rewrite_with_the_other_form_of_the_prefixes(version: u8, uri_first: bool) {
    let lake = lake().await;
    let name = format!("forms_v{version}");
    build(&lake, &name, version).await;
    let ident = format!("ns.{name}");
    let location = lake
        .catalog
        .load_table(&TableIdent::parse(&ident))
        .await
        .expect("load")
        .metadata()
        .location
        .clone();
    let source = local(&location).display().to_string();
    let dest = tempfile::tempdir().expect("tempdir");
    let moved = dest.path().join("moved").join(&name).display().to_string();
    let forms = |uri: bool| {
        if uri {
            (format!("file://{source}"), format!("file://{moved}"))
        } else {
            (source.clone(), moved.clone())
        }
    };
    let (from, to) = forms(uri_first);
    let args = format!("table => '{ident}', source_prefix => '{from}', target_prefix => '{to}'");
    let (first, list) = call(&lake, &args).await.expect("rewrite_table_path");
    let metadata = copy_all_to_latest(&file_list(&list), &first);
    let copy = target(&dest.path().join("first")).await;
    copy.catalog
        .register_table(&TableIdent::parse(&ident), &metadata)
        .await
        .expect("register");
    same_at_every_snapshot(&lake, &copy, &name, &metadata).await;

    // id 2 lies in the first insert's data file, which the first rewrite copied
    let t = format!("ice.{ident}");
    ok(
        &lake.ctx,
        &format!("INSERT INTO {t} VALUES (100, 0, 'n', 1.0), (101, 1, 'n', 2.0)"),
    )
    .await;
    ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id = 2")).await;
    let (from, to) = forms(!uri_first);
    let (latest, list) = call(
        &lake,
        &format!(
            "table => '{ident}', source_prefix => '{from}', target_prefix => '{to}', \
             start_version => '{first}'"
        ),
    )
    .await
    .expect("incremental rewrite_table_path");
    let metadata = copy_all_to_latest(&file_list(&list), &latest);
    none_names(&local(&moved), &source);
    let copy = target(&dest.path().join("second")).await;
    copy.catalog
        .register_table(&TableIdent::parse(&ident), &metadata)
        .await
        .expect("register");
    let q = format!("SELECT count(*) FROM dr.{ident} WHERE id = 2");
    assert_eq!(
        crate::catalog::scalar_i64(&copy.ctx, &q).await,
        0,
        "the deleted row stays deleted at the target"
    );
    same_at_every_snapshot(&lake, &copy, &name, &metadata).await;
}

/// The tester's case: v3 deletion vectors (their `referenced_data_file` and the Puffin
/// blobs' `referenced-data-file`), `file:///x` prefixes first, then `/x`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_table_path_incremental_with_uri_then_path_prefixes_keeps_deletion_vectors() {
    incremental_rewrite_with_the_other_form_of_the_prefixes(3, true).await;
}

/// v2 position delete files (their rows' `file_path`), `/x` prefixes first, then
/// `file:///x`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_table_path_incremental_with_path_then_uri_prefixes_keeps_position_deletes() {
    incremental_rewrite_with_the_other_form_of_the_prefixes(2, false).await;
}
