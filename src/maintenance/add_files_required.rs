//! `add_files`: whether a file may give a null where the table's schema requires a value
//! (spec "Schemas and Data Types": a required field always has a value; "Nested Types":
//! a required field of a struct has a value wherever the struct is present, a list with
//! required elements and a map with required values hold no null element or value).
//!
//! Such a file reads nulls where the table promises none, and answers built on the
//! promise are wrong (`count(*) … WHERE id IS NULL` gave 0, reading none of it). Top-level
//! primitive columns are decided from the footer ([`check_required_columns`]). A nested
//! required field cannot be: a Parquet leaf's null count also counts the rows where an
//! enclosing struct, list or map is null (or a list empty), which the table allows. So
//! [`check_required_nested`] accepts a top-level column of nested type from its footer
//! only when none of its leaves holds a null in any row group; otherwise it reads the
//! column and counts the nulls of required fields under present parents. Java's
//! `TableMigrationUtil` and Spark's `add_files` check neither (they register such files);
//! icefloe refuses them, as it refuses top-level ones.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use datafusion::parquet::arrow::async_reader::AsyncFileReader;
use datafusion::parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};
use datafusion::parquet::file::metadata::ParquetMetaData;
use futures::TryStreamExt;

use crate::error::{Error, Result};
use crate::spec::arrow::arrow_field_id;
use crate::spec::name_mapping::{MappedField, NameMapping};
use crate::spec::{Literal, NestedField, PrimitiveType, Schema, Type};

/// Fail when the file of `meta` (leaf field ids `ids`, see `leaf_field_ids`) may give
/// a null in a top-level required primitive column of `schema`: the column holds nulls by
/// its footer's null counts, or is absent with no `initial-default` and is not an identity partition column
/// with a non-null value in `partition` (values of the partition source `columns`).
/// A column optional in the file without a null count in some row group (a file written
/// without statistics) is read by [`check_required_nested`] instead of being refused.
/// Nested fields: [`check_required_nested`].
pub(super) fn check_required_columns(
    meta: &ParquetMetaData,
    ids: &[Option<i32>],
    schema: &Schema,
    columns: &[(String, PrimitiveType)],
    partition: &[Option<Literal>],
    location: &str,
) -> Result<()> {
    let descr = meta.file_metadata().schema_descr();
    let required = schema
        .columns()
        .iter()
        .filter(|f| f.required && f.field_type.as_primitive().is_some());
    for field in required {
        let (name, id) = (&field.name, field.id);
        let refuse = |why: String| {
            Error::invalid_argument(format!(
                "file '{location}': column '{name}' (field id {id}) is required (NOT NULL) in \
                 the table, but {why}"
            ))
        };
        let leaf = (0..descr.num_columns())
            .find(|&i| ids.get(i) == Some(&Some(id)) && descr.column(i).path().parts().len() == 1);
        let Some(leaf) = leaf else {
            let from_partition = columns
                .iter()
                .zip(partition)
                .any(|((c, _), v)| c == name && v.is_some());
            if field.initial_default.is_some() || from_partition {
                continue;
            }
            return Err(refuse(
                "the file lacks it and it has no initial-default or partition value".into(),
            ));
        };
        if descr.column(leaf).max_def_level() == 0 {
            continue;
        }
        // a row group without a null count: check_required_nested reads the column
        let nulls: u64 = meta
            .row_groups()
            .iter()
            .filter_map(|g| g.column(leaf).statistics().and_then(|s| s.null_count_opt()))
            .sum();
        if nulls > 0 {
            return Err(refuse(format!("the file holds {nulls} null(s) in it")));
        }
    }
    Ok(())
}

/// Whether `field` (of nested type) is required or holds a required field, element or
/// value at some depth.
fn requires_values(field: &NestedField) -> bool {
    field.required
        || match field.field_type.as_ref() {
            Type::Struct(s) => s.fields.iter().any(requires_values),
            Type::List(l) => requires_values(&l.element_field),
            Type::Map(m) => requires_values(&m.value_field),
            Type::Primitive(_) => false,
        }
}

