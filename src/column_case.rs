//! What a column name missing from a table may have meant: a column of the same name in
//! another case.
//!
//! DataFusion lowercases unquoted identifiers (`datafusion.sql_parser.enable_ident_normalization`,
//! as PostgreSQL and Trino do) and icefloe matches the result to an Iceberg table's
//! top-level column names exactly, as Iceberg Java's `Schema.findField` does. Spark
//! resolves names ignoring case (`spark.sql.caseSensitive=false`), so a table Spark made
//! with `` `Msg` `` has a column `Msg` that `Msg` (read `msg`) does not find here; only
//! `"Msg"` does. Every "no column" error icefloe raises for a top-level name says so
//! through [`other_case_note`].

/// The note for an error about column `looked_up` (the name as it was looked up, after
/// lowercasing), when `columns` (the table's top-level column names) has none of that
/// name but one equal to it ignoring case: `the table has a column "Msg": unquoted names
/// are lowercased, so write it quoted, "Msg"`. `None` when a column has exactly that name
/// or none matches ignoring case. Several matches (`Msg` and `MSG`) are all named.
pub(crate) fn other_case_note<'a>(
    looked_up: &str,
    columns: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let mut matches = vec![];
    for column in columns {
        if column == looked_up {
            return None;
        }
        if column.to_lowercase() == looked_up.to_lowercase() {
            matches.push(format!("\"{}\"", column.replace('"', "\"\"")));
        }
    }
    match matches.as_slice() {
        [] => None,
        [one] => Some(format!(
            "the table has a column {one}: unquoted names are lowercased, so write it \
             quoted, {one}"
        )),
        several => Some(format!(
            "the table has columns {}: unquoted names are lowercased, so write the one \
             meant quoted",
            several.join(", ")
        )),
    }
}

/// `e` with [`other_case_note`] appended when it has one for the first part of any of
/// `paths` (a top-level column and the fields inside it).
pub(crate) fn with_other_case_note<'a>(
    e: crate::error::Error,
    paths: impl IntoIterator<Item = &'a [String]>,
    columns: &[&str],
) -> crate::error::Error {
    let note = paths
        .into_iter()
        .filter_map(|path| path.first())
        .find_map(|first| other_case_note(first, columns.iter().copied()));
    match note {
        Some(note) => e.with_note(note),
        None => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_column_of_another_case_only() {
        assert_eq!(
            other_case_note("msg", ["ID", "Msg"]).as_deref(),
            Some(
                "the table has a column \"Msg\": unquoted names are lowercased, so write it \
                 quoted, \"Msg\""
            )
        );
        assert_eq!(other_case_note("msg", ["msg", "Msg"]), None);
        assert_eq!(other_case_note("nope", ["Msg"]), None);
        assert_eq!(
            other_case_note("msg", ["Msg", "MSG"]).as_deref(),
            Some(
                "the table has columns \"Msg\", \"MSG\": unquoted names are lowercased, so \
                 write the one meant quoted"
            )
        );
        assert_eq!(
            other_case_note("a\"b", ["A\"B"]).as_deref(),
            Some(
                "the table has a column \"A\"\"B\": unquoted names are lowercased, so write \
                 it quoted, \"A\"\"B\""
            )
        );
    }
}
