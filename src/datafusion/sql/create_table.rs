//! `CREATE TABLE` against an Iceberg catalog (see the parent module's docs): the
//! Spark clauses are parsed here, the rest planned by DataFusion for the columns.

use std::collections::{HashMap, HashSet};

use datafusion::dataframe::DataFrame;
use datafusion::logical_expr::{CreateMemoryTable, DdlStatement, Expr, LogicalPlan};
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::tokenizer::Token;

use super::column_default::default_value;
use super::column_types::{
    check_v3_columns, convert_struct, declare_timestamps, declared_type, make_optional,
    spark_type_name, timestamp_type, COLUMN_OPTIONS,
};
use super::property_lists::{check_table_keys, Clauses};
use super::struct_field_options::{declare_field_options, FieldOptions, FieldOptionsScan};
use super::tokens::{is_keyword, Cursor};
use super::{empty, resolve_table, ResolvedTable};
use crate::catalog::TableCreation;
use crate::error::{Error, ErrorKind, Result};
use crate::spec::{
    FormatVersion, NestedField, PartitionField, PartitionSpec, PrimitiveType, Schema, Transform,
    Type,
};

/// What a `CREATE TABLE` statement does to a table that exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CreateMode {
    /// `CREATE TABLE`: an error (nothing with `IF NOT EXISTS`).
    Create,
    /// `CREATE OR REPLACE TABLE`: replace it (module `replace_table`), else create it.
    CreateOrReplace,
    /// Spark's `REPLACE TABLE`: replace it; an error when it does not exist. `at`: the
    /// byte offset of `REPLACE` in the statement (DataFusion plans the columns of
    /// `CREATE TABLE` in its place).
    Replace { at: usize },
}

