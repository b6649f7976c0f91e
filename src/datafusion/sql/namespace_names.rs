//! Tables of namespaces of several levels named as Spark names them: `a.b.t` (table `t`
//! of namespace `a.b` in the default catalog) and `cat.a.b.t`, as icefloe's `"a.b".t` /
//! `cat."a.b".t`.
//!
//! DataFusion reads a name of three parts as `catalog.schema.table` and refuses one of
//! more, while a namespace of several levels is one schema whose name holds the dots
//! (`"a.b"`). Spark's catalog resolution (`LookupCatalog.CatalogAndIdentifier`): when the
//! first part names a catalog, the parts between it and the last are the namespace;
//! otherwise every part but the last is a namespace of the current catalog. So a name
//! of three parts whose first part is a registered catalog keeps DataFusion's reading,
//! and every other name of three parts or more whose parts before the last name a
//! namespace the session's Iceberg catalog lists has those parts written as one quoted
//! schema name. A name whose namespace is not listed is left as written (DataFusion
//! reports it, and the CLI points to the quoted form).
//!
//! Only names that stand for a table or a view are rewritten (sqlparser's relations of
//! the statement, the name a `DESCRIBE` names, the view a `CREATE [OR REPLACE] VIEW`
//! defines and the tables or views a `DROP TABLE|VIEW` removes), and columns qualified
//! by one of those names as written (`a.b.t.x` when the statement reads `a.b.t`, as
//! Spark resolves a qualifier of four parts or more): a column path `st.a.b` keeps its
//! meaning. It runs after the rewrites of Spark's metadata-table names
//! ([`metadata_names`](super::metadata_names): `a.b.t.files` → `a.b."t$files"`) and of
//! time travel (`a.b.t VERSION AS OF 1` → `a.b."t@1"`), whose names it then completes.
//! The rewrite works on the statement's tokens; the rest of the text stays as written.

use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{ObjectName, ObjectNamePart, ObjectType, Statement};

use super::metadata_names::table_names;
use super::time_travel::word_values;
use super::tokens::Tok;
use crate::datafusion::catalog::schema_name;

/// Whether `statement` may name a table by a name of three parts or more: a cheap check
/// before tokenizing it (an `INSERT` of many decimal values is not parsed again).
pub(super) fn candidate(statement: &str) -> bool {
    if super::tokens::first_word_is(statement, &["SET", "RESET", "CALL"]) {
        return false;
    }
    // a word, a dot, a word, a dot, a word (`1.5` is none: no dot before a digit counts)
    let ident = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'"' | b'`') || c >= 0x80;
    let starts = |c: u8| c.is_ascii_alphabetic() || matches!(c, b'_' | b'"' | b'`') || c >= 0x80;
    let bytes = statement.as_bytes();
    let mut dots = 0;
    for (i, &c) in bytes.iter().enumerate() {
        if c == b'.' {
            let joins =
                i > 0 && ident(bytes[i - 1]) && bytes.get(i + 1).is_some_and(|&next| starts(next));
            dots = if joins { dots + 1 } else { 0 };
            if dots >= 2 {
                return true;
            }
        } else if !ident(c) {
            dots = 0;
        }
    }
    false
}

/// Where the names start (byte offsets in `text`) that a `CREATE [OR REPLACE] VIEW`
/// defines and a `DROP TABLE|VIEW` removes: names of tables and views that sqlparser's
/// relations do not list (`CREATE VIEW a.b.v` and `DROP VIEW a.b.v` were left to
/// DataFusion, which read `a` as a catalog or looked for a view `a.b.v` that
/// `CREATE VIEW "a.b".v` is not, so `DROP VIEW IF EXISTS a.b.v` kept it).
fn defined_names(ctx: &SessionContext, text: &str) -> Vec<usize> {
    let Some(parsed) = super::parse_statement(ctx, text) else {
        return Vec::new();
    };
    let names: Vec<&ObjectName> = match &parsed {
        Statement::CreateView(view) => vec![&view.name],
        Statement::Drop {
            object_type: ObjectType::View | ObjectType::Table,
            names,
            ..
        } => names.iter().collect(),
        _ => Vec::new(),
    };
    let mut locator = super::tokens::Locator::new(text);
    names
        .into_iter()
        .filter_map(|name| match name.0.first() {
            Some(ObjectNamePart::Identifier(ident)) if ident.span.start.line > 0 => {
                locator.seek(ident.span.start)
            }
            _ => None,
        })
        .collect()
}

