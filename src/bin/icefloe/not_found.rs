//! Errors naming a table, schema or catalog DataFusion did not find, said more precisely:
//! which part of the name is unknown, what exists, how to write the name, and what is on
//! disk for a name read as a file path.

use datafusion::prelude::SessionContext;

use crate::url_tables;

/// `tables`, sorted, as the messages list them: `tables: a, b`, or `it has no tables`.
fn listed_tables(tables: &[String]) -> String {
    let mut tables = tables.to_vec();
    tables.sort();
    if tables.is_empty() {
        "it has no tables".to_string()
    } else {
        format!("tables: {}", tables.join(", "))
    }
}

/// Spark's `ns.t.branch_b` / `ns.t.tag_v1` / `ns.t.snapshots` (a ref or metadata table
/// form, nothing else) of a table `t` that does not exist, in a namespace `ns` of the
/// default catalog: DataFusion reads the name as
/// catalog `ns` and says no such catalog exists; this says the table is missing (a
/// tester's).
fn missing_table_of_a_suffixed_name(
    ctx: &SessionContext,
    namespace: &str,
    rest: &str,
) -> Option<String> {
    let (table, suffix) = rest.split_once('.')?;
    let spark_form = ["branch_", "tag_", "snapshot_id_", "at_timestamp_"]
        .iter()
        .any(|p| suffix.starts_with(p))
        || icefloe::datafusion::metadata_tables::MetadataTableKind::parse(suffix).is_some();
    if suffix.contains('.') || !spark_form {
        return None;
    }
    let default = ctx.state().config_options().catalog.default_catalog.clone();
    let schema = ctx.catalog(&default)?.schema(namespace)?;
    if schema.table_exist(table) {
        return None;
    }
    let listed = listed_tables(&schema.table_names());
    Some(format!(
        "table '{table}' not found in schema '{default}.{namespace}' ({listed}); \
         '{namespace}.{table}.{suffix}' reads as table {namespace}.{table}'s branch, tag or \
         metadata table '{suffix}'"
    ))
}

/// DataFusion's "table 'cat.schema.t' not found", said more precisely: which of the
/// catalog, the schema (an Iceberg namespace) or the table is unknown, and what exists;
/// for a name read as a file path, what is on disk there ([`url_tables::not_found_hint`]).
/// Also DataFusion's "Table 'x' doesn't exist." of a `DROP TABLE` naming a file.
pub fn explain_not_found(ctx: &SessionContext, message: &str) -> Option<String> {
    if let Some(explained) = explain_drop_of_a_file(message) {
        return Some(explained);
    }
    let rest = message.split("table '").nth(1)?;
    let (name, _) = rest.split_once("' not found")?;
    let (catalog, in_catalog) = name.split_once('.')?;
    let Some(cat) = ctx.catalog(catalog) else {
        // `a.b.t` of a table in namespace `a.b` of the default catalog: its quoted form
        let hint = name
            .rsplit_once('.')
            .filter(|(namespace, _)| {
                let default = ctx.state().config_options().catalog.default_catalog.clone();
                ctx.catalog(&default)
                    .is_some_and(|c| c.schema_names().iter().any(|s| s == namespace))
            })
            .map(|(namespace, table)| {
                format!(
                    "; a namespace of several levels is one schema in SQL, its name quoted: \
                     \"{namespace}\".{table}"
                )
            })
            .unwrap_or_default();
        if hint.is_empty() {
            if let Some(explained) = missing_table_of_a_suffixed_name(ctx, catalog, in_catalog) {
                return Some(explained);
            }
        }
        return Some(format!(
            "catalog '{catalog}' not found (catalogs: {}){hint}",
            ctx.catalog_names().join(", ")
        ));
    };
    // a path holds dots of its own (`cat.schema.dir/f.parquet`), and so does a namespace
    // of several levels (`cat.a.b.t`): the longest schema of the catalog that fits
    let (schema, table) = cat
        .schema_names()
        .into_iter()
        .filter_map(|s| {
            let table = in_catalog.strip_prefix(s.as_str())?.strip_prefix('.')?;
            Some((s.len(), s, table))
        })
        .max()
        .map(|(_, s, t)| (s, t))
        .or_else(|| {
            let (s, t) = in_catalog.split_once('.')?;
            Some((s.to_string(), t))
        })?;
    let (schema, table) = (schema.as_str(), table);
    // `"a.b".u` (or `a.b.u`) of a namespace `a.b` that does not exist: DataFusion's name
    // has lost the quotes, and a table `b.u` of schema `a` (or a file `b.u`) reads alike;
    // a name without `/` is said to be both, the namespace first
    if let Some(missing) = missing_dotted_namespace(&cat, schema, table) {
        let mut names = cat.schema_names();
        names.retain(|n| n != "information_schema");
        names.sort();
        let nor = match cat.schema(schema) {
            Some(sch) => format!(
                ", nor is '{table}' a table of schema '{catalog}.{schema}' ({})",
                listed_tables(&sch.table_names())
            ),
            None => String::new(),
        };
        return Some(format!(
            "schema (namespace) '{missing}' not found in catalog '{catalog}' (schemas: {}){nor}",
            names.join(", ")
        ));
    }
    let Some(sch) = cat.schema(schema) else {
        // no schema fits a name with dots left (a path, a namespace of several levels
        // not listed): DataFusion's words
        if table.contains('.') {
            return None;
        }
        let mut names = cat.schema_names();
        names.retain(|n| n != "information_schema");
        return Some(format!(
            "schema (namespace) '{schema}' not found in catalog '{catalog}' (schemas: {})",
            names.join(", ")
        ));
    };
    let mut tables = sch.table_names();
    tables.sort();
    let listed = listed_tables(&tables);
    let on_disk = url_tables::not_found_hint(table);
    // a path that is on disk (or in an object store) is read in `public`; a dotted name
    // with nothing at that path is only a missing table (`ns."v1.2"`)
    let local = table.strip_prefix("file://").unwrap_or(table);
    let somewhere = local.contains("://") || std::path::Path::new(local).exists();
    if url_tables::reads_as_path(table) && !url_tables::reads_paths(&sch) && somewhere {
        let reach = match url_tables::path_schema(ctx, catalog) {
            Some(qualified) => format!(
                ": FROM {qualified}.{} reads it here (or USE public)",
                url_tables::quoted(table)
            ),
            None => " (USE public)".to_string(),
        };
        return Some(format!(
            "table '{table}' not found in schema '{catalog}.{schema}' ({listed}); file paths \
             are read as tables in the CLI's schema 'public' only{reach}"
        ));
    }
    if url_tables::reads_as_path(table) {
        if let Some(on_disk) = on_disk {
            return Some(format!(
                "{on_disk} (nor is '{table}' a table of schema '{catalog}.{schema}': {listed})"
            ));
        }
    }
    // `kk@b` / `kk$files` of a missing `kk`: the table is what is missing, not a table
    // of that whole name (`@` reads a version, `$` a metadata table)
    // (not a URL: `abfss://container@account…` holds an `@` of its own)
    let parts = icefloe::datafusion::catalog::TableNameParts::parse(table);
    if !parts.is_plain() && !table.contains("://") && !tables.iter().any(|t| t == parts.base) {
        let base = parts.base;
        let suffix = &table[base.len()..];
        return Some(format!(
            "table '{base}' not found in schema '{catalog}.{schema}' ({listed}); \
             '{table}' reads as table {base}'s {}",
            if suffix.starts_with('@') {
                "version (snapshot, branch or tag) after '@'"
            } else {
                "metadata table after '$'"
            }
        ));
    }
    // a name that differs only in case: quoting (or not quoting) it is the likely slip
    let hint = tables
        .iter()
        .find(|t| t.eq_ignore_ascii_case(table) && t.as_str() != table)
        .map(|t| {
            format!(
                "; did you mean \"{t}\"? (unquoted names are lowercased, quoted ones keep \
                 their case)"
            )
        })
        .or_else(|| on_disk.map(|h| format!("; {h}")))
        .unwrap_or_default();
    Some(format!(
        "table '{table}' not found in schema '{catalog}.{schema}' ({listed}){hint}"
    ))
}