/// `CREATE TABLE`, `CREATE OR REPLACE TABLE` or `REPLACE TABLE` (`mode`), after those
/// keywords; `None` when the table is not in an Iceberg namespace.
pub(super) async fn create_table(
    ctx: &SessionContext,
    mut c: Cursor<'_>,
    mode: CreateMode,
) -> Result<Option<DataFrame>> {
    let if_not_exists = c.eat_keywords(&["IF", "NOT", "EXISTS"]);
    // a statement icefloe cannot read is DataFusion's to report
    let Ok(name) = c.object_name() else {
        return Ok(None);
    };
    let Some(table) = resolve_table(ctx, &name)? else {
        return Ok(None);
    };
    let verb = match mode {
        CreateMode::Create => "CREATE TABLE",
        CreateMode::CreateOrReplace => "CREATE OR REPLACE TABLE",
        CreateMode::Replace { .. } => "REPLACE TABLE",
    };
    super::resolve::check_namespace_levels(verb, &name, &name[..name.len().saturating_sub(1)])?;
    let what = format!("{verb} {}", table.display());
    if if_not_exists && mode != CreateMode::Create {
        return Err(Error::invalid_argument(format!(
            "{what}: IF NOT EXISTS cannot go with REPLACE"
        )));
    }
    let quote = c.identifier_quote();
    let mut parsed = Parsed::parse(c).map_err(|e| e.context(&what))?;
    if let CreateMode::Replace { at } = mode {
        // the text before the table name is unedited by `parse`; both statements
        // DataFusion plans (the whole one, and the column list's) start there
        let keyword = at..at + "REPLACE".len();
        for sql in std::iter::once(&mut parsed.plan_sql).chain(parsed.columns_sql.as_mut()) {
            if sql.get(keyword.clone()).is_some() {
                sql.replace_range(keyword.clone(), "CREATE");
            }
        }
    }
    // a session view holds the name: `IF NOT EXISTS` finds it taken and does nothing,
    // as Spark (the name is a table's or a view's alike); otherwise refused
    if if_not_exists && super::not_a_table::session_view_named(&table) {
        return empty(ctx).map(Some);
    }
    super::not_a_table::check_no_view_named(&table, &what)?;
    let catalog = table.target.catalog().clone();
    let exists = catalog.table_exists(&table.ident).await?;
    match (exists, mode) {
        (true, CreateMode::Create) if if_not_exists => return empty(ctx).map(Some),
        (true, CreateMode::Create) => {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!("{what}: table already exists"),
            ))
        }
        (true, _) => {
            let before = super::committed_result::snapshot_ids(&table).await;
            super::replace_table::replace_table(ctx, &table, &mut parsed)
                .await
                .map_err(|e| e.context(&what))?;
            return committed(ctx, &table, &before).await;
        }
        (false, CreateMode::Replace { .. }) => {
            return Err(Error::not_found(format!(
                "{what}: table does not exist (CREATE OR REPLACE TABLE creates it)"
            )))
        }
        (false, _) => {}
    }
    super::not_a_table::check_new_table_name(&table.ident.name, &what)?;
    let namespace = &table.ident.namespace;
    if !catalog.namespace_exists(namespace).await? {
        return Err(Error::not_found(format!(
            "{what}: namespace '{namespace}' does not exist in catalog '{}'",
            table.target.name
        )));
    }
    let creation = parsed.creation(ctx).await.map_err(|e| e.context(&what))?;
    let schema = table.target.schema(namespace)?;
    let Some(query) = parsed.query.clone() else {
        crate::failpoint::pause("create-checked");
        match catalog.create_table(&table.ident, creation).await {
            // created by another writer since the check above: nothing to do, as Spark
            // catches `TableAlreadyExistsException` under `IF NOT EXISTS`
            Err(e) if if_not_exists && e.kind() == ErrorKind::AlreadyExists => {}
            created => {
                created.map_err(|e| e.context(&what))?;
            }
        }
        schema.add_table_name(&table.ident.name);
        return empty(ctx).map(Some);
    };
    let staged = match catalog
        .stage_create_table(&table.ident, creation.clone())
        .await
    {
        Err(e) if e.kind() == ErrorKind::Unsupported => None,
        staged => Some(staged.map_err(|e| e.context(&what))?),
    };
    match staged {
        Some(staged) => super::staged_create::create_with_rows(ctx, &table, staged, &query)
            .await
            .map_err(|e| {
                // the staged create's commit (`assert-create`) lost to another create
                let step = if e.kind() == ErrorKind::AlreadyExists {
                    "creating the table (another writer created it meanwhile)"
                } else {
                    "inserting the query's rows"
                };
                e.context(format!("{what} AS: {step}"))
            })?,
        None => {
            let how = super::staged_create::Unstaged { mode, quote };
            how.create_then_insert(ctx, &table, creation, &mut parsed, &what)
                .await?
        }
    }
    schema.add_table_name(&table.ident.name);
    committed(ctx, &table, &HashSet::new()).await
}

/// The empty result of a statement that may have committed snapshots to `table` (a
/// CTAS, a replacement `… AS query`): it carries the snapshots `table` has now and had
/// not `before`, so the CLI prints `committed snapshot <id>` after it as after an
/// `INSERT` (module `committed_result`). A replacement without a query, which writes no
/// snapshot, carries none.
///
/// Errors: reading the empty result (in memory).
async fn committed(
    ctx: &SessionContext,
    table: &ResolvedTable,
    before: &HashSet<i64>,
) -> Result<Option<DataFrame>> {
    let added = super::committed_result::new_snapshot_ids(table, before).await;
    super::committed_result::with_committed(ctx, empty(ctx)?, added)
        .await
        .map(Some)
}

/// The Iceberg fields (ids 1..n) DataFusion plans for `columns`, a column list as in
/// `CREATE TABLE t (<columns>)` (for `ALTER TABLE … ADD COLUMN` and `… TYPE`).
/// Each field comes with its `DEFAULT` expression, if it has one, as DataFusion plans it.
pub(super) async fn plan_columns(
    ctx: &SessionContext,
    columns: &str,
) -> Result<Vec<(NestedField, Option<Expr>)>> {
    let text = format!("CREATE TABLE icefloe_columns ({columns})");
    let mut c = super::cursor(ctx, &text)
        .ok_or_else(|| Error::invalid_argument(format!("cannot read the column '{columns}'")))?;
    // past CREATE TABLE icefloe_columns
    for _ in 0..3 {
        c.advance();
    }
    let parsed = Parsed::parse(c)?;
    let (creation, mut defaults) = parsed.plan(ctx).await?;
    Ok(creation
        .schema
        .columns()
        .iter()
        .map(|f| {
            let default = defaults
                .iter()
                .position(|(name, _)| name == &f.name)
                .map(|i| defaults.swap_remove(i).1);
            (f.clone(), default)
        })
        .collect())
}

