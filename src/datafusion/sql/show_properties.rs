//! `SHOW TBLPROPERTIES t [('key')]` on an Iceberg table, as Spark answers it for an
//! Iceberg table: columns `key` and `value`, one row per property, sorted by key.
//!
//! The properties are the ones Iceberg's Spark integration gives a table
//! (`SparkTable.properties()`): the table's own properties, plus
//!
//! | key | value |
//! |---|---|
//! | `format` | `iceberg/<write.format.default>`, e.g. `iceberg/parquet` |
//! | `current-snapshot-id` | the current snapshot's id, `none` without one |
//! | `format-version` | `1`, `2` or `3` |
//! | `sort-order` | the default sort order as Spark describes it (`id ASC NULLS FIRST, bucket(16, s) DESC NULLS LAST`), only when the table is sorted |
//! | `identifier-fields` | `[a,b.c]`, only when the schema has identifier fields |
//!
//! and, as Spark's `SHOW TBLPROPERTIES` does, without the keys Spark reserves for
//! `DESCRIBE TABLE EXTENDED` (`TableCatalog`'s `comment`, `location`, `provider`, `owner`,
//! `external`, `is_managed_location`): so the same table shows the same rows in Spark and
//! here. The location and comment are in `SHOW CREATE TABLE`'s statement (and the CLI's
//! `\d`). A value whose key names a secret ([`crate::io::is_secret`], e.g. an
//! `s3.secret-access-key` another engine stored) shows as `***`, as Spark redacts such
//! values; Iceberg's own `write.`/`read.`/`commit.`/`history.` properties are never
//! secrets (`write.metadata.metrics.column.key` names a column `key`).
//!
//! With a key: one row `key`, `value`; a key the table does not have gives the row
//! Spark gives, value `Table <catalog.schema.table> does not have property: <key>`. The
//! key is a string (`('write.delete.mode')`) or, as Spark takes it, unquoted
//! (`(write.delete.mode)`).

use std::collections::BTreeMap;

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::tokenizer::Token;

use super::show::{find_table, string_rows};
use super::tokens::Cursor;
use crate::error::{Error, Result};
use crate::spec::sort_order::SortOrder;
use crate::spec::{NestedField, Schema, Transform, Type};
use crate::table::Table;

/// The keys Spark's `SHOW TBLPROPERTIES` leaves out (`CatalogV2Util.TABLE_RESERVED_PROPERTIES`).
pub(super) const SPARK_RESERVED: &[&str] = &[
    "comment",
    "location",
    "provider",
    "owner",
    "external",
    "is_managed_location",
];

/// Prefixes of Iceberg's own table properties, whose values are never secrets.
const ICEBERG_PREFIXES: &[&str] = &["write.", "read.", "commit.", "history."];

/// `SHOW TBLPROPERTIES`, after those keywords (see the module docs).
///
/// Errors: [`ErrorKind::Unsupported`](crate::ErrorKind) when the table is no Iceberg
/// table; [`ErrorKind::InvalidArgument`](crate::ErrorKind) for bad syntax; DataFusion's
/// error for an unknown table.
pub(super) async fn show_tblproperties(
    ctx: &SessionContext,
    mut c: Cursor<'_>,
) -> Result<DataFrame> {
    let what = "SHOW TBLPROPERTIES";
    let name = c.object_name().map_err(|e| e.context(what))?;
    let key = match c.peek().map(|t| &t.token) {
        Some(Token::LParen) => {
            let range = c.group().map_err(|e| e.context(what))?;
            Some(property_key(c.sub(range)).map_err(|e| e.context(what))?)
        }
        _ => None,
    };
    c.expect_end().map_err(|e| e.context(what))?;
    let Some(shown) = find_table(ctx, &name).await? else {
        return Err(Error::unsupported(format!(
            "{what} {}: not an Iceberg table",
            name.join(".")
        )));
    };
    let mut properties = spark_properties(&shown.table);
    properties.retain(|k, _| !SPARK_RESERVED.contains(&k.as_str()));
    let rows = match key {
        Some(key) => {
            let value = properties.get(&key).cloned().unwrap_or_else(|| {
                format!("Table {} does not have property: {key}", shown.display)
            });
            vec![vec![key, value]]
        }
        None => properties.into_iter().map(|(k, v)| vec![k, v]).collect(),
    };
    string_rows(ctx, &["key", "value"], rows)
}