/// `text` (tokenized as `toks`) with the namespaces of several levels in its table names
/// written as one quoted schema name (see the module docs); `None` when it has none.
pub(super) fn rewrite(
    ctx: &SessionContext,
    text: &str,
    toks: &[Tok],
    quote: char,
) -> Option<String> {
    let normalize = ctx
        .state()
        .config_options()
        .sql_parser
        .enable_ident_normalization;
    // where the names standing for tables start (a column path `a.b.t` is none)
    let mut starts: Vec<usize> = table_names(ctx, text, toks, normalize)
        .into_iter()
        .filter_map(|n| n.start)
        .collect();
    starts.extend(defined_names(ctx, text));
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    // the table names rewritten: their words, the index of the namespace's first word,
    // and the quoted schema name
    let mut tables: Vec<(Vec<String>, usize, String)> = Vec::new();
    let names = super::tokens::dotted_names(toks);
    for parts in &names {
        if parts.len() < 3 {
            continue;
        }
        if !starts.contains(&toks[parts[0]].start) {
            continue;
        }
        let words = word_values(toks, parts, normalize);
        if words.len() != parts.len() {
            continue;
        }
        // the tokens of the namespace: after the catalog when the first part names one
        let explicit_catalog = ctx.catalog(&words[0]).is_some();
        if explicit_catalog && words.len() == 3 {
            continue;
        }
        let first = usize::from(explicit_catalog);
        let Some((_, qualifier)) = words.split_last() else {
            continue;
        };
        let Some((target, catalog, namespace)) = super::resolve_namespace(ctx, qualifier) else {
            continue;
        };
        let schema = schema_name(&namespace);
        let listed = ctx
            .catalog(&catalog)
            .is_some_and(|c| c.schema(&schema).is_some());
        if !listed || target.iceberg().is_other_schema(&schema) {
            continue;
        }
        let (start, end) = (parts[first], parts[parts.len() - 2]);
        let doubled = format!("{quote}{quote}");
        let replacement = format!("{quote}{}{quote}", schema.replace(quote, &doubled));
        edits.push((toks[start].start..toks[end].end, replacement.clone()));
        tables.push((words, first, replacement));
    }
    // a column qualified by such a table's name (`a.b.t.x`, `cat.a.b.t.x`, `a.b.t.st.f`),
    // as Spark resolves a qualifier of four parts or more (`matchWithFourOrMoreQualifierParts`)
    for parts in &names {
        if parts.len() < 4 || starts.contains(&toks[parts[0]].start) {
            continue;
        }
        let words = word_values(toks, parts, normalize);
        if words.len() != parts.len() {
            continue;
        }
        // the qualifier with or without its catalog, whichever way the table was named
        let skip = usize::from(words.len() > 4 && ctx.catalog(&words[0]).is_some());
        let rest = &words[skip..];
        let qualified = tables.iter().find_map(|(table, first, replacement)| {
            let table = table.get(*first..)?;
            (rest.len() > table.len() && rest.starts_with(table)).then_some((table, replacement))
        });
        if let Some((table, replacement)) = qualified {
            let (start, end) = (parts[skip], parts[skip + table.len() - 2]);
            edits.push((toks[start].start..toks[end].end, replacement.clone()));
        }
    }
    // in the order of the text, as `splice` takes them
    edits.sort_by_key(|(range, _)| range.start);
    super::tokens::splice(text, edits)
}

#[cfg(test)]
mod tests {
    use super::candidate;

    #[test]
    fn only_statements_with_names_of_three_parts_are_candidates() {
        for yes in [
            "SELECT * FROM a.b.t",
            "SELECT * FROM cat.\"a.b\".t",
            "DELETE FROM x.y.z WHERE k = 1.5",
            "SELECT * FROM \"a\".b.c",
        ] {
            assert!(candidate(yes), "{yes}");
        }
        for no in [
            "SELECT * FROM ns.t",
            "INSERT INTO ns.t VALUES (1.5, 2.25), (3.5, 4.5)",
            "SELECT 1.5 + t.x FROM t",
            "CALL system.expire_snapshots('a.b.t')",
        ] {
            assert!(!candidate(no), "{no}");
        }
    }
}
