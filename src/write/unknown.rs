//! Fields of type `unknown` are not stored in data files (spec "Parquet": `unknown` is
//! "Omit from data files"; its values are always null, and readers fill the missing
//! column with nulls). The writer's file schema and the batches it writes leave them out,
//! at the top level and inside structs, lists and maps, as Iceberg Java's
//! `TypeToMessageType` does. A list element or a map key or value of type `unknown` has
//! no Parquet form (Java refuses it: "Cannot convert element Parquet"), nor has a struct
//! of `unknown` fields only (Parquet has no empty group).

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, FixedSizeListArray, GenericListArray, MapArray, OffsetSizeTrait,
    RecordBatch, RecordBatchOptions, StructArray,
};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema as ArrowSchema};

use crate::error::{Error, Result};

/// `dt` (the Arrow type of the field at `path`) without its `unknown` (`Null`) fields;
/// `None` when it is `unknown` itself (the field is left out).
///
/// Errors ([`crate::ErrorKind::Unsupported`], naming the field): an `unknown` list
/// element, map key or map value; a struct whose fields are all `unknown`.
fn stored_type(dt: &DataType, path: &str) -> Result<Option<DataType>> {
    let element = |e: &FieldRef, what: &str| -> Result<FieldRef> {
        let p = format!("{path}.{what}");
        match stored_type(e.data_type(), &p)? {
            Some(t) => Ok(Arc::new(e.as_ref().clone().with_data_type(t))),
            None => Err(Error::unsupported(format!(
                "writing field '{p}' of type unknown: a list element or a map key or value \
                 of type unknown has no form in a data file"
            ))),
        }
    };
    Ok(Some(match dt {
        DataType::Null => return Ok(None),
        DataType::Struct(fields) => {
            let mut kept = Vec::with_capacity(fields.len());
            for f in fields {
                if let Some(t) = stored_type(f.data_type(), &format!("{path}.{}", f.name()))? {
                    kept.push(Arc::new(f.as_ref().clone().with_data_type(t)));
                }
            }
            if kept.is_empty() && !fields.is_empty() {
                return Err(Error::unsupported(format!(
                    "writing struct '{path}' whose fields are all of type unknown (a data \
                     file cannot hold a struct without fields)"
                )));
            }
            DataType::Struct(Fields::from(kept))
        }
        DataType::List(e) => DataType::List(element(e, "element")?),
        DataType::LargeList(e) => DataType::LargeList(element(e, "element")?),
        DataType::FixedSizeList(e, n) => DataType::FixedSizeList(element(e, "element")?, *n),
        DataType::Map(entries, sorted) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                let kv = Fields::from(vec![element(&kv[0], "key")?, element(&kv[1], "value")?]);
                DataType::Map(
                    Arc::new(
                        entries
                            .as_ref()
                            .clone()
                            .with_data_type(DataType::Struct(kv)),
                    ),
                    *sorted,
                )
            }
            _ => dt.clone(),
        },
        other => other.clone(),
    }))
}

/// The fields of `schema` as stored in data files: without `unknown` fields (see the
/// module docs); `None` when nothing is left out.
///
/// Errors: as [`stored_type`], naming the field.
pub(crate) fn stored_schema(schema: &ArrowSchema) -> Result<Option<ArrowSchema>> {
    let mut fields: Vec<FieldRef> = Vec::with_capacity(schema.fields().len());
    let mut changed = false;
    for f in schema.fields() {
        match stored_type(f.data_type(), f.name())? {
            None => changed = true,
            Some(t) if &t == f.data_type() => fields.push(Arc::clone(f)),
            Some(t) => {
                changed = true;
                fields.push(Arc::new(f.as_ref().clone().with_data_type(t)));
            }
        }
    }
    Ok(changed.then(|| ArrowSchema::new_with_metadata(fields, schema.metadata().clone())))
}

/// `array` as an array of `to`, its stored type ([`stored_type`]): the child arrays of
/// fields `to` leaves out dropped, at any depth.
fn stored_array(array: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    if array.data_type() == to {
        return Ok(Arc::clone(array));
    }
    let rebuild = |e: datafusion::arrow::error::ArrowError| {
        Error::invalid_argument("a batch without its unknown fields").with_source(e)
    };
    let element = |to: &FieldRef, values: &ArrayRef| stored_array(values, to.data_type());
    Ok(match to {
        DataType::Struct(to_fields) => {
            let s = array.as_struct();
            let mut columns = Vec::with_capacity(to_fields.len());
            for f in to_fields {
                let column = s.column_by_name(f.name()).ok_or_else(|| {
                    Error::invalid_argument(format!("struct field '{}' missing", f.name()))
                })?;
                columns.push(stored_array(column, f.data_type())?);
            }
            Arc::new(
                StructArray::try_new(to_fields.clone(), columns, s.nulls().cloned())
                    .map_err(rebuild)?,
            )
        }
        DataType::List(e) => list::<i32>(
            array.as_list(),
            e,
            element(e, array.as_list::<i32>().values())?,
        )?,
        DataType::LargeList(e) => list::<i64>(
            array.as_list(),
            e,
            element(e, array.as_list::<i64>().values())?,
        )?,
        DataType::FixedSizeList(e, n) => {
            let l = array.as_fixed_size_list();
            Arc::new(
                FixedSizeListArray::try_new(
                    Arc::clone(e),
                    *n,
                    element(e, l.values())?,
                    l.nulls().cloned(),
                )
                .map_err(rebuild)?,
            )
        }
        DataType::Map(entries, sorted) => {
            let m = array.as_map();
            let entries_array: ArrayRef = Arc::new(m.entries().clone());
            let stored = stored_array(&entries_array, entries.data_type())?;
            Arc::new(
                MapArray::try_new(
                    Arc::clone(entries),
                    m.offsets().clone(),
                    stored.as_struct().clone(),
                    m.nulls().cloned(),
                    *sorted,
                )
                .map_err(rebuild)?,
            )
        }
        _ => Arc::clone(array),
    })
}

