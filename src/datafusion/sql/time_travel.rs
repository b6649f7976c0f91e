//! Spark's time-travel syntax, as icefloe's `"t@…"` table names (see the parent module's
//! docs).
//!
//! - `t VERSION AS OF 123`, `t FOR VERSION AS OF 'tag'`, `FOR SYSTEM_VERSION AS OF …`: the
//!   snapshot with that id, or the branch or tag of that name: `"t@123"`, `"t@tag"`.
//! - `t TIMESTAMP AS OF '2026-01-01 10:00:00'`, `FOR SYSTEM_TIME AS OF …`, with a string, a
//!   `TIMESTAMP '…'` literal or a number of seconds since the Unix epoch, whole or not
//!   (`1700000000.123`: Spark casts a number to a timestamp as seconds): the snapshot
//!   current then, `"t@<time>"`.
//! - Iceberg's Spark identifiers `ns.t.branch_<name>`, `ns.t.tag_<name>`,
//!   `ns.t.snapshot_id_<id>` and `ns.t.at_timestamp_<ms>`, when `ns.t` is an Iceberg table:
//!   `ns."t@<name>"`, `ns."t@<id>"`, and the time of those milliseconds. Reads, `INSERT`
//!   (a branch takes the rows) and row-level changes take the same names; a write to
//!   anything but a branch is refused where the `@` name is.
//!
//! - A clause's value may be any constant expression, as Spark folds one:
//!   `TIMESTAMP AS OF now() - INTERVAL '1' HOUR`, `CAST('2026-01-01' AS TIMESTAMP)`,
//!   `TIMESTAMP '…' + INTERVAL '1' SECOND`, `VERSION AS OF 1 + 2`. The statement's
//!   expressions are evaluated once, together, before it is planned (module `constant`:
//!   `now()` is one instant in all of them; a zone-less timestamp is UTC, as a literal
//!   is); their values then name the version as a literal would. An expression that names
//!   a column, reads a table or is volatile (`random()`) is refused naming the clause.
//!   A `PREPARE` or `CREATE VIEW` (which keep their plans) takes literals only: an
//!   expression would be fixed when it runs, not taken at each `EXECUTE` or read.
//!
//! The rewrite works on the statement's tokens: only the name and the clause change, the
//! rest of the text stays as written.
//!
//! Columns keep the qualifiers Spark gives them: Spark qualifies a table's columns by the
//! name the statement wrote (`spark_catalog.ns.t.branch_dev`), so `branch_dev.id`,
//! `t.branch_dev.id` and `ns.t.branch_dev.id` (for `ns.t VERSION AS OF …`: `t.id`,
//! `ns.t.id`) name its column. A rewritten table without an alias, where a statement
//! reads rows (after `FROM`, `JOIN`, `UPDATE`, `MERGE INTO`, `USING` or a `,`), is given the
//! last part of that name as its alias (`ns."t@dev" AS branch_dev`), and a column
//! qualified by two or more trailing parts of the name is qualified by the alias. The
//! alias is left out when another table of the statement would take the same qualifier
//! (`FROM ns.t JOIN ns.t VERSION AS OF 1`: alias one of them, as Spark needs too).

use std::ops::Range;

use datafusion::common::ScalarValue;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::dialect::Dialect;
use datafusion::sql::sqlparser::keywords::RESERVED_FOR_TABLE_ALIAS;
use datafusion::sql::sqlparser::parser::Parser;
use datafusion::sql::sqlparser::tokenizer::Token;

use super::constant;
use super::session_zone::{scalar_ms, session_zone, timestamp_text_ms};
use super::tokens::{is_keyword, Tok};
use crate::catalog::format_ms;
use crate::datafusion::catalog::TableNameParts;
use crate::error::{Error, Result};
use datafusion::arrow::array::timezone::Tz;

/// The prefixes of Iceberg's Spark identifiers for a table's versions.
pub(super) const VERSION_PREFIXES: &[&str] = &["branch_", "tag_", "snapshot_id_", "at_timestamp_"];

