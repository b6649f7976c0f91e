//! Metadata columns: per-row facts about where a row lives, readable in SQL under the
//! names Spark gives them and hidden from `SELECT *` (spec: "Reserved Field IDs", "Row
//! Lineage"; Iceberg Java `MetadataColumns`).
//!
//! | column | type | value |
//! |---|---|---|
//! | `_file` | `string` | the row's data file location, as stored in its manifest entry |
//! | `_pos` | `long` | the row's 0-based ordinal in that file (counted before deletes, as position deletes count) |
//! | `_spec_id` | `int` | the partition spec id the file was written with |
//! | `_partition` | `struct` | the file's partition tuple in the table's *unified* partition type (every field of every spec whose source column is in the schema, by field id, named as the latest spec holding it names it, names unique; null where the file's spec lacks it; see module `unified_partition`); only on tables with partition fields |
//! | `_deleted` | `boolean` | `false` (deleted rows are not returned) |
//! | `_row_id` | `long` | v3 only: the value stored in the file, or, where null, the file's `first_row_id` + `_pos` (null when the file has no `first_row_id`) |
//! | `_last_updated_sequence_number` | `long` | v3 only: the value stored in the file, or, where null, the file's data sequence number |
//!
//! A table column with one of these names hides the metadata column (the data column
//! wins, as in Spark).
//!
//! How they reach SQL: DataFusion 55 has no notion of a metadata column: a
//! `TableProvider` has one schema, and `SELECT *` expands to every field of it, while
//! `INSERT` expects a value for every field. So the table's own provider keeps its schema
//! to the table's columns, and [`IcebergTableProvider::with_metadata_columns`] gives a
//! read-only provider whose schema appends them; `icefloe::datafusion::sql::execute`
//! swaps that provider in for the Iceberg tables of each `SELECT` block of a statement
//! that names a metadata column (a query, or a statement wrapping one: CTAS, `INSERT …
//! SELECT`, …) and adds `EXCLUDE (…)` to its wildcards (see `sql::metadata_columns`).
//!
//! [`IcebergTableProvider::with_metadata_columns`]: super::IcebergTableProvider::with_metadata_columns

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema as ArrowSchema};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::Expr;

use super::filter::FilterConverter;
use super::scalar::literal_to_scalar;
use super::unified_partition::{unified_partition_type, unified_values, UnifiedField};
use crate::error::Result;
use crate::eval::evaluate;
use crate::expr::Binder;
use crate::scan::DataFileFilter;
use crate::spec::arrow::PARQUET_FIELD_ID_META_KEY;
use crate::spec::{
    FormatVersion, ManifestEntry, NestedField, Schema, StructType, TableMetadata, Type,
};

/// `_file` (reserved field id 2147483646).
pub const FILE: &str = "_file";
/// `_pos` (2147483645).
pub const POS: &str = "_pos";
/// `_deleted` (2147483644).
pub const DELETED: &str = "_deleted";
/// `_spec_id` (2147483643).
pub const SPEC_ID: &str = "_spec_id";
/// `_partition` (2147483642).
pub const PARTITION: &str = "_partition";
/// The reserved field id of `_partition`.
pub const PARTITION_FIELD_ID: i32 = 2147483642;
/// `_row_id` (2147483540), v3.
pub const ROW_ID: &str = "_row_id";
/// `_last_updated_sequence_number` (2147483539), v3.
pub const LAST_UPDATED_SEQUENCE_NUMBER: &str = "_last_updated_sequence_number";

/// The reserved field id of `_row_id` (spec: "Reserved Field IDs").
pub const ROW_ID_FIELD_ID: i32 = 2147483540;
/// The reserved field id of `_last_updated_sequence_number`.
pub const LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID: i32 = 2147483539;

/// Every metadata column name, in the order a provider appends them.
pub const ALL: [&str; 7] = [
    FILE,
    POS,
    SPEC_ID,
    PARTITION,
    DELETED,
    ROW_ID,
    LAST_UPDATED_SEQUENCE_NUMBER,
];

/// One metadata column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MetadataColumn {
    File,
    Pos,
    SpecId,
    Partition,
    Deleted,
    RowId,
    LastUpdatedSequenceNumber,
}

impl MetadataColumn {
    fn name(self) -> &'static str {
        match self {
            Self::File => FILE,
            Self::Pos => POS,
            Self::SpecId => SPEC_ID,
            Self::Partition => PARTITION,
            Self::Deleted => DELETED,
            Self::RowId => ROW_ID,
            Self::LastUpdatedSequenceNumber => LAST_UPDATED_SEQUENCE_NUMBER,
        }
    }
}