/// A `PARTITIONED BY` item: `col`, or `transform([arg,] col)`.
#[derive(Debug)]
struct PartitionItem {
    transform: Transform,
    column: Vec<String>,
    text: String,
}

/// What the statement says besides the columns DataFusion plans.
#[derive(Debug, Default)]
pub(super) struct Parsed {
    /// The statement with the Spark-only clauses cut out, for DataFusion to plan.
    pub plan_sql: String,
    partition: Vec<PartitionItem>,
    pub location: Option<String>,
    pub properties: HashMap<String, String>,
    /// Column comments by column name.
    pub docs: HashMap<String, String>,
    /// Top-level columns whose Iceberg type the declaration gives, not DataFusion's
    /// plan: `UUID` (planned as binary).
    pub declared: HashMap<String, PrimitiveType>,
    /// The Iceberg type of every timestamp type of the column list, at any depth, in
    /// the order they appear (see [`timestamp_type`]); `None` without a column list.
    pub timestamps: Option<Vec<PrimitiveType>>,
    /// The options of the column list's struct fields, at any depth, in declaration
    /// order (module `struct_field_options`).
    nested: Vec<FieldOptions>,
    /// The CTAS query's text.
    pub query: Option<String>,
    /// `plan_sql` without its `AS` query, when the statement has both a column list and
    /// a query: the columns as declared, for the table's schema.
    columns_sql: Option<String>,
}

/// Top-level column types DataFusion does not plan, and what it is given instead.
const TYPE_SUBSTITUTES: &[(&str, &str)] = &[
    ("UUID", "BYTEA"),
    ("BINARY", "BYTEA"),
    ("VARBINARY", "BYTEA"),
    ("LONG", "BIGINT"),
    ("TIMESTAMP_NTZ", "TIMESTAMP"),
    ("TIMESTAMP_LTZ", "TIMESTAMPTZ"),
];

/// DataFusion's SQL planner has no map type: `MAP<K, V>` (Spark) and `MAP(K, V)` (DuckDB)
/// are planned as `ARRAY<STRUCT<MAP_KEY K, MAP_VALUE V>>` and turned back into an
/// Iceberg map by [`convert_type`].
pub(super) const MAP_KEY: &str = "icefloe_map_key";
pub(super) const MAP_VALUE: &str = "icefloe_map_value";
const MAP_OPEN: &str = "ARRAY<STRUCT<icefloe_map_key ";
const MAP_SEPARATOR: &str = ", icefloe_map_value ";
const MAP_CLOSE: &str = ">>";