/// A change to the statement text: replace `range` with `text`.
struct Edit {
    range: Range<usize>,
    text: String,
}

/// A table name the rewrite turned into an `@` name: the parts as the statement wrote
/// them (normalized as DataFusion reads them), the index of its first token and of its
/// last one (the clause's value for a time-travel clause).
struct Rewritten {
    parts: Vec<String>,
    first: usize,
    last: usize,
}

/// `text` (tokenized as `toks`) with Spark's time-travel clauses and version identifiers
/// as `@` names (see the module docs); `None` when there is none.
///
/// Errors ([`crate::ErrorKind::InvalidArgument`]): a clause whose value is no constant
/// expression, or names no version (NULL, another type, a `TIMESTAMP AS OF` string that
/// is no timestamp), naming it.
pub(super) async fn spark_time_travel(
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
    let mut rewritten = Vec::new();
    let mut edits = clause_edits(ctx, text, toks, quote, normalize, &mut rewritten).await?;
    let clauses = rewritten.len();
    edits.extend(identifier_edits(ctx, toks, quote, &mut rewritten).await?);
    // `ns.t.branch_dev VERSION AS OF 'v1'`: two versions of one name
    let (by_clause, by_identifier) = rewritten.split_at(clauses);
    if let Some(twice) = by_identifier
        .iter()
        .find(|n| by_clause.iter().any(|c| c.first == n.first))
    {
        return Err(versioned_twice(&twice.parts.join(".")));
    }
    if edits.is_empty() {
        return Ok(None);
    }
    edits.extend(qualifier_edits(toks, quote, normalize, &rewritten));
    edits.sort_by_key(|e| e.range.start);
    let mut out = String::with_capacity(text.len() + 16);
    let mut copied = 0;
    for e in edits {
        if e.range.start < copied {
            continue;
        }
        out.push_str(&text[copied..e.range.start]);
        out.push_str(&e.text);
        copied = e.range.end;
    }
    out.push_str(&text[copied..]);
    Ok(Some(out))
}

/// What a clause asks for.
enum Kind {
    Version,
    Timestamp,
}

/// The clause starting at token `i` (`[FOR] VERSION|SYSTEM_VERSION|TIMESTAMP|SYSTEM_TIME
/// AS OF`), as its kind and the index of its value token.
fn clause_at(toks: &[Tok], i: usize) -> Option<(Kind, usize)> {
    let word = |k: usize, kw: &str| toks.get(k).is_some_and(|t| is_keyword(&t.token, kw));
    let start = if word(i, "FOR") { i + 1 } else { i };
    let kind = if word(start, "VERSION") || word(start, "SYSTEM_VERSION") {
        Kind::Version
    } else if word(start, "TIMESTAMP") || word(start, "SYSTEM_TIME") {
        Kind::Timestamp
    } else {
        return None;
    };
    (word(start + 1, "AS") && word(start + 2, "OF")).then_some((kind, start + 3))
}

/// The index of the last part of a table name ending just before token `i` (a word).
fn name_before(toks: &[Tok], i: usize) -> Option<usize> {
    let last = i.checked_sub(1)?;
    matches!(toks[last].token, Token::Word(_)).then_some(last)
}

/// The `@` name for the word `tok` (a table name's last part) at `version`: quoted, with a
/// metadata table suffix (`t$files`) kept last.
fn versioned(tok: &Tok, version: &str, quote: char) -> String {
    let Token::Word(w) = &tok.token else {
        return String::new();
    };
    let name = match w.value.rsplit_once('$') {
        Some((base, meta)) => format!("{base}@{version}${meta}"),
        None => format!("{}@{version}", w.value),
    };
    let doubled = format!("{quote}{quote}");
    format!("{quote}{}{quote}", name.replace(quote, &doubled))
}

/// A time-travel clause found in the statement: its kind, its text up to `AS OF`, the
/// index of the table name's last token and of the value's last one, and the version a
/// literal value names (`None`: an expression, evaluated with the statement's others).
struct Clause {
    kind: Kind,
    text: String,
    last: usize,
    end: usize,
    version: Option<String>,
    expression: String,
}

