//! `SHOW CREATE TABLE t` on an Iceberg table: one row, one column `createtab_stmt` (as
//! Spark names it), holding the `CREATE TABLE` statement that, run through
//! [`execute`](super::execute) in another Iceberg catalog, creates an equal table:
//!
//! ```sql
//! CREATE TABLE ns.t (
//!   id BIGINT NOT NULL COMMENT 'the id',
//!   n INT DEFAULT 5,
//!   tags MAP<STRING, ARRAY<INT>>)
//! USING iceberg
//! PARTITIONED BY (bucket(16, id), days(ts))
//! COMMENT 'a table'
//! LOCATION 'file:///warehouse/ns/t'
//! TBLPROPERTIES (
//!   'format-version' = '3',
//!   'write.delete.mode' = 'merge-on-read')
//! ```
//!
//! - The name is `schema.table`, without the catalog, so the statement creates the table
//!   in whichever catalog is the session's default (names quoted where needed).
//! - Columns of the current schema in order, with the types `CREATE TABLE` reads back to
//!   the same Iceberg types (`BIGINT` for `long`, `STRING`, `TIMESTAMP WITH TIME ZONE`
//!   for `timestamptz`, `TIMESTAMP(9)` for `timestamp_ns`, `UUID`, `BINARY`, nested
//!   `STRUCT<…>`, `ARRAY<…>`, `MAP<…, …>`), `NOT NULL` for required columns and struct
//!   fields, the v3 `write-default` as `DEFAULT` (the new table's `initial-default` is
//!   the same value: it has no rows written before the column) and the doc as `COMMENT`
//!   (a struct field's too: `STRUCT<a INT NOT NULL COMMENT '…'>`).
//! - `PARTITIONED BY` the default spec's transforms (`col`, `bucket(N, col)`,
//!   `truncate(W, col)`, `years|months|days|hours(col)`, `void(col)`; a v1 table's `void`
//!   fields, its dropped ones, are left out as Spark leaves them out); the new table's
//!   partition fields get `CREATE TABLE`'s names (`col_bucket`, …), which may differ
//!   from names an evolved spec chose.
//! - The table's `comment` property as `COMMENT`, its location as `LOCATION`, every
//!   other property and `format-version` in `TBLPROPERTIES`, sorted (a secret's value is
//!   `***`, as `SHOW TBLPROPERTIES` shows it), but for the reserved ones `CREATE TABLE`
//!   refuses there (`owner`, `provider`, …: module `property_lists`), which Spark's
//!   `SHOW CREATE TABLE` leaves out too.
//! - `CREATE TABLE` has no clause for a sort order or identifier fields: when the table
//!   has them, the text goes on with the statements that set them, `;` after each:
//!   `ALTER TABLE ns.t WRITE [DISTRIBUTED BY PARTITION] [LOCALLY] ORDERED BY …` (the form
//!   that keeps the table's `write.distribution-mode`; without that property `WRITE
//!   ORDERED BY`, which sets it to `range`, the mode Spark uses for a sorted table
//!   without it) and `ALTER TABLE ns.t SET IDENTIFIER FIELDS …`. The CLI runs them all.
//!
//! Not kept: field and partition field ids (new ones, as for any new table), older
//! schemas, specs and snapshots. What `CREATE TABLE` cannot declare is refused with an
//! [`ErrorKind::Unsupported`] error naming the field: `fixed`, `unknown`, `variant` and
//! geo types, `uuid` below the top level (timestamps of any zone and precision are
//! declared at any depth),
//! required list elements and map values, their comments, defaults of nested fields, an
//! unknown transform. A table that is not an Iceberg table goes to
//! DataFusion's own `SHOW CREATE TABLE`.

use std::collections::BTreeMap;

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::keywords::{
    ALL_KEYWORDS, ALL_KEYWORDS_INDEX, RESERVED_FOR_COLUMN_ALIAS, RESERVED_FOR_TABLE_ALIAS,
};
use serde_json::Value as JsonValue;

use super::property_lists::is_reserved_table_property;
use super::show::{find_table, string_rows, ShownTable};
use super::show_properties::{column_path, shown_value};
use super::tokens::Cursor;
use crate::error::{Error, ErrorKind, Result};
use crate::spec::{
    FormatVersion, NestedField, PrimitiveType, Schema, TableMetadata, Transform, Type,
};