impl Parsed {
    /// Parse what follows the table name.
    pub fn parse(mut c: Cursor<'_>) -> Result<Self> {
        let mut out = Parsed::default();
        // byte ranges of the statement replaced for DataFusion, in order
        let mut edits: Vec<(usize, usize, &str)> = Vec::new();
        // byte offset of the `AS` before a query
        let mut query_start = None;
        let has_columns = c.peek().is_some_and(|t| t.token == Token::LParen);
        if has_columns {
            let range = c.group()?;
            out.timestamps = Some(Vec::new());
            out.scan_columns(c.sub(range), &mut edits)?;
        }
        // each clause at most once (Spark's checkDuplicateClauses); the COMMENT clause
        // wins over a 'comment' property, as in Spark
        let mut clauses = Clauses::default();
        let mut comment = None;
        while !c.at_end() {
            let start = c.offset();
            if c.eat_keyword("USING") {
                clauses.once("USING")?;
                let provider = c.identifier()?;
                if !provider.eq_ignore_ascii_case("iceberg") {
                    return Err(Error::invalid_argument(format!(
                        "USING {provider}: tables in an Iceberg catalog are iceberg tables"
                    )));
                }
            } else if c.eat_keywords(&["PARTITIONED", "BY"]) {
                clauses.once("PARTITIONED BY")?;
                let range = c.group()?;
                out.partition = parse_partition(c.sub(range))?;
            } else if c.eat_keyword("LOCATION") {
                clauses.once("LOCATION")?;
                out.location = Some(c.string()?);
            } else if c.eat_keyword("COMMENT") {
                clauses.once("COMMENT")?;
                comment = Some(c.string()?);
            } else if c.eat_keyword("TBLPROPERTIES") {
                clauses.once("TBLPROPERTIES")?;
                let list = c.properties()?;
                check_table_keys(list.iter().map(|(k, _)| k.as_str()))?;
                out.properties.extend(list);
            } else if c.peek_keyword("AS") {
                query_start = Some(start);
                c.advance();
                let query = c.text()[c.offset()..].trim();
                if query.is_empty() {
                    return Err(c.expected("a query after AS"));
                }
                out.query = Some(query.to_string());
                break;
            } else if c.peek_keyword("OPTIONS") {
                // Spark's data source options: no Iceberg table setting is read from them
                return Err(Error::unsupported(
                    "OPTIONS (…): an Iceberg table's settings are table properties, write \
                     TBLPROPERTIES ('key'='value', …)",
                ));
            } else if c.peek_keyword("CLUSTERED") {
                // Spark's Hive bucketing, which Spark's Iceberg catalog turns into bucket
                // partition fields
                return Err(Error::unsupported(
                    "CLUSTERED BY (col, …) INTO n BUCKETS: an Iceberg table is bucketed by its \
                     partition spec, write PARTITIONED BY (bucket(n, col), …)",
                ));
            } else {
                return Err(
                    c.expected("USING, PARTITIONED BY, LOCATION, COMMENT, TBLPROPERTIES or AS")
                );
            }
            edits.push((start, c.prev_end(), ""));
        }
        out.properties
            .extend(comment.map(|c| ("comment".to_string(), c)));
        if !has_columns && out.query.is_none() {
            return Err(Error::invalid_argument(
                "expected a column list or AS query",
            ));
        }
        let text = c.text();
        out.plan_sql = edited(text, &edits);
        if let (true, Some(end)) = (has_columns, query_start) {
            // every edit is before the `AS`
            out.columns_sql = Some(edited(text.get(..end).unwrap_or(text), &edits));
        }
        Ok(out)
    }

