//! `ALTER TABLE` column clauses on an Iceberg table, each one [`UpdateSchema`] commit
//! (see the parent module's docs for the statements and [`UpdateSchema`] for the rules).
//!
//! Column types are planned by DataFusion exactly as `CREATE TABLE` plans them (the
//! parent module's type table), from a one-column `CREATE TABLE` made of the clause's
//! type text.

use datafusion::dataframe::DataFrame;
use datafusion::logical_expr::Expr;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::tokenizer::Token;

use super::alter_table::commit;
use super::column_default::{default_from_sql, default_value};
use super::tokens::{is_keyword, Cursor, TypeDepth};
use super::{create_table, empty, ResolvedTable};
use crate::error::{Error, Result};
use crate::spec::{NestedField, Type};
use crate::transaction::{ColumnPosition, UpdateSchema};

/// The column clauses, after `ALTER TABLE name`:
///
/// - `ADD COLUMN|COLUMNS [(]path type [NOT NULL] [DEFAULT value] [COMMENT '…']
///   [FIRST|AFTER name], …[)]` (with a `DEFAULT`, v3: the field's `initial-default` and
///   `write-default`, and it may be `NOT NULL`);
/// - `DROP COLUMN|COLUMNS [IF EXISTS] [(]path, …[)]`;
/// - `RENAME COLUMN path TO name`;
/// - `SET IDENTIFIER FIELDS path, …`, `DROP IDENTIFIER FIELDS path, …`;
/// - `ALTER [COLUMN] path` then one of `TYPE type` (also `SET DATA TYPE type`),
///   `DROP NOT NULL`, `SET NOT NULL` (a no-op on a required column, refused on an
///   optional one: [`UpdateSchema::require_column`]), `COMMENT '…'`, `FIRST`, `AFTER name`,
///   `SET DEFAULT value`, `DROP DEFAULT` (v3: the field's `write-default`); several
///   such, comma-separated, as Spark 4 takes them (`ALTER COLUMN a TYPE BIGINT, b
///   COMMENT '…'`), in one commit;
/// - `CHANGE [COLUMN] path` then one of those (Spark's synonym of `ALTER COLUMN`), or
///   Spark's Hive form `CHANGE [COLUMN] path name type [COMMENT '…'] [FIRST|AFTER name]`.
///
/// A `DEFAULT` value is a constant of the column's type (module `column_default`).
pub(super) async fn alter_columns(
    ctx: &SessionContext,
    table: &ResolvedTable,
    base: &str,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    let (clause, update) = if c.eat_keyword("ADD") {
        if !c.eat_keyword("COLUMNS") {
            let partition = hive_partition(&c);
            c.expect_keyword("COLUMN")
                .map_err(|e| unsupported_clause(base, "ADD", partition, e))?;
        }
        let what = format!("{base} ADD COLUMN");
        let update = add_columns(ctx, &mut c)
            .await
            .map_err(|e| e.context(&what))?;
        (what, update)
    } else if c.eat_keywords(&["SET", "IDENTIFIER", "FIELDS"]) {
        let what = format!("{base} SET IDENTIFIER FIELDS");
        let paths = name_list(&mut c).map_err(|e| e.context(&what))?;
        (what, UpdateSchema::new().set_identifier_fields(&paths))
    } else if c.eat_keywords(&["DROP", "IDENTIFIER", "FIELDS"]) {
        let what = format!("{base} DROP IDENTIFIER FIELDS");
        let paths = name_list(&mut c).map_err(|e| e.context(&what))?;
        (what, UpdateSchema::new().drop_identifier_fields(&paths))
    } else if c.eat_keyword("DROP") {
        if !c.eat_keyword("COLUMNS") {
            let partition = hive_partition(&c);
            c.expect_keyword("COLUMN")
                .map_err(|e| unsupported_clause(base, "DROP", partition, e))?;
        }
        let what = format!("{base} DROP COLUMN");
        let update = drop_columns(table, &mut c)
            .await
            .map_err(|e| e.context(&what))?;
        (what, update)
    } else if c.eat_keywords(&["RENAME", "COLUMN"]) {
        let what = format!("{base} RENAME COLUMN");
        let parse = |c: &mut Cursor<'_>| -> Result<UpdateSchema> {
            let path = c.object_name()?;
            c.expect_keyword("TO")?;
            let to = c.identifier()?;
            c.expect_end()?;
            Ok(UpdateSchema::new().rename_column(&path, &to))
        };
        let update = parse(&mut c).map_err(|e| e.context(&what))?;
        (what, update)
    } else if c.eat_keyword("ALTER") {
        c.eat_keyword("COLUMN");
        let what = format!("{base} ALTER COLUMN");
        let update = alter_column(ctx, table, &mut c, false)
            .await
            .map_err(|e| e.context(&what))?;
        (what, update)
    } else if c.eat_keyword("CHANGE") {
        c.eat_keyword("COLUMN");
        let what = format!("{base} CHANGE COLUMN");
        let update = alter_column(ctx, table, &mut c, true)
            .await
            .map_err(|e| e.context(&what))?;
        (what, update)
    } else {
        let found = c.found();
        return Err(Error::unsupported(format!(
            "{base}: {found} is not an ALTER TABLE clause icefloe runs ({ALTER_TABLE_CLAUSES})"
        )));
    };
    commit(table, &clause, update).await?;
    empty(ctx).map(Some)
}

