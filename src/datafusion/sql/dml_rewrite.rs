//! `UPDATE` and `MERGE` (and `INSERT … VALUES` with `DEFAULT`) read as Spark reads them,
//! before DataFusion 55 plans them.
//!
//! DataFusion 55's planners read an assignment target by its last name part alone
//! (`UPDATE t SET st.a = 5` wrote the top-level column `a`, `SET no_such_table.a = 6` was
//! accepted, and `UPDATE`'s target was not normalized: `SET V = 7` wrote the quoted
//! column `"V"` while `WHERE V = 10` read `v`), and resolve every `MERGE` clause against
//! the target and the source together (a `NOT MATCHED` clause reading a target column
//! read NULLs; an unqualified name of both sides was "ambiguous"). [`plan`] rewrites such
//! a statement's syntax tree first:
//!
//! - assignment targets (`UPDATE … SET`, `MERGE … UPDATE SET`, `MERGE … INSERT (cols)`)
//!   resolve against the target table (module `assignments`): `t.a` / `alias.a` / `a` is
//!   column `a`, `st.a` field `a` of struct column `st` (written as `st = named_struct(…)`
//!   keeping the other fields), an unknown name or qualifier is an error;
//! - the expressions of `WHEN NOT MATCHED [BY TARGET]` clauses resolve against the source
//!   only, those of `WHEN NOT MATCHED BY SOURCE` against the target only (module
//!   `merge_scopes`);
//! - Spark's `MERGE … UPDATE SET *` / `INSERT *` become the target's columns from the
//!   source's (module `merge_star`), and a `DEFAULT` value (also in `INSERT … VALUES`)
//!   the column's default (module `dml_defaults`);
//! - aggregate and window functions in a row-level statement are refused by name (module
//!   `dml_functions`, `DELETE` too), and a constant `UPDATE` value that does not fit its
//!   column names the column (module `update_values`).
//!
//! Names compare as DataFusion compares them: unquoted parts lowercased
//! (`datafusion.sql_parser.enable_ident_normalization`), quoted ones exact.

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::TableReference;
use datafusion::logical_expr::dml::MergeIntoClauseKind;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast::{
    Expr, FromTable, Ident, Insert, Merge, MergeAction, MergeClauseKind, MergeInsertKind,
    ObjectName, ObjectNamePart, SetExpr, Statement, TableAlias, TableFactor, TableObject, Update,
    Value,
};
use datafusion::sql::unparser::expr_to_sql;

use super::assignments::{resolve_assignments, resolve_insert_columns, AssignmentScope};
use super::dml_defaults::{is_default, replace_in_assignments, replace_in_rows};
use super::dml_functions::check_row_functions;
use super::merge_scopes::scope_merge_clauses;
use super::merge_star::{expand_stars, mark_stars};
use super::tokens::first_word_is;
use super::update_values::check_constant_values;
use crate::datafusion::dml::merge_clauses::check_clause_order;
use crate::error::Result;

/// The plan of `sql` when it is an `UPDATE`, `MERGE` or `INSERT … VALUES` this module
/// rewrote; `None` when nothing changed or the statement is another one (run as it is),
/// or its target table is not found (DataFusion reports it).
///
/// Errors ([`crate::ErrorKind::InvalidArgument`], naming the statement's table as written
/// and the name): an assignment to a column or field the table does not have, or under a
/// qualifier that is not the table's; a column assigned twice, or whole and by field;
/// a `MERGE` clause reading a column of the side it may not read, or after an
/// unconditional one of its kind; `UPDATE SET *` / `INSERT *` from a source lacking a
/// target column; `DEFAULT` for a struct field; DataFusion's planning errors of the
/// rewritten statement.
pub(super) async fn plan(ctx: &SessionContext, sql: &str) -> Result<Option<LogicalPlan>> {
    let merge = first_word_is(sql, &["MERGE"]);
    let candidate = merge
        || first_word_is(sql, &["UPDATE", "DELETE"])
        || (first_word_is(sql, &["INSERT"]) && sql.to_ascii_lowercase().contains("default"));
    if !candidate {
        return Ok(None);
    }
    let state = ctx.state();
    let Some((mut statement, names)) = parse_marked(ctx, sql, merge) else {
        return Ok(None);
    };
    let (changed, update_of) = rewrite(ctx, statement.as_mut(), names).await?;
    if changed != Some(true) {
        return Ok(None);
    }
    // a MERGE whose source reads metadata columns (`USING (SELECT id, _pos FROM u)`) is
    // planned with them, as the statement unchanged would be (module `metadata_columns`)
    if merge {
        if let Some(plan) = super::metadata_columns::plan(ctx, &statement.to_string()).await? {
            return Ok(Some(plan));
        }
    }
    let plan = state
        .statement_to_plan(DFStatement::Statement(statement))
        .await?;
    if let Some(table) = update_of {
        check_constant_values(&state, &plan, &table)?;
    }
    Ok(Some(plan))
}

