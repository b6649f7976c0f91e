//! `ALTER TABLE` clauses on an Iceberg table, besides `RENAME TO` (see the parent
//! module's docs): table properties and branches and tags here, columns in
//! [`alter_columns`](super::alter_columns).
//!
//! DataFusion's SQL parser (sqlparser) knows only some of Spark's forms (`SET
//! TBLPROPERTIES`, `ADD COLUMN` of a top-level column) and none of `UNSET TBLPROPERTIES`,
//! nested column paths, `ALTER COLUMN … COMMENT|FIRST|AFTER` or the ref clauses, so these
//! clauses are read with the statement layer's token cursor; column types are still
//! planned by DataFusion (see `alter_columns`).
//!
//! Each statement is one [`Transaction`] commit through `Catalog::commit_table`; a
//! statement that fails commits nothing.

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::tokenizer::Token;

use super::property_lists::check_table_keys;
use super::resolve::message_name;
use super::tokens::{is_keyword, Cursor};
use super::{alter_columns, alter_partition, empty, resolve_table, ResolvedTable};
use crate::error::{Error, Result};
use crate::table::Table;
use crate::transaction::{
    ManageSnapshots, RefExists, RefRetention, Transaction, TransactionAction, UpdateLocation,
    UpdateProperties, UpdateSchema,
};

/// What follows `ALTER TABLE name`, for a table in an Iceberg namespace; `None` when the
/// table is not (DataFusion then reports the statement).
pub(super) async fn alter_table(
    ctx: &SessionContext,
    name: &[String],
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    let Some(table) = resolve_table(ctx, name)? else {
        return Ok(None);
    };
    super::not_a_table::check_not_a_version(&table, "ALTER TABLE").await?;
    super::not_a_table::check_not_a_view(&table, "ALTER TABLE").await?;
    let base = format!("ALTER TABLE {}", table.display());
    if c.eat_keywords(&["SET", "TBLPROPERTIES"]) {
        let what = format!("{base} SET TBLPROPERTIES");
        let action = set_properties(&mut c).map_err(|e| e.context(&what))?;
        commit(&table, &what, action).await?;
    } else if c.eat_keywords(&["UNSET", "TBLPROPERTIES"]) {
        let what = format!("{base} UNSET TBLPROPERTIES");
        let action = unset_properties(&mut c).map_err(|e| e.context(&what))?;
        commit(&table, &what, action).await?;
    } else if c.eat_keywords(&["SET", "LOCATION"]) {
        let what = format!("{base} SET LOCATION");
        let parse = |c: &mut Cursor<'_>| -> Result<UpdateLocation> {
            let location = c.string()?;
            c.expect_end()?;
            UpdateLocation::new(&location)
        };
        let action = parse(&mut c).map_err(|e| e.context(&what))?;
        commit(&table, &what, action).await?;
    } else if alter_partition::alter_partition(&table, &base, &mut c).await? {
        // done: `ADD|DROP|REPLACE PARTITION FIELD`, `WRITE …`
    } else if let Some((what, action)) = refs(&mut c, &base)? {
        branch_or_refs(&table, &what, action).await?;
    } else {
        return alter_columns::alter_columns(ctx, &table, &base, c).await;
    }
    empty(ctx).map(Some)
}

