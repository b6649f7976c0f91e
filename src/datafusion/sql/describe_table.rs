//! Spark's `DESCRIBE TABLE` on a table, in Spark 3.5's shape for an Iceberg table
//! (`DescribeTableExec`, `DescribeColumnExec`; Iceberg's `SparkTable`).
//!
//! **Which statements.** `DESC` or `DESCRIBE`, then `TABLE`, `EXTENDED` or `FORMATTED`
//! (either or both, `DESCRIBE TABLE EXTENDED t`), or a column name after the table name
//! (`DESC t col`). A bare `DESCRIBE t` stays DataFusion's (columns `column_name`,
//! `data_type` as an Arrow type, `is_nullable`): DataFusion's users and tools read that
//! shape, and `DESCRIBE <query>` is DataFusion's too.
//!
//! **The table form**: columns `col_name`, `data_type`, `comment` (nullable), one row per
//! top-level column (its Spark type as Spark's `simpleString` writes it: `bigint`,
//! `string` for `string` and `uuid`, `binary` for `binary` and `fixed`, `timestamp` for
//! `timestamptz`, `timestamp_ntz` for `timestamp`, `decimal(10,2)`, `struct<a:int,b:
//! string>` (after 25 fields Spark's `... N more fields`), `array<…>`, `map<…,…>`; types
//! Spark has none of keep their Iceberg names, `time`, `timestamp_ns`, `variant`), its
//! doc as the comment, else NULL. Then, when the default partition spec has fields other
//! than `void`:
//! - all identity: `# Partition Information`, a header row `# col_name | data_type |
//!   comment`, and a row per source column;
//! - else an empty row, `# Partitioning`, and `Part 0 | bucket(16, id)`, … (Spark's
//!   transform names: `years(ts)`, `truncate(4, s)` with the width first, as Iceberg's
//!   `Spark3Util.toTransforms` builds it).
//!
//! With `EXTENDED`/`FORMATTED`: an empty row, `# Metadata Columns` and a row per metadata
//! column the table has (`_spec_id`, `_partition`, `_file`, `_pos`, `_deleted`, on v3
//! `_row_id` and `_last_updated_sequence_number`; see module `metadata_columns`), then an
//! empty row, `# Detailed Table Information`, `Name` (`catalog.ns.t`), the reserved
//! properties Spark lists by themselves, capitalized (`Comment`, `Location`,
//! `Provider` = `iceberg`, `Owner`, when present), and `Table Properties` = `[k=v,…]`
//! sorted by key: what `SHOW TBLPROPERTIES` lists (secrets as `***`).
//!
//! A `"t@ref"` name describes the schema that reference reads. A table that is not an
//! Iceberg table (a metadata table, a view, a DataFusion table) gets the column rows from
//! its Arrow schema (Arrow types in Spark's names where Spark has one), and with
//! `EXTENDED` the `Name` row (a metadata table's as Spark shows it, `cat.ns.t.files`).
//!
//! **The column form** `DESC [TABLE] [EXTENDED] t col`: columns `info_name`,
//! `info_value`, rows `col_name`, `data_type` (Spark's `catalogString`: structs not
//! shortened) and `comment` (`NULL` without one). The name is matched without regard to
//! case, as Spark resolves it.
//!
//! Refused, naming the form: a nested column (`DESC t st.a`, as Spark: "DESC TABLE
//! COLUMN does not support nested column"), a `PARTITION (…)` clause (Iceberg tables have
//! no Hive partitions), `AS JSON`.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use datafusion::catalog::TableProvider;
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::tokenizer::Token;

use super::show::{find_provider, string_rows, FoundProvider};
use super::show_create_table::transform_term;
use super::show_properties::{column_path, spark_properties, SPARK_RESERVED};
use super::tokens::Cursor;
use crate::datafusion::catalog::TableNameParts;
use crate::datafusion::metadata_columns::{MetadataColumn, MetadataColumns};
use crate::datafusion::unified_partition::unified_partition_type;
use crate::error::{Error, ErrorKind, Result};
use crate::spec::{PartitionSpec, PrimitiveType, Schema, Transform, Type};
use crate::IcebergTableProvider;