/// The plan of `sql` when it is a `PREPARE name [(types)] AS statement` whose statement
/// [`plan`] rewrites (an `UPDATE`, `MERGE`, `INSERT … VALUES` with `DEFAULT`): the
/// `PREPARE` of the rewritten statement, so a prepared statement reads its names as the
/// same statement run directly does; `None` otherwise (DataFusion plans it as it is).
///
/// Errors: as [`plan`]'s, for the prepared statement.
pub(super) async fn plan_prepare(ctx: &SessionContext, sql: &str) -> Result<Option<LogicalPlan>> {
    let state = ctx.state();
    let merge = sql.to_ascii_lowercase().contains("merge");
    let Some((mut statement, names)) = parse_marked(ctx, sql, merge) else {
        return Ok(None);
    };
    let Statement::Prepare {
        statement: inner, ..
    } = statement.as_mut()
    else {
        return Ok(None);
    };
    let (changed, _) = rewrite(ctx, inner.as_mut(), names).await?;
    if changed != Some(true) {
        return Ok(None);
    }
    Ok(Some(
        state
            .statement_to_plan(DFStatement::Statement(statement))
            .await?,
    ))
}

/// `sql` parsed in the session's dialect, with Spark's `UPDATE SET *` / `INSERT *` (which
/// do not parse) marked first when it may hold a `MERGE`, and how the session compares
/// names; `None` when it does not parse (DataFusion reports it).
pub(super) fn parse_marked(
    ctx: &SessionContext,
    sql: &str,
    merge: bool,
) -> Option<(Box<Statement>, Names)> {
    let state = ctx.state();
    let options = &state.config().options().sql_parser;
    let marked = match merge {
        true => super::tokenize(ctx, sql).and_then(|toks| {
            mark_stars(
                sql,
                &toks,
                super::quote_of(super::session_dialect(ctx).as_ref()),
            )
        }),
        false => None,
    };
    let sql = marked.as_deref().unwrap_or(sql);
    let Ok(DFStatement::Statement(statement)) = state.sql_to_statement(sql, &options.dialect)
    else {
        return None;
    };
    let names = Names {
        normalize: options.enable_ident_normalization,
    };
    Some((statement, names))
}

/// Rewrite `statement` in place (see the module docs): whether it changed (`None`: not a
/// statement to rewrite), and for a changed `UPDATE` its table as written (whose constant
/// values [`check_constant_values`] names once planned).
async fn rewrite(
    ctx: &SessionContext,
    statement: &mut Statement,
    names: Names,
) -> Result<(Option<bool>, Option<String>)> {
    // an UPDATE is planned here to name the column of a constant value that fails
    let mut update_of = None;
    let changed = match statement {
        Statement::Update(update) => {
            let changed = rewrite_update(ctx, update, names).await?;
            if changed.is_some() {
                if let TableFactor::Table { name, .. } = &update.table.relation {
                    update_of = Some(name.to_string());
                }
            }
            changed.map(|c| c || update_of.is_some())
        }
        Statement::Merge(merge) => rewrite_merge(ctx, merge, names).await?,
        Statement::Insert(insert) => rewrite_insert(ctx, insert, names).await?,
        Statement::Delete(delete) => {
            let (FromTable::WithFromKeyword(tables) | FromTable::WithoutKeyword(tables)) =
                &delete.from;
            let table = tables.first().map_or(String::new(), |t| match &t.relation {
                TableFactor::Table { name, .. } => name.to_string(),
                other => other.to_string(),
            });
            let at = format!("in DELETE … WHERE of '{table}'");
            check_row_functions(ctx, delete.selection.iter(), &at)?;
            None
        }
        _ => None,
    };
    Ok((changed, update_of))
}

/// Resolve an `UPDATE`'s assignments; `None` when its table is not one to resolve.
async fn rewrite_update(
    ctx: &SessionContext,
    update: &mut Update,
    names: Names,
) -> Result<Option<bool>> {
    if !update.table.joins.is_empty() {
        return Ok(None);
    }
    let Some(target) = Relation::table(ctx, &update.table.relation, names).await else {
        return Ok(None);
    };
    let at = format!("in UPDATE SET of '{}'", target.display);
    check_row_functions(
        ctx,
        update
            .assignments
            .iter()
            .map(|a| &a.value)
            .chain(update.selection.iter()),
        &format!("in UPDATE SET or WHERE of '{}'", target.display),
    )?;
    let defaults = replace_in_assignments(&mut update.assignments, &target, names, &at)?;
    let resolved =
        resolve_assignments(&update.assignments, &target, names, AssignmentScope::Update)?;
    let changed = defaults || resolved != update.assignments;
    update.assignments = resolved;
    Ok(Some(changed))
}