/// Spark's `COMMENT ON TABLE t IS 'text' | NULL`, after `COMMENT ON TABLE`: sets the
/// table's `comment` property, or removes it for `NULL`, in one commit (Spark's
/// `CommentOnTable`, a change of the reserved `comment` property). `None` when `t` is not
/// in an Iceberg catalog (DataFusion then reports the statement).
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] for bad syntax; the commit's errors.
pub(super) async fn comment_on_table(
    ctx: &SessionContext,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    let Ok(name) = c.object_name() else {
        return Ok(None);
    };
    let Some(table) = resolve_table(ctx, &name)? else {
        return Ok(None);
    };
    super::not_a_table::check_not_a_version(&table, "COMMENT ON TABLE").await?;
    super::not_a_table::check_not_a_view(&table, "COMMENT ON TABLE").await?;
    let what = format!("COMMENT ON TABLE {}", table.display());
    let parse = |c: &mut Cursor<'_>| -> Result<UpdateProperties> {
        c.expect_keyword("IS")?;
        let update = if c.eat_keyword("NULL") {
            UpdateProperties::new()
                .remove("comment")?
                .remove_if_exists()
        } else {
            UpdateProperties::new().set("comment", c.string()?)?
        };
        c.expect_end()?;
        Ok(update)
    };
    let action = parse(&mut c).map_err(|e| e.context(&what))?;
    commit(&table, &what, action).await?;
    empty(ctx).map(Some)
}

/// `COMMENT ON COLUMN t.c IS 'text' | NULL` (Trino's and PostgreSQL's form of Spark's
/// `ALTER TABLE t ALTER COLUMN c COMMENT 'text'`), after `COMMENT ON COLUMN`: sets the doc
/// of top-level column `c` (the name's last part; the parts before it name the table), or
/// removes it for `NULL`, in one commit ([`UpdateSchema::update_column_doc`]). `None`
/// when the table is not in an Iceberg catalog.
///
/// A struct field (`ns.t.st.a`) is not read as one: the parts before the last name the
/// table, and `ns.t.st.a` may as well be column `a` of table `st` in namespace `ns.t`
/// (both can exist at once in a catalog of nested namespaces). When the table named does
/// not exist but a shorter prefix of the name is a table, the error says to write
/// `ALTER TABLE ns.t ALTER COLUMN st.a COMMENT '…'`, which names table and field apart.
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] for bad syntax, a name without a
/// table, a table name with no namespace while the current schema is none (the CLI's
/// `public` before `USE ns`), a session view, and a struct field as above;
/// [`crate::ErrorKind::NotFound`] for a column the table lacks; the commit's errors.
pub(super) async fn comment_on_column(
    ctx: &SessionContext,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    let Ok(name) = c.object_name() else {
        return Ok(None);
    };
    let Some((column, table_name)) = name.split_last().filter(|(_, t)| !t.is_empty()) else {
        return Err(Error::invalid_argument(format!(
            "COMMENT ON COLUMN {}: name the column with its table (t.column)",
            message_name(name.iter().map(String::as_str))
        )));
    };
    let statement = format!(
        "COMMENT ON COLUMN {}",
        message_name(name.iter().map(String::as_str))
    );
    let Some(table) = resolve_table(ctx, table_name)? else {
        return no_namespace(ctx, &statement, table_name).await;
    };
    super::not_a_table::check_not_a_version(&table, "COMMENT ON COLUMN").await?;
    super::not_a_table::check_not_a_view(&table, "COMMENT ON COLUMN").await?;
    if !table.target.catalog().table_exists(&table.ident).await? {
        check_not_a_field(ctx, &statement, &name).await?;
    }
    let what = format!("COMMENT ON COLUMN {}.{column}", table.display());
    let parse = |c: &mut Cursor<'_>| -> Result<Option<String>> {
        c.expect_keyword("IS")?;
        let doc = if c.eat_keyword("NULL") {
            None
        } else {
            Some(c.string()?)
        };
        c.expect_end()?;
        Ok(doc)
    };
    let doc = parse(&mut c).map_err(|e| e.context(&what))?;
    let action = UpdateSchema::new().update_column_doc(std::slice::from_ref(column), doc);
    commit(&table, &what, action).await?;
    empty(ctx).map(Some)
}