/// The key inside `( … )`: a string, or the text of an unquoted dotted key.
fn property_key(mut c: Cursor<'_>) -> Result<String> {
    if c.peek()
        .is_some_and(|t| super::tokens::string_literal(&t.token).is_some())
    {
        let key = c.string()?;
        c.expect_end()?;
        return Ok(key);
    }
    let Some(start) = c.peek().map(|t| t.start) else {
        return Err(c.expected("a property key"));
    };
    let mut end = start;
    while let Some(t) = c.advance() {
        end = t.end;
    }
    Ok(c.text().get(start..end).unwrap_or_default().to_string())
}

/// The properties Iceberg's Spark integration gives the table (`SparkTable.properties()`),
/// by key: see the module docs. Secret values are `***`.
pub(super) fn spark_properties(table: &Table) -> BTreeMap<String, String> {
    let metadata = table.metadata();
    let mut out: BTreeMap<String, String> = metadata
        .properties
        .iter()
        .map(|(k, v)| (k.clone(), shown_value(k, v)))
        .collect();
    let format = metadata
        .properties
        .get("write.format.default")
        .map_or("parquet", String::as_str);
    let schema = metadata.current_schema();
    let mut put = |k: &str, v: String| {
        out.insert(k.to_string(), v);
    };
    put("format", format!("iceberg/{format}"));
    put("provider", "iceberg".to_string());
    put(
        "current-snapshot-id",
        metadata
            .current_snapshot_id
            .map_or_else(|| "none".to_string(), |id| id.to_string()),
    );
    put("location", metadata.location.clone());
    put(
        "format-version",
        (metadata.format_version as i32).to_string(),
    );
    let order = metadata
        .sort_orders
        .iter()
        .find(|o| o.order_id == metadata.default_sort_order_id);
    if let Some(order) = order.filter(|o| !o.fields.is_empty()) {
        put("sort-order", describe_sort_order(schema, order));
    }
    if !schema.identifier_field_ids.is_empty() {
        let names: Vec<String> = schema
            .identifier_field_ids
            .iter()
            .map(|id| column_name(schema, *id).unwrap_or_else(|| format!("field {id}")))
            .collect();
        put("identifier-fields", format!("[{}]", names.join(",")));
    }
    out
}

/// `value`, or `***` when `key` names a secret.
pub(super) fn shown_value(key: &str, value: &str) -> String {
    let iceberg = ICEBERG_PREFIXES.iter().any(|p| key.starts_with(p));
    if !iceberg && crate::io::is_secret(key) {
        "***".to_string()
    } else {
        value.to_string()
    }
}

/// A sort order as Iceberg's Spark integration describes it (`Spark3Util.describe`):
/// `term DIRECTION NULLS FIRST|LAST`, comma-separated, with Spark's transform names
/// (`bucket(16, id)`, `truncate(s, 4)`, `years(ts)`, …).
pub(super) fn describe_sort_order(schema: &Schema, order: &SortOrder) -> String {
    order
        .fields
        .iter()
        .map(|f| {
            let column = column_name(schema, f.source_id)
                .unwrap_or_else(|| format!("field {}", f.source_id));
            let term = match &f.transform {
                Transform::Identity => column,
                Transform::Bucket(n) => format!("bucket({n}, {column})"),
                Transform::Truncate(w) => format!("truncate({column}, {w})"),
                Transform::Year => format!("years({column})"),
                Transform::Month => format!("months({column})"),
                Transform::Day => format!("days({column})"),
                Transform::Hour => format!("hours({column})"),
                other => format!("{other}({column})"),
            };
            format!(
                "{term} {} {}",
                f.direction.as_str().to_ascii_uppercase(),
                f.null_order.as_str().to_ascii_uppercase().replace('-', " ")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The full name of field `id` in `schema` (`a.b` inside a struct, `l.element`,
/// `m.key`, `m.value`), as Iceberg Java's `Schema.findColumnName`.
pub(crate) fn column_name(schema: &Schema, id: i32) -> Option<String> {
    column_path(schema, id).map(|p| p.join("."))
}

/// The names from the top-level column down to field `id` (see [`column_name`]).
pub(super) fn column_path(schema: &Schema, id: i32) -> Option<Vec<String>> {
    fn find(fields: &[&NestedField], id: i32) -> Option<Vec<String>> {
        fields.iter().find_map(|f| {
            if f.id == id {
                return Some(vec![f.name.clone()]);
            }
            let children: Vec<&NestedField> = match f.field_type.as_ref() {
                Type::Struct(s) => s.fields.iter().collect(),
                Type::List(l) => vec![&l.element_field],
                Type::Map(m) => vec![&m.key_field, &m.value_field],
                Type::Primitive(_) => return None,
            };
            find(&children, id).map(|mut inner| {
                inner.insert(0, f.name.clone());
                inner
            })
        })
    }
    find(&schema.columns().iter().collect::<Vec<_>>(), id)
}
