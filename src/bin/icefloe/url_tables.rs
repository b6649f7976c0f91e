//! Files named as tables: `SELECT … FROM '/data/f1.parquet'` (or a directory, a relative
//! path, a `file:`/object store URL) reads the file as `datafusion-cli` does, as DataFusion's
//! `DynamicListTableFactory` would (the format from the file extension, Hive partitions
//! from the directories), with the fixes of [`crate::path_listing`].
//!
//! Unlike `SessionContext::enable_url_table`, which wraps every catalog and so hides the
//! Iceberg catalog providers icefloe's DDL looks up by type, only the default schema (where
//! an unqualified name resolves) is wrapped, and only a name that reads as a path (it holds
//! a `/`, a `\` or a `.`) is tried as one: a table of that name resolves first, and a
//! qualified name `ns.t` is always an Iceberg table (a missing one is an error, never a
//! file of the current directory). The CLI reads local files by `CREATE EXTERNAL TABLE` and
//! `COPY` already; this opens no other file.
//!
//! `public` stays the schema paths are read in after `USE ns` too: [`qualify_paths`]
//! qualifies each unqualified path a statement reads (`FROM 'x.parquet'` becomes `FROM
//! public."x.parquet"`) before it is planned, so a path reads the same file whatever
//! namespace is current.
//!
//! Files are for reading only: the name a `CREATE TABLE` creates is not read as a file
//! while it runs (a file `f.parquet` here does not make `CREATE TABLE "f.parquet"` fail
//! with "already exists"), and `DROP TABLE 'f.parquet'` is an error, never a silent
//! no-op (it deletes no file). [`not_found_hint`] says what a path that reads as no table
//! is on disk.

use std::any::Any;
use std::borrow::Cow;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::catalog::{SchemaProvider, TableProvider, UrlTableFactory};
use datafusion::common::{plan_datafusion_err, plan_err, Result as DFResult, TableReference};
use datafusion::execution::context::SessionState;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::{CopyToSource, CopyToStatement, DFParser, Statement as DFStatement};
use datafusion::sql::sqlparser::ast::{
    Ident, ObjectName, ObjectNamePart, Query, TableFactor, Visit, Visitor,
};
use datafusion::sql::sqlparser::dialect::Dialect;
use datafusion::sql::sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan, Tokenizer};
use datafusion_session::SessionStore;

/// File-path tables ([`crate::path_listing`]), tried only for names that read as paths.
#[derive(Debug)]
pub struct PathTables {
    /// The session whose settings (object stores, formats) files are read with.
    session: SessionStore,
}

impl PathTables {
    /// The factory, not yet bound to a session ([`Self::bind`]).
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            session: SessionStore::new(),
        })
    }

    /// `schema` with unknown names that read as paths read as files.
    pub fn wrap(self: &Arc<Self>, schema: Arc<dyn SchemaProvider>) -> Arc<dyn SchemaProvider> {
        Arc::new(PathSchema {
            inner: schema,
            paths: Arc::clone(self),
            creating: Mutex::new(None),
        })
    }

    /// Read files with the settings (object stores, formats) of `ctx`'s session.
    pub fn bind(&self, ctx: &SessionContext) {
        self.session.with_state(ctx.state_weak_ref());
    }

    /// The bound session's state as it is now.
    fn state(&self) -> DFResult<SessionState> {
        self.session
            .get_session()
            .upgrade()
            .and_then(|session| {
                session
                    .read()
                    .as_any()
                    .downcast_ref::<SessionState>()
                    .cloned()
            })
            .ok_or_else(|| plan_datafusion_err!("file paths: the CLI's session has ended"))
    }
}

/// A schema whose unknown names that read as paths are files, for reading: see the
/// module docs.
#[derive(Debug)]
struct PathSchema {
    inner: Arc<dyn SchemaProvider>,
    paths: Arc<PathTables>,
    /// The table a running `CREATE TABLE` creates: not read as a file meanwhile.
    creating: Mutex<Option<String>>,
}

impl PathSchema {
    fn is_being_created(&self, name: &str) -> bool {
        self.creating
            .lock()
            .is_ok_and(|c| c.as_deref() == Some(name))
    }