/// The time-travel clauses' edits; the names they rewrite go to `rewritten`. A value that
/// is no literal is evaluated as a constant expression (module `constant`), all of the
/// statement's at once.
async fn clause_edits(
    ctx: &SessionContext,
    text: &str,
    toks: &[Tok],
    quote: char,
    normalize: bool,
    rewritten: &mut Vec<Rewritten>,
) -> Result<Vec<Edit>> {
    // a timestamp without a zone is read in the session's (module `session_zone`)
    let zone = session_zone(ctx)?;
    // the session's dialect (not `Send`) only while the clauses are found
    let mut clauses = Vec::new();
    {
        let dialect = super::session_dialect(ctx);
        let mut i = 0;
        while i < toks.len() {
            let Some((kind, value_at)) = clause_at(toks, i) else {
                i += 1;
                continue;
            };
            let Some(last) = name_before(toks, i) else {
                i += 1;
                continue;
            };
            let clause = text[toks[i].start..toks[value_at - 1].end].to_string();
            let len = expression_len(dialect.as_ref(), toks, value_at)
                .filter(|&n| n > 0)
                .ok_or_else(|| no_value(&clause))?;
            let end = value_at + len - 1;
            let version = literal(&kind, &clause, &toks[value_at..=end], zone.as_ref())?;
            clauses.push(Clause {
                kind,
                expression: text[toks[value_at].start..toks[end].end].to_string(),
                text: clause,
                last,
                end,
                version,
            });
            i = end + 1;
        }
    }
    // the expressions, evaluated once and together (`now()` one instant in all)
    let pending: Vec<&mut Clause> = clauses.iter_mut().filter(|c| c.version.is_none()).collect();
    if let (Some(c), Some(statement)) = (pending.first(), keeps_plan(toks)) {
        return Err(refused(
            &c.text,
            &c.expression,
            &format!(
                "{statement} keeps its plan, so the value would be fixed when it runs, not \
                 taken at each use; write the version as a literal"
            ),
        ));
    }
    let texts: Vec<String> = pending.iter().map(|c| c.expression.clone()).collect();
    let values =
        constant::constants(ctx, &texts)
            .await
            .map_err(|e| match pending.get(e.index) {
                Some(c) => refused(&c.text, &c.expression, &e.why),
                None => refused("", "", &e.why),
            })?;
    for (c, value) in pending.into_iter().zip(values) {
        c.version = Some(version_of_value(c, &value, zone.as_ref())?);
    }
    let mut edits = Vec::new();
    for c in clauses {
        let Some(version) = c.version else {
            continue;
        };
        // `"t@dev" VERSION AS OF 'v1'`
        if let Token::Word(w) = &toks[c.last].token {
            if TableNameParts::parse(&w.value).version.is_some() {
                return Err(versioned_twice(&w.value));
            }
        }
        edits.push(Edit {
            range: toks[c.last].start..toks[c.last].end,
            text: versioned(&toks[c.last], &version, quote),
        });
        edits.push(Edit {
            range: toks[c.last].end..toks[c.end].end,
            text: String::new(),
        });
        let first = dotted_start(toks, c.last);
        rewritten.push(Rewritten {
            parts: word_values(toks, &dotted_parts(first, c.last), normalize),
            first,
            last: c.end,
        });
    }
    Ok(edits)
}

/// `PREPARE` or `CREATE VIEW` when the statement `toks` is one (a statement whose plan
/// is kept for later uses), else `None`.
fn keeps_plan(toks: &[Tok]) -> Option<&'static str> {
    let first = &toks.first()?.token;
    if is_keyword(first, "PREPARE") {
        return Some("PREPARE");
    }
    let head = toks.iter().skip(1).take(4).map(|t| &t.token);
    let view = head
        .take_while(|t| !is_keyword(t, "AS"))
        .any(|t| is_keyword(t, "VIEW"));
    (is_keyword(first, "CREATE") && view).then_some("CREATE VIEW")
}