/// Expand a `MERGE`'s stars, replace its `DEFAULT`s, scope its clauses and resolve its
/// assignments; `None` when its table is not one to resolve.
async fn rewrite_merge(
    ctx: &SessionContext,
    merge: &mut Merge,
    names: Names,
) -> Result<Option<bool>> {
    let Some(target) = Relation::table(ctx, &merge.table, names).await else {
        return Ok(None);
    };
    check_clause_order(
        merge.clauses.iter().map(|c| {
            let kind = match c.clause_kind {
                MergeClauseKind::Matched => MergeIntoClauseKind::Matched,
                MergeClauseKind::NotMatched => MergeIntoClauseKind::NotMatched,
                MergeClauseKind::NotMatchedByTarget => MergeIntoClauseKind::NotMatchedByTarget,
                MergeClauseKind::NotMatchedBySource => MergeIntoClauseKind::NotMatchedBySource,
            };
            (kind, c.predicate.is_some())
        }),
        &target.display,
    )?;
    let mut exprs: Vec<&Expr> = vec![merge.on.as_ref()];
    for clause in &merge.clauses {
        exprs.extend(clause.predicate.iter());
        match &clause.action {
            MergeAction::Update(update) => {
                exprs.extend(update.assignments.iter().map(|a| &a.value))
            }
            MergeAction::Insert(insert) => {
                if let MergeInsertKind::Values(values) = &insert.kind {
                    exprs.extend(values.rows.iter().flat_map(|r| r.content.iter()));
                }
            }
            MergeAction::Delete { .. } => {}
        }
    }
    check_row_functions(ctx, exprs, &format!("in MERGE into '{}'", target.display))?;
    let mut changed = expand_stars(ctx, merge, &target, names).await?;
    for clause in &mut merge.clauses {
        match &mut clause.action {
            MergeAction::Update(update) => {
                let at = format!("in MERGE UPDATE SET of '{}'", target.display);
                changed |= replace_in_assignments(&mut update.assignments, &target, names, &at)?;
            }
            MergeAction::Insert(insert) => {
                if let MergeInsertKind::Values(values) = &mut insert.kind {
                    let at = format!("in MERGE INSERT of '{}'", target.display);
                    let rows = values.rows.iter_mut().map(|r| &mut r.content);
                    changed |= replace_in_rows(&insert.columns, rows, &target, names, &at)?;
                }
            }
            MergeAction::Delete { .. } => {}
        }
    }
    changed |= scope_merge_clauses(ctx, merge, &target, names).await?;
    for clause in &mut merge.clauses {
        match &mut clause.action {
            MergeAction::Update(update) => {
                let resolved = resolve_assignments(
                    &update.assignments,
                    &target,
                    names,
                    AssignmentScope::Merge,
                )?;
                changed |= resolved != update.assignments;
                update.assignments = resolved;
            }
            MergeAction::Insert(insert) => {
                let resolved = resolve_insert_columns(&insert.columns, &target, names)?;
                changed |= resolved != insert.columns;
                insert.columns = resolved;
            }
            MergeAction::Delete { .. } => {}
        }
    }
    Ok(Some(changed))
}

/// Replace the `DEFAULT`s of an `INSERT … VALUES`; `None` when it has none to replace.
async fn rewrite_insert(
    ctx: &SessionContext,
    insert: &mut Insert,
    names: Names,
) -> Result<Option<bool>> {
    let TableObject::TableName(name) = &insert.table else {
        return Ok(None);
    };
    let Some(SetExpr::Values(values)) = insert.source.as_mut().map(|q| q.body.as_mut()) else {
        return Ok(None);
    };
    if !values.rows.iter().any(|r| r.content.iter().any(is_default)) {
        return Ok(None);
    }
    let Some(target) = Relation::table_named(ctx, name, None, names).await else {
        return Ok(None);
    };
    let at = format!("in INSERT INTO '{}'", target.display);
    let rows = values.rows.iter_mut().map(|r| &mut r.content);
    Ok(Some(replace_in_rows(
        &insert.columns,
        rows,
        &target,
        names,
        &at,
    )?))
}

/// How identifiers compare: unquoted ones lowercased when DataFusion normalizes them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Names {
    pub normalize: bool,
}

