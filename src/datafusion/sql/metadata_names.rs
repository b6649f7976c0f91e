//! Spark's names of metadata tables: `ns.t.snapshots`, `cat.ns.t.files`, `ns.t.history`
//! (every kind of [`MetadataTableKind`]), as icefloe's `ns."t$snapshots"`.
//!
//! As Iceberg's Spark catalog resolves them (`BaseMetastoreCatalog.loadTable`): a name
//! that is a table keeps its meaning; otherwise, when its last part names a metadata
//! table and the parts before it an Iceberg table, it is that table's metadata table. At
//! least three parts are needed (`t.files` is table `files` of namespace `t`, in Spark
//! too). Where the statement reads rows from it and gives it no alias, the last part
//! becomes its alias (`ns."t$files" AS files`), so `files.file_path` names its column as
//! in Spark; a time-travel clause after it (`ns.t.files VERSION AS OF 1`) is left to the
//! time-travel rewrite, which reads `"t$files"` at that version.
//!
//! A name of three or more parts that DataFusion cannot resolve whose leading parts
//! name an Iceberg table is refused saying what it reads as (an unknown metadata table,
//! listing them; a version's metadata table, naming its `"t@v$kind"` form), not as an
//! unknown catalog.
//!
//! Only names that stand for a table are read so (sqlparser's relations of the statement:
//! a column `ns.t.files` of table `ns.t` keeps its meaning). The rewrite works on the
//! statement's tokens; the rest of the text stays as written.

use std::ops::ControlFlow;

use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{visit_relations, ObjectNamePart};
use datafusion::sql::sqlparser::tokenizer::Token;

use super::time_travel::{has_alias, reads_rows_at, version_of, word_values, VERSION_PREFIXES};
use super::tokens::{is_keyword, Tok};
use crate::datafusion::metadata_tables::MetadataTableKind;
use crate::error::{Error, Result};

/// Whether `statement` may name a metadata table in Spark's form: a cheap check before
/// tokenizing it.
pub(super) fn candidate(statement: &str) -> bool {
    if super::tokens::first_word_is(statement, &["SET", "RESET", "CALL"]) {
        return false;
    }
    let lower = statement.to_ascii_lowercase();
    // the last part quoted (`ns."t"."files"`, `` ns.`t`.`files` ``) too
    MetadataTableKind::ALL.iter().any(|k| {
        [".", ".\"", ".`"]
            .iter()
            .any(|dot| lower.contains(&format!("{dot}{}", k.name())))
    }) || has_three_part_name(statement)
}