    fn set_creating(&self, name: Option<String>) {
        if let Ok(mut creating) = self.creating.lock() {
            *creating = name;
        }
    }
}

#[async_trait]
impl SchemaProvider for PathSchema {
    fn table_names(&self) -> Vec<String> {
        self.inner.table_names()
    }

    async fn table(&self, name: &str) -> DFResult<Option<Arc<dyn TableProvider>>> {
        if let Some(table) = self.inner.table(name).await? {
            return Ok(Some(table));
        }
        if self.is_being_created(name) {
            return Ok(None);
        }
        self.paths.try_new(name).await
    }

    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> DFResult<Option<Arc<dyn TableProvider>>> {
        self.inner.register_table(name, table)
    }

    /// A path no table has is refused: DataFusion's `DROP TABLE` found its file as a
    /// table, and would otherwise report it dropped (nothing is deleted).
    fn deregister_table(&self, name: &str) -> DFResult<Option<Arc<dyn TableProvider>>> {
        if !self.inner.table_exist(name) && reads_as_path(name) {
            return plan_err!("'{name}' is a file path, not a table; DROP TABLE deletes no files");
        }
        self.inner.deregister_table(name)
    }

    fn table_exist(&self, name: &str) -> bool {
        self.inner.table_exist(name)
    }
}

/// While it lives, the table `CREATE TABLE` creates is not read as a file.
pub struct Creating {
    schema: Arc<dyn SchemaProvider>,
}

impl Drop for Creating {
    fn drop(&mut self) {
        let any: &dyn Any = self.schema.as_ref();
        if let Some(schema) = any.downcast_ref::<PathSchema>() {
            schema.set_creating(None);
        }
    }
}

/// Stop reading `catalog.schema.table` as a file until the guard is dropped (a
/// `CREATE TABLE` of that name runs); `None` when the schema reads no files.
pub fn creating(
    ctx: &SessionContext,
    catalog: &str,
    schema: &str,
    table: &str,
) -> Option<Creating> {
    let schema = ctx.catalog(catalog)?.schema(schema)?;
    let any: &dyn Any = schema.as_ref();
    any.downcast_ref::<PathSchema>()?
        .set_creating(Some(table.to_string()));
    Some(Creating { schema })
}

/// Whether `schema` reads unknown names that read as paths as files (the wrapped default
/// schema `public`).
pub fn reads_paths(schema: &Arc<dyn SchemaProvider>) -> bool {
    let any: &dyn Any = schema.as_ref();
    any.is::<PathSchema>()
}

/// The name, as SQL qualifies it from catalog `current`, of the schema that reads paths:
/// `public` in `current`, else `"cat".public` of the catalog that has it; `None` when no
/// catalog has it.
pub fn path_schema(ctx: &SessionContext, current: &str) -> Option<String> {
    let reads = |catalog: &str| {
        ctx.catalog(catalog)
            .and_then(|c| c.schema(PATH_SCHEMA))
            .is_some_and(|s| reads_paths(&s))
    };
    if reads(current) {
        return Some(PATH_SCHEMA.to_string());
    }
    ctx.catalog_names()
        .into_iter()
        .find(|c| reads(c))
        .map(|c| format!("{}.{PATH_SCHEMA}", quoted(&c)))
}