impl Names {
    /// `ident` as DataFusion resolves it.
    pub fn of(self, ident: &Ident) -> String {
        if self.normalize && ident.quote_style.is_none() {
            ident.value.to_lowercase()
        } else {
            ident.value.clone()
        }
    }

    /// Each part of `name` as DataFusion resolves it; `None` when a part is not an
    /// identifier.
    pub fn parts(self, name: &ObjectName) -> Option<Vec<String>> {
        name.0
            .iter()
            .map(|p| match p {
                ObjectNamePart::Identifier(ident) => Some(self.of(ident)),
                ObjectNamePart::Function(_) => None,
            })
            .collect()
    }
}

/// A relation of a statement: the target table, or a `MERGE`'s source.
#[derive(Debug)]
pub(super) struct Relation {
    /// How messages name it: as the statement writes it (`ns.t`, a source's alias).
    pub display: String,
    /// The qualifiers that name its columns in the statement (resolved names): its alias,
    /// else each suffix of its full name (`t`, `ns.t`, `cat.ns.t`), as DataFusion matches
    /// a column's qualifier.
    pub qualifiers: Vec<Vec<String>>,
    /// What to write before one of its columns to name it alone (the alias or the name as
    /// written); `None` when it has no name (an unaliased subquery).
    pub prefix: Option<Vec<Ident>>,
    /// Its columns, when known.
    pub schema: Option<SchemaRef>,
    /// A target table's columns' default values (as SQL), where they have one.
    pub defaults: Vec<(String, Expr)>,
    /// A target table's struct fields' `write-default`s (as SQL), by path (column, then
    /// field names through structs), where they have one.
    pub field_defaults: Vec<(Vec<String>, Expr)>,
}

impl Relation {
    /// The table `factor` names, with its schema and defaults; `None` when `factor` is not
    /// a table name or the table is not found.
    pub async fn table(ctx: &SessionContext, factor: &TableFactor, names: Names) -> Option<Self> {
        let TableFactor::Table { name, alias, .. } = factor else {
            return None;
        };
        Self::table_named(ctx, name, alias.as_ref(), names).await
    }

    /// The table `name` (with `alias`), with its schema and defaults; `None` when the table
    /// is not found.
    pub async fn table_named(
        ctx: &SessionContext,
        name: &ObjectName,
        alias: Option<&TableAlias>,
        names: Names,
    ) -> Option<Self> {
        let factor = TableFactor::Table {
            name: name.clone(),
            alias: alias.cloned(),
            args: None,
            with_hints: vec![],
            version: None,
            with_ordinality: false,
            partitions: vec![],
            json_path: None,
            sample: None,
            index_hints: vec![],
        };
        let mut relation = Self::named(ctx, &factor, names)?;
        // messages name the table, not its alias
        relation.display = name.to_string();
        let parts = names.parts(name)?;
        let provider = ctx.table_provider(reference(&parts)?).await.ok()?;
        let schema = provider.schema();
        // a row-level target with metadata columns (module `metadata_targets`): its own
        // columns are the ones assigned, and those `SET *` / `INSERT *` name
        let schema = match provider.downcast_ref::<crate::datafusion::IcebergTableProvider>() {
            Some(iceberg) if iceberg.has_metadata_columns() => {
                let metadata = iceberg.metadata_column_names();
                let own: Vec<_> = schema
                    .fields()
                    .iter()
                    .filter(|f| !metadata.contains(&f.name().as_str()))
                    .cloned()
                    .collect();
                std::sync::Arc::new(datafusion::arrow::datatypes::Schema::new_with_metadata(
                    own,
                    schema.metadata().clone(),
                ))
            }
            _ => schema,
        };
        for field in schema.fields() {
            let default = provider
                .get_column_default(field.name())
                .and_then(|e| expr_to_sql(e).ok());
            if let Some(default) = default {
                relation.defaults.push((field.name().clone(), default));
            }
        }
        if let Some(iceberg) = provider.downcast_ref::<crate::datafusion::IcebergTableProvider>() {
            relation.field_defaults = struct_field_defaults(iceberg);
        }
        relation.schema = Some(schema);
        Some(relation)
    }