/// The metadata columns a table exposes: which, and their fields.
#[derive(Debug, Clone)]
pub(crate) struct MetadataColumns {
    pub columns: Vec<(MetadataColumn, FieldRef)>,
    /// The unified partition type (empty: no `_partition`).
    unified: Arc<Vec<UnifiedField>>,
    /// The type of `_partition`.
    partition_type: DataType,
}

impl MetadataColumns {
    /// The metadata columns of `metadata` not hidden by a column of `table_schema`.
    pub fn new(metadata: &TableMetadata, table_schema: &ArrowSchema) -> Self {
        let unified = unified_partition_type(metadata);
        let partition_type = DataType::Struct(Fields::from(
            unified
                .iter()
                .map(UnifiedField::arrow_field)
                .collect::<Vec<_>>(),
        ));
        let v3 = metadata.format_version >= FormatVersion::V3;
        let candidates = [
            (MetadataColumn::File, DataType::Utf8, false, true),
            (MetadataColumn::Pos, DataType::Int64, false, true),
            (MetadataColumn::SpecId, DataType::Int32, false, true),
            (
                MetadataColumn::Partition,
                partition_type.clone(),
                true,
                !unified.is_empty(),
            ),
            (MetadataColumn::Deleted, DataType::Boolean, false, true),
            (MetadataColumn::RowId, DataType::Int64, true, v3),
            (
                MetadataColumn::LastUpdatedSequenceNumber,
                DataType::Int64,
                true,
                v3,
            ),
        ];
        let columns = candidates
            .into_iter()
            .filter(|(c, _, _, on)| *on && table_schema.field_with_name(c.name()).is_err())
            .map(|(c, t, nullable, _)| (c, Arc::new(Field::new(c.name(), t, nullable))))
            .collect();
        Self {
            columns,
            unified: Arc::new(unified),
            partition_type,
        }
    }

    /// Whether the table has partition fields (and so a `_partition` value per file).
    pub fn partitioned(&self) -> bool {
        !self.unified.is_empty()
    }

    /// The type of `_partition` (an empty struct on unpartitioned tables).
    pub fn partition_type(&self) -> &DataType {
        &self.partition_type
    }

    /// The data files of `metadata` whose `_partition` value may satisfy `filters` (the
    /// query's filters on this provider; those on fields of `_partition` count, such as
    /// `_partition.k = 5`, `_partition.k IN (…)`, `_partition.d IS NULL`), or `None` when
    /// no filter is on `_partition` alone. Spark prunes by such filters; a file written
    /// under a spec without the field has NULL there, so `_partition.k = 5` drops it, as
    /// the filter does its rows. The filters are converted as row filters are
    /// ([`FilterConverter`]) against `_partition`'s type as an Iceberg struct (the
    /// unified partition type, partition field ids), and evaluated on each data file's
    /// partition tuple placed in that type.
    pub fn partition_file_filter(
        &self,
        metadata: Arc<TableMetadata>,
        filters: &[Expr],
    ) -> Option<DataFileFilter> {
        if !self
            .columns
            .iter()
            .any(|(c, _)| *c == MetadataColumn::Partition)
        {
            return None;
        }
        let fields: Vec<NestedField> = self
            .unified
            .iter()
            .filter_map(|u| {
                let p = u.primitive?;
                Some(NestedField::optional(
                    u.field_id,
                    &u.name,
                    Type::Primitive(p),
                ))
            })
            .collect();
        let schema = Schema::new(
            0,
            vec![NestedField::optional(
                PARTITION_FIELD_ID,
                PARTITION,
                Type::Struct(StructType::new(fields)),
            )],
        );
        let predicate = FilterConverter::new(&schema).convert_all(filters)?;
        let bound = Binder::new(&schema).bind(&predicate).ok()?;
        let unified = Arc::clone(&self.unified);
        Some(DataFileFilter::new(move |entry| {
            let values = unified_values(&metadata, &unified, entry);
            let value_of = |id: i32| {
                unified
                    .iter()
                    .position(|u| u.field_id == id)
                    .and_then(|i| values.get(i))
                    .and_then(Option::as_ref)
            };
            // a value the predicate cannot be evaluated on keeps the file
            evaluate(&bound, &value_of).unwrap_or(true)
        }))
    }

    /// The `_partition` value of the file of `entry`.
    ///
    /// Errors: a partition value that does not fit its field's type.
    pub fn partition_value(
        &self,
        metadata: &TableMetadata,
        entry: &ManifestEntry,
    ) -> Result<ScalarValue> {
        let values = unified_values(metadata, &self.unified, entry);
        let DataType::Struct(fields) = &self.partition_type else {
            return Ok(ScalarValue::Null);
        };
        let mut arrays = Vec::with_capacity(fields.len());
        for (value, field) in values.iter().zip(fields.iter()) {
            let scalar = literal_to_scalar(
                value
                    .as_ref()
                    .filter(|_| *field.data_type() != DataType::Null),
                field.data_type(),
            )?;
            arrays.push(scalar.to_array()?);
        }
        let array = datafusion::arrow::array::StructArray::try_new(fields.clone(), arrays, None)?;
        Ok(ScalarValue::Struct(Arc::new(array)))
    }
}

