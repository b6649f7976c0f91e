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
//! Only names that stand for a table are read so (sqlparser's relations of the statement:
//! a column `ns.t.files` of table `ns.t` keeps its meaning). The rewrite works on the
//! statement's tokens; the rest of the text stays as written.

use std::ops::ControlFlow;

use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{visit_relations, ObjectNamePart};
use datafusion::sql::sqlparser::tokenizer::Token;

use super::time_travel::{has_alias, reads_rows_at, word_values};
use super::tokens::{is_keyword, Tok};
use crate::datafusion::metadata_tables::MetadataTableKind;
use crate::error::Result;

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