/// `statement` with each table it reads by an unqualified name that reads as a path
/// (`FROM 'data/x.parquet'`, `JOIN "./d/"`, `MERGE … USING 'f.csv'`, `COPY 'f.csv' TO …`)
/// qualified with the schema that reads paths (`public."data/x.parquet"`, see
/// [`path_schema`]), when the current schema is another one (after `USE ns`): a path reads
/// the same file whatever namespace is current. A name the current schema has a table
/// of, a CTE's name and a qualified name (`ns."x.parquet"`, always a table of `ns`) are
/// kept; so is the whole text when the current schema reads paths itself, when no schema
/// does, or when DataFusion's parser cannot read the statement (icefloe's own syntax:
/// DataFusion then reports the name as before).
pub fn qualify_paths<'a>(ctx: &SessionContext, statement: &'a str) -> Cow<'a, str> {
    let options = ctx.state().config_options().clone();
    let (catalog, schema) = (
        options.catalog.default_catalog.as_str(),
        options.catalog.default_schema.as_str(),
    );
    let Some(current) = ctx.catalog(catalog).and_then(|c| c.schema(schema)) else {
        return Cow::Borrowed(statement);
    };
    if reads_paths(&current) {
        return Cow::Borrowed(statement);
    }
    let Some(qualifier) = path_schema(ctx, catalog) else {
        return Cow::Borrowed(statement);
    };
    let dialect = crate::statements::session_dialect(ctx);
    let Ok(tokens) = Tokenizer::new(dialect.as_ref(), statement).tokenize_with_location() else {
        return Cow::Borrowed(statement);
    };
    let line_starts = crate::statements::line_starts(statement);
    let offset = |at| crate::statements::byte_offset(statement, &line_starts, at);
    let located = match path_names(statement, dialect.as_ref()) {
        Some(found) => {
            // sqlparser gives a single-quoted name (`FROM 'x.parquet'`) no place in the
            // text: each single-quoted token of such a name is tried double-quoted, and is
            // a table name when the statement then reads a table of that name there
            let mut located: Vec<(Location, Location, String)> = found
                .iter()
                .filter(|ident| ident.span != Span::empty())
                .map(|ident| (ident.span.start, ident.span.end, ident.value.clone()))
                .collect();
            for token in &tokens {
                let Token::SingleQuotedString(value) = &token.token else {
                    continue;
                };
                if !found
                    .iter()
                    .any(|i| &i.value == value && i.span == Span::empty())
                {
                    continue;
                }
                let (Some(start), Some(end)) = (offset(token.span.start), offset(token.span.end))
                else {
                    continue;
                };
                let probe = format!(
                    "{}{}{}",
                    &statement[..start],
                    quoted(value),
                    &statement[end..]
                );
                let at_place = path_names(&probe, dialect.as_ref()).is_some_and(|names| {
                    names
                        .iter()
                        .any(|i| i.span.start == token.span.start && &i.value == value)
                });
                if at_place {
                    located.push((token.span.start, token.span.end, value.clone()));
                }
            }
            located
        }
        // icefloe's own syntax (`MERGE … INSERT *`, `VERSION AS OF`): the quoted names
        // right after FROM, JOIN, USING or COPY, where no string literal can stand
        None => after_table_keywords(&tokens),
    };
    let mut spans: Vec<(usize, usize, String)> = located
        .into_iter()
        .filter(|(_, _, name)| !current.table_exist(name))
        .filter_map(|(start, end, name)| {
            let qualified = format!("{qualifier}.{}", quoted(&name));
            Some((offset(start)?, offset(end)?, qualified))
        })
        .collect();
    if spans.is_empty() {
        return Cow::Borrowed(statement);
    }
    spans.sort_unstable_by_key(|(start, _, _)| *start);
    spans.dedup_by_key(|(start, _, _)| *start);
    let mut text = String::with_capacity(statement.len() + 16 * spans.len());
    let mut at = 0;
    for (start, end, qualified) in spans {
        if start < at {
            return Cow::Borrowed(statement);
        }
        text.push_str(&statement[at..start]);
        text.push_str(&qualified);
        at = end;
    }
    text.push_str(&statement[at..]);
    Cow::Owned(text)
}

/// `reference` as [`qualify_paths`] reads it in a statement: a bare name that reads as a
/// path, and that the current schema has no table of, in the schema that reads paths
/// (`public`); any other reference as it is. For `\d NAME`.
pub fn path_reference(ctx: &SessionContext, reference: TableReference) -> TableReference {
    let TableReference::Bare { table } = &reference else {
        return reference;
    };
    if !reads_as_path(table) {
        return reference;
    }
    let options = ctx.state().config_options().catalog.clone();
    let Some(current) = ctx
        .catalog(&options.default_catalog)
        .and_then(|c| c.schema(&options.default_schema))
    else {
        return reference;
    };
    if reads_paths(&current) || current.table_exist(table) {
        return reference;
    }
    let reads = |catalog: &str| {
        ctx.catalog(catalog)
            .and_then(|c| c.schema(PATH_SCHEMA))
            .is_some_and(|s| reads_paths(&s))
    };
    let found = std::iter::once(options.default_catalog.clone())
        .chain(ctx.catalog_names())
        .find(|c| reads(c));
    match found {
        Some(catalog) => TableReference::full(catalog, PATH_SCHEMA, table.as_ref()),
        None => reference,
    }
}