/// Whether `c` is at Spark's Hive partition clause, `PARTITION (`.
fn hive_partition(c: &Cursor<'_>) -> bool {
    c.peek_keyword("PARTITION") && c.peek_at(1).is_some_and(|t| t.token == Token::LParen)
}

/// Every `ALTER TABLE` clause icefloe runs (this module's, `alter_table`'s and
/// `alter_partition`'s), for the error of one it does not run.
const ALTER_TABLE_CLAUSES: &str = "SET|UNSET TBLPROPERTIES, SET LOCATION, \
     ADD|DROP COLUMN|COLUMNS, RENAME COLUMN, ALTER|CHANGE COLUMN, SET|DROP IDENTIFIER FIELDS, \
     CREATE|REPLACE|DROP TAG|BRANCH, ADD|DROP|REPLACE PARTITION FIELD, \
     WRITE [LOCALLY] ORDERED BY|DISTRIBUTED BY PARTITION|UNORDERED, RENAME TO";

/// The error of an `ADD` or `DROP` clause icefloe does not run (`e`: the cursor's
/// "expected COLUMN"), listing the clauses of that verb it runs: `ADD COLUMN|COLUMNS`
/// and `ADD PARTITION FIELD` (a tag or branch is made with `CREATE TAG|BRANCH`, Spark's
/// Iceberg extensions have no `ADD TAG`); `DROP COLUMN|COLUMNS`, `DROP PARTITION FIELD`,
/// `DROP IDENTIFIER FIELDS` and `DROP TAG|BRANCH`. Spark's Hive form `ADD|DROP PARTITION
/// (p = v)` is named as such: Iceberg tables have no Hive partitions (Spark refuses it
/// for them too).
fn unsupported_clause(base: &str, verb: &str, found_partition: bool, e: Error) -> Error {
    let runs = match verb {
        "ADD" => {
            "ADD COLUMN|COLUMNS and ADD PARTITION FIELD; a tag or branch is made with \
                  CREATE TAG|BRANCH"
        }
        _ => {
            "DROP COLUMN|COLUMNS, DROP PARTITION FIELD, DROP IDENTIFIER FIELDS and \
              DROP TAG|BRANCH"
        }
    };
    if found_partition {
        return Error::unsupported(format!(
            "{base} {verb} PARTITION (…): Iceberg tables have no Hive partitions (Spark \
             refuses it for them too); partitions follow the partition spec (icefloe runs \
             {runs})"
        ));
    }
    Error::unsupported(format!(
        "{base} {verb}: {} (icefloe runs {runs})",
        e.message()
    ))
}