/// `SHOW CREATE TABLE`, after those keywords; `None` (DataFusion's statement) when the
/// table is not an Iceberg table or the statement goes on after the name.
///
/// Errors: [`ErrorKind::Unsupported`] naming what `CREATE TABLE` cannot declare (see the
/// module docs); [`ErrorKind::NotFound`] for an unknown table.
pub(super) async fn show_create_table(
    ctx: &SessionContext,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    let Ok(name) = c.object_name() else {
        return Ok(None);
    };
    if !c.at_end() {
        return Ok(None);
    }
    let Some(shown) = find_table(ctx, &name).await? else {
        return Ok(None);
    };
    let statement = create_statement(&shown, c.identifier_quote())
        .map_err(|e| e.context(format!("SHOW CREATE TABLE {}", shown.display)))?;
    string_rows(ctx, &["createtab_stmt"], vec![vec![statement]]).map(Some)
}

/// The statement text for `shown` (see the module docs), identifiers quoted with `quote`.
fn create_statement(shown: &ShownTable, quote: char) -> Result<String> {
    let m = shown.table.metadata();
    let schema = m.current_schema();
    let name = format!(
        "{}.{}",
        ident(&shown.schema, quote),
        ident(&shown.name, quote)
    );
    if schema.columns().is_empty() {
        return Err(Error::unsupported(
            "the table has no columns (CREATE TABLE needs one)",
        ));
    }
    let columns = schema
        .columns()
        .iter()
        .map(|f| column_sql(f, quote))
        .collect::<Result<Vec<_>>>()?;
    let mut out = format!(
        "CREATE TABLE {name} (\n  {})\nUSING iceberg",
        columns.join(",\n  ")
    );
    // a v1 table's void fields are its dropped partition fields: left out, as Spark's
    // `Spark3Util.toTransforms` leaves every void field out (they partition nothing, their
    // source column may be gone, and two of one column did not run); a v2+ table's
    // void field was asked for and is kept, unless its column is gone or repeats
    let mut voids = std::collections::HashSet::new();
    let terms = m
        .default_partition_spec()
        .into_iter()
        .flat_map(|s| &s.fields)
        .filter(|f| {
            f.transform != Transform::Void
                || (m.format_version != FormatVersion::V1
                    && schema.field_by_id(f.source_id).is_some()
                    && voids.insert(f.source_id))
        })
        .map(|f| term_sql(schema, f.transform.clone(), f.source_id, quote))
        .collect::<Result<Vec<_>>>()?;
    if !terms.is_empty() {
        out.push_str(&format!("\nPARTITIONED BY ({})", terms.join(", ")));
    }
    if let Some(comment) = m.properties.get("comment") {
        out.push_str(&format!("\nCOMMENT {}", string_literal(comment)));
    }
    out.push_str(&format!("\nLOCATION {}", string_literal(&m.location)));
    let mut properties: BTreeMap<&str, String> = m
        .properties
        .iter()
        // Spark's ShowCreateTableExec leaves the reserved ones out: CREATE TABLE
        // refuses them in TBLPROPERTIES
        .filter(|(k, _)| k.as_str() != "comment" && !is_reserved_table_property(k))
        .map(|(k, v)| (k.as_str(), shown_value(k, v)))
        .collect();
    properties.insert("format-version", (m.format_version as i32).to_string());
    let properties: Vec<String> = properties
        .iter()
        .map(|(k, v)| format!("{} = {}", string_literal(k), string_literal(v)))
        .collect();
    out.push_str(&format!(
        "\nTBLPROPERTIES (\n  {})",
        properties.join(",\n  ")
    ));
    if let Some(order) = write_order(m, schema, quote)? {
        out.push_str(&format!(";\nALTER TABLE {name} {order}"));
    }
    if !schema.identifier_field_ids.is_empty() {
        let fields = schema
            .identifier_field_ids
            .iter()
            .map(|id| path_sql(schema, *id, quote))
            .collect::<Result<Vec<_>>>()?;
        out.push_str(&format!(
            ";\nALTER TABLE {name} SET IDENTIFIER FIELDS {}",
            fields.join(", ")
        ));
    }
    Ok(out)
}