/// The number of tokens of the expression starting at token `at`, as sqlparser reads
/// one (it stops before an alias, `AS`, `JOIN`, `WHERE`, `,`, `)`, …); `None` when none
/// parses there.
fn expression_len(dialect: &dyn Dialect, toks: &[Tok], at: usize) -> Option<usize> {
    let tokens = toks[at..].iter().map(|t| t.token.clone()).collect();
    let mut parser = Parser::new(dialect).with_tokens(tokens);
    parser.parse_expr().ok()?;
    Some(parser.index())
}

/// The version a literal clause value `value` (its tokens) names; `None` when it is no
/// literal (an expression).
///
/// Errors: a `TIMESTAMP AS OF` string that is no timestamp, a number of seconds out of
/// range.
fn literal(kind: &Kind, clause: &str, value: &[Tok], zone: Option<&Tz>) -> Result<Option<String>> {
    let tokens: Vec<&Token> = value.iter().map(|t| &t.token).collect();
    Ok(Some(match (kind, tokens.as_slice()) {
        (Kind::Version, [Token::Number(n, _)]) => n.clone(),
        (Kind::Version, [Token::SingleQuotedString(s)]) => s.clone(),
        (Kind::Timestamp, [Token::SingleQuotedString(s)]) => timestamp(s, zone)?,
        (Kind::Timestamp, [Token::Word(w), Token::SingleQuotedString(s)])
            if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("TIMESTAMP") =>
        {
            timestamp(s, zone)?
        }
        (Kind::Timestamp, [Token::Number(n, _)]) => {
            let ms = decimal_seconds_ms(n).ok_or_else(|| not_seconds(clause, n))?;
            format_ms(ms)
        }
        _ => return Ok(None),
    }))
}

/// The milliseconds since the Unix epoch of a decimal number of seconds written
/// `digits[.digits]` (a literal; Spark reads `1700000000.5` as a decimal and casts it to a
/// timestamp exactly, to microseconds, and Iceberg takes the whole milliseconds of
/// those: `SparkCatalog.loadTable` converts with `TimeUnit.MICROSECONDS.toMillis`).
/// `None` for another form or out of range.
fn decimal_seconds_ms(text: &str) -> Option<i64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() && fraction.is_empty()
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let seconds: i64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    // the first three digits of the fraction are its milliseconds; the rest, below a
    // millisecond, are cut as Spark's cast and Iceberg's conversion cut them
    let millis: String = fraction.chars().chain("000".chars()).take(3).collect();
    seconds.checked_mul(1000)?.checked_add(millis.parse().ok()?)
}

/// The milliseconds since the Unix epoch of a number of seconds that is no whole
/// number: a double as Spark casts one to a timestamp (`(d * 1e6).toLong` microseconds,
/// then Iceberg's `MICROSECONDS.toMillis`, both cutting toward zero), a decimal exactly.
/// `None` for other values and out of range.
fn fractional_seconds_ms(value: &ScalarValue) -> Option<i64> {
    match value {
        ScalarValue::Float64(Some(d)) => micros_to_ms(*d * 1e6),
        ScalarValue::Float32(Some(f)) => micros_to_ms(f64::from(*f) * 1e6),
        ScalarValue::Decimal128(Some(v), _, scale) => {
            let scale = u32::try_from(*scale).ok()?;
            let micros = if scale <= 6 {
                v.checked_mul(10i128.checked_pow(6 - scale)?)?
            } else {
                v / 10i128.checked_pow(scale - 6)?
            };
            i64::try_from(micros / 1000).ok()
        }
        _ => None,
    }
}

/// `micros` (a double) cut toward zero to whole microseconds, then to milliseconds;
/// `None` when not finite or out of range.
fn micros_to_ms(micros: f64) -> Option<i64> {
    if !micros.is_finite() || micros.abs() >= 9.2e18 {
        return None;
    }
    // `as` cuts toward zero, as the JVM's `toLong` does; `/` on i64 too, as `toMillis`
    Some((micros as i64) / 1000)
}