fn list<O: OffsetSizeTrait>(
    l: &GenericListArray<O>,
    field: &Arc<Field>,
    values: ArrayRef,
) -> Result<ArrayRef> {
    Ok(Arc::new(
        GenericListArray::<O>::try_new(
            Arc::clone(field),
            l.offsets().clone(),
            values,
            l.nulls().cloned(),
        )
        .map_err(|e| {
            Error::invalid_argument("a batch without its unknown fields").with_source(e)
        })?,
    ))
}

/// `batch` (a batch of the table's Arrow schema, as the writer conformed it) as stored in
/// data files: its `unknown` columns and fields left out ([`stored_schema`]).
///
/// Errors: as [`stored_schema`]; Arrow's, rebuilding the arrays.
pub(crate) fn stored_batch(batch: &RecordBatch) -> Result<RecordBatch> {
    let mut fields: Vec<FieldRef> = Vec::with_capacity(batch.num_columns());
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (f, column) in batch.schema().fields().iter().zip(batch.columns()) {
        match stored_type(f.data_type(), f.name())? {
            None => {}
            Some(t) if &t == f.data_type() => {
                fields.push(Arc::clone(f));
                columns.push(Arc::clone(column));
            }
            Some(t) => {
                columns.push(stored_array(column, &t)?);
                fields.push(Arc::new(f.as_ref().clone().with_data_type(t)));
            }
        }
    }
    let schema = ArrowSchema::new_with_metadata(fields, batch.schema().metadata().clone());
    RecordBatch::try_new_with_options(
        Arc::new(schema),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
    .map_err(|e| Error::invalid_argument("a batch without its unknown fields").with_source(e))
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{new_null_array, Int32Array, ListArray, NullArray};
    use datafusion::arrow::buffer::OffsetBuffer;

    use super::*;

    fn st(fields: Vec<Field>) -> DataType {
        DataType::Struct(Fields::from(fields))
    }

    #[test]
    fn unknown_fields_are_left_out_at_any_depth() {
        let inner = st(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("u", DataType::Null, true),
        ]);
        let schema = ArrowSchema::new(vec![
            Field::new("id", DataType::Int32, false),
            Field::new("x", DataType::Null, true),
            Field::new("st", inner.clone(), true),
            Field::new("l", DataType::new_list(inner.clone(), true), true),
        ]);
        let stored = stored_schema(&schema).unwrap().expect("something left out");
        let a_only = st(vec![Field::new("a", DataType::Int32, true)]);
        assert_eq!(
            stored,
            ArrowSchema::new(vec![
                Field::new("id", DataType::Int32, false),
                Field::new("st", a_only.clone(), true),
                Field::new("l", DataType::new_list(a_only.clone(), true), true),
            ])
        );
        let struct_of = |n: usize| -> ArrayRef {
            Arc::new(StructArray::from(vec![
                (
                    Arc::new(Field::new("a", DataType::Int32, true)),
                    Arc::new(Int32Array::from_iter_values(0..n as i32)) as ArrayRef,
                ),
                (
                    Arc::new(Field::new("u", DataType::Null, true)),
                    Arc::new(NullArray::new(n)) as ArrayRef,
                ),
            ]))
        };
        let list: ArrayRef = Arc::new(ListArray::new(
            Arc::new(Field::new("item", inner, true)),
            OffsetBuffer::from_lengths([1, 2]),
            struct_of(3),
            None,
        ));
        let batch = RecordBatch::try_new(
            Arc::new(schema.clone()),
            vec![
                Arc::new(Int32Array::from(vec![1, 2])),
                new_null_array(&DataType::Null, 2),
                struct_of(2),
                list,
            ],
        )
        .unwrap();
        let out = stored_batch(&batch).unwrap();
        assert_eq!(out.schema().as_ref(), &stored);
        assert_eq!(out.num_rows(), 2);
        let l = out.column(2).as_list::<i32>();
        assert_eq!(
            l.values()
                .as_struct()
                .column(0)
                .as_primitive::<datafusion::arrow::datatypes::Int32Type>()
                .values(),
            &[0, 1, 2]
        );
        // nothing to leave out: nothing changes
        let plain = ArrowSchema::new(vec![Field::new("id", DataType::Int32, true)]);
        assert!(stored_schema(&plain).unwrap().is_none());
    }

    #[test]
    fn unknown_without_a_stored_form_is_refused_naming_the_field() {
        for (field, message) in [
            (
                Field::new("l", DataType::new_list(DataType::Null, true), true),
                "writing field 'l.element' of type unknown",
            ),
            (
                Field::new("st", st(vec![Field::new("u", DataType::Null, true)]), true),
                "writing struct 'st' whose fields are all of type unknown",
            ),
        ] {
            let err = stored_schema(&ArrowSchema::new(vec![field])).unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::Unsupported);
            assert!(err.message().contains(message), "{err}");
        }
    }
}
