//! The pattern of Spark's `SHOW NAMESPACES|TABLES … [LIKE] 'pattern'`, as Spark 3.5's
//! `StringUtils.filterPattern` reads it (the SQL reference, "SHOW DATABASES": "Except for
//! `*` and `|` character, the pattern works like a regular expression. `*` alone matches
//! 0 or more characters and `|` is used to separate multiple different regular
//! expressions, any of which can match. The leading and trailing blanks are trimmed in
//! the input pattern before processing. The pattern match is case-insensitive."):
//!
//! - the pattern is trimmed, then split at each `|` into alternatives;
//! - in each alternative every `*` becomes `.*` (also one after a `\` or another
//!   quantifier's operand, as Spark's `replaceAll("\\*", ".*")` does), and the rest is a
//!   regular expression that must match the whole name, case-insensitively;
//! - an alternative that is not a valid regular expression matches nothing (Spark skips
//!   it on `PatternSyntaxException`), so `'a['` lists nothing and is no error.
//!
//! The regular expressions are the `regex` crate's, whose syntax is Java's for what a
//! name pattern uses (`.`, `?`, `+`, `[a-c]`; a `|` always splits alternatives, also
//! inside `(…)`, as in Spark). One difference: its case-insensitive match folds all Unicode
//! letters, Java's `(?i)` ASCII letters only (`'É*'` matches `é…` here, not in Spark).

use regex::{Regex, RegexBuilder};

/// A `SHOW … LIKE` pattern, compiled once for the names of one statement.
pub(super) struct ShowPattern {
    alternatives: Vec<Regex>,
}

impl ShowPattern {
    /// The pattern as Spark reads it (see the module docs); never an error: an invalid
    /// alternative matches nothing.
    pub(super) fn new(pattern: &str) -> Self {
        let alternatives = pattern
            .trim()
            .split('|')
            .filter_map(|alternative| {
                let regex = alternative.replace('*', ".*");
                RegexBuilder::new(&format!("^(?:{regex})$"))
                    .case_insensitive(true)
                    .build()
                    .ok()
            })
            .collect();
        Self { alternatives }
    }

    /// Whether `name` matches any alternative of the pattern as a whole.
    pub(super) fn matches(&self, name: &str) -> bool {
        self.alternatives.iter().any(|r| r.is_match(name))
    }
}

#[cfg(test)]
mod tests {
    use super::ShowPattern;

    fn matching<'a>(pattern: &str, names: &[&'a str]) -> Vec<&'a str> {
        let p = ShowPattern::new(pattern);
        names.iter().copied().filter(|n| p.matches(n)).collect()
    }

    /// The examples of Spark's reference (`SHOW DATABASES LIKE 'pay*'`, `SHOW TABLES
    /// LIKE 'sam*|suj'`) and the regular-expression rest of a pattern.
    #[test]
    fn patterns_match_as_in_spark() {
        let names = [
            "default",
            "payments_db",
            "payroll_db",
            "sam",
            "sam1",
            "suj",
            "Suj2",
        ];
        assert_eq!(matching("pay*", &names), ["payments_db", "payroll_db"]);
        assert_eq!(matching(" sam*|suj ", &names), ["sam", "sam1", "suj"]);
        // the whole name, case-insensitively
        assert_eq!(matching("SUJ", &names), ["suj"]);
        assert_eq!(matching("suj*", &names), ["suj", "Suj2"]);
        assert_eq!(matching("pay", &names), Vec::<&str>::new());
        // a regular expression but for `*` and `|`: `.` is any character
        assert_eq!(matching("sa.", &names), ["sam"]);
        assert_eq!(matching("pay[a-m]*", &names), ["payments_db"]);
        // `%` and `_` are no wildcards (SQL's LIKE is not Spark's SHOW pattern)
        assert_eq!(matching("pay%", &names), Vec::<&str>::new());
        // an invalid alternative matches nothing; the others still match
        assert_eq!(matching("sam[|suj", &names), ["suj"]);
        assert_eq!(matching("*", &names).len(), names.len());
    }
}