    /// Record column comments and declared types; substitute the types DataFusion does
    /// not plan (edits to the statement text).
    fn scan_columns(
        &mut self,
        mut c: Cursor<'_>,
        edits: &mut Vec<(usize, usize, &str)>,
    ) -> Result<()> {
        while !c.at_end() {
            let name = c.identifier().ok();
            if let (Some(name), Some(t)) = (&name, c.peek()) {
                let substitute = TYPE_SUBSTITUTES
                    .iter()
                    .find(|(from, _)| is_keyword(&t.token, from));
                if let Some((_, to)) = substitute {
                    edits.push((t.start, t.end, to));
                }
                if let Some(p) = declared_type(&c) {
                    self.declared.insert(name.clone(), p);
                }
                if let Some(unsupported) =
                    UNSUPPORTED_TYPES.iter().find(|u| is_keyword(&t.token, u))
                {
                    return Err(Error::unsupported(format!(
                        "column '{name}': type {unsupported} (icefloe does not write \
                         {} columns yet)",
                        unsupported.to_ascii_lowercase()
                    )));
                }
            }
            // to the end of this column definition: a `,` outside (), [] and, in the
            // type, <> (after it, in a DEFAULT, `<` and `>` compare)
            let (mut parens, mut brackets, mut angles) = (0usize, 0usize, 0usize);
            // depths (parens + angles inside them) of the MAP types being rewritten
            let mut maps: Vec<usize> = Vec::new();
            // still in the column's type (before its NOT NULL, DEFAULT, COMMENT, …)
            let mut in_type = true;
            let mut options = FieldOptionsScan::default();
            while let Some(t) = c.peek() {
                // a struct field's NOT NULL or COMMENT, cut for DataFusion
                if let Some((start, end, tokens)) = options.step(&c, &mut self.nested) {
                    edits.push((start, end, ""));
                    for _ in 0..tokens {
                        c.advance();
                    }
                    continue;
                }
                let depth = parens + angles;
                let (start, mut cut) = (t.start, None);
                if in_type
                    && depth == 0
                    && brackets == 0
                    && COLUMN_OPTIONS.iter().any(|o| is_keyword(&t.token, o))
                {
                    in_type = false;
                }
                if in_type {
                    if let Some(p) = timestamp_type(&c) {
                        self.timestamps.get_or_insert_with(Vec::new).push(p);
                    }
                    if let Some(name) = spark_type_name(&c) {
                        edits.push((t.start, t.end, name));
                    }
                }
                match &t.token {
                    Token::Comma if maps.last() == Some(&depth) => {
                        edits.push((t.start, t.end, MAP_SEPARATOR));
                    }
                    Token::Gt | Token::RParen if maps.last() == Some(&depth) => {
                        edits.push((t.start, t.end, MAP_CLOSE));
                        maps.pop();
                    }
                    Token::ShiftRight => {
                        let inner = maps.last() == Some(&depth);
                        if inner {
                            maps.pop();
                        }
                        let outer = depth
                            .checked_sub(1)
                            .is_some_and(|d| maps.last() == Some(&d));
                        if outer {
                            maps.pop();
                        }
                        match (inner, outer) {
                            (true, true) => edits.push((t.start, t.end, ">>>>")),
                            (true, false) | (false, true) => edits.push((t.start, t.end, ">>>")),
                            (false, false) => {}
                        }
                    }
                    Token::Word(_) if is_keyword(&t.token, "MAP") => {
                        if let Some(open) = c
                            .peek_at(1)
                            .filter(|o| matches!(o.token, Token::Lt | Token::LParen))
                        {
                            edits.push((t.start, open.end, MAP_OPEN));
                            maps.push(depth + 1);
                        }
                    }
                    _ => {}
                }
                match &t.token {
                    Token::Comma if parens == 0 && brackets == 0 && angles == 0 => break,
                    Token::LParen => parens += 1,
                    Token::RParen => parens = parens.saturating_sub(1),
                    Token::LBracket => brackets += 1,
                    Token::RBracket => brackets = brackets.saturating_sub(1),
                    Token::Lt if in_type => angles += 1,
                    Token::Gt if in_type => angles = angles.saturating_sub(1),
                    Token::ShiftRight if in_type => angles = angles.saturating_sub(2),
                    t if parens == 0
                        && brackets == 0
                        && angles == 0
                        && is_keyword(t, "COMMENT") =>
                    {
                        if let Some(next) = c.peek_at(1) {
                            if let Some(doc) = super::tokens::string_literal(&next.token) {
                                if let Some(name) = &name {
                                    self.docs.insert(name.clone(), doc.to_string());
                                }
                                // DataFusion's parser takes only '…' there: Spark's "…"
                                // clause is cut (its doc is kept above)
                                if !matches!(next.token, Token::SingleQuotedString(_)) {
                                    cut = Some(next.end);
                                }
                            }
                        }
                    }
                    _ => {}
                }
                if let Some(end) = cut {
                    edits.push((start, end, ""));
                    c.advance();
                }
                c.advance();
            }
            c.eat(&Token::Comma);
        }
        Ok(())
    }

    /// The table to create: DataFusion plans the columns (or the CTAS query).
    pub(super) async fn creation(&self, ctx: &SessionContext) -> Result<TableCreation> {
        let (mut creation, defaults) = self.plan(ctx).await?;
        check_v3_columns(&creation.schema, &self.properties)?;
        if !defaults.is_empty() {
            creation.schema = self.with_defaults(ctx, &creation.schema, defaults).await?;
        }
        // the builder's own checks (names, partition sources), before anything is
        // written; `ALTER TABLE` checks the columns it plans in the table's new schema
        creation.to_metadata("file:///icefloe-create-table-check")?;
        Ok(creation)
    }