/// The `WRITE … ORDERED BY …` clause that gives a new table the default sort order and
/// keeps `write.distribution-mode` (see the module docs); `None` when unsorted.
fn write_order(m: &TableMetadata, schema: &Schema, quote: char) -> Result<Option<String>> {
    let Some(order) = m
        .sort_orders
        .iter()
        .find(|o| o.order_id == m.default_sort_order_id)
        .filter(|o| !o.fields.is_empty())
    else {
        return Ok(None);
    };
    let terms = order
        .fields
        .iter()
        .map(|f| {
            let term = term_sql(schema, f.transform.clone(), f.source_id, quote)?;
            let direction = if f.direction == crate::spec::SortDirection::Desc {
                "DESC"
            } else {
                "ASC"
            };
            let nulls = if f.null_order == crate::spec::NullOrder::Last {
                "NULLS LAST"
            } else {
                "NULLS FIRST"
            };
            Ok(format!("{term} {direction} {nulls}"))
        })
        .collect::<Result<Vec<_>>>()?
        .join(", ");
    let mode = m
        .properties
        .get("write.distribution-mode")
        .map(|v| v.trim().to_ascii_lowercase());
    Ok(Some(match mode.as_deref() {
        Some("hash") => format!("WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY {terms}"),
        Some("none") => format!("WRITE LOCALLY ORDERED BY {terms}"),
        _ => format!("WRITE ORDERED BY {terms}"),
    }))
}

/// A partition or sort term in `CREATE TABLE`'s syntax: `col`, `bucket(N, col)`, …
fn term_sql(schema: &Schema, transform: Transform, source_id: i32, quote: char) -> Result<String> {
    let column = path_sql(schema, source_id, quote)?;
    transform_term(transform, &column).ok_or_else(|| {
        Error::unsupported(format!(
            "a partition or sort field of column {column} has a transform icefloe does not \
             know"
        ))
    })
}

/// `transform` of `column` as Spark writes a partition transform (`PARTITIONED BY`,
/// `DESCRIBE TABLE`'s `Part N` rows; Iceberg's `Spark3Util.toTransforms`): `col`,
/// `bucket(N, col)`, `truncate(W, col)`, `years|months|days|hours(col)`, `void(col)`;
/// `None` for a transform icefloe does not know.
pub(super) fn transform_term(transform: Transform, column: &str) -> Option<String> {
    Some(match transform {
        Transform::Identity => column.to_string(),
        Transform::Bucket(n) => format!("bucket({n}, {column})"),
        Transform::Truncate(w) => format!("truncate({w}, {column})"),
        Transform::Year => format!("years({column})"),
        Transform::Month => format!("months({column})"),
        Transform::Day => format!("days({column})"),
        Transform::Hour => format!("hours({column})"),
        Transform::Void => format!("void({column})"),
        Transform::Unknown(_) => return None,
    })
}

/// Field `id`'s name path, each part an identifier (`s."A b"`).
fn path_sql(schema: &Schema, id: i32, quote: char) -> Result<String> {
    let path = column_path(schema, id).ok_or_else(|| {
        Error::invalid_data(format!("field id {id} is not in the current schema"))
    })?;
    Ok(path
        .iter()
        .map(|p| ident(p, quote))
        .collect::<Vec<_>>()
        .join("."))
}

/// A top-level column: `name TYPE [NOT NULL] [DEFAULT value] [COMMENT '…']`.
fn column_sql(f: &NestedField, quote: char) -> Result<String> {
    let mut out = format!(
        "{} {}",
        ident(&f.name, quote),
        type_sql(&f.field_type, &f.name, true, quote)?
    );
    if f.required {
        out.push_str(" NOT NULL");
    }
    if let (Some(default), Type::Primitive(p)) = (&f.write_default, f.field_type.as_ref()) {
        out.push_str(&format!(" DEFAULT {}", default_sql(default, p, &f.name)?));
    }
    if let Some(doc) = &f.doc {
        out.push_str(&format!(" COMMENT {}", string_literal(doc)));
    }
    Ok(out)
}

