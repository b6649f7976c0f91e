//! TPC-H with merge-on-read refresh rounds (issue 7, "Data"): `orders` and `lineitem`
//! after `rounds` rounds of the TPC-H refresh functions, each applied as Iceberg row-level
//! changes on top of the base tables' files, and the same final rows as plain Parquet
//! (the floor: what a compaction would leave).
//!
//! Round `r` (0-based), with `n` = orders / 1000 (1,500 at SF1, as TPC-H's SF × 1500):
//! * **RF1** (insert): `n` new orders and their lineitems, one data file each, appended.
//!   They are copies of the orders RF2 deletes in that round with the order key moved
//!   out of the base range (+ (r + 1) × 10⁹), so the value distributions stay TPC-H's.
//! * **RF2** (delete): the base orders at key ranks `r, r + 1000, r + 2000, …` (spread
//!   over every base file) and their lineitems, in a second commit: a **position delete**
//!   file for `orders` (Spark's merge-on-read `DELETE`: `file_path`, `pos`, sorted) and
//!   an **equality delete** file on `l_orderkey` for `lineitem` (Flink's upsert style).
//!
//! Every file is written by the same Arrow writer with the base files' compression and
//! row-group size: the Iceberg tables' data files are full copies of the base files (so
//! icefloe does not read `tpchgen-cli`'s own files against the floor's rewritten ones),
//! and the floor directory holds, per base file, its rows minus the deleted ones, plus
//! the very same RF1 files (hard links).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, Int64Array};
use datafusion::arrow::compute::filter_record_batch;
use datafusion::arrow::compute::kernels::numeric::add;
use datafusion::arrow::datatypes::{Schema as ArrowSchema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::parquet::file::properties::WriterProperties;
use icefloe::spec::{DataContentType, PartitionSpec, Schema};
use icefloe::write::LocalTableWriter;
use icefloe::write::{read_parquet_metadata, schema_from_parquet};

use crate::common::{
    local_data_file, location, parquet_files, position_delete_batch, write_parquet,
    write_parquet_batches, BoxError,
};

/// Base order keys are below this (6 × 10⁶ × SF); inserted keys are moved above it.
const KEY_OFFSET: i64 = 1_000_000_000;
/// One order in this many is deleted per round.
const STRIDE: usize = 1000;

/// What one table goes through: its key column and how its deletes are written.
struct TableRefresh<'a> {
    name: &'a str,
    key_column: &'a str,
    positional: bool,
}

/// Make `root/{iceberg,parquet}/{orders,lineitem}` from the base SF directory `base`
/// (as the side-by-side harness made it), unless already there. Returns the number of
/// orders deleted (and inserted) per round.
pub fn prepare_refresh(base: &Path, root: &Path, rounds: usize) -> Result<usize, BoxError> {
    if rounds >= STRIDE {
        return Err(format!("at most {} refresh rounds", STRIDE - 1).into());
    }
    // Which base order keys each round deletes: key ranks r, r + STRIDE, …
    let mut order_keys = vec![];
    for f in parquet_files(&base.join("parquet/orders"))? {
        for batch in read_batches(&f)? {
            order_keys.extend(key_values(&batch, "o_orderkey")?);
        }
    }
    order_keys.sort_unstable();
    let mut round_of: HashMap<i64, usize> = HashMap::new();
    for r in 0..rounds {
        for k in order_keys.iter().skip(r).step_by(STRIDE) {
            round_of.insert(*k, r);
        }
    }
    let per_round = order_keys.len().div_ceil(STRIDE);
    for table in [
        TableRefresh {
            name: "orders",
            key_column: "o_orderkey",
            positional: true,
        },
        TableRefresh {
            name: "lineitem",
            key_column: "l_orderkey",
            positional: false,
        },
    ] {
        let done = root
            .join("iceberg")
            .join(table.name)
            .join("metadata/version-hint.text");
        if !done.exists() {
            refresh_table(base, root, &table, rounds, &round_of)?;
        }
    }
    Ok(per_round)
}

fn read_batches(path: &Path) -> Result<Vec<RecordBatch>, BoxError> {
    let file = std::fs::File::open(path)?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)?.build()?;
    Ok(reader.collect::<Result<Vec<_>, _>>()?)
}

fn key_values(batch: &RecordBatch, column: &str) -> Result<Vec<i64>, BoxError> {
    let keys = batch
        .column_by_name(column)
        .and_then(|c| c.as_any().downcast_ref::<Int64Array>())
        .ok_or_else(|| format!("no Int64 column {column}"))?;
    Ok(keys.values().to_vec())
}

/// The writer settings of a base file: its compression and row-group size.
fn writer_properties(path: &Path) -> Result<WriterProperties, BoxError> {
    let meta = read_parquet_metadata(path)?;
    let group = meta.row_group(0);
    Ok(WriterProperties::builder()
        .set_compression(group.column(0).compression())
        .set_max_row_group_row_count(Some(usize::try_from(group.num_rows())?.max(1)))
        .build())
}