/// Fail when the file of `meta` gives a null in a required field of a top-level column
/// of nested type of `schema` (a struct, list or map column that is required, or holds a
/// required struct field, list element or map value at any depth): the column itself
/// null in a row, a required struct field null (or absent from the file, without an
/// `initial-default`) where its struct is present, a null element of a list of required
/// elements, a null value of a map of required values. `physical` is the file's Arrow
/// schema; file columns are matched by field id, else through `mapping`. A column none
/// of whose Parquet leaves holds a null in any row group (footer null counts) passes
/// unread; any other is read from `reader` (see the module docs). So is a required
/// primitive column optional in the file without a null count in some row group (a file
/// written without statistics; [`check_required_columns`] refused the ones counting a
/// null).
///
/// Errors: such a null, naming the file, the field's dotted path and id and the count
/// (`InvalidArgument`); a required nested column absent from the file without an
/// `initial-default`; reading the file (`InvalidData`).
pub(super) async fn check_required_nested<R: AsyncFileReader + Unpin + Send + 'static>(
    meta: &ParquetMetaData,
    physical: &datafusion::arrow::datatypes::Schema,
    schema: &Schema,
    mapping: &NameMapping,
    location: &str,
    reader: R,
) -> Result<()> {
    let descr = meta.file_metadata().schema_descr();
    // (root index in the file, its Arrow field, the table column, its mapping)
    let mut read: Vec<(usize, &FieldRef, &NestedField, Option<&MappedField>)> = vec![];
    for column in schema.columns() {
        let primitive = column.field_type.as_primitive().is_some();
        if !requires_values(column) {
            continue;
        }
        let found = physical.fields().iter().enumerate().find(|(_, f)| {
            arrow_field_id(f)
                .or_else(|| mapping.find(f.name()).and_then(|m| m.field_id))
                .is_some_and(|id| id == column.id)
        });
        let Some((root, file_field)) = found else {
            // an absent primitive column: check_required_columns decided
            if !primitive && column.required && column.initial_default.is_none() {
                return Err(Error::invalid_argument(format!(
                    "file '{location}': column '{}' (field id {}) is required (NOT NULL) in the \
                     table, but the file lacks it and it has no initial-default",
                    column.name, column.id
                )));
            }
            continue;
        };
        let no_nulls = (0..descr.num_columns())
            .filter(|&i| descr.get_column_root_idx(i) == root)
            .all(|i| {
                descr.column(i).max_def_level() == 0
                    || meta.row_groups().iter().all(|g| {
                        g.column(i).statistics().and_then(|s| s.null_count_opt()) == Some(0)
                    })
            });
        if !no_nulls {
            let mapped = mapping.find(file_field.name());
            read.push((root, file_field, column, mapped));
        }
    }
    if read.is_empty() {
        return Ok(());
    }
    let failed = |e: datafusion::parquet::errors::ParquetError| {
        Error::invalid_data(format!(
            "file '{location}': reading its nested columns to check their required fields"
        ))
        .with_source(e)
    };
    let reader_metadata =
        ArrowReaderMetadata::try_new(Arc::new(meta.clone()), ArrowReaderOptions::new())
            .map_err(failed)?;
    let mask = ProjectionMask::roots(descr, read.iter().map(|(root, ..)| *root));
    let mut stream = ParquetRecordBatchStreamBuilder::new_with_metadata(reader, reader_metadata)
        .with_projection(mask)
        .build()
        .map_err(failed)?;
    let mut nulls: Vec<(String, i32, usize)> = vec![];
    while let Some(batch) = stream.try_next().await.map_err(failed)? {
        let mut sorted = read.clone();
        sorted.sort_by_key(|(root, ..)| *root);
        for ((_, file_field, column, mapped), array) in sorted.iter().zip(batch.columns()) {
            if column.required && array.null_count() > 0 {
                add(&mut nulls, &column.name, column.id, array.null_count());
            }
            walk(array, file_field, column, *mapped, &column.name, &mut nulls);
        }
    }
    match nulls.first() {
        None => Ok(()),
        Some((path, id, n)) => Err(Error::invalid_argument(format!(
            "file '{location}': field '{path}' (field id {id}) is required (NOT NULL) in the \
             table, but the file holds {n} null(s) in it where {}",
            if path.contains('.') {
                "its parent is present"
            } else {
                "a row has it"
            }
        ))),
    }
}

fn add(nulls: &mut Vec<(String, i32, usize)>, path: &str, id: i32, n: usize) {
    match nulls.iter_mut().find(|(p, ..)| p == path) {
        Some(entry) => entry.2 += n,
        None => nulls.push((path.to_string(), id, n)),
    }
}

/// Counts into `nulls` the nulls of required fields under `table` (read as `array`,
/// stored as `file`, mapped by `mapped`), at `path`, where their parent is present.
fn walk(
    array: &ArrayRef,
    file: &Field,
    table: &NestedField,
    mapped: Option<&MappedField>,
    path: &str,
    nulls: &mut Vec<(String, i32, usize)>,
) {
    match (table.field_type.as_ref(), file.data_type()) {
        (Type::Struct(st), DataType::Struct(file_fields)) => {
            let Some(s) = array.as_struct_opt() else {
                return;
            };
            let present = s.len() - s.null_count();
            for t in &st.fields {
                let child_path = format!("{path}.{}", t.name);
                let found = file_fields.iter().enumerate().find(|(_, f)| {
                    arrow_field_id(f).or_else(|| mapped.and_then(|m| m.find(f.name())?.field_id))
                        == Some(t.id)
                });
                let Some((i, f)) = found else {
                    if t.required && t.initial_default.is_none() && present > 0 {
                        add(nulls, &child_path, t.id, present);
                    }
                    continue;
                };
                let child = s.column(i);
                if t.required {
                    let n = (0..s.len())
                        .filter(|&r| s.is_valid(r) && child.is_null(r))
                        .count();
                    if n > 0 {
                        add(nulls, &child_path, t.id, n);
                    }
                }
                let m = mapped.and_then(|m| m.find(f.name()));
                walk(child, f, t, m, &child_path, nulls);
            }
        }
        (Type::List(l), DataType::List(e) | DataType::LargeList(e)) => {
            let values = match array.data_type() {
                DataType::List(_) => Arc::clone(array.as_list::<i32>().values()),
                _ => Arc::clone(array.as_list::<i64>().values()),
            };
            let t = &l.element_field;
            let child_path = format!("{path}.element");
            if t.required && values.null_count() > 0 {
                add(nulls, &child_path, t.id, values.null_count());
            }
            let m = mapped.and_then(|m| m.find("element"));
            walk(&values, e, t, m, &child_path, nulls);
        }
        (Type::Map(mt), DataType::Map(entries, _)) => {
            let (Some(map), DataType::Struct(kv)) = (array.as_map_opt(), entries.data_type())
            else {
                return;
            };
            if kv.len() != 2 {
                return;
            }
            let t = &mt.value_field;
            let values = map.values();
            let child_path = format!("{path}.value");
            if t.required && values.null_count() > 0 {
                add(nulls, &child_path, t.id, values.null_count());
            }
            let m = mapped.and_then(|m| m.find("value"));
            walk(values, &kv[1], t, m, &child_path, nulls);
        }
        _ => {}
    }
}
