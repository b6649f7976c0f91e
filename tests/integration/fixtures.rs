//! Building small broken-or-unusual tables from real engine-written ones: copy a table,
//! rewrite its data files (drop a column, strip field ids) and patch the manifests'
//! `file_size_in_bytes` to match.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use apache_avro::types::Value;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::parquet::arrow::ArrowWriter;

/// Set `path`'s last-modified time to `mtime` (an orphan file's age, for
/// `remove_orphan_files`' `older_than`).
pub fn set_mtime(path: &Path, mtime: std::time::SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open")
        .set_modified(mtime)
        .expect("mtime");
}

/// The time `days` days ago.
pub fn days_ago(days: u64) -> std::time::SystemTime {
    std::time::SystemTime::now() - std::time::Duration::from_secs(days * 24 * 3600)
}

/// `testdata/<rel>` in the crate.
pub fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(rel)
}

/// Copy a directory tree.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// A private copy of `testdata/<rel>`.
pub fn copy_table(rel: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&testdata(rel), dir.path());
    dir
}

/// Every file under `dir` whose name ends with `suffix`.
pub fn files_with_suffix(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = vec![];
    for entry in std::fs::read_dir(dir)
        .expect("read_dir")
        .filter_map(|e| e.ok())
    {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_with_suffix(&path, suffix));
        } else if path.to_string_lossy().ends_with(suffix) {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Rewrite a Parquet file through `change` (applied to its Arrow schema and batches).
pub fn rewrite_parquet(
    path: &Path,
    change: impl Fn(&Schema, &RecordBatch) -> (Arc<Schema>, RecordBatch),
) {
    let file = std::fs::File::open(path).expect("open parquet");
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .expect("parquet")
        .build()
        .expect("reader");
    let batches: Vec<RecordBatch> = reader.map(|b| b.expect("batch")).collect();
    let mut out_schema = None;
    let changed: Vec<RecordBatch> = batches
        .iter()
        .map(|b| {
            let (schema, batch) = change(b.schema().as_ref(), b);
            out_schema = Some(schema);
            batch
        })
        .collect();
    let schema = out_schema.expect("at least one batch");
    let mut writer =
        ArrowWriter::try_new(std::fs::File::create(path).expect("create"), schema, None)
            .expect("writer");
    for b in &changed {
        writer.write(b).expect("write");
    }
    writer.close().expect("close");
}

/// Drop the column named `name` (keeping the other columns' field ids).
pub fn drop_column(
    name: &str,
) -> impl Fn(&Schema, &RecordBatch) -> (Arc<Schema>, RecordBatch) + '_ {
    move |schema, batch| {
        let keep: Vec<usize> = (0..schema.fields().len())
            .filter(|i| schema.field(*i).name() != name)
            .collect();
        let projected = batch.project(&keep).expect("project");
        (projected.schema(), projected)
    }
}

/// Remove every field's metadata, nested fields included (so the file carries no field ids).
pub fn strip_field_ids(schema: &Schema, batch: &RecordBatch) -> (Arc<Schema>, RecordBatch) {
    let fields: Vec<Field> = schema.fields().iter().map(|f| strip_field(f)).collect();
    let schema = Arc::new(Schema::new(fields));
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| {
            datafusion::arrow::compute::cast(c, f.data_type()).expect("cast to the stripped type")
        })
        .collect();
    let batch = RecordBatch::try_new(Arc::clone(&schema), columns).expect("batch");
    (schema, batch)
}

fn strip_field(f: &Field) -> Field {
    use datafusion::arrow::datatypes::DataType;
    let data_type = match f.data_type() {
        DataType::Struct(children) => {
            DataType::Struct(children.iter().map(|c| Arc::new(strip_field(c))).collect())
        }
        DataType::List(e) => DataType::List(Arc::new(strip_field(e))),
        DataType::Map(e, sorted) => DataType::Map(Arc::new(strip_field(e)), *sorted),
        other => other.clone(),
    };
    f.clone()
        .with_data_type(data_type)
        .with_metadata(Default::default())
}

/// Set each manifest entry's `file_size_in_bytes` to the size of the file now on disk
/// (data files live under `table_dir/data`, matched by file name), and each manifest
/// list's `manifest_length` to the rewritten manifest's.
pub fn patch_manifest_file_sizes(table_dir: &Path) {
    let data_files = files_with_suffix(&table_dir.join("data"), ".parquet");
    let avro = files_with_suffix(&table_dir.join("metadata"), ".avro");
    let is_list = |p: &PathBuf| {
        p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("snap-")
    };
    let mut manifests = vec![];
    for manifest in avro.iter().filter(|p| !is_list(p)) {
        rewrite_avro(manifest, |v| {
            patch_entry(v, &data_files, "data_file", "file_size_in_bytes")
        });
        manifests.push(manifest.clone());
    }
    for list in avro.iter().filter(|p| is_list(p)) {
        rewrite_avro(list, |v| patch_entry(v, &manifests, "", "manifest_length"));
    }
}

/// Rewrite the Avro file at `path` through `change` of each record, keeping its schema
/// and header metadata.
pub fn rewrite_avro(path: &Path, change: impl Fn(&mut Value)) {
    let bytes = std::fs::read(path).expect("read avro");
    let reader = apache_avro::Reader::new(&bytes[..]).expect("avro");
    let schema = reader.writer_schema().clone();
    let meta = reader.user_metadata().clone();
    let values: Vec<Value> = reader.map(|v| v.expect("record")).collect();
    let mut writer = apache_avro::Writer::new(&schema, Vec::new());
    for (k, v) in &meta {
        writer.add_user_metadata(k.clone(), v).expect("metadata");
    }
    for mut v in values {
        change(&mut v);
        writer.append(v).expect("append");
    }
    std::fs::write(path, writer.into_inner().expect("flush")).expect("write avro");
}

/// Set the long `size_field` of `entry` (of its record `within` when not empty) to the
/// size of the file of `files` whose name its `file_path` / `manifest_path` ends with.
fn patch_entry(entry: &mut Value, files: &[PathBuf], within: &str, size_field: &str) {
    let Value::Record(fields) = entry else { return };
    let record = if within.is_empty() {
        fields
    } else {
        match fields.iter_mut().find(|(n, _)| n == within) {
            Some((_, Value::Record(inner))) => inner,
            _ => return,
        }
    };
    let path = record.iter().find_map(|(n, v)| match (n.as_str(), v) {
        ("file_path" | "manifest_path", Value::String(s)) => Some(s.clone()),
        _ => None,
    });
    let Some(path) = path else { return };
    let file_name = path.rsplit('/').next().unwrap_or_default().to_string();
    let Some(local) = files
        .iter()
        .find(|p| p.file_name().unwrap().to_string_lossy() == file_name)
    else {
        return;
    };
    let size = std::fs::metadata(local).expect("stat").len() as i64;
    for (n, v) in record.iter_mut() {
        if n == size_field {
            *v = Value::Long(size);
        }
    }
}

/// Run `sql` on the Iceberg table at `location`, registered as `t` in a new session.
/// Errors (opening, planning or execution) come back as their messages.
pub async fn run_sql(location: &str, sql: &str) -> Result<Vec<RecordBatch>, String> {
    let provider = icefloe::IcebergTableProvider::open(location)
        .await
        .map_err(|e| e.to_string())?;
    let ctx = datafusion::prelude::SessionContext::new();
    ctx.register_table("t", Arc::new(provider))
        .map_err(|e| e.to_string())?;
    ctx.sql(sql)
        .await
        .map_err(|e| e.to_string())?
        .collect()
        .await
        .map_err(|e| e.to_string())
}