/// The namespace `<schema>.<levels of table but its last>` a not-found `schema` + dotted
/// `table` names when that namespace does not exist and the name reads as no file: no
/// `/`, no known file extension, no file of that name here, and `schema` is not the one
/// paths are read in. `a` + `b.u` is namespace `a.b`'s table `u`.
fn missing_dotted_namespace(
    cat: &std::sync::Arc<dyn datafusion::catalog::CatalogProvider>,
    schema: &str,
    table: &str,
) -> Option<String> {
    let (levels, _) = table.rsplit_once('.')?;
    if table.contains(['/', '\\']) || table.contains("://") {
        return None;
    }
    if cat
        .schema(schema)
        .is_some_and(|s| s.table_exist(table) || url_tables::reads_paths(&s))
    {
        return None;
    }
    let extension = table.rsplit('.').next().unwrap_or_default();
    if ["parquet", "csv", "json", "avro", "arrow"]
        .iter()
        .any(|e| extension.eq_ignore_ascii_case(e))
    {
        return None;
    }
    // a file of that name in the working directory is what was meant
    if std::path::Path::new(table).exists() {
        return None;
    }
    let namespace = format!("{schema}.{levels}");
    let known = cat.schema_names();
    (!known.contains(&namespace)).then_some(namespace)
}

/// For DataFusion's "Unsupported compound identifier 'a.b.c.t'" (a name of more parts than
/// `catalog.schema.table`): how to name a table in a namespace of several levels, which
/// is one schema whose name holds the dots (`"a.b.c".t`, `cat."a.b.c".t`).
pub fn several_level_namespace_hint(ctx: &SessionContext, message: &str) -> Option<String> {
    let rest = message.split("Unsupported compound identifier '").nth(1)?;
    let (name, _) = rest.split_once("'. Expected")?;
    let parts: Vec<&str> = name.split('.').collect();
    let (table, before) = parts.split_last()?;
    let (catalog, namespace) = match before.split_first() {
        Some((first, rest)) if rest.len() > 1 && ctx.catalog(first).is_some() => {
            (format!("{first}."), rest)
        }
        _ => (String::new(), before),
    };
    if namespace.len() < 2 {
        return None;
    }
    Some(format!(
        "a namespace of several levels is one schema in SQL, its name quoted: \
         {catalog}\"{}\".{table}",
        namespace.join(".")
    ))
}

/// DataFusion's "Table 'g.parquet' doesn't exist." of `DROP TABLE 'g.parquet'` when a
/// file is there: it is read as a table, but no table is dropped and no file deleted.
fn explain_drop_of_a_file(message: &str) -> Option<String> {
    let rest = message.split("Table '").nth(1)?;
    let (name, _) = rest.split_once("' doesn't exist.")?;
    let path = std::path::Path::new(name.strip_prefix("file://").unwrap_or(name));
    (url_tables::reads_as_path(name) && path.exists()).then(|| {
        format!(
            "DROP TABLE '{name}': '{name}' is a file path, not a table (SELECT … FROM \
             '{name}' reads the file); DROP TABLE drops tables and deletes no files"
        )
    })
}