/// Whether `statement` may hold a name of three or more dotted parts (see
/// [`unresolvable`]): a run of name characters and dots holding two dots, not starting
/// with a digit (`1.5` and `1.5, 2.5` are numbers).
fn has_three_part_name(statement: &str) -> bool {
    let name_char = |c: char| c.is_alphanumeric() || "_\"`$@.".contains(c);
    statement.split(|c: char| !name_char(c)).any(|run| {
        run.matches('.').nth(1).is_some() && !run.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// `text` (tokenized as `toks`) with Spark's metadata table names as `"t$kind"` names (see
/// the module docs); `None` when it has none.
///
/// Errors: a catalog that fails to answer whether the table exists.
pub(super) async fn rewrite(
    ctx: &SessionContext,
    text: &str,
    toks: &[Tok],
    quote: char,
) -> Result<Option<String>> {
    let normalize = ctx
        .state()
        .config_options()
        .sql_parser
        .enable_ident_normalization;
    let relations: Vec<Vec<String>> = table_names(ctx, text, toks, normalize)
        .into_iter()
        .map(|n| n.parts)
        .collect();
    // `DESCRIBE`/`SHOW COLUMNS FROM` name the table: no alias there
    let describes = super::tokens::first_word_is(text, &["SHOW", "DESCRIBE", "DESC"]);
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    for parts in super::tokens::dotted_names(toks) {
        let k = parts[parts.len() - 1];
        let call = toks.get(k + 1).is_some_and(|t| t.token == Token::LParen);
        if parts.len() < 3 || call {
            continue;
        }
        let words = word_values(toks, &parts, normalize);
        let versioned = time_travel_after(toks, k) && reads_rows_at(toks, parts[0]);
        if !relations.contains(&words) && !versioned {
            continue;
        }
        if let Some(error) = unresolvable(ctx, &words).await? {
            return Err(error);
        }
        let Some((last, table)) = words.split_last() else {
            continue;
        };
        let Some(kind) = MetadataTableKind::parse(last) else {
            continue;
        };
        // a table of that name keeps its meaning (a nested namespace's, too)
        if let Some(reference) = super::dml_rewrite::reference(&words) {
            if ctx.table_provider(reference).await.is_ok() {
                continue;
            }
        }
        if super::iceberg_table_exists(ctx, &words).await?
            || !super::iceberg_table_exists(ctx, table).await?
        {
            continue;
        }
        let table_tok = parts[parts.len() - 2];
        // the table's name as DataFusion reads it (`NS.T.FILES` is table `t`)
        let Some(table_name) = table.last() else {
            continue;
        };
        let doubled = format!("{quote}{quote}");
        let name = format!("{table_name}${}", kind.name()).replace(quote, &doubled);
        let mut replacement = format!("{quote}{name}{quote}");
        if !describes && reads_rows_at(toks, parts[0]) && !has_alias(toks, k) && !versioned {
            replacement.push_str(&format!(" AS {quote}{}{quote}", kind.name()));
        }
        edits.push((toks[table_tok].start..toks[k].end, replacement));
    }
    Ok(super::tokens::splice(text, edits))
}

/// The error for a table name `words` (parts as DataFusion resolves them) DataFusion
/// cannot resolve, whose leading parts name an Iceberg table: `ns.t.<x>` where `x` is no
/// metadata table and no version (`branch_…`, …), which DataFusion reads as table `x` of
/// schema `t` of a catalog `ns` ("catalog 'ns' not found"), is an unknown metadata table
/// of `ns.t`, listing them (as `ns."t$x"` is, [`unknown_metadata_table`]);
/// `ns.t.branch_dev.files`, too many parts for DataFusion, names the form that reads a
/// version's metadata table, `ns."t@dev$files"`. `None` for any other name, and for
/// names DataFusion resolves (three parts starting with a catalog), which are left alone
/// without a catalog lookup.
///
/// Errors: [`crate::ErrorKind::NotFound`] / [`crate::ErrorKind::InvalidArgument`] as
/// above; a catalog that fails to answer.
///
/// [`unknown_metadata_table`]: crate::datafusion::named_tables::unknown_metadata_table
async fn unresolvable(ctx: &SessionContext, words: &[String]) -> Result<Option<Error>> {
    let resolvable = words.len() == 3 && ctx.catalog(&words[0]).is_some();
    let Some((last, table)) = words.split_last() else {
        return Ok(None);
    };
    if words.len() < 3 || resolvable {
        return Ok(None);
    }
    if let (Some(kind), Some((version_part, base))) =
        (MetadataTableKind::parse(last), table.split_last())
    {
        if let Some(version) = version_of(version_part).ok().flatten() {
            if base.len() >= 2 && super::iceberg_table_exists(ctx, base).await? {
                let (t, namespace) = base.split_last().unwrap_or((version_part, &[]));
                return Ok(Some(Error::invalid_argument(format!(
                    "'{}' names metadata table '{}' of version '{version_part}' of table \
                     '{}', which is written {}.\"{t}@{version}${}\" (a version's metadata \
                     table has no Spark name of dotted parts)",
                    words.join("."),
                    kind.name(),
                    base.join("."),
                    namespace.join("."),
                    kind.name(),
                ))));
            }
        }
        return Ok(None);
    }
    // a version (`ns.t.branch_dev`) is the time-travel rewrite's
    if VERSION_PREFIXES.iter().any(|p| last.starts_with(p)) {
        return Ok(None);
    }
    if !super::iceberg_table_exists(ctx, table).await? {
        return Ok(None);
    }
    Ok(Some(Error::not_found(format!(
        "metadata table '{last}' of table '{}' ('{}' reads as a metadata table of it; \
         metadata tables: {}; a branch or tag is read as branch_<name> or tag_<name>)",
        table.join("."),
        words.join("."),
        MetadataTableKind::ALL.map(|k| k.name()).join(", ")
    ))))
}

/// A name in a statement that stands for a table.
pub(super) struct TableName {
    /// Each part as DataFusion resolves it.
    pub parts: Vec<String>,
    /// The byte offset in the statement's text where the name starts (`None` when the
    /// parser kept no location for it).
    pub start: Option<usize>,
}

/// The names in `text` (tokenized as `toks`) that stand for tables: sqlparser's
/// relations of the statement (a column `ns.t.files` of table `ns.t` is none), and the
/// name after `DESCRIBE [TABLE] [EXTENDED]`.
pub(super) fn table_names(
    ctx: &SessionContext,
    text: &str,
    toks: &[Tok],
    normalize: bool,
) -> Vec<TableName> {
    let names = super::dml_rewrite::Names { normalize };
    let mut relations: Vec<TableName> = Vec::new();
    // (a statement with Spark's time-travel clauses does not parse: a name followed by
    // one stands for a table anyway)
    if let Some(parsed) = super::parse_statement(ctx, text) {
        let mut locator = super::tokens::Locator::new(text);
        let _ = visit_relations(&parsed, |name| {
            if let Some(parts) = names.parts(name) {
                let start = match name.0.first() {
                    Some(ObjectNamePart::Identifier(ident)) if ident.span.start.line > 0 => {
                        locator.seek(ident.span.start)
                    }
                    _ => None,
                };
                relations.push(TableName { parts, start });
            }
            ControlFlow::<()>::Continue(())
        });
    }
    // Spark's `DESCRIBE TABLE [EXTENDED] name [column]`, which sqlparser does not parse:
    // the name after the keywords stands for a table
    let keyword = |t: &Tok| {
        ["DESCRIBE", "DESC", "TABLE", "EXTENDED", "FORMATTED"]
            .iter()
            .any(|kw| is_keyword(&t.token, kw))
    };
    let first_name = super::tokens::dotted_names(toks)
        .into_iter()
        .find(|p| p.len() > 1 || toks.get(p[0]).is_some_and(|t| !keyword(t)));
    if let Some(first) = first_name {
        let leading = toks.get(..first[0]).unwrap_or_default();
        if !leading.is_empty() && leading.iter().all(keyword) {
            relations.push(TableName {
                parts: word_values(toks, &first, normalize),
                start: Some(toks[first[0]].start),
            });
        }
    }
    relations
}

/// Whether a time-travel clause (`[FOR] VERSION|SYSTEM_VERSION|TIMESTAMP|SYSTEM_TIME AS
/// OF`) follows the name ending at token `last`.
fn time_travel_after(toks: &[Tok], last: usize) -> bool {
    let next = |n: usize| toks.get(last + n).map(|t| &t.token);
    let at = match next(1) {
        Some(t) if is_keyword(t, "FOR") => 2,
        _ => 1,
    };
    next(at).is_some_and(|t| {
        ["VERSION", "SYSTEM_VERSION", "TIMESTAMP", "SYSTEM_TIME"]
            .iter()
            .any(|k| is_keyword(t, k))
    }) && next(at + 1).is_some_and(|t| is_keyword(t, "AS"))
}