/// Spark's `spark.sql.debug.maxToStringFields` default: a struct type's `simpleString`
/// lists this many fields at most.
const MAX_TO_STRING_FIELDS: usize = 25;

/// Words that start a query: `DESCRIBE SELECT …` describes a query (DataFusion's).
const QUERY_STARTS: &[&str] = &["SELECT", "WITH", "VALUES", "FROM", "QUERY", "TABLE"];

/// One row of the table form: name, type, comment (`None`: NULL).
type Row = (String, String, Option<String>);

/// `DESC`/`DESCRIBE` at `c`: `Some` result for the forms above, `None` for the ones
/// DataFusion answers (a bare `DESCRIBE t`, `DESCRIBE <query>`).
///
/// Errors: [`ErrorKind::NotFound`] for an unknown table or column;
/// [`ErrorKind::Unsupported`] for the refused forms; DataFusion's when the table does
/// not load.
pub(super) async fn describe(ctx: &SessionContext, mut c: Cursor<'_>) -> Result<Option<DataFrame>> {
    if !(c.eat_keyword("DESCRIBE") || c.eat_keyword("DESC")) {
        return Ok(None);
    }
    // Spark's `DESCRIBE NAMESPACE|SCHEMA|DATABASE [EXTENDED] ns`, not a table called
    // `namespace` ("table 'namespace' not found")
    if ["NAMESPACE", "SCHEMA", "DATABASE"]
        .iter()
        .any(|w| c.peek_keyword(w))
        && next_is_name(&c, 1)
    {
        c.advance();
        return super::describe_namespace::describe_namespace(ctx, c)
            .await
            .map(Some);
    }
    // `TABLE` is a keyword here unless the statement is `DESCRIBE TABLE` (a table named
    // so) or `DESCRIBE TABLE <query keyword>`
    let table_keyword = c.peek_keyword("TABLE") && next_is_name(&c, 1) && c.eat_keyword("TABLE");
    let extended = (c.peek_keyword("EXTENDED") || c.peek_keyword("FORMATTED"))
        && next_is_name(&c, 1)
        && c.advance().is_some();
    if QUERY_STARTS.iter().any(|w| c.peek_keyword(w)) && !table_keyword && !extended {
        return Ok(None);
    }
    if c.peek().is_some_and(|t| t.token == Token::LParen) {
        return Ok(None);
    }
    let Ok(name) = c.object_name() else {
        return Ok(None);
    };
    let column = match c.peek().map(|t| &t.token) {
        None => None,
        Some(Token::Word(_))
            if c.peek_keyword("PARTITION")
                && c.peek_at(1).is_some_and(|t| t.token == Token::LParen) =>
        {
            return Err(Error::unsupported(
                "DESCRIBE … PARTITION (…): Iceberg tables have no Hive partitions (Spark \
                 refuses it for them too); the $partitions metadata table lists them",
            ));
        }
        Some(Token::Word(_)) if c.peek_keyword("AS") => {
            return Err(Error::unsupported("DESCRIBE … AS JSON"));
        }
        Some(Token::Word(_)) => Some(c.object_name()?),
        Some(_) => return Ok(None),
    };
    if !c.at_end() {
        return Ok(None);
    }
    if column.is_none() && !table_keyword && !extended {
        return Ok(None);
    }
    let found = find_provider(ctx, &name).await?;
    if let Some(column) = column {
        return describe_column(ctx, &found, &column).map(Some);
    }
    let rows = match found.provider.downcast_ref::<IcebergTableProvider>() {
        Some(iceberg) => iceberg_rows(&found, iceberg, extended),
        None => {
            let mut rows = arrow_rows(&found.provider.schema());
            if extended {
                rows.push(empty_row());
                rows.push(section("# Detailed Table Information"));
                rows.push(detail("Name", &spark_name(&found)));
            }
            rows
        }
    };
    table_rows(ctx, rows).map(Some)
}

/// Whether the token `ahead` of the cursor starts a name (a word that is not the end).
fn next_is_name(c: &Cursor<'_>, ahead: usize) -> bool {
    c.peek_at(ahead)
        .is_some_and(|t| matches!(t.token, Token::Word(_)))
}

