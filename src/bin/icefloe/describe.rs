//! The shell's `\d` commands: `\d` lists the tables, `\d NAME` describes one, as Spark's
//! `DESCRIBE TABLE EXTENDED` does: its columns with Iceberg types, field ids and
//! requiredness (nested fields as `a.b`, list elements as `a.element`, map keys and
//! values as `a.key` / `a.value`), then its location, format version, partition spec,
//! sort order and current snapshot. Both are written in the output format.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BooleanArray, Int32Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::TableReference;
use datafusion::prelude::SessionContext;
use icefloe::spec::{NestedField, Type};
use icefloe::IcebergTableProvider;

use crate::output::Output;
use crate::CliError;

/// `\d`: every table of every schema but `information_schema`.
pub async fn list_tables(ctx: &SessionContext, output: &mut Output) -> Result<(), CliError> {
    crate::run_statement(
        ctx,
        "SELECT table_catalog, table_schema, table_name, table_type \
         FROM information_schema.tables WHERE table_schema <> 'information_schema' \
         ORDER BY table_catalog, table_schema, table_name",
        output,
    )
    .await?;
    Ok(())
}

/// `\d NAME`: the table's columns and Iceberg properties. `name` is parsed as SQL
/// names are (`ns.t`, `"t@v1"`).
pub async fn describe_table(
    ctx: &SessionContext,
    name: &str,
    output: &mut Output,
) -> Result<(), CliError> {
    // a single-quoted name is a table name in SQL too (`FROM 'f.parquet'`)
    let written = name.trim();
    let sql_name = match written
        .strip_prefix('\'')
        .and_then(|n| n.strip_suffix('\''))
    {
        Some(inner) if !inner.is_empty() => crate::url_tables::quoted(&inner.replace("''", "'")),
        _ => written.to_string(),
    };
    // and a path is read in the CLI's `public` after `USE ns`, as in statements
    let reference = crate::url_tables::path_reference(ctx, TableReference::from(sql_name.as_str()));
    let provider = match ctx.table_provider(reference.clone()).await {
        Ok(provider) => provider,
        Err(e) => {
            // what is unknown, and what there is, as a statement's error says it
            let options = ctx.state().config_options().catalog.clone();
            let resolved = reference.resolve(&options.default_catalog, &options.default_schema);
            let message = e.to_string();
            let explained = ["No table named", "failed to resolve schema"]
                .iter()
                .any(|m| message.contains(m))
                .then(|| {
                    crate::not_found::explain_not_found(
                        ctx,
                        &format!("table '{resolved}' not found"),
                    )
                })
                .flatten();
            let e = explained.map_or_else(|| CliError::from(e), CliError::new);
            return Err(e.context(format!("\\d {name}")));
        }
    };
    let Some(iceberg) = provider.downcast_ref::<IcebergTableProvider>() else {
        // not an Iceberg table: its Arrow columns
        let describe = format!("DESCRIBE {}", reference.to_quoted_string());
        return crate::run_statement(ctx, &describe, output)
            .await
            .map(|_| ());
    };
    let mut columns = Columns::default();
    for field in iceberg.iceberg_schema().columns() {
        columns.add("", field);
    }
    output.write_batch(columns.batch()?).await?;
    output.write_batch(properties(iceberg)?).await?;
    Ok(())
}

#[derive(Default)]
struct Columns {
    names: Vec<String>,
    types: Vec<String>,
    ids: Vec<i32>,
    required: Vec<bool>,
    docs: Vec<Option<String>>,
}

impl Columns {
    fn add(&mut self, prefix: &str, field: &NestedField) {
        let name = format!("{prefix}{}", field.name);
        self.names.push(name.clone());
        self.types.push(field.field_type.to_string());
        self.ids.push(field.id);
        self.required.push(field.required);
        self.docs.push(field.doc.clone());
        let prefix = format!("{name}.");
        match field.field_type.as_ref() {
            Type::Struct(s) => {
                for child in &s.fields {
                    self.add(&prefix, child);
                }
            }
            Type::List(l) => self.add(&prefix, &l.element_field),
            Type::Map(m) => {
                self.add(&prefix, &m.key_field);
                self.add(&prefix, &m.value_field);
            }
            Type::Primitive(_) => {}
        }
    }