/// The definitions after `ADD COLUMN|COLUMNS`.
async fn add_columns(ctx: &SessionContext, c: &mut Cursor<'_>) -> Result<UpdateSchema> {
    let parens = c.eat(&Token::LParen);
    let mut update = UpdateSchema::new();
    loop {
        let path = c.object_name()?;
        let start = c.offset();
        skip_type(c);
        let type_text = c.text()[start..c.prev_end()].to_string();
        if type_text.trim().is_empty() {
            return Err(c.expected(&format!("a type for column '{}'", path.join("."))));
        }
        let position = position(c)?;
        let column = path.join(".");
        let (field, default) = plan_column(ctx, &column, &type_text).await?;
        let default = match default {
            Some(expr) => default_value(ctx, expr, &column, &field.field_type).await?,
            None => None,
        };
        let (name, parent) = path
            .split_last()
            .ok_or_else(|| Error::invalid_argument("a column needs a name"))?;
        update = match default {
            Some(value) => {
                let mut field = field;
                field.name.clone_from(name);
                update.add_column_with_default(parent, field, value, position)
            }
            None if field.required => {
                return Err(Error::invalid_argument(format!(
                    "cannot add required column '{column}' (NOT NULL) without a DEFAULT: \
                     rows already in the table have no value for it"
                )));
            }
            None => update.add_column(parent, name, *field.field_type, field.doc, position),
        };
        if !c.eat(&Token::Comma) {
            break;
        }
    }
    if parens {
        c.expect(&Token::RParen)?;
    }
    c.expect_end()?;
    Ok(update)
}

/// Skip a column's type and options: to a `,` or `)` outside brackets, `FIRST`, `AFTER`
/// or the end.
fn skip_type(c: &mut Cursor<'_>) {
    let mut depth = TypeDepth::default();
    while let Some(t) = c.peek() {
        if depth.is_top() {
            match &t.token {
                Token::Comma | Token::RParen => return,
                t if is_keyword(t, "FIRST") || is_keyword(t, "AFTER") => return,
                _ => {}
            }
        }
        depth.step(&t.token);
        c.advance();
    }
}

/// `[FIRST | AFTER name]`.
fn position(c: &mut Cursor<'_>) -> Result<Option<ColumnPosition>> {
    if c.eat_keyword("FIRST") {
        Ok(Some(ColumnPosition::First))
    } else if c.eat_keyword("AFTER") {
        Ok(Some(ColumnPosition::After(c.identifier()?)))
    } else {
        Ok(None)
    }
}

/// The Iceberg field DataFusion plans for column `column` (its dotted path) of
/// `type_text` (a type, optionally with `NOT NULL`, `DEFAULT value` and `COMMENT '…'`),
/// as `CREATE TABLE` would, with its planned `DEFAULT`. The column is planned under its
/// own name (quoted), so errors name it.
async fn plan_column(
    ctx: &SessionContext,
    column: &str,
    type_text: &str,
) -> Result<(NestedField, Option<Expr>)> {
    let quoted = format!("\"{}\"", column.replace('"', "\"\""));
    let columns = create_table::plan_columns(ctx, &format!("{quoted} {type_text}")).await?;
    columns
        .into_iter()
        .next()
        .ok_or_else(|| Error::invalid_argument(format!("cannot read type '{type_text}'")))
}

/// The names after `DROP COLUMN|COLUMNS`.
async fn drop_columns(table: &ResolvedTable, c: &mut Cursor<'_>) -> Result<UpdateSchema> {
    let if_exists = c.eat_keywords(&["IF", "EXISTS"]);
    let parens = c.eat(&Token::LParen);
    let mut paths = vec![c.object_name()?];
    while c.eat(&Token::Comma) {
        paths.push(c.object_name()?);
    }
    if parens {
        c.expect(&Token::RParen)?;
    }
    c.expect_end()?;
    if if_exists {
        let current = table.target.catalog().load_table(&table.ident).await?;
        let schema = current.metadata().current_schema();
        paths.retain(|p| find_field(schema.columns(), p).is_some());
    }
    Ok(paths
        .iter()
        .fold(UpdateSchema::new(), |u, p| u.delete_column(p)))
}