    /// `factor`'s names (no schema yet): a table's alias or name, a subquery's alias.
    pub fn named(ctx: &SessionContext, factor: &TableFactor, names: Names) -> Option<Self> {
        let (name, alias) = match factor {
            TableFactor::Table { name, alias, .. } => (Some(name), alias.as_ref()),
            TableFactor::Derived { alias, .. } => (None, alias.as_ref()),
            other => (None, table_alias(other)),
        };
        if let Some(alias) = alias {
            return Some(Self {
                display: alias.name.to_string(),
                qualifiers: vec![vec![names.of(&alias.name)]],
                prefix: Some(vec![alias.name.clone()]),
                schema: None,
                defaults: vec![],
                field_defaults: vec![],
            });
        }
        let Some(name) = name else {
            return Some(Self {
                display: factor.to_string(),
                qualifiers: vec![],
                prefix: None,
                schema: None,
                defaults: vec![],
                field_defaults: vec![],
            });
        };
        let parts = names.parts(name)?;
        let full = reference(&parts)?.resolve(
            &ctx.state().config_options().catalog.default_catalog,
            &ctx.state().config_options().catalog.default_schema,
        );
        let full = [
            full.catalog.to_string(),
            full.schema.to_string(),
            full.table.to_string(),
        ];
        let idents = name
            .0
            .iter()
            .filter_map(|p| match p {
                ObjectNamePart::Identifier(ident) => Some(ident.clone()),
                ObjectNamePart::Function(_) => None,
            })
            .collect();
        Some(Self {
            display: name.to_string(),
            qualifiers: (0..3).map(|i| full[i..].to_vec()).collect(),
            prefix: Some(idents),
            schema: None,
            defaults: vec![],
            field_defaults: vec![],
        })
    }

    /// The value `DEFAULT` stands for in column `name`: its default, else NULL.
    pub fn default_value(&self, name: &str) -> Expr {
        self.defaults
            .iter()
            .find(|(n, _)| n == name)
            .map_or_else(|| Expr::value(Value::Null), |(_, e)| e.clone())
    }

    /// The value `DEFAULT` stands for in the struct field at `path` (column, then
    /// fields): its `write-default`, else NULL.
    pub fn field_default_value(&self, path: &[String]) -> Expr {
        self.field_defaults
            .iter()
            .find(|(p, _)| p == path)
            .map_or_else(|| Expr::value(Value::Null), |(_, e)| e.clone())
    }

    /// Whether the relation has a top-level column `name`.
    pub fn has_column(&self, name: &str) -> bool {
        self.schema
            .as_ref()
            .is_some_and(|s| s.fields().iter().any(|f| f.name() == name))
    }

    /// The length of the longest of its qualifiers that `parts` starts with, followed by
    /// at least one more part.
    pub fn qualifier_len(&self, parts: &[String]) -> Option<usize> {
        self.qualifiers
            .iter()
            .filter(|q| parts.len() > q.len() && parts.starts_with(q))
            .map(Vec::len)
            .max()
    }
}

/// The `write-default`s (as SQL) of `table`'s struct fields reached through structs,
/// by path; one that does not convert is left out (a write of it reports it).
fn struct_field_defaults(
    table: &crate::datafusion::IcebergTableProvider,
) -> Vec<(Vec<String>, Expr)> {
    fn visit(
        fields: &[crate::spec::NestedField],
        path: &mut Vec<String>,
        out: &mut Vec<Vec<String>>,
    ) {
        for f in fields {
            path.push(f.name.clone());
            if path.len() > 1 && f.write_default.is_some() {
                out.push(path.clone());
            }
            if let crate::spec::Type::Struct(s) = f.field_type.as_ref() {
                visit(&s.fields, path, out);
            }
            path.pop();
        }
    }
    let schema = table.iceberg_schema();
    let mut paths = vec![];
    visit(schema.columns(), &mut vec![], &mut paths);
    paths
        .into_iter()
        .filter_map(|path| {
            let value = crate::datafusion::column_defaults::struct_field_write_default(
                schema,
                table.arrow_schema(),
                &path,
            )
            .ok()??;
            Some((path, expr_to_sql(&value).ok()?))
        })
        .collect()
}

/// The alias of a table factor other than a table or a subquery (a table function,
/// `UNNEST`, …), when it has one.
fn table_alias(factor: &TableFactor) -> Option<&datafusion::sql::sqlparser::ast::TableAlias> {
    match factor {
        TableFactor::TableFunction { alias, .. }
        | TableFactor::Function { alias, .. }
        | TableFactor::UNNEST { alias, .. }
        | TableFactor::NestedJoin { alias, .. } => alias.as_ref(),
        _ => None,
    }
}

/// The table reference of a name's resolved parts (1 to 3 of them).
pub(super) fn reference(parts: &[String]) -> Option<TableReference> {
    Some(match parts {
        [t] => TableReference::bare(t.as_str()),
        [s, t] => TableReference::partial(s.as_str(), t.as_str()),
        [c, s, t] => TableReference::full(c.as_str(), s.as_str(), t.as_str()),
        _ => return None,
    })
}