    /// `schema` with the columns' `DEFAULT` values (v3, spec "Default values"): each one
    /// both the column's `initial-default` and its `write-default`, as `ALTER TABLE … ADD
    /// COLUMN … DEFAULT` sets them (a new table has no rows written before the column, so
    /// only the `write-default` is ever used; the value is a constant of the column's
    /// type, see module `column_default`). `DEFAULT NULL` sets none.
    ///
    /// Errors: [`ErrorKind::InvalidArgument`] naming the column when the table is not
    /// `format-version` 3, or the value is not one of the column's type.
    async fn with_defaults(
        &self,
        ctx: &SessionContext,
        schema: &Schema,
        defaults: Vec<(String, Expr)>,
    ) -> Result<Schema> {
        let version = crate::table_properties::format_version(&self.properties)?;
        let mut columns = schema.columns().to_vec();
        for (name, expr) in defaults {
            if version != Some(FormatVersion::V3) {
                return Err(Error::invalid_argument(format!(
                    "column '{name}' with a DEFAULT: default values require format version \
                     3 (set TBLPROPERTIES ('format-version' = '3'))"
                )));
            }
            let Some(column) = columns.iter_mut().find(|c| c.name == name) else {
                return Err(Error::invalid_argument(format!(
                    "DEFAULT of an unknown column '{name}'"
                )));
            };
            let value = default_value(ctx, expr, &name, &column.field_type).await?;
            if let (Some(value), Type::Primitive(p)) = (value, column.field_type.as_ref()) {
                let json = value
                    .to_json(p)
                    .map_err(|e| e.context(format!("default value of column '{name}'")))?;
                column.initial_default = Some(json.clone());
                column.write_default = Some(json);
            }
        }
        Ok(Schema::new(schema.schema_id, columns))
    }

    /// The table DataFusion plans, and the columns' `DEFAULT` expressions.
    ///
    /// A CTAS without a column list makes every field optional (Spark's CTAS does: the
    /// query's schema `asNullable`). With a column list (which Spark 3.5 refuses in a
    /// CTAS) the table's schema is the list's, as in `CREATE TABLE t (<columns>)`: its
    /// `NOT NULL` columns are required, and the query's rows are inserted as `INSERT
    /// INTO` would, refusing a null in them. The query is still planned with the list:
    /// DataFusion checks the column count and the casts.
    async fn plan(&self, ctx: &SessionContext) -> Result<(TableCreation, Vec<(String, Expr)>)> {
        let ctas = self.query.is_some() && self.columns_sql.is_none();
        let mut create = match ctas {
            // `100L` told apart from `100` in the plan (module `ctas_literal_types`)
            true => {
                let toks = super::tokenize(ctx, &self.plan_sql);
                let sql = match &toks {
                    Some(toks) => super::literals::long_literals_as_casts(&self.plan_sql, toks)?,
                    None => std::borrow::Cow::Borrowed(self.plan_sql.as_str()),
                };
                plan_create(ctx, &sql).await?
            }
            false => plan_create(ctx, &self.plan_sql).await?,
        };
        if let Some(columns_sql) = &self.columns_sql {
            create = plan_create(ctx, columns_sql).await?;
        }
        let mut ids = 0;
        let planned = create.input.schema().fields();
        let spark = match ctas {
            true => super::ctas_literal_types::spark_literal_types(&create.input),
            false => vec![],
        };
        let fields = super::ctas_literal_types::with_types(planned, &spark);
        let mut columns = convert_struct(&fields, &mut ids)?;
        if let Some(declared) = &self.timestamps {
            declare_timestamps(&mut columns, declared)?;
        }
        declare_field_options(&mut columns, &self.nested)?;
        for column in &mut columns {
            if let Some(p) = self.declared.get(&column.name) {
                *column.field_type = Type::Primitive(*p);
            }
            if let Some(doc) = self.docs.get(&column.name) {
                column.doc = Some(doc.clone());
            }
            if ctas {
                make_optional(column);
            }
        }
        let schema = Schema::new(0, columns);
        let mut creation = TableCreation::new(schema);
        creation.partition_spec = partition_spec(&creation.schema, &self.partition)?;
        creation.location.clone_from(&self.location);
        creation.properties.clone_from(&self.properties);
        Ok((creation, create.column_defaults.clone()))
    }
}