/// The table form's rows for an Iceberg table.
fn iceberg_rows(
    found: &FoundProvider,
    provider: &IcebergTableProvider,
    extended: bool,
) -> Vec<Row> {
    let schema = provider.iceberg_schema();
    let metadata = provider.table().metadata();
    let mut rows: Vec<Row> = schema
        .columns()
        .iter()
        .map(|f| {
            (
                f.name.clone(),
                spark_type(&f.field_type, true),
                f.doc.clone(),
            )
        })
        .collect();
    if let Some(spec) = metadata.default_partition_spec() {
        partitioning_rows(metadata.current_schema(), spec, &mut rows);
    }
    if !extended {
        return rows;
    }
    let present = MetadataColumns::new(metadata, &provider.schema());
    let has = |c: MetadataColumn| present.columns.iter().any(|(m, _)| *m == c);
    let partition_type = unified_partition_type(metadata)
        .iter()
        .map(|u| {
            let t = u
                .primitive
                .as_ref()
                .map_or_else(|| arrow_spark_type(&u.data_type), primitive_spark_type);
            format!("{}:{t}", u.name)
        })
        .collect::<Vec<_>>();
    let metadata_columns = [
        (MetadataColumn::SpecId, "_spec_id", "int".to_string()),
        (
            MetadataColumn::Partition,
            "_partition",
            shortened("struct<", partition_type, ">"),
        ),
        (MetadataColumn::File, "_file", "string".to_string()),
        (MetadataColumn::Pos, "_pos", "bigint".to_string()),
        (MetadataColumn::Deleted, "_deleted", "boolean".to_string()),
        (MetadataColumn::RowId, "_row_id", "bigint".to_string()),
        (
            MetadataColumn::LastUpdatedSequenceNumber,
            "_last_updated_sequence_number",
            "bigint".to_string(),
        ),
    ];
    rows.push(empty_row());
    rows.push(section("# Metadata Columns"));
    for (column, name, spark) in metadata_columns {
        if has(column) {
            rows.push((name.to_string(), spark, Some(String::new())));
        }
    }
    rows.push(empty_row());
    rows.push(section("# Detailed Table Information"));
    rows.push(detail("Name", &found.display));
    let properties = spark_properties(provider.table());
    for key in SPARK_RESERVED {
        if let Some(value) = properties.get(*key) {
            rows.push(detail(&capitalized(key), value));
        }
    }
    let listed = properties
        .iter()
        .filter(|(k, _)| !SPARK_RESERVED.contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>();
    rows.push(detail(
        "Table Properties",
        &format!("[{}]", listed.join(",")),
    ));
    rows
}

/// The partitioning section of the table form (see the module docs).
fn partitioning_rows(schema: &Schema, spec: &PartitionSpec, rows: &mut Vec<Row>) {
    let fields: Vec<_> = spec
        .fields
        .iter()
        .filter(|f| f.transform != Transform::Void)
        .collect();
    if fields.is_empty() {
        return;
    }
    let path = |id: i32| {
        column_path(schema, id).map_or_else(
            || format!("field {id}"),
            |p| {
                p.iter()
                    .map(|s| quote_if_needed(s))
                    .collect::<Vec<_>>()
                    .join(".")
            },
        )
    };
    if fields.iter().all(|f| f.transform == Transform::Identity) {
        rows.push(section("# Partition Information"));
        rows.push((
            "# col_name".to_string(),
            "data_type".to_string(),
            Some("comment".to_string()),
        ));
        for f in fields {
            let source = schema.field_by_id(f.source_id);
            rows.push((
                path(f.source_id),
                source.map_or_else(|| "void".to_string(), |s| spark_type(&s.field_type, true)),
                source.and_then(|s| s.doc.clone()),
            ));
        }
        return;
    }
    rows.push(empty_row());
    rows.push(section("# Partitioning"));
    for (i, f) in fields.iter().enumerate() {
        let column = path(f.source_id);
        let term = transform_term(f.transform.clone(), &column)
            .unwrap_or_else(|| format!("{}({column})", f.transform));
        rows.push(detail(&format!("Part {i}"), &term));
    }
}

/// The column form (see the module docs).
fn describe_column(
    ctx: &SessionContext,
    found: &FoundProvider,
    column: &[String],
) -> Result<DataFrame> {
    if column.len() > 1 {
        return Err(Error::unsupported(format!(
            "DESC TABLE COLUMN does not support nested column: {}",
            column.join(".")
        )));
    }
    let wanted = column.concat();
    let not_found = || {
        Error::not_found(format!(
            "column '{wanted}' not found in table '{}'",
            found.display
        ))
    };
    let (name, data_type, comment) = match found.provider.downcast_ref::<IcebergTableProvider>() {
        Some(iceberg) => {
            let f = iceberg
                .iceberg_schema()
                .columns()
                .iter()
                .find(|f| f.name.eq_ignore_ascii_case(&wanted))
                .ok_or_else(not_found)?;
            (
                f.name.clone(),
                spark_type(&f.field_type, false),
                f.doc.clone(),
            )
        }
        None => {
            let schema = found.provider.schema();
            let f = schema
                .fields()
                .iter()
                .find(|f| f.name().eq_ignore_ascii_case(&wanted))
                .ok_or_else(not_found)?;
            (f.name().clone(), arrow_spark_type(f.data_type()), None)
        }
    };
    let comment = comment.unwrap_or_else(|| "NULL".to_string());
    let rows = vec![
        vec!["col_name".to_string(), name],
        vec!["data_type".to_string(), data_type],
        vec!["comment".to_string(), comment],
    ];
    string_rows(ctx, &["info_name", "info_value"], rows)
}

/// The name Spark shows for `found` in `# Detailed Table Information`: a metadata table's
/// as Iceberg names one (`BaseMetadataTable`: the table's name, a dot, the kind), so
/// `default.ns.t.files` for icefloe's `t$files`; any other table's `catalog.schema.t`.
fn spark_name(found: &FoundProvider) -> String {
    let parts = TableNameParts::parse(&found.name);
    match (
        parts.metadata,
        parts.version,
        found.display.strip_suffix(&found.name),
    ) {
        (Some(kind), None, Some(qualifier)) => {
            format!("{qualifier}{}.{}", parts.base, kind.name())
        }
        _ => found.display.clone(),
    }
}

/// The table form's result: `col_name`, `data_type`, `comment` (nullable).
fn table_rows(ctx: &SessionContext, rows: Vec<Row>) -> Result<DataFrame> {
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("col_name", DataType::Utf8, false),
        Field::new("data_type", DataType::Utf8, false),
        Field::new("comment", DataType::Utf8, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.0.as_str()),
        )),
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.1.as_str()),
        )),
        Arc::new(StringArray::from_iter(rows.iter().map(|r| r.2.as_deref()))),
    ];
    batch_frame(ctx, schema, columns)
}