/// The field at a name path (through structs, list elements and map values, named or
/// left out; a path ending in a list's `element` or a map's `key` or `value` names that
/// field itself).
fn find_field<'a>(fields: &'a [NestedField], path: &[String]) -> Option<&'a NestedField> {
    let (first, rest) = path.split_first()?;
    find_in(fields.iter().find(|f| &f.name == first)?, rest)
}

fn find_in<'a>(field: &'a NestedField, rest: &[String]) -> Option<&'a NestedField> {
    let Some((next, tail)) = rest.split_first() else {
        return Some(field);
    };
    match (field.field_type.as_ref(), next.as_str()) {
        (Type::List(l), "element") => find_in(&l.element_field, tail),
        (Type::Map(m), "key") => find_in(&m.key_field, tail),
        (Type::Map(m), "value") => find_in(&m.value_field, tail),
        (Type::Struct(s), _) => find_in(s.fields.iter().find(|f| &f.name == next)?, tail),
        (Type::List(l), _) => find_in(&l.element_field, rest),
        (Type::Map(m), _) => find_in(&m.value_field, rest),
        (Type::Primitive(_), _) => None,
    }
}

/// `name, …` (optionally in parentheses) to the end of the statement.
fn name_list(c: &mut Cursor<'_>) -> Result<Vec<Vec<String>>> {
    let parens = c.eat(&Token::LParen);
    let mut paths = vec![c.object_name()?];
    while c.eat(&Token::Comma) {
        paths.push(c.object_name()?);
    }
    if parens {
        c.expect(&Token::RParen)?;
    }
    c.expect_end()?;
    Ok(paths)
}

/// What follows `ALTER [COLUMN]` or Spark's synonym `CHANGE [COLUMN]`: the column and
/// one change; with `change`, also Spark's Hive form `CHANGE [COLUMN] path name type
/// [COMMENT '…'] [FIRST|AFTER name]` (see [`hive_change`]).
async fn alter_column(
    ctx: &SessionContext,
    table: &ResolvedTable,
    c: &mut Cursor<'_>,
    change: bool,
) -> Result<UpdateSchema> {
    let path = c.object_name()?;
    let action = ["TYPE", "SET", "DROP", "COMMENT", "FIRST", "AFTER"];
    if change && !c.at_end() && !action.iter().any(|k| c.peek_keyword(k)) {
        return hive_change(ctx, c, &path).await;
    }
    // Spark 4's `ALTER COLUMN a TYPE BIGINT, b COMMENT '…'`: one commit
    let mut update = alter_one(ctx, table, c, &path, UpdateSchema::new()).await?;
    while c.eat(&Token::Comma) {
        let path = c.object_name()?;
        update = alter_one(ctx, table, c, &path, update).await?;
    }
    c.expect_end()?;
    Ok(update)
}

/// Advance to a `,` outside brackets or the end; the text passed over, trimmed.
fn to_comma(c: &mut Cursor<'_>) -> String {
    let start = c.offset();
    let mut depth = TypeDepth::default();
    while let Some(t) = c.peek() {
        if depth.is_top() && t.token == Token::Comma {
            break;
        }
        depth.step(&t.token);
        c.advance();
    }
    c.text()[start..c.prev_end().max(start)].trim().to_string()
}