/// DataFusion's plan of `sql`, a `CREATE TABLE` statement; planned again with its casts
/// named when a cast beside what it casts shares its name (module `cast_names`: a Spark
/// CTAS reaches DataFusion's syntax only here).
async fn plan_create(ctx: &SessionContext, sql: &str) -> Result<CreateMemoryTable> {
    super::cast_names::planned(
        ctx,
        sql,
        |sql| async move { plan_create_once(ctx, &sql).await },
    )
    .await
}

async fn plan_create_once(ctx: &SessionContext, sql: &str) -> Result<CreateMemoryTable> {
    // a CTAS query naming metadata columns reads them as a query does
    let plan = match super::metadata_columns::plan(ctx, sql).await? {
        Some(plan) => plan,
        None => ctx.state().create_logical_plan(sql).await.map_err(|e| {
            Error::new(ErrorKind::DataFusion, "planning the columns").with_source(e)
        })?,
    };
    let LogicalPlan::Ddl(DdlStatement::CreateMemoryTable(create)) = plan else {
        return Err(Error::invalid_argument(
            "DataFusion did not plan the statement as CREATE TABLE",
        ));
    };
    Ok(create)
}

/// `text` with the byte ranges of `edits` (in order, within `text`) replaced.
fn edited(text: &str, edits: &[(usize, usize, &str)]) -> String {
    let mut sql = String::with_capacity(text.len());
    let mut at = 0;
    for &(start, end, replacement) in edits {
        sql.push_str(text.get(at..start).unwrap_or_default());
        sql.push_str(replacement);
        at = end;
    }
    sql.push_str(text.get(at..).unwrap_or_default());
    sql
}

/// Column types DataFusion cannot plan and icefloe does not write yet.
const UNSUPPORTED_TYPES: &[&str] = &["VARIANT", "GEOMETRY", "GEOGRAPHY"];

/// Parse the items inside `PARTITIONED BY ( … )`.
fn parse_partition(mut c: Cursor<'_>) -> Result<Vec<PartitionItem>> {
    let mut items = Vec::new();
    loop {
        let (transform, column, text) = parse_term(&mut c, "PARTITIONED BY")?;
        items.push(PartitionItem {
            transform,
            column,
            text,
        });
        if c.at_end() {
            return Ok(items);
        }
        c.expect(&Token::Comma)?;
    }
}

/// One transform term of Spark's Iceberg syntax at the cursor: `col`, `a.b`, or
/// `transform([arg,] col)` (`bucket(16, id)`, `truncate(4, s)`, `years|months|days|hours(ts)`,
/// also the singular names, `date(ts)` and `identity(c)`). Returns the transform, the
/// column's name path and the term's text. Errors name `clause` and the term.
pub(super) fn parse_term(
    c: &mut Cursor<'_>,
    clause: &str,
) -> Result<(Transform, Vec<String>, String)> {
    let start = c.offset();
    let first = c.object_name()?;
    let (transform, column) = match first.as_slice() {
        [func] if c.peek().is_some_and(|t| t.token == Token::LParen) => {
            let range = c.group()?;
            let mut args = c.sub(range);
            let (mut number, mut column) = (None, None);
            loop {
                if matches!(args.peek().map(|t| &t.token), Some(Token::Number(..))) {
                    number = Some(args.number()?);
                } else {
                    column = Some(args.object_name()?);
                }
                if !args.eat(&Token::Comma) {
                    break;
                }
            }
            args.expect_end()?;
            let text = &c.text()[start..c.prev_end()];
            let column = column
                .ok_or_else(|| Error::invalid_argument(format!("{clause} {text}: no column")))?;
            (transform(func, number, text, clause)?, column)
        }
        _ => (Transform::Identity, first),
    };
    Ok((transform, column, c.text()[start..c.prev_end()].to_string()))
}

