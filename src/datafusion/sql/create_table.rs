//! `CREATE TABLE` against an Iceberg catalog (see the parent module's docs): the
//! Spark clauses are parsed here, the rest planned by DataFusion for the columns.

use std::collections::HashMap;

use datafusion::arrow::datatypes::{DataType, Field, Fields};
use datafusion::dataframe::DataFrame;
use datafusion::logical_expr::{DdlStatement, Expr, LogicalPlan};
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::tokenizer::Token;

use super::column_default::default_value;
use super::tokens::{is_keyword, Cursor};
use super::{empty, resolve_table};
use crate::catalog::TableCreation;
use crate::error::{Error, ErrorKind, Result};
use crate::spec::{
    ListType, MapType, NestedField, PartitionField, PartitionSpec, PrimitiveType, Schema,
    StructType, Transform, Type,
};

/// `CREATE TABLE`, after those keywords; `None` when the table is not in an Iceberg
/// namespace.
pub(super) async fn create_table(
    ctx: &SessionContext,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    let if_not_exists = c.eat_keywords(&["IF", "NOT", "EXISTS"]);
    // a statement icefloe cannot read is DataFusion's to report
    let Ok(name) = c.object_name() else {
        return Ok(None);
    };
    let Some(table) = resolve_table(ctx, &name)? else {
        return Ok(None);
    };
    let what = format!("CREATE TABLE {}", table.display());
    let quote = c.identifier_quote();
    let parsed = Parsed::parse(c).map_err(|e| e.context(&what))?;
    let catalog = table.target.catalog().clone();
    if catalog.table_exists(&table.ident).await? {
        if if_not_exists {
            return empty(ctx).map(Some);
        }
        return Err(Error::new(
            ErrorKind::AlreadyExists,
            format!("{what}: table already exists"),
        ));
    }
    let namespace = &table.ident.namespace;
    if !catalog.namespace_exists(namespace).await? {
        return Err(Error::not_found(format!(
            "{what}: namespace '{namespace}' does not exist in catalog '{}'",
            table.target.name
        )));
    }
    let creation = parsed.creation(ctx).await.map_err(|e| e.context(&what))?;
    let created = catalog
        .create_table(&table.ident, creation)
        .await
        .map_err(|e| e.context(&what))?;
    let schema = table.target.schema(namespace)?;
    schema.add_table_name(&table.ident.name);
    if let Some(query) = &parsed.query {
        if let Err(e) = insert(ctx, &table.sql_name(quote), query).await {
            let e = e.context(format!("{what} AS: inserting the query's rows"));
            // CTAS is create-then-insert: undo the create, and remove the files of the
            // table this statement created (its first metadata file; the failed insert
            // removed its data files) — but only while the table is still as created.
            // It is visible from the create on, so another writer may have committed
            // to it meanwhile; dropping it then would delete that writer's rows.
            let unchanged = catalog
                .metadata_location(&table.ident)
                .await
                .is_ok_and(|now| now == created.metadata_location());
            if !unchanged {
                return Err(e.context(format!(
                    "table {} was kept: it changed after this statement created it \
                     (another writer committed to it)",
                    table.display()
                )));
            }
            let _ = catalog.drop_table(&table.ident, true).await;
            schema.remove_table_name(&table.ident.name);
            return Err(e);
        }
    }
    empty(ctx).map(Some)
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

/// `INSERT INTO <table> <query>`, run to the end.
async fn insert(ctx: &SessionContext, table: &str, query: &str) -> Result<()> {
    let sql = format!("INSERT INTO {table} {query}");
    ctx.sql(&sql).await?.collect().await?;
    Ok(())
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
    properties: HashMap<String, String>,
    /// Column comments by column name.
    pub docs: HashMap<String, String>,
    /// Top-level columns whose Iceberg type the declaration gives, not DataFusion's
    /// plan: `UUID` (planned as binary).
    pub declared: HashMap<String, PrimitiveType>,
    /// The Iceberg type of every timestamp type of the column list, at any depth, in
    /// the order they appear (see [`timestamp_type`]); `None` without a column list.
    pub timestamps: Option<Vec<PrimitiveType>>,
    /// The CTAS query's text.
    pub query: Option<String>,
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
const MAP_KEY: &str = "icefloe_map_key";
const MAP_VALUE: &str = "icefloe_map_value";
const MAP_OPEN: &str = "ARRAY<STRUCT<icefloe_map_key ";
const MAP_SEPARATOR: &str = ", icefloe_map_value ";
const MAP_CLOSE: &str = ">>";

impl Parsed {
    /// Parse what follows the table name.
    pub fn parse(mut c: Cursor<'_>) -> Result<Self> {
        let mut out = Parsed::default();
        // byte ranges of the statement replaced for DataFusion, in order
        let mut edits: Vec<(usize, usize, &str)> = Vec::new();
        let has_columns = c.peek().is_some_and(|t| t.token == Token::LParen);
        if has_columns {
            let range = c.group()?;
            out.timestamps = Some(Vec::new());
            out.scan_columns(c.sub(range), &mut edits)?;
        }
        while !c.at_end() {
            let start = c.offset();
            if c.eat_keyword("USING") {
                let provider = c.identifier()?;
                if !provider.eq_ignore_ascii_case("iceberg") {
                    return Err(Error::invalid_argument(format!(
                        "USING {provider}: tables in an Iceberg catalog are iceberg tables"
                    )));
                }
            } else if c.eat_keywords(&["PARTITIONED", "BY"]) {
                let range = c.group()?;
                out.partition = parse_partition(c.sub(range))?;
            } else if c.eat_keyword("LOCATION") {
                out.location = Some(c.string()?);
            } else if c.eat_keyword("COMMENT") {
                out.properties.insert("comment".to_string(), c.string()?);
            } else if c.eat_keyword("TBLPROPERTIES") {
                out.properties.extend(c.properties()?);
            } else if c.peek_keyword("AS") {
                c.advance();
                let query = c.text()[c.offset()..].trim();
                if query.is_empty() {
                    return Err(c.expected("a query after AS"));
                }
                out.query = Some(query.to_string());
                break;
            } else {
                return Err(
                    c.expected("USING, PARTITIONED BY, LOCATION, COMMENT, TBLPROPERTIES or AS")
                );
            }
            edits.push((start, c.prev_end(), ""));
        }
        if !has_columns && out.query.is_none() {
            return Err(Error::invalid_argument(
                "expected a column list or AS query",
            ));
        }
        let text = c.text();
        let mut sql = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end, replacement) in edits {
            sql.push_str(text.get(at..start).unwrap_or_default());
            sql.push_str(replacement);
            at = end;
        }
        sql.push_str(text.get(at..).unwrap_or_default());
        out.plan_sql = sql;
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
            // to the end of this column definition: a `,` outside () and <>
            let (mut parens, mut angles) = (0usize, 0usize);
            // depths (parens + angles inside them) of the MAP types being rewritten
            let mut maps: Vec<usize> = Vec::new();
            // still in the column's type (before its NOT NULL, DEFAULT, COMMENT, …)
            let mut in_type = true;
            while let Some(t) = c.peek() {
                let depth = parens + angles;
                if in_type && depth == 0 && COLUMN_OPTIONS.iter().any(|o| is_keyword(&t.token, o)) {
                    in_type = false;
                }
                if in_type {
                    if let Some(p) = timestamp_type(&c) {
                        self.timestamps.get_or_insert_with(Vec::new).push(p);
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
                    Token::Comma if parens == 0 && angles == 0 => break,
                    Token::LParen => parens += 1,
                    Token::RParen => parens = parens.saturating_sub(1),
                    Token::Lt => angles += 1,
                    Token::Gt => angles = angles.saturating_sub(1),
                    Token::ShiftRight => angles = angles.saturating_sub(2),
                    t if parens == 0 && angles == 0 && is_keyword(t, "COMMENT") => {
                        if let (Some(name), Some(Token::SingleQuotedString(doc))) =
                            (&name, c.peek_at(1).map(|t| &t.token))
                        {
                            self.docs.insert(name.clone(), doc.clone());
                        }
                    }
                    _ => {}
                }
                c.advance();
            }
            c.eat(&Token::Comma);
        }
        Ok(())
    }

    /// The table to create: DataFusion plans the columns (or the CTAS query).
    async fn creation(&self, ctx: &SessionContext) -> Result<TableCreation> {
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
        let version = self.properties.get("format-version").map(|v| v.trim());
        let mut columns = schema.columns().to_vec();
        for (name, expr) in defaults {
            if version != Some("3") {
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
    async fn plan(&self, ctx: &SessionContext) -> Result<(TableCreation, Vec<(String, Expr)>)> {
        let plan = ctx
            .state()
            .create_logical_plan(&self.plan_sql)
            .await
            .map_err(|e| {
                Error::new(ErrorKind::DataFusion, "planning the columns").with_source(e)
            })?;
        let LogicalPlan::Ddl(DdlStatement::CreateMemoryTable(create)) = plan else {
            return Err(Error::invalid_argument(
                "DataFusion did not plan the statement as CREATE TABLE",
            ));
        };
        let mut ids = 0;
        let mut columns = convert_struct(create.input.schema().fields(), &mut ids)?;
        if let Some(declared) = &self.timestamps {
            declare_timestamps(&mut columns, declared)?;
        }
        for column in &mut columns {
            if let Some(p) = self.declared.get(&column.name) {
                *column.field_type = Type::Primitive(*p);
            }
            if let Some(doc) = self.docs.get(&column.name) {
                column.doc = Some(doc.clone());
            }
            if self.query.is_some() {
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

/// The Iceberg type a top-level column type at the cursor declares where DataFusion's
/// plan does not tell it: `UUID` (planned as binary). Spark-only spellings are read at
/// the top level only (nested, DataFusion plans or refuses them as it does).
fn declared_type(c: &Cursor<'_>) -> Option<PrimitiveType> {
    c.peek()
        .is_some_and(|t| is_keyword(&t.token, "UUID"))
        .then_some(PrimitiveType::Uuid)
}

/// The words that end a column's type in its definition (at depth 0).
const COLUMN_OPTIONS: &[&str] = &[
    "NOT",
    "NULL",
    "DEFAULT",
    "COMMENT",
    "PRIMARY",
    "UNIQUE",
    "CHECK",
    "CONSTRAINT",
    "REFERENCES",
    "GENERATED",
    "COLLATE",
];

/// The Iceberg type of the timestamp type at the cursor (in a column's type, at any
/// depth): `TIMESTAMP[(p)] [WITHOUT TIME ZONE]` and `TIMESTAMP_NTZ` are `timestamp`;
/// `TIMESTAMPTZ`, `TIMESTAMP_LTZ` and `TIMESTAMP[(p)] WITH TIME ZONE` `timestamptz`;
/// with a precision of 9, `timestamp_ns` / `timestamptz_ns` (v3 types, spec "Primitive
/// Types"; refused on v1/v2 tables by [`check_v3_columns`]). `None` when the
/// cursor is not at one, or at a struct field of that name (`STRUCT<timestamp INT>`,
/// `STRUCT<timestamp: INT>`: a name is followed by its type).
///
/// Why the declaration decides: DataFusion plans `TIMESTAMP` and `TIMESTAMP(9)` alike as
/// Arrow nanoseconds, and a type with a time zone without one unless the session has a
/// time zone. A plain `TIMESTAMP` (any precision but 9) is microseconds, as Spark creates
/// it. A CTAS column of Arrow nanoseconds (the query's own type, e.g. `now()`, a
/// `TIMESTAMP` literal) stays microseconds: nothing in the query declares the precision,
/// and DataFusion gives nanoseconds to values that never had more than microseconds.
fn timestamp_type(c: &Cursor<'_>) -> Option<PrimitiveType> {
    let word = |i: usize, kw: &str| c.peek_at(i).is_some_and(|t| is_keyword(&t.token, kw));
    let family = ["TIMESTAMP", "TIMESTAMPTZ", "TIMESTAMP_LTZ", "TIMESTAMP_NTZ"];
    if !family.iter().any(|kw| word(0, kw)) {
        return None;
    }
    // a struct field's name is followed by its type (or a `:`)
    let name = match c.peek_at(1).map(|t| &t.token) {
        Some(Token::Colon) => true,
        Some(t @ Token::Word(_)) => !["WITH", "WITHOUT"]
            .iter()
            .chain(COLUMN_OPTIONS)
            .any(|kw| is_keyword(t, kw)),
        _ => false,
    };
    if name {
        return None;
    }
    if word(0, "TIMESTAMPTZ") || word(0, "TIMESTAMP_LTZ") {
        return Some(PrimitiveType::Timestamptz);
    }
    if word(0, "TIMESTAMP_NTZ") {
        return Some(PrimitiveType::Timestamp);
    }
    // a precision: TIMESTAMP(9), TIMESTAMP(6) WITH TIME ZONE
    let precision = if c.peek_at(1).is_some_and(|t| t.token == Token::LParen) {
        match c.peek_at(2).map(|t| &t.token) {
            Some(Token::Number(n, _)) => Some(n.as_str()),
            _ => None,
        }
    } else {
        None
    };
    let at = if precision.is_some() { 4 } else { 1 };
    let zoned = word(at, "WITH") && word(at + 1, "TIME") && word(at + 2, "ZONE");
    Some(match (precision == Some("9"), zoned) {
        (true, false) => PrimitiveType::TimestampNs,
        (true, true) => PrimitiveType::TimestamptzNs,
        (false, true) => PrimitiveType::Timestamptz,
        (false, false) => PrimitiveType::Timestamp,
    })
}

/// Give the timestamp fields of `fields` (at any depth, in the order of the column
/// list: struct fields in order, a list's element, a map's key then value) the types
/// the column list declares, `declared` in that order ([`timestamp_type`]).
///
/// Errors ([`ErrorKind::Unsupported`]): a number of timestamp fields other than
/// `declared`'s (the column list was not read as DataFusion read it).
fn declare_timestamps(fields: &mut [NestedField], declared: &[PrimitiveType]) -> Result<()> {
    fn visit<'a>(
        ty: &mut Type,
        declared: &mut impl Iterator<Item = &'a PrimitiveType>,
        seen: &mut usize,
    ) {
        match ty {
            Type::Primitive(p @ (PrimitiveType::Timestamp | PrimitiveType::Timestamptz)) => {
                *seen += 1;
                if let Some(d) = declared.next() {
                    *p = *d;
                }
            }
            Type::Primitive(_) => {}
            Type::Struct(s) => {
                for f in &mut s.fields {
                    visit(&mut f.field_type, declared, seen);
                }
            }
            Type::List(l) => visit(&mut l.element_field.field_type, declared, seen),
            Type::Map(m) => {
                visit(&mut m.key_field.field_type, declared, seen);
                visit(&mut m.value_field.field_type, declared, seen);
            }
        }
    }
    let mut types = declared.iter();
    let mut seen = 0;
    for f in fields.iter_mut() {
        visit(&mut f.field_type, &mut types, &mut seen);
    }
    if seen != declared.len() {
        return Err(Error::unsupported(format!(
            "a column list whose {} timestamp types icefloe reads are {seen} in \
             DataFusion's plan (a spelling of a timestamp type icefloe does not read)",
            declared.len()
        )));
    }
    Ok(())
}

/// Column types DataFusion cannot plan and icefloe does not write yet.
const UNSUPPORTED_TYPES: &[&str] = &["VARIANT", "GEOMETRY", "GEOGRAPHY"];

/// `CREATE TABLE`'s v3 types need format version 3 (spec: "Primitive Types":
/// `timestamp_ns`/`timestamptz_ns` and `unknown` are v3 types); an `unknown` field must
/// have a form in data files.
///
/// Errors: a field of `schema` (at any depth, named by its path: `st.a`, `l.element`,
/// `m.value`) of type `timestamp_ns`, `timestamptz_ns` or `unknown` (a CTAS column of
/// NULLs) when `properties` do not set `format-version` 3
/// ([`ErrorKind::InvalidArgument`]); an `unknown` list element, map key or value, or a
/// struct of `unknown` fields only ([`ErrorKind::Unsupported`], see
/// `crate::write::unknown`).
fn check_v3_columns(schema: &Schema, properties: &HashMap<String, String>) -> Result<()> {
    if properties.get("format-version").map(|v| v.trim()) == Some("3") {
        if let Ok(arrow) = crate::spec::arrow::schema_to_arrow(schema) {
            crate::write::stored_schema(&arrow)?;
        }
        return Ok(());
    }
    fn check(path: &str, ty: &Type) -> Result<()> {
        match ty {
            Type::Primitive(p @ (PrimitiveType::TimestampNs | PrimitiveType::TimestamptzNs)) => {
                Err(Error::invalid_argument(format!(
                    "column '{path}': type {p} (TIMESTAMP(9)) needs format-version 3 (set \
                     TBLPROPERTIES ('format-version' = '3'), or use TIMESTAMP for microseconds)"
                )))
            }
            Type::Primitive(PrimitiveType::Unknown) => Err(Error::invalid_argument(format!(
                "column '{path}': type unknown (a column of NULLs) needs format-version 3 (set \
                 TBLPROPERTIES ('format-version' = '3'), or CAST the NULL to the column's type)"
            ))),
            Type::Primitive(_) => Ok(()),
            Type::Struct(s) => s
                .fields
                .iter()
                .try_for_each(|f| check(&format!("{path}.{}", f.name), &f.field_type)),
            Type::List(l) => check(&format!("{path}.element"), &l.element_field.field_type),
            Type::Map(m) => {
                check(&format!("{path}.key"), &m.key_field.field_type)?;
                check(&format!("{path}.value"), &m.value_field.field_type)
            }
        }
    }
    schema
        .columns()
        .iter()
        .try_for_each(|f| check(&f.name, &f.field_type))
}

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
            if n == 0 {
                return Err(Error::invalid_argument(format!(
                    "{clause} {text}: {func} needs a count above 0"
                )));
            }
            return Ok(if func == "bucket" {
                Transform::Bucket(n)
            } else {
                Transform::Truncate(n)
            });
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
        let source = find_column(schema, &item.column)
            .ok_or_else(|| bad(format!("column '{column}' does not exist")))?;
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
            Transform::Void | Transform::Unknown => format!("{column}_null"),
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
            transform: item.transform,
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

/// Iceberg fields for Arrow fields, with fresh ids after `*ids`: the fields of a struct
/// first, then their nested fields (as Iceberg Java's `TypeUtil.assignFreshIds`).
fn convert_struct(fields: &Fields, ids: &mut i32) -> Result<Vec<NestedField>> {
    let first = *ids + 1;
    *ids += i32::try_from(fields.len()).map_err(|_| Error::invalid_argument("too many columns"))?;
    fields
        .iter()
        .zip(first..)
        .map(|(f, id)| {
            let ty = convert_field_type(f, ids)
                .map_err(|e| e.context(format!("column '{}'", f.name())))?;
            Ok(field(id, f.name(), ty, !f.is_nullable()))
        })
        .collect()
}

fn field(id: i32, name: &str, ty: Type, required: bool) -> NestedField {
    if required {
        NestedField::required(id, name, ty)
    } else {
        NestedField::optional(id, name, ty)
    }
}

/// An Iceberg map of Arrow key and value fields: key and value ids first, then the ids
/// nested in them (as Iceberg Java's `TypeUtil.assignFreshIds`).
fn map_type(k: &Field, v: &Field, ids: &mut i32) -> Result<Type> {
    let (key_id, value_id) = (*ids + 1, *ids + 2);
    *ids += 2;
    let key = convert_field_type(k, ids)?;
    let value = convert_field_type(v, ids)?;
    Ok(Type::Map(MapType {
        key_field: field(key_id, "key", key, true),
        value_field: field(value_id, "value", value, !v.is_nullable()),
    }))
}

/// The Iceberg type of an Arrow field: its type's, but `uuid` for a field tagged as
/// one (a CTAS query reading a `uuid` column).
fn convert_field_type(f: &Field, ids: &mut i32) -> Result<Type> {
    if crate::spec::arrow::is_uuid_field(f) {
        return Ok(Type::Primitive(PrimitiveType::Uuid));
    }
    convert_type(f.data_type(), ids)
}

/// The Iceberg type of an Arrow type (see the parent module's table).
fn convert_type(dt: &DataType, ids: &mut i32) -> Result<Type> {
    use PrimitiveType as P;
    let mut next = || {
        *ids += 1;
        *ids
    };
    Ok(Type::Primitive(match dt {
        DataType::Struct(fields) => {
            return Ok(Type::Struct(StructType::new(convert_struct(fields, ids)?)))
        }
        DataType::List(e)
        | DataType::LargeList(e)
        | DataType::ListView(e)
        | DataType::LargeListView(e)
        | DataType::FixedSizeList(e, _) => {
            if let DataType::Struct(kv) = e.data_type() {
                if let [k, v] = &kv[..] {
                    if k.name() == MAP_KEY && v.name() == MAP_VALUE {
                        return map_type(k, v, ids);
                    }
                }
            }
            let id = next();
            let ty = convert_field_type(e, ids)?;
            return Ok(Type::List(ListType {
                element_field: field(id, "element", ty, !e.is_nullable()),
            }));
        }
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(Error::invalid_argument("map entries are not a struct"));
            };
            let (Some(k), Some(v)) = (kv.first(), kv.get(1)) else {
                return Err(Error::invalid_argument(
                    "map entries need a key and a value",
                ));
            };
            return map_type(k, v, ids);
        }
        DataType::Dictionary(_, value) => return convert_type(value, ids),
        // a CTAS column of NULLs: v3's `unknown`, as Iceberg's Spark integration makes
        // Spark's NullType (refused on v1/v2 by `check_v3_columns`)
        DataType::Null => P::Unknown,
        DataType::Boolean => P::Boolean,
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::UInt8 | DataType::UInt16 => {
            P::Int
        }
        DataType::Int64 | DataType::UInt32 => P::Long,
        DataType::Float16 | DataType::Float32 => P::Float,
        DataType::Float64 => P::Double,
        DataType::Decimal32(p, s)
        | DataType::Decimal64(p, s)
        | DataType::Decimal128(p, s)
        | DataType::Decimal256(p, s)
            if *p <= 38 && *s >= 0 =>
        {
            P::Decimal {
                precision: u32::from(*p),
                scale: u32::from(s.unsigned_abs()),
            }
        }
        DataType::Date32 | DataType::Date64 => P::Date,
        DataType::Time32(_) | DataType::Time64(_) => P::Time,
        DataType::Timestamp(_, None) => P::Timestamp,
        DataType::Timestamp(_, Some(_)) => P::Timestamptz,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => P::String,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => P::Binary,
        DataType::FixedSizeBinary(n) if *n > 0 => P::Fixed(n.unsigned_abs().into()),
        DataType::Decimal32(p, s)
        | DataType::Decimal64(p, s)
        | DataType::Decimal128(p, s)
        | DataType::Decimal256(p, s) => {
            return Err(Error::invalid_argument(format!(
                "type DECIMAL({p}, {s}) has no Iceberg type (Iceberg decimals have a \
                 precision of at most 38 and a scale of at least 0)"
            )))
        }
        other => {
            return Err(Error::invalid_argument(format!(
                "type {other} has no Iceberg type"
            )))
        }
    }))
}

/// Make a field and everything in it optional (CTAS columns, as in Spark).
fn make_optional(field: &mut NestedField) {
    field.required = false;
    match field.field_type.as_mut() {
        Type::Struct(s) => s.fields.iter_mut().for_each(make_optional),
        Type::List(l) => make_optional(&mut l.element_field),
        Type::Map(m) => make_optional(&mut m.value_field),
        Type::Primitive(_) => {}
    }
}