/// A struct field's declaration inside `STRUCT<…>`: `name TYPE [NOT NULL] [COMMENT
/// '…']` (Spark's syntax, module `struct_field_options`). Nested fields have no default
/// in `CREATE TABLE`.
fn nested_field_sql(f: &NestedField, path: &str, quote: char) -> Result<String> {
    check_nested(f, path, true)?;
    let mut out = format!(
        "{} {}",
        ident(&f.name, quote),
        type_sql(&f.field_type, path, false, quote)?
    );
    if f.required {
        out.push_str(" NOT NULL");
    }
    if let Some(doc) = &f.doc {
        out.push_str(&format!(" COMMENT {}", string_literal(doc)));
    }
    Ok(out)
}

/// Refuse what `CREATE TABLE` cannot declare for a nested field at `path`: a default,
/// and, unless it is a struct's field (`member`), requiredness or a comment (a list's
/// element, a map's value).
fn check_nested(f: &NestedField, path: &str, member: bool) -> Result<()> {
    let refuse = |what: &str| {
        Err(Error::unsupported(format!(
            "field '{path}' {what}: CREATE TABLE declares that for columns and struct \
             fields only"
        )))
    };
    if f.required && !member {
        return refuse("is required (NOT NULL)");
    }
    if f.doc.is_some() && !member {
        return refuse("has a comment");
    }
    if f.write_default.is_some() || f.initial_default.is_some() {
        return Err(Error::unsupported(format!(
            "field '{path}' has a default value: CREATE TABLE declares that for top-level \
             columns only"
        )));
    }
    Ok(())
}

/// The SQL type `CREATE TABLE` plans as `ty` (`top`: a top-level column's, where the
/// Spark-only spellings are read; see module `create_table`).
fn type_sql(ty: &Type, path: &str, top: bool, quote: char) -> Result<String> {
    use PrimitiveType as P;
    let p = match ty {
        Type::Struct(s) => {
            if s.fields.is_empty() {
                return Err(Error::unsupported(format!(
                    "column '{path}' is an empty struct: CREATE TABLE cannot declare one"
                )));
            }
            let fields = s
                .fields
                .iter()
                .map(|f| nested_field_sql(f, &format!("{path}.{}", f.name), quote))
                .collect::<Result<Vec<_>>>()?;
            return Ok(format!("STRUCT<{}>", fields.join(", ")));
        }
        Type::List(l) => {
            let element = format!("{path}.element");
            check_nested(&l.element_field, &element, false)?;
            let t = type_sql(&l.element_field.field_type, &element, false, quote)?;
            return Ok(format!("ARRAY<{t}>"));
        }
        Type::Map(m) => {
            let (key, value) = (format!("{path}.key"), format!("{path}.value"));
            check_nested(&m.value_field, &value, false)?;
            let k = type_sql(&m.key_field.field_type, &key, false, quote)?;
            let v = type_sql(&m.value_field.field_type, &value, false, quote)?;
            return Ok(format!("MAP<{k}, {v}>"));
        }
        Type::Primitive(p) => p,
    };
    Ok(match p {
        P::Boolean => "BOOLEAN".into(),
        P::Int => "INT".into(),
        P::Long => "BIGINT".into(),
        P::Float => "FLOAT".into(),
        P::Double => "DOUBLE".into(),
        P::Decimal { precision, scale } => format!("DECIMAL({precision}, {scale})"),
        P::Date => "DATE".into(),
        P::Time => "TIME".into(),
        P::Timestamp => "TIMESTAMP".into(),
        P::String => "STRING".into(),
        P::Binary if top => "BINARY".into(),
        P::Binary => "BYTEA".into(),
        // read at any depth (`column_types::timestamp_type`)
        P::Timestamptz => "TIMESTAMP WITH TIME ZONE".into(),
        P::TimestampNs => "TIMESTAMP(9)".into(),
        P::TimestamptzNs => "TIMESTAMP(9) WITH TIME ZONE".into(),
        P::Uuid if top => "UUID".into(),
        P::Uuid => {
            return Err(Error::unsupported(format!(
                "field '{path}' of type {p}: CREATE TABLE declares this type for top-level \
                 columns only"
            )))
        }
        other => {
            return Err(Error::unsupported(format!(
                "column '{path}' of type {other}: CREATE TABLE has no such column type"
            )))
        }
    })
}