/// `statement` (`COMMENT ON COLUMN t.c`) names table `table_name`, which is in no Iceberg
/// namespace: when that is because the name has no namespace part that is one (the
/// default schema, or the one named, is the CLI's in-memory `public`) of an Iceberg
/// catalog and no such table exists there, the error says to name the namespace;
/// otherwise `None` (DataFusion reports the statement).
async fn no_namespace(
    ctx: &SessionContext,
    statement: &str,
    table_name: &[String],
) -> Result<Option<DataFrame>> {
    let (catalog, schema) = super::defaults(ctx);
    let schema = match table_name {
        [_] => schema,
        [schema, _] => schema.clone(),
        _ => return Ok(None),
    };
    let Some(target) = super::IcebergTarget::find(ctx, &catalog) else {
        return Ok(None);
    };
    let table = table_name.last().map_or("", String::as_str);
    let held = ctx
        .catalog(&catalog)
        .and_then(|c| c.schema(&schema))
        .is_some_and(|s| s.table_exist(table));
    if held || !target.iceberg().is_other_schema(&schema) {
        return Ok(None);
    }
    Err(Error::invalid_argument(format!(
        "{statement}: '{schema}' is a schema of this session, not a namespace of Iceberg \
         catalog '{catalog}', and holds no table '{table}'; name the table's namespace \
         (COMMENT ON COLUMN ns.{table}.column) or make one current (USE ns)"
    )))
}

/// Refuse `statement` (`COMMENT ON COLUMN` of the dotted `name`, whose table does not
/// exist) when a shorter prefix of `name` is an Iceberg table: the rest is then a struct
/// field's path, which `COMMENT ON COLUMN` does not take (see [`comment_on_column`]).
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming the table, the field and the
/// `ALTER TABLE … ALTER COLUMN … COMMENT` to run; the catalog's.
async fn check_not_a_field(ctx: &SessionContext, statement: &str, name: &[String]) -> Result<()> {
    // the longest table name first: `a.b.c.d` as field `c.d` of `a.b` before `b.c.d` of `a`
    for split in (1..name.len().saturating_sub(1)).rev() {
        let (table_name, path) = name.split_at(split);
        if super::iceberg_table_exists(ctx, table_name).await? {
            let table = message_name(table_name.iter().map(String::as_str));
            let path = path.join(".");
            return Err(Error::invalid_argument(format!(
                "{statement}: '{path}' is a field path of table {table}, and COMMENT ON \
                 COLUMN sets top-level columns' docs only; run ALTER TABLE {table} ALTER \
                 COLUMN {path} COMMENT '…'"
            )));
        }
    }
    Ok(())
}

/// Load `table`, apply `action` in one transaction and commit it; errors get `what`.
/// A change that changes nothing (e.g. `IF NOT EXISTS` of an existing tag) commits
/// nothing: no new metadata file.
pub(super) async fn commit(
    table: &ResolvedTable,
    what: &str,
    action: impl TransactionAction + 'static,
) -> Result<Table> {
    commit_from(table, what, action)
        .await
        .map(|(_, after)| after)
}

/// Commit ref changes; a `CREATE BRANCH` of a table without snapshots commits an empty
/// append creating the branch, as Java and Spark do
/// ([`ManageSnapshots::branch_of_empty_table`]).
async fn branch_or_refs(table: &ResolvedTable, what: &str, action: ManageSnapshots) -> Result<()> {
    let catalog = table.target.catalog().clone();
    let base = catalog
        .load_table(&table.ident)
        .await
        .map_err(|e| e.context(what))?;
    match action.branch_of_empty_table(base.metadata()) {
        Some((name, retention)) => {
            let append = crate::transaction::AppendFiles::default().to_new_branch(&name, retention);
            Transaction::new(catalog, table.ident.clone(), base)
                .add_action(append)
                .commit()
                .await
                .map_err(|e| e.context(what))?;
        }
        None => {
            commit_on(table, base, what, action).await?;
        }
    }
    Ok(())
}