/// The transform a function of `clause` (`PARTITIONED BY`, …) names.
fn transform(func: &str, number: Option<u32>, text: &str, clause: &str) -> Result<Transform> {
    let func = func.to_lowercase();
    let t = match func.as_str() {
        "bucket" | "truncate" => {
            let n = number.ok_or_else(|| {
                Error::invalid_argument(format!("{clause} {text}: {func} needs a count"))
            })?;
            let t = if func == "bucket" {
                Transform::Bucket(n)
            } else {
                Transform::Truncate(n)
            };
            t.check_argument()
                .map_err(|e| e.context(format!("{clause} {text}")))?;
            return Ok(t);
        }
        "identity" => Transform::Identity,
        "years" | "year" => Transform::Year,
        "months" | "month" => Transform::Month,
        "days" | "day" | "date" => Transform::Day,
        "hours" | "hour" => Transform::Hour,
        "void" => Transform::Void,
        _ => {
            return Err(Error::invalid_argument(format!(
                "{clause} {text}: unknown partition transform '{func}'"
            )))
        }
    };
    if number.is_some() {
        return Err(Error::invalid_argument(format!(
            "{clause} {text}: {func} takes only a column"
        )));
    }
    Ok(t)
}

/// The partition spec (id 0, field ids from 1000) of the `PARTITIONED BY` items.
fn partition_spec(schema: &Schema, items: &[PartitionItem]) -> Result<PartitionSpec> {
    let mut fields: Vec<PartitionField> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let column = item.column.join(".");
        let bad =
            |msg: String| Error::invalid_argument(format!("PARTITIONED BY {}: {msg}", item.text));
        let source = find_column(schema, &item.column).ok_or_else(|| {
            let columns: Vec<&str> = schema.columns().iter().map(|f| f.name.as_str()).collect();
            let e = bad(format!("column '{column}' does not exist"));
            crate::column_case::with_other_case_note(e, [item.column.as_slice()], &columns)
        })?;
        if !item.transform.can_transform(&source.field_type) {
            return Err(bad(format!(
                "transform {} cannot apply to column '{column}' of type {}",
                item.transform, source.field_type
            )));
        }
        let name = match item.transform {
            Transform::Identity => column.clone(),
            Transform::Bucket(_) => format!("{column}_bucket"),
            Transform::Truncate(_) => format!("{column}_trunc"),
            Transform::Year => format!("{column}_year"),
            Transform::Month => format!("{column}_month"),
            Transform::Day => format!("{column}_day"),
            Transform::Hour => format!("{column}_hour"),
            Transform::Void | Transform::Unknown(_) => format!("{column}_null"),
        };
        if fields.iter().any(|f| f.name == name) {
            return Err(bad(format!("partition field '{name}' appears twice")));
        }
        // as Iceberg Java: one transform of a kind per column, one time transform
        let redundant = fields.iter().find(|f| {
            f.source_id == source.id && f.transform.dedup_name() == item.transform.dedup_name()
        });
        if let Some(f) = redundant {
            return Err(bad(format!(
                "column '{column}' is already partitioned by {} ({})",
                f.transform, f.name
            )));
        }
        if !item.transform.is_identity() && schema.field_by_name(&name).is_some() {
            return Err(bad(format!(
                "partition field name '{name}' is also a column"
            )));
        }
        let field_id = 1000 + i32::try_from(i).map_err(|_| bad("too many fields".into()))?;
        fields.push(PartitionField {
            source_id: source.id,
            field_id: Some(field_id),
            name,
            transform: item.transform.clone(),
        });
    }
    Ok(PartitionSpec { spec_id: 0, fields })
}

/// A column by its path (`a` or `a.b` into a struct).
fn find_column<'s>(schema: &'s Schema, path: &[String]) -> Option<&'s NestedField> {
    let (first, rest) = path.split_first()?;
    let mut field = schema.field_by_name(first)?;
    for part in rest {
        let Type::Struct(s) = field.field_type.as_ref() else {
            return None;
        };
        field = s.fields.iter().find(|f| &f.name == part)?;
    }
    Some(field)
}