/// A `write-default` (the spec's JSON single-value form) as a SQL literal that
/// `CREATE TABLE … DEFAULT` reads back as the same value of type `p`: booleans and
/// numbers as they are, binary as `X'…'`, every other value as its JSON string, which
/// the column's type parses (`'12.50'`, `'2024-02-29'`, `'…T10:00:00+00:00'`).
fn default_sql(json: &JsonValue, p: &PrimitiveType, column: &str) -> Result<String> {
    let bad = || {
        Error::new(
            ErrorKind::InvalidData,
            format!("column '{column}': write-default {json} is not a {p} value"),
        )
    };
    Ok(match (p, json) {
        (PrimitiveType::Boolean, JsonValue::Bool(b)) => {
            if *b { "TRUE" } else { "FALSE" }.to_string()
        }
        (
            PrimitiveType::Int | PrimitiveType::Long | PrimitiveType::Float | PrimitiveType::Double,
            JsonValue::Number(n),
        ) => n.to_string(),
        (PrimitiveType::Binary | PrimitiveType::Fixed(_), JsonValue::String(hex)) => {
            if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(bad());
            }
            format!("X'{hex}'")
        }
        (_, JsonValue::String(s)) => string_literal(s),
        _ => return Err(bad()),
    })
}

/// `s` as a single-quoted SQL string.
fn string_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Keywords that begin a table constraint where a column definition may stand
/// (`PRIMARY KEY (…)`, `UNIQUE …`): a column of that name is quoted.
const CONSTRAINT_WORDS: &[&str] = &[
    "CHECK",
    "CONSTRAINT",
    "FOREIGN",
    "FULLTEXT",
    "INDEX",
    "KEY",
    "PRIMARY",
    "SPATIAL",
    "UNIQUE",
];

/// `name` as a SQL identifier that reads back as `name`: unquoted when it can be
/// (lowercase letters, digits and `_`, not a reserved word), else in double quotes
/// (`MixNs` → `"MixNs"`), as `SHOW CREATE TABLE` writes names.
pub fn sql_identifier(name: &str) -> String {
    ident(name, '"')
}

/// `name` as an identifier: as it is when it reads back unchanged unquoted (lowercase
/// letters, digits and `_`, not starting with a digit, not a word sqlparser reserves in
/// a name or a column list), else quoted with `quote`.
fn ident(name: &str, quote: char) -> String {
    let simple = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if simple && !reserved(name) {
        name.to_string()
    } else {
        let escaped = format!("{quote}{quote}");
        format!("{quote}{}{quote}", name.replace(quote, &escaped))
    }
}

/// Whether `name` (lowercase) is a keyword that does not read as a name everywhere.
fn reserved(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let Ok(i) = ALL_KEYWORDS.binary_search(&upper.as_str()) else {
        return false;
    };
    let Some(keyword) = ALL_KEYWORDS_INDEX.get(i) else {
        return true;
    };
    CONSTRAINT_WORDS.contains(&upper.as_str())
        || RESERVED_FOR_TABLE_ALIAS.contains(keyword)
        || RESERVED_FOR_COLUMN_ALIAS.contains(keyword)
}

#[cfg(test)]
mod tests {
    use datafusion::sql::sqlparser::ast::{DataType, Statement};
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    use super::*;

    /// Every name `ident` leaves unquoted, and every keyword, reads back as itself as a
    /// table name, a column name and a struct field name.
    #[test]
    fn identifiers_read_back_as_written() {
        let names = ALL_KEYWORDS
            .iter()
            .map(|k| k.to_ascii_lowercase())
            .chain(["id", "Mixed Case", "a\"b", "_x1", "1a"].map(String::from));
        for name in names {
            let i = ident(&name, '"');
            let sql = format!("CREATE TABLE ns.{i} ({i} INT, s STRUCT<{i} INT>)");
            let parsed = Parser::parse_sql(&GenericDialect {}, &sql)
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
            let [Statement::CreateTable(c)] = &parsed[..] else {
                panic!("{sql}: {parsed:?}");
            };
            let table = c.name.0.last().and_then(|p| p.as_ident()).map(|i| &i.value);
            assert_eq!(table, Some(&name), "{sql}");
            assert_eq!(c.columns.len(), 2, "{sql}");
            assert_eq!(c.columns[0].name.value, name, "{sql}");
            let DataType::Struct(fields, _) = &c.columns[1].data_type else {
                panic!("{sql}");
            };
            let field = fields.first().and_then(|f| f.field_name.as_ref());
            assert_eq!(field.map(|f| &f.value), Some(&name), "{sql}");
        }
    }
}