/// One change of the column at `path` (what follows its name), added to `update`.
async fn alter_one(
    ctx: &SessionContext,
    table: &ResolvedTable,
    c: &mut Cursor<'_>,
    path: &[String],
    update: UpdateSchema,
) -> Result<UpdateSchema> {
    let column = path.join(".");
    let path = path.to_vec();
    let update = if c.eat_keyword("TYPE") || c.eat_keywords(&["SET", "DATA", "TYPE"]) {
        let type_text = to_comma(c);
        let (field, default) = plan_column(ctx, &column, &type_text).await?;
        if field.required || field.doc.is_some() || default.is_some() {
            return Err(Error::invalid_argument(format!(
                "TYPE '{type_text}': only a type (change nullability or the comment in \
                 its own ALTER COLUMN)"
            )));
        }
        let Type::Primitive(p) = *field.field_type else {
            return Err(Error::invalid_argument(format!(
                "cannot change column '{column}' to {}: only primitive types are promoted",
                field.field_type
            )));
        };
        update.update_column(&path, p)
    } else if c.eat_keywords(&["DROP", "NOT", "NULL"]) {
        update.make_column_optional(&path)
    } else if c.eat_keywords(&["SET", "NOT", "NULL"]) {
        update.require_column(&path)
    } else if c.eat_keywords(&["SET", "DEFAULT"]) {
        let text = to_comma(c);
        if text.is_empty() {
            return Err(c.expected("a value after SET DEFAULT"));
        }
        let current = table.target.catalog().load_table(&table.ident).await?;
        let schema = current.metadata().current_schema();
        let field = find_field(schema.columns(), &path).ok_or_else(|| {
            let columns: Vec<&str> = schema.columns().iter().map(|f| f.name.as_str()).collect();
            let e = Error::not_found(format!("column '{column}' does not exist"));
            crate::column_case::with_other_case_note(e, [&path[..]], &columns)
        })?;
        let value = default_from_sql(ctx, &text, &column, &field.field_type).await?;
        update.update_column_default(&path, value)
    } else if c.eat_keywords(&["DROP", "DEFAULT"]) {
        update.update_column_default(&path, None)
    } else if c.eat_keyword("COMMENT") {
        update.update_column_doc(&path, Some(c.string()?))
    } else if let Some(p) = position(c)? {
        update.move_column(&path, p)
    } else {
        return Err(
            c.expected("TYPE, DROP NOT NULL, SET DEFAULT, DROP DEFAULT, COMMENT, FIRST or AFTER")
        );
    };
    if !c.at_end() && c.peek().is_none_or(|t| t.token != Token::Comma) {
        c.expect_end()?;
    }
    Ok(update)
}

/// Spark's Hive-style `CHANGE [COLUMN] path name type [COMMENT '…'] [FIRST|AFTER name]`
/// (Spark's `hiveChangeColumn`, read as one `ALTER COLUMN` of the type, the comment and
/// the position): `name` must be the column's own name (Spark refuses a rename here, as
/// it does `NOT NULL`), the type is promoted as `ALTER COLUMN … TYPE` does (the same
/// type changes nothing), and a `COMMENT` replaces the column's.
async fn hive_change(
    ctx: &SessionContext,
    c: &mut Cursor<'_>,
    path: &[String],
) -> Result<UpdateSchema> {
    let column = path.join(".");
    let name = c.identifier()?;
    if path.last() != Some(&name) {
        return Err(Error::invalid_argument(format!(
            "cannot rename column '{column}' to '{name}' in CHANGE COLUMN (as in Spark): \
             run RENAME COLUMN instead"
        )));
    }
    let start = c.offset();
    skip_type(c);
    let type_text = c.text()[start..c.prev_end()].to_string();
    if type_text.trim().is_empty() {
        return Err(c.expected(&format!("a type for column '{column}'")));
    }
    let position = position(c)?;
    c.expect_end()?;
    let (field, default) = plan_column(ctx, &column, &type_text).await?;
    if field.required || default.is_some() {
        return Err(Error::invalid_argument(format!(
            "CHANGE COLUMN '{column}' {type_text}: only a type, a COMMENT and a position (as \
             in Spark: change nullability or the default with ALTER COLUMN)"
        )));
    }
    let Type::Primitive(p) = *field.field_type else {
        return Err(Error::invalid_argument(format!(
            "cannot change column '{column}' to {}: only primitive types are promoted",
            field.field_type
        )));
    };
    let mut update = UpdateSchema::new().update_column(path, p);
    if field.doc.is_some() {
        update = update.update_column_doc(path, field.doc);
    }
    if let Some(position) = position {
        update = update.move_column(path, position);
    }
    Ok(update)
}