/// [`commit`], returning the table as loaded before the change too.
pub(super) async fn commit_from(
    table: &ResolvedTable,
    what: &str,
    action: impl TransactionAction + 'static,
) -> Result<(Table, Table)> {
    let base = table
        .target
        .catalog()
        .load_table(&table.ident)
        .await
        .map_err(|e| e.context(what))?;
    commit_on(table, base, what, action).await
}

/// [`commit_from`] on `base`, the table as just loaded.
async fn commit_on(
    table: &ResolvedTable,
    base: Table,
    what: &str,
    mut action: impl TransactionAction + 'static,
) -> Result<(Table, Table)> {
    let catalog = table.target.catalog().clone();
    // these actions write no files: asking for their updates has no side effect
    if action
        .updates(&base)
        .await
        .map_err(|e| e.context(what))?
        .is_empty()
    {
        return Ok((base.clone(), base));
    }
    let after = Transaction::new(catalog, table.ident.clone(), base.clone())
        .add_action(action)
        .commit()
        .await
        .map_err(|e| e.context(what))?;
    Ok((base, after))
}

/// `SET TBLPROPERTIES ('k' = 'v', …)`, after those keywords (Spark's property list, no
/// reserved key: module `property_lists`).
fn set_properties(c: &mut Cursor<'_>) -> Result<UpdateProperties> {
    let properties = c.properties()?;
    c.expect_end()?;
    check_table_keys(properties.iter().map(|(k, _)| k.as_str()))?;
    properties
        .into_iter()
        .try_fold(UpdateProperties::new(), |u, (k, v)| u.set(k, v))
}

/// `UNSET TBLPROPERTIES [IF EXISTS] ('k', …)`, after those keywords (no reserved key).
fn unset_properties(c: &mut Cursor<'_>) -> Result<UpdateProperties> {
    let if_exists = c.eat_keywords(&["IF", "EXISTS"]);
    let keys = c.property_keys()?;
    c.expect_end()?;
    check_table_keys(keys.iter().map(String::as_str))?;
    let update = keys
        .into_iter()
        .try_fold(UpdateProperties::new(), |u, k| u.remove(k))?;
    Ok(if if_exists {
        update.remove_if_exists()
    } else {
        update
    })
}