    fn batch(self) -> Result<RecordBatch, CliError> {
        let schema = Schema::new(vec![
            Field::new("column", DataType::Utf8, false),
            Field::new("type", DataType::Utf8, false),
            Field::new("field_id", DataType::Int32, false),
            Field::new("required", DataType::Boolean, false),
            Field::new("doc", DataType::Utf8, true),
        ]);
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(self.names)),
            Arc::new(StringArray::from(self.types)),
            Arc::new(Int32Array::from(self.ids)),
            Arc::new(BooleanArray::from(self.required)),
            Arc::new(StringArray::from(self.docs)),
        ];
        Ok(RecordBatch::try_new(Arc::new(schema), columns)?)
    }
}

/// Location, format version, partition spec, sort order and snapshots of the table.
fn properties(provider: &IcebergTableProvider) -> Result<RecordBatch, CliError> {
    let table = provider.table();
    let metadata = table.metadata();
    let schema = metadata.current_schema();
    let column = |id: i32| {
        schema
            .field_by_id(id)
            .map_or_else(|| format!("field {id}"), |f| f.name.clone())
    };
    let spec = match metadata.default_partition_spec() {
        Some(spec) if !spec.fields.is_empty() => {
            let fields: Vec<String> = (spec.fields.iter().enumerate())
                .map(|(i, f)| {
                    format!(
                        "{}({}) AS {} (field id {})",
                        f.transform,
                        column(f.source_id),
                        f.name,
                        spec.field_id(i)
                    )
                })
                .collect();
            format!("spec {}: {}", spec.spec_id, fields.join(", "))
        }
        Some(spec) => format!("spec {}: unpartitioned", spec.spec_id),
        None => "unpartitioned".to_string(),
    };
    let order = metadata
        .sort_orders
        .iter()
        .find(|o| o.order_id == metadata.default_sort_order_id);
    let order = match order {
        Some(o) if !o.fields.is_empty() => {
            let fields: Vec<String> = (o.fields.iter())
                .map(|f| {
                    format!(
                        "{}({}) {} {}",
                        f.transform,
                        column(f.source_id),
                        f.direction.as_str().to_ascii_uppercase(),
                        f.null_order.as_str().to_ascii_uppercase().replace('-', " ")
                    )
                })
                .collect();
            format!("order {}: {}", o.order_id, fields.join(", "))
        }
        _ => "unsorted".to_string(),
    };
    let snapshot_text = |s: &icefloe::spec::Snapshot| {
        let when = chrono::DateTime::from_timestamp_millis(s.timestamp_ms)
            .map_or_else(|| s.timestamp_ms.to_string(), |t| t.to_rfc3339());
        let operation = s.summary.get("operation").map_or("", String::as_str);
        let rows = s
            .summary
            .get("total-records")
            .map_or(String::new(), |r| match r.as_str() {
                "1" => ", 1 row".to_string(),
                r => format!(", {r} rows"),
            });
        format!("{} at {when} ({operation}{rows})", s.snapshot_id)
    };
    let mut rows: Vec<(&str, String)> = vec![
        ("location", metadata.location.clone()),
        ("metadata file", table.metadata_location().to_string()),
        (
            "format version",
            (metadata.format_version as i32).to_string(),
        ),
        ("schema id", schema.schema_id.to_string()),
        ("partition spec", spec),
        ("sort order", order),
        (
            "current snapshot",
            metadata
                .current_snapshot()
                .map_or("none (empty table)".to_string(), snapshot_text),
        ),
    ];
    let current = metadata.current_snapshot().map(|s| s.snapshot_id);
    if let Some(read) = provider.snapshot() {
        if Some(read.snapshot_id) != current {
            rows.push(("snapshot read", snapshot_text(read)));
        }
    }
    let schema = Schema::new(vec![
        Field::new("property", DataType::Utf8, false),
        Field::new("value", DataType::Utf8, false),
    ]);
    let (keys, values): (Vec<&str>, Vec<String>) = rows.into_iter().unzip();
    Ok(RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(StringArray::from(keys)),
            Arc::new(StringArray::from(values)),
        ],
    )?)
}