/// The quoted names that read as paths right after `FROM`, `JOIN`, `USING` or `COPY`
/// (comments and whitespace between), and not followed by a `.` (a qualified name): where
/// and what they are.
fn after_table_keywords(tokens: &[TokenWithSpan]) -> Vec<(Location, Location, String)> {
    let words: Vec<&TokenWithSpan> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    words
        .windows(2)
        .enumerate()
        .filter_map(|(i, w)| {
            let Token::Word(keyword) = &w[0].token else {
                return None;
            };
            let qualified = words.get(i + 2).is_some_and(|t| t.token == Token::Period);
            let name = match &w[1].token {
                Token::SingleQuotedString(value) => value,
                Token::Word(word) if word.quote_style.is_some() => &word.value,
                _ => return None,
            };
            let after_keyword = keyword.quote_style.is_none()
                && ["FROM", "JOIN", "USING", "COPY"]
                    .iter()
                    .any(|k| keyword.value.eq_ignore_ascii_case(k));
            (after_keyword && reads_as_path(name) && !qualified)
                .then(|| (w[1].span.start, w[1].span.end, name.clone()))
        })
        .collect()
}

/// The unqualified, quoted names that read as paths of the tables `statement` reads (see
/// [`PathNames`]); `None` when DataFusion's parser cannot read it as one statement.
fn path_names(statement: &str, dialect: &dyn Dialect) -> Option<Vec<Ident>> {
    let mut parsed = DFParser::parse_sql_with_dialect(statement, dialect).ok()?;
    let parsed = parsed.pop_front().filter(|_| parsed.is_empty())?;
    let mut found = PathNames::default();
    found.statement(&parsed);
    Some(found.names)
}

/// The unqualified, quoted names that read as paths of the tables a statement reads,
/// CTE names in scope left out (as DataFusion's `resolve_table_references` scopes them).
#[derive(Default)]
struct PathNames {
    names: Vec<Ident>,
    ctes_in_scope: Vec<String>,
}

impl PathNames {
    fn statement(&mut self, statement: &DFStatement) {
        match statement {
            DFStatement::Statement(s) => {
                let _ = s.visit(self);
            }
            DFStatement::CopyTo(CopyToStatement { source, .. }) => match source {
                CopyToSource::Relation(name) => self.name(name),
                CopyToSource::Query(query) => {
                    let _ = query.visit(self);
                }
            },
            DFStatement::Explain(explain) => self.statement(&explain.statement),
            DFStatement::CreateExternalTable(_) | DFStatement::Reset(_) => {}
        }
    }

    fn name(&mut self, name: &ObjectName) {
        if let [ObjectNamePart::Identifier(ident)] = name.0.as_slice() {
            if ident.quote_style.is_some()
                && reads_as_path(&ident.value)
                && !self.ctes_in_scope.contains(&ident.value)
            {
                self.names.push(ident.clone());
            }
        }
    }
}