/// The branch and tag clauses (Spark's Iceberg SQL extensions):
///
/// - `CREATE [OR REPLACE] TAG [IF NOT EXISTS] name [AS OF VERSION id] [RETAIN n unit]`,
///   `REPLACE TAG …`;
/// - `CREATE [OR REPLACE] BRANCH [IF NOT EXISTS] name [AS OF VERSION id] [RETAIN n unit]
///   [WITH SNAPSHOT RETENTION [n SNAPSHOTS] [n unit]]`, `REPLACE BRANCH …`;
/// - `DROP TAG|BRANCH [IF EXISTS] name`;
///
/// with `unit` one of `DAYS`, `HOURS`, `MINUTES`. `None` when the clause is none of
/// these.
fn refs(c: &mut Cursor<'_>, base: &str) -> Result<Option<(String, ManageSnapshots)>> {
    let mut exists = RefExists::Fail;
    let is_ref = |c: &Cursor<'_>, at: usize| {
        c.peek_at(at)
            .is_some_and(|t| is_keyword(&t.token, "TAG") || is_keyword(&t.token, "BRANCH"))
    };
    let create = if c.eat_keywords(&["CREATE", "OR", "REPLACE"]) {
        exists = RefExists::Replace;
        true
    } else if c.eat_keyword("REPLACE") {
        exists = RefExists::ReplaceExisting;
        true
    } else if c.eat_keyword("CREATE") {
        true
    } else if c.peek_keyword("DROP") && is_ref(c, 1) {
        c.advance();
        false
    } else {
        // DROP COLUMN and the like
        return Ok(None);
    };
    if !is_ref(c, 0) {
        return Err(c
            .expected("TAG or BRANCH")
            .context(format!("{base} CREATE")));
    }
    let branch = c.eat_keyword("BRANCH");
    if !branch {
        c.expect_keyword("TAG")?;
    }
    let kind = if branch { "BRANCH" } else { "TAG" };
    let verb = match exists {
        _ if !create => "DROP",
        RefExists::Replace => "CREATE OR REPLACE",
        RefExists::ReplaceExisting => "REPLACE",
        _ => "CREATE",
    };
    let what = format!("{base} {verb} {kind}");
    let mut parse = |c: &mut Cursor<'_>| -> Result<ManageSnapshots> {
        if !create {
            let if_exists = c.eat_keywords(&["IF", "EXISTS"]);
            let name = c.identifier()?;
            c.expect_end()?;
            let m = ManageSnapshots::new();
            return Ok(if branch {
                m.remove_branch(&name, if_exists)
            } else {
                m.remove_tag(&name, if_exists)
            });
        }
        if c.eat_keywords(&["IF", "NOT", "EXISTS"]) {
            if exists != RefExists::Fail {
                return Err(Error::invalid_argument(format!(
                    "{verb} and IF NOT EXISTS cannot be used together"
                )));
            }
            exists = RefExists::Keep;
        }
        let name = c.identifier()?;
        let snapshot_id = if c.eat_keywords(&["AS", "OF", "VERSION"]) {
            Some(long(c)?)
        } else {
            None
        };
        let mut retention = RefRetention::default();
        if c.eat_keyword("RETAIN") {
            let n = long(c)?;
            retention.max_ref_age_ms = Some(duration_ms(c, n)?);
        }
        if branch && c.eat_keywords(&["WITH", "SNAPSHOT", "RETENTION"]) {
            let n = long(c)?;
            if c.eat_keyword("SNAPSHOTS") {
                retention.min_snapshots_to_keep =
                    Some(i32::try_from(n).map_err(|_| {
                        Error::invalid_argument(format!("{n} snapshots is too many"))
                    })?);
                if matches!(c.peek().map(|t| &t.token), Some(Token::Number(..))) {
                    let age = long(c)?;
                    retention.max_snapshot_age_ms = Some(duration_ms(c, age)?);
                }
            } else {
                retention.max_snapshot_age_ms = Some(duration_ms(c, n)?);
            }
        }
        c.expect_end()?;
        let m = ManageSnapshots::new();
        Ok(if branch {
            m.create_branch(&name, snapshot_id, retention, exists)
        } else {
            m.create_tag(&name, snapshot_id, retention, exists)
        })
    };
    let action = parse(c).map_err(|e| e.context(&what))?;
    Ok(Some((what, action)))
}

/// A whole number, possibly negative.
pub(super) fn long(c: &mut Cursor<'_>) -> Result<i64> {
    let negative = c.eat(&Token::Minus);
    match c.peek().map(|t| &t.token) {
        Some(Token::Number(n, _)) => {
            let v: i64 = n
                .parse()
                .map_err(|_| Error::invalid_argument(format!("'{n}' is not a whole number")))?;
            c.advance();
            Ok(if negative { -v } else { v })
        }
        _ => Err(c.expected("a whole number")),
    }
}

/// `n` of the time unit at the cursor (`DAYS`, `HOURS`, `MINUTES`), in ms.
fn duration_ms(c: &mut Cursor<'_>, n: i64) -> Result<i64> {
    const UNITS: &[(&str, i64)] = &[
        ("DAYS", 86_400_000),
        ("DAY", 86_400_000),
        ("HOURS", 3_600_000),
        ("HOUR", 3_600_000),
        ("MINUTES", 60_000),
        ("MINUTE", 60_000),
    ];
    let (_, ms) = UNITS
        .iter()
        .find(|(unit, _)| c.eat_keyword(unit))
        .ok_or_else(|| c.expected("DAYS, HOURS or MINUTES"))?;
    n.checked_mul(*ms)
        .ok_or_else(|| Error::invalid_argument(format!("{n} is too long a time")))
}