/// The name of the hidden scan column holding the file's `_spec_id`.
pub(crate) const SPEC_ID_COLUMN: &str = "__icefloe_spec_id";
/// The name of the hidden scan column holding the file's `_partition`.
pub(crate) const PARTITION_COLUMN: &str = "__icefloe_partition";
/// The name of the hidden scan column holding the file's `first_row_id` (v3).
pub(crate) const FIRST_ROW_ID_COLUMN: &str = "__icefloe_first_row_id";
/// The name of the hidden scan column holding the file's data sequence number.
pub(crate) const SEQUENCE_NUMBER_COLUMN: &str = "__icefloe_file_sequence";
/// The name of the hidden scan column reading `_row_id` as stored in the file (v3).
pub(crate) const STORED_ROW_ID_COLUMN: &str = "__icefloe_stored_row_id";
/// The name of the hidden scan column reading `_last_updated_sequence_number` as stored.
pub(crate) const STORED_SEQUENCE_NUMBER_COLUMN: &str = "__icefloe_stored_last_updated_seq";

/// The name a user knows a scan column by: a stored row lineage column's metadata
/// column name (`_row_id`, `_last_updated_sequence_number`), any other column's own.
pub(crate) fn shown_name(column: &str) -> &str {
    match column {
        STORED_ROW_ID_COLUMN => ROW_ID,
        STORED_SEQUENCE_NUMBER_COLUMN => LAST_UPDATED_SEQUENCE_NUMBER,
        other => other,
    }
}

/// The two lineage columns as read from a data file, by their reserved field ids (null
/// where the file does not store them).
pub(crate) fn stored_lineage_fields() -> [FieldRef; 2] {
    let field = |name: &str, id: i32| {
        Arc::new(
            Field::new(name, DataType::Int64, true).with_metadata(
                [(PARQUET_FIELD_ID_META_KEY.to_string(), id.to_string())]
                    .into_iter()
                    .collect(),
            ),
        )
    };
    [
        field(STORED_ROW_ID_COLUMN, ROW_ID_FIELD_ID),
        field(
            STORED_SEQUENCE_NUMBER_COLUMN,
            LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID,
        ),
    ]
}

/// `schema` with the two row lineage fields appended (optional longs under their
/// reserved ids 2147483540 and 2147483539), the schema a v3 rewrite writes its files
/// with when it stores each row's lineage (spec: "Row Lineage").
///
/// Errors: `schema` has a column of a lineage field's name (a table another engine
/// created; icefloe refuses such columns on v3 tables): the file would hold two fields
/// of that name ([`crate::spec::Schema::check_row_lineage_names`]).
pub(crate) fn with_lineage_fields(
    schema: &crate::spec::Schema,
) -> crate::error::Result<crate::spec::Schema> {
    use crate::spec::{NestedField, PrimitiveType, Type};
    schema.check_row_lineage_names()?;
    let mut fields = schema.columns().to_vec();
    for (id, name) in [
        (ROW_ID_FIELD_ID, ROW_ID),
        (
            LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID,
            LAST_UPDATED_SEQUENCE_NUMBER,
        ),
    ] {
        fields.push(NestedField::optional(
            id,
            name,
            Type::Primitive(PrimitiveType::Long),
        ));
    }
    Ok(crate::spec::Schema::new(schema.schema_id, fields))
}

/// `rows` (the table's columns) with `row_id` and `sequence` (Int64, one value per row)
/// appended as the stored lineage columns, in the layout [`with_lineage_fields`]
/// describes.
///
/// Errors: columns of another length or type than `rows` needs.
pub(crate) fn append_lineage(
    rows: &datafusion::arrow::array::RecordBatch,
    row_id: datafusion::arrow::array::ArrayRef,
    sequence: datafusion::arrow::array::ArrayRef,
) -> Result<datafusion::arrow::array::RecordBatch> {
    let mut fields: Vec<FieldRef> = rows.schema().fields().iter().cloned().collect();
    fields.extend(stored_lineage_fields());
    let mut columns = rows.columns().to_vec();
    columns.extend([row_id, sequence]);
    Ok(datafusion::arrow::array::RecordBatch::try_new(
        Arc::new(ArrowSchema::new(fields)),
        columns,
    )?)
}