/// `seconds` since the Unix epoch (Spark casts a number to a timestamp as seconds) as
/// the `@` name's time.
fn seconds_as_time(clause: &str, seconds: i64) -> Result<String> {
    seconds
        .checked_mul(1000)
        .map(format_ms)
        .ok_or_else(|| not_seconds(clause, &seconds.to_string()))
}

fn not_seconds(clause: &str, n: &str) -> Error {
    Error::invalid_argument(format!(
        "{clause} {n}: not a number of seconds since the Unix epoch"
    ))
}

/// The version the value of clause `c`'s expression names: for `VERSION AS OF` a whole
/// number (a snapshot id) or a string (a branch, tag or snapshot id); for `TIMESTAMP AS
/// OF` a timestamp or date (a zone-less one in UTC, as the literal), a string read as a
/// timestamp literal is, or a number of seconds since the epoch (whole, a decimal or a
/// double, see [`fractional_seconds_ms`]).
///
/// Errors: a NULL, or a value of another type, naming the clause.
fn version_of_value(c: &Clause, value: &ScalarValue, zone: Option<&Tz>) -> Result<String> {
    if value.is_null() {
        return Err(refused(&c.text, &c.expression, "its value is NULL"));
    }
    let wrong_type = || {
        refused(
            &c.text,
            &c.expression,
            &format!(
                "its value {value} of type {} names no version",
                value.data_type()
            ),
        )
    };
    match c.kind {
        Kind::Version => match (constant::whole_number(value), constant::text(value)) {
            (Some(id), _) => Ok(id.to_string()),
            (None, Some(name)) => Ok(name.to_string()),
            (None, None) => Err(wrong_type()),
        },
        Kind::Timestamp => {
            if let Some(ms) = constant::timestamp_ms(value) {
                // a zone-less timestamp or a date: a wall-clock time in the session's zone
                let ms = scalar_ms(value, ms, zone).ok_or_else(wrong_type)?;
                return Ok(format_ms(ms));
            }
            if let Some(seconds) = constant::whole_number(value) {
                return seconds_as_time(&c.text, seconds);
            }
            if let Some(ms) = fractional_seconds_ms(value) {
                return Ok(format_ms(ms));
            }
            match constant::text(value) {
                Some(s) => timestamp(s, zone),
                None => Err(wrong_type()),
            }
        }
    }
}

/// A table name that names a version (`"t@dev"`, `ns.t.branch_dev`) with a time-travel
/// clause too: refused, as Spark refuses it ("Cannot do time-travel based on both table
/// identifier and AS OF"); taking either version would read other rows than asked for.
fn versioned_twice(name: &str) -> Error {
    Error::invalid_argument(format!(
        "'{name}' already names a version of the table: it cannot also take a VERSION AS OF \
         or TIMESTAMP AS OF clause (time travel either in the name or with the clause)"
    ))
}

/// A clause with no value after `AS OF`.
fn no_value(clause: &str) -> Error {
    Error::invalid_argument(format!("{clause} takes a value: {VALUES}"))
}

/// Clause `clause` whose value `expression` is refused for `why`.
fn refused(clause: &str, expression: &str, why: &str) -> Error {
    Error::invalid_argument(format!(
        "{clause} {expression}: {why}; {clause} takes {VALUES}"
    ))
}

/// What a time-travel clause takes, for messages.
const VALUES: &str = "a literal or a constant expression (e.g. now() - INTERVAL '1' HOUR): \
                      a snapshot id or a branch or tag name for VERSION AS OF, a timestamp \
                      (or seconds since the Unix epoch) for TIMESTAMP AS OF";

/// A `TIMESTAMP AS OF` string as the `@` name's time (in the session's zone `zone`, UTC
/// without one, when it names no zone: module `session_zone`).
fn timestamp(text: &str, zone: Option<&Tz>) -> Result<String> {
    timestamp_text_ms(text, zone).map(format_ms).ok_or_else(|| {
        Error::invalid_argument(format!(
            "TIMESTAMP AS OF '{text}' is not a timestamp (e.g. '2026-01-01 10:00:00', \
                 '2026-01-01T10:00:00+02:00')"
        ))
    })
}