fn refresh_table(
    base: &Path,
    root: &Path,
    table: &TableRefresh,
    rounds: usize,
    round_of: &HashMap<i64, usize>,
) -> Result<(), BoxError> {
    let base_files = parquet_files(&base.join("parquet").join(table.name))?;
    let first = base_files.first().ok_or("no base files")?;
    let schema: Schema = schema_from_parquet(first)?;
    let props = writer_properties(first)?;
    let table_dir = root.join("iceberg").join(table.name);
    let data_dir = table_dir.join("data");
    let floor_dir = root.join("parquet").join(table.name);
    std::fs::create_dir_all(&data_dir)?;
    std::fs::create_dir_all(&floor_dir)?;

    // One pass over the base files: the floor's filtered copies, the rows each round
    // re-inserts, and the (file, position) of each deleted row.
    let mut inserts: Vec<Vec<RecordBatch>> = vec![vec![]; rounds];
    let mut positions: Vec<Vec<(String, i64)>> = vec![vec![]; rounds];
    let mut arrow_schema: Option<SchemaRef> = None;
    let mut copies = vec![];
    for file in &base_files {
        let name = file.file_name().ok_or("base file without a name")?;
        let copy = data_dir.join(name);
        let file_location = location(&copy)?;
        let batches = read_batches(file)?;
        let mut kept = vec![];
        let mut offset = 0i64;
        for batch in &batches {
            arrow_schema.get_or_insert_with(|| batch.schema());
            let keys = key_values(batch, table.key_column)?;
            let rounds_of_rows: Vec<Option<usize>> =
                keys.iter().map(|k| round_of.get(k).copied()).collect();
            let keep: BooleanArray = rounds_of_rows.iter().map(|r| Some(r.is_none())).collect();
            kept.push(filter_record_batch(batch, &keep)?);
            for (r, (insert, pos)) in inserts.iter_mut().zip(&mut positions).enumerate() {
                let mask: BooleanArray =
                    rounds_of_rows.iter().map(|x| Some(*x == Some(r))).collect();
                if mask.true_count() == 0 {
                    continue;
                }
                insert.push(rekey(
                    &filter_record_batch(batch, &mask)?,
                    table.key_column,
                    r,
                )?);
                for (i, x) in rounds_of_rows.iter().enumerate() {
                    if *x == Some(r) {
                        pos.push((file_location.clone(), offset + i as i64));
                    }
                }
            }
            offset += batch.num_rows() as i64;
        }
        let file_schema = arrow_schema.clone().ok_or("empty base file")?;
        write_parquet_batches(
            &copy,
            Arc::clone(&file_schema),
            &batches,
            Some(props.clone()),
        )?;
        write_parquet_batches(
            &floor_dir.join(name),
            file_schema,
            &kept,
            Some(props.clone()),
        )?;
        copies.push(copy);
    }
    let arrow_schema = arrow_schema.ok_or("no rows")?;

    let mut writer = LocalTableWriter::create(
        &table_dir,
        schema.clone(),
        PartitionSpec::unpartitioned(),
        Default::default(),
    )?;
    writer.add_parquet_files(&copies)?;
    let key_field = arrow_schema.field_with_name(table.key_column)?.clone();
    for r in 0..rounds {
        // RF1: the inserted rows, one data file, shared with the floor.
        let insert_path = data_dir.join(format!("rf1-{r}.parquet"));
        write_parquet_batches(
            &insert_path,
            Arc::clone(&arrow_schema),
            &inserts[r],
            Some(props.clone()),
        )?;
        let floor_copy = floor_dir.join(format!("rf1-{r}.parquet"));
        if std::fs::hard_link(&insert_path, &floor_copy).is_err() {
            std::fs::copy(&insert_path, &floor_copy)?;
        }
        let data_file = local_data_file(&insert_path, &schema, DataContentType::Data, vec![])?;
        writer.append(vec![data_file])?;

        // RF2: the deletes.
        let delete_path = data_dir.join(format!("rf2-{r}.parquet"));
        let (content, equality_ids) = if table.positional {
            let mut pos = std::mem::take(&mut positions[r]);
            pos.sort();
            let batch = position_delete_batch(&pos)?;
            write_parquet(&delete_path, &batch, None)?;
            (DataContentType::PositionDeletes, vec![])
        } else {
            let mut keys: Vec<i64> = round_of
                .iter()
                .filter(|(_, round)| **round == r)
                .map(|(k, _)| *k)
                .collect();
            keys.sort_unstable();
            let batch = RecordBatch::try_new(
                Arc::new(ArrowSchema::new(vec![key_field.clone()])),
                vec![Arc::new(Int64Array::from(keys))],
            )?;
            write_parquet(&delete_path, &batch, None)?;
            let id = schema
                .field_by_name(table.key_column)
                .ok_or("key column not in schema")?
                .id;
            (DataContentType::EqualityDeletes, vec![id])
        };
        let delete_file = local_data_file(&delete_path, &schema, content, equality_ids)?;
        writer.row_delta(vec![], vec![delete_file])?;
    }
    eprintln!(
        "made {} with {rounds} refresh rounds: {}",
        table.name,
        table_dir.display()
    );
    Ok(())
}

/// `batch` with its key column moved to round `r`'s key range.
fn rekey(batch: &RecordBatch, key_column: &str, r: usize) -> Result<RecordBatch, BoxError> {
    let index = batch.schema().index_of(key_column)?;
    let shift = Int64Array::new_scalar(KEY_OFFSET * (r as i64 + 1));
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    columns[index] = add(&columns[index], &shift)?;
    Ok(RecordBatch::try_new(batch.schema(), columns)?)
}