fn batch_frame(
    ctx: &SessionContext,
    schema: Arc<ArrowSchema>,
    columns: Vec<ArrayRef>,
) -> Result<DataFrame> {
    let batch = RecordBatch::try_new(schema, columns)
        .map_err(|e| Error::new(ErrorKind::DataFusion, "DESCRIBE result").with_source(e))?;
    Ok(ctx.read_batch(batch)?)
}

fn empty_row() -> Row {
    (String::new(), String::new(), Some(String::new()))
}

fn section(title: &str) -> Row {
    (title.to_string(), String::new(), Some(String::new()))
}

fn detail(name: &str, value: &str) -> Row {
    (name.to_string(), value.to_string(), Some(String::new()))
}

/// `location` → `Location`, as Scala's `capitalize`.
fn capitalized(key: &str) -> String {
    let mut chars = key.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// Spark's `quoteIfNeeded`: a name part other than letters, digits and `_` (or all
/// digits) in backquotes, a backquote doubled.
pub(super) fn quote_if_needed(part: &str) -> String {
    let plain = !part.is_empty()
        && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !part.chars().all(|c| c.is_ascii_digit());
    if plain {
        part.to_string()
    } else {
        format!("`{}`", part.replace('`', "``"))
    }
}

/// `items` as Spark's `truncatedString(items, start, ",", end, 25)`.
fn shortened(start: &str, items: Vec<String>, end: &str) -> String {
    if items.len() <= MAX_TO_STRING_FIELDS {
        return format!("{start}{}{end}", items.join(","));
    }
    let kept = MAX_TO_STRING_FIELDS - 1;
    format!(
        "{start}{},... {} more fields{end}",
        items[..kept].join(","),
        items.len() - kept
    )
}

/// The Spark type Iceberg's Spark integration gives `ty` (`TypeToSparkType`), written as
/// Spark's `simpleString` (`short`: structs of more than 25 fields shortened) or
/// `catalogString`.
fn spark_type(ty: &Type, short: bool) -> String {
    match ty {
        Type::Primitive(p) => primitive_spark_type(p),
        Type::Struct(s) => {
            let fields = s
                .fields
                .iter()
                .map(|f| format!("{}:{}", f.name, spark_type(&f.field_type, short)))
                .collect::<Vec<_>>();
            if short {
                shortened("struct<", fields, ">")
            } else {
                format!("struct<{}>", fields.join(","))
            }
        }
        Type::List(l) => format!("array<{}>", spark_type(&l.element_field.field_type, short)),
        Type::Map(m) => format!(
            "map<{},{}>",
            spark_type(&m.key_field.field_type, short),
            spark_type(&m.value_field.field_type, short)
        ),
    }
}

fn primitive_spark_type(p: &PrimitiveType) -> String {
    use PrimitiveType as P;
    match p {
        P::Boolean => "boolean".into(),
        P::Int => "int".into(),
        P::Long => "bigint".into(),
        P::Float => "float".into(),
        P::Double => "double".into(),
        P::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
        P::Date => "date".into(),
        P::Timestamptz => "timestamp".into(),
        P::Timestamp => "timestamp_ntz".into(),
        P::String | P::Uuid => "string".into(),
        P::Binary | P::Fixed(_) => "binary".into(),
        P::Unknown => "void".into(),
        // no Spark type: the Iceberg name
        other => other.to_string(),
    }
}

/// An Arrow type in Spark's name for it where Spark has one, else DataFusion's.
fn arrow_spark_type(t: &DataType) -> String {
    use DataType as D;
    match t {
        D::Boolean => "boolean".into(),
        D::Int8 => "tinyint".into(),
        D::Int16 => "smallint".into(),
        D::Int32 => "int".into(),
        D::Int64 => "bigint".into(),
        D::Float32 => "float".into(),
        D::Float64 => "double".into(),
        D::Decimal128(p, s) | D::Decimal256(p, s) => format!("decimal({p},{s})"),
        D::Date32 => "date".into(),
        D::Timestamp(_, Some(_)) => "timestamp".into(),
        D::Timestamp(_, None) => "timestamp_ntz".into(),
        D::Utf8 | D::LargeUtf8 | D::Utf8View => "string".into(),
        D::Binary | D::LargeBinary | D::BinaryView | D::FixedSizeBinary(_) => "binary".into(),
        D::Null => "void".into(),
        D::List(f) | D::LargeList(f) | D::ListView(f) | D::FixedSizeList(f, _) => {
            format!("array<{}>", arrow_spark_type(f.data_type()))
        }
        D::Struct(fields) => shortened(
            "struct<",
            fields
                .iter()
                .map(|f| format!("{}:{}", f.name(), arrow_spark_type(f.data_type())))
                .collect(),
            ">",
        ),
        D::Map(entries, _) => match entries.data_type() {
            D::Struct(kv) if kv.len() == 2 => format!(
                "map<{},{}>",
                arrow_spark_type(kv[0].data_type()),
                arrow_spark_type(kv[1].data_type())
            ),
            other => other.to_string(),
        },
        D::Dictionary(_, value) => arrow_spark_type(value),
        other => other.to_string(),
    }
}

/// The column rows of a table that is not an Iceberg table.
fn arrow_rows(schema: &ArrowSchema) -> Vec<Row> {
    schema
        .fields()
        .iter()
        .map(|f| (f.name().clone(), arrow_spark_type(f.data_type()), None))
        .collect()
}