/// The edits for `ns.t.branch_x` and its kin (see the module docs): dotted names of at
/// least three parts whose last part has a version prefix and whose other parts name an
/// Iceberg table. The names they rewrite go to `rewritten`.
async fn identifier_edits(
    ctx: &SessionContext,
    toks: &[Tok],
    quote: char,
    rewritten: &mut Vec<Rewritten>,
) -> Result<Vec<Edit>> {
    let mut edits = Vec::new();
    let normalize = ctx
        .state()
        .config_options()
        .sql_parser
        .enable_ident_normalization;
    for parts in super::tokens::dotted_names(toks) {
        let k = parts[parts.len() - 1];
        // `a.b.f(` is a function call, but `INSERT INTO ns.t.branch_dev (id, …)` names
        // a table followed by its column list
        let after_into = parts[0]
            .checked_sub(1)
            .and_then(|p| toks.get(p))
            .is_some_and(|t| {
                is_keyword(&t.token, "INTO")
                    || is_keyword(&t.token, "OVERWRITE")
                    || is_keyword(&t.token, "TABLE")
            });
        let call = toks.get(k + 1).is_some_and(|t| t.token == Token::LParen) && !after_into;
        if parts.len() < 3 || call {
            continue;
        }
        let words = word_values(toks, &parts, normalize);
        let Some((last, table)) = words.split_last() else {
            continue;
        };
        let Some(version) = version_of(last)? else {
            continue;
        };
        if !super::iceberg_table_exists(ctx, table).await? {
            continue;
        }
        let table_tok = parts[parts.len() - 2];
        edits.push(Edit {
            range: toks[table_tok].start..toks[k].end,
            text: versioned(&toks[table_tok], &version, quote),
        });
        rewritten.push(Rewritten {
            parts: words.clone(),
            first: parts[0],
            last: k,
        });
    }
    Ok(edits)
}

/// The words of the tokens at `parts` (each a word), unquoted ones lowercased when
/// `normalize` (DataFusion's `enable_ident_normalization`).
pub(super) fn word_values(toks: &[Tok], parts: &[usize], normalize: bool) -> Vec<String> {
    parts
        .iter()
        .filter_map(|&p| match &toks[p].token {
            Token::Word(w) if w.quote_style.is_none() && normalize => Some(w.value.to_lowercase()),
            Token::Word(w) => Some(w.value.clone()),
            _ => None,
        })
        .collect()
}

/// The index of the first word of the dotted name whose last word is at `last`.
fn dotted_start(toks: &[Tok], last: usize) -> usize {
    let mut first = last;
    while first >= 2
        && toks[first - 1].token == Token::Period
        && matches!(toks[first - 2].token, Token::Word(_))
    {
        first -= 2;
    }
    first
}

/// The indexes of the words of the dotted name from `first` to `last`.
fn dotted_parts(first: usize, last: usize) -> Vec<usize> {
    (first..=last).step_by(2).collect()
}

/// Whether the name starting at token `first` stands where a statement reads a table's
/// rows (see the module docs): not a DDL or `INSERT` target.
pub(super) fn reads_rows_at(toks: &[Tok], first: usize) -> bool {
    let Some(before) = first.checked_sub(1).map(|p| &toks[p].token) else {
        return false;
    };
    if *before == Token::Comma {
        return true;
    }
    if is_keyword(before, "INTO") {
        return first
            .checked_sub(2)
            .is_some_and(|p| is_keyword(&toks[p].token, "MERGE"));
    }
    ["FROM", "JOIN", "UPDATE", "USING"]
        .iter()
        .any(|k| is_keyword(before, k))
}

/// Whether the table name ending at token `last` is followed by an alias (`AS a`, or a
/// word that is no keyword ending a table reference).
pub(super) fn has_alias(toks: &[Tok], last: usize) -> bool {
    match toks.get(last + 1).map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_some() => true,
        Some(Token::Word(w)) => !RESERVED_FOR_TABLE_ALIAS.contains(&w.keyword),
        _ => false,
    }
}