impl Visitor for PathNames {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if let Some(with) = &query.with {
            for cte in &with.cte_tables {
                if !with.recursive {
                    cte.visit(self)?;
                }
                self.ctes_in_scope.push(cte.alias.name.value.clone());
            }
        }
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if let Some(with) = &query.with {
            for _ in &with.cte_tables {
                self.ctes_in_scope.pop();
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table {
            name, args: None, ..
        } = factor
        {
            self.name(name);
        }
        ControlFlow::Continue(())
    }
}

/// The schema whose unknown names that read as paths are files.
const PATH_SCHEMA: &str = "public";

/// `name` as a double-quoted SQL identifier (its `"` doubled).
pub fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// What a table name that resolved to nothing is on disk, when that says more than
/// "not found": for a name that reads as a path, that nothing is at the path, or that the
/// file's format is not known from its extension; for a bare name (never read as a path),
/// that a file or directory of the name is in the working directory, and how to read it.
/// `None` for URLs with a scheme (object stores) and names with nothing on disk.
pub fn not_found_hint(name: &str) -> Option<String> {
    // an object store URL that read as no table: the store listed nothing there (a
    // refusal or an unreachable store fails the read itself, naming the URL)
    if name.contains("://") && !name.starts_with("file://") {
        return Some(format!(
            "no file or directory at {name} (the object store holds no object at that key \
             nor below it)"
        ));
    }
    let local = name.strip_prefix("file://").unwrap_or(name);
    let path = Path::new(local);
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let shown = absolute.display();
    let as_path = reads_as_path(name);
    match std::fs::metadata(path) {
        Err(_) if as_path => Some(format!("no file or directory at {shown}")),
        Err(_) => None,
        Ok(m) if !as_path => {
            let what = if m.is_dir() { "directory" } else { "file" };
            let slash = if m.is_dir() { "/" } else { "" };
            Some(format!(
                "a {what} '{name}' is in the working directory: name it as a path to read it \
                 (FROM './{name}{slash}')"
            ))
        }
        // its data files alone would read deleted rows and miss schema changes
        Ok(m) if m.is_dir() && is_iceberg_table_directory(path) => Some(format!(
            "directory {shown} is an Iceberg table (metadata/ holds its metadata files), \
             not a directory of data files: read it with iceberg_scan('{name}'), --table \
             t={name} or CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{name}'"
        )),
        Ok(m) if m.is_dir() => Some(format!(
            "directory {shown} holds no files of a format known from their extension \
             ({KNOWN_EXTENSIONS})"
        )),
        Ok(_) => Some(format!(
            "{shown} is a file whose format is not known from its extension \
             ({KNOWN_EXTENSIONS}); read it with CREATE EXTERNAL TABLE t STORED AS \
             PARQUET|CSV|JSON|AVRO|ARROW LOCATION '{name}'"
        )),
    }
}

/// Whether `dir` is an Iceberg table's directory: its `metadata/` holds a
/// `*.metadata.json` or `version-hint.text` (spec: "File System Tables").
fn is_iceberg_table_directory(dir: &Path) -> bool {
    std::fs::read_dir(dir.join("metadata")).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".metadata.json") || name == "version-hint.text"
        })
    })
}

/// The extensions DataFusion reads a file's format from.
const KNOWN_EXTENSIONS: &str = ".parquet, .csv, .json, .avro, .arrow";

/// Whether a table name reads as a file path or URL.
pub fn reads_as_path(name: &str) -> bool {
    name.contains(['/', '\\', '.'])
}

#[async_trait]
impl UrlTableFactory for PathTables {
    async fn try_new(&self, name: &str) -> DFResult<Option<Arc<dyn TableProvider>>> {
        if !reads_as_path(name) {
            return Ok(None);
        }
        // read-only: DataFusion's listing table would take an INSERT as a new file written
        // into the user's directory (tester T10's D2: for Parquet, of `string_view`
        // columns, which then no longer read next to the files already there)
        let state = self.state()?;
        let table = crate::path_listing::listing_table(&state, name).await?;
        Ok(table.map(|table| {
            Arc::new(icefloe::datafusion::read_only::ReadOnlyTable::new(
                table,
                format!("file path '{name}' (not a table; write files with COPY … TO)"),
            )) as Arc<dyn TableProvider>
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_are_tried() {
        for name in [
            "/d/f.parquet",
            "f.csv",
            "dir/",
            "s3://b/k",
            "C:\\d\\f.parquet",
        ] {
            assert!(reads_as_path(name), "{name}");
        }
        for name in ["t", "events", "my-table", "t$snapshots"] {
            assert!(!reads_as_path(name), "{name}");
        }
    }
}