/// The edits that keep Spark's qualifiers of the `rewritten` tables (see the module
/// docs): an alias after each one that reads rows and has none, and each column
/// qualified by two or more trailing parts of its name qualified by the alias instead.
fn qualifier_edits(
    toks: &[Tok],
    quote: char,
    normalize: bool,
    rewritten: &[Rewritten],
) -> Vec<Edit> {
    let quoted = |name: &str| {
        let doubled = format!("{quote}{quote}");
        format!("{quote}{}{quote}", name.replace(quote, &doubled))
    };
    // the qualifiers of the statement's other tables (the last part of each name where
    // rows are read), which an alias must not repeat
    let mut taken: Vec<String> = Vec::new();
    let mut names: Vec<Vec<usize>> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if !matches!(toks[i].token, Token::Word(_)) || (i > 0 && toks[i - 1].token == Token::Period)
        {
            i += 1;
            continue;
        }
        let mut k = i;
        while toks.get(k + 1).is_some_and(|t| t.token == Token::Period)
            && toks
                .get(k + 2)
                .is_some_and(|t| matches!(t.token, Token::Word(_)))
        {
            k += 2;
        }
        let parts = dotted_parts(i, k);
        let ours = rewritten.iter().any(|r| r.first == i);
        if !ours
            && reads_rows_at(toks, i)
            && toks.get(k + 1).is_none_or(|t| t.token != Token::LParen)
        {
            let name = word_values(toks, &parts, normalize);
            if let Some(last) = name.last() {
                taken.push(last.clone());
            }
        }
        if !ours {
            names.push(parts);
        }
        i = k + 1;
    }
    let mut edits = Vec::new();
    for r in rewritten {
        let Some(alias) = r.parts.last() else {
            continue;
        };
        // another unaliased version of a table of this name (an aliased one takes its
        // alias as its qualifier)
        let repeated = rewritten
            .iter()
            .filter(|o| {
                o.parts.last() == Some(alias)
                    && reads_rows_at(toks, o.first)
                    && !has_alias(toks, o.last)
            })
            .count()
            > 1;
        if !reads_rows_at(toks, r.first)
            || has_alias(toks, r.last)
            || repeated
            || taken.contains(alias)
        {
            continue;
        }
        let at = toks[r.last].end;
        edits.push(Edit {
            range: at..at,
            text: format!(" AS {}", quoted(alias)),
        });
        for parts in &names {
            // a column: at least one part after the qualifier, and no function call
            if toks
                .get(parts[parts.len() - 1] + 1)
                .is_some_and(|t| t.token == Token::LParen)
            {
                continue;
            }
            let written = word_values(toks, parts, normalize);
            let longest = (2..=r.parts.len().min(written.len().saturating_sub(1)))
                .rev()
                .find(|&n| written[..n] == r.parts[r.parts.len() - n..]);
            if let Some(n) = longest {
                edits.push(Edit {
                    range: toks[parts[0]].start..toks[parts[n - 1]].end,
                    text: quoted(alias),
                });
            }
        }
    }
    edits
}

/// The `@` suffix an identifier with a version prefix stands for, `None` for any other.
///
/// Errors: `at_timestamp_`/`snapshot_id_` with no number after it.
pub(super) fn version_of(last: &str) -> Result<Option<String>> {
    let Some(prefix) = VERSION_PREFIXES.iter().find(|p| last.starts_with(**p)) else {
        return Ok(None);
    };
    let rest = &last[prefix.len()..];
    if rest.is_empty() {
        return Ok(None);
    }
    Ok(Some(match *prefix {
        "at_timestamp_" => {
            let ms = rest.parse::<i64>().map_err(|_| {
                Error::invalid_argument(format!(
                    "'{last}': at_timestamp_ takes milliseconds since the Unix epoch"
                ))
            })?;
            format_ms(ms)
        }
        "snapshot_id_" => {
            rest.parse::<i64>().map_err(|_| {
                Error::invalid_argument(format!("'{last}': snapshot_id_ takes a snapshot id"))
            })?;
            rest.to_string()
        }
        _ => rest.to_string(),
    }))
}
