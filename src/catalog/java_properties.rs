//! Catalog config files in the Java properties format (`java.util.Properties.load`), the
//! format Spark, Trino and Iceberg Java tools write and read catalog properties in.
//!
//! A file is a sequence of logical lines. A natural line ending in an odd number of
//! backslashes continues on the next one (that line's leading whitespace dropped). A
//! line whose first non-blank character is `#` or `!` is a comment; blank lines are
//! skipped. The key runs to the first unescaped `=`, `:` or whitespace; the value is the
//! rest, after whitespace and one `=` or `:` (so `k=v`, `k: v` and `k v` are the same).
//! Escapes in keys and values: `\t`, `\n`, `\r`, `\f`, `\uXXXX`, and a backslash before any
//! other character is that character (`http\://host` is `http://host`, as
//! `Properties.store` writes it). A key without a value has the empty value. Unlike Java,
//! whitespace at the end of a value is dropped unless escaped (a stray space after a
//! secret or URI is never meant).

use crate::error::{Error, Result};

/// Whitespace between a key and its value, as Java's `Properties` reads it.
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\u{c}')
}

/// The `(key, value)` pairs of `text`, in file order (a later duplicate key wins when
/// they are collected into a map, as in Java).
///
/// Errors: a malformed `\uXXXX` escape is [`ErrorKind::InvalidData`](crate::ErrorKind)
/// naming `file` and the line it begins on; the line's text is never shown (it may hold
/// a secret).
pub fn parse(text: &str, file: &str) -> Result<Vec<(String, String)>> {
    let mut pairs = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((n, natural)) = lines.next() {
        let line = natural.trim_start_matches(is_blank);
        if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
            continue;
        }
        // join continuation lines into one logical line
        let mut logical = line.to_string();
        while ends_in_odd_backslashes(&logical) {
            logical.pop();
            match lines.next() {
                Some((_, next)) => logical.push_str(next.trim_start_matches(is_blank)),
                None => break,
            }
        }
        let malformed = || {
            Error::invalid_data(format!(
                "catalog config file '{file}', line {}: malformed \\uXXXX escape \
                 (expected four hex digits after \\u)",
                n + 1
            ))
        };
        let (key, value) = split_key(&logical);
        let key = unescape(key).ok_or_else(malformed)?;
        let value = unescape(trim_unescaped_end(value)).ok_or_else(malformed)?;
        pairs.push((key, value));
    }
    Ok(pairs)
}

/// Whether `line` ends in an odd number of backslashes (the last one escapes the line
/// break).
fn ends_in_odd_backslashes(line: &str) -> bool {
    line.chars().rev().take_while(|c| *c == '\\').count() % 2 == 1
}

/// The raw key and raw value of a logical line whose leading whitespace is gone.
fn split_key(line: &str) -> (&str, &str) {
    let mut escaped = false;
    let mut key_end = line.len();
    let mut separator = None;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '=' || c == ':' || is_blank(c) {
            key_end = i;
            separator = Some(c);
            break;
        }
    }
    let key = &line[..key_end];
    let mut rest = &line[key_end..];
    if let Some(sep) = separator {
        rest = &rest[sep.len_utf8()..];
        if is_blank(sep) {
            rest = rest.trim_start_matches(is_blank);
            if let Some(after) = rest.strip_prefix(['=', ':']) {
                rest = after;
            }
        }
    }
    (key, rest.trim_start_matches(is_blank))
}

/// `value` without trailing whitespace, except an escaped one (`a\ `).
fn trim_unescaped_end(value: &str) -> &str {
    let mut end = value.len();
    while let Some(c) = value[..end].chars().next_back() {
        if !is_blank(c) {
            break;
        }
        let before = &value[..end - c.len_utf8()];
        if ends_in_odd_backslashes(before) {
            break;
        }
        end -= c.len_utf8();
    }
    &value[..end]
}

/// `raw` with its escapes read; `None` for a malformed `\uXXXX`.
fn unescape(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                if hex.len() != 4 {
                    return None;
                }
                let code = u32::from_str_radix(&hex, 16).ok()?;
                out.push(char::from_u32(code)?);
            }
            Some(other) => out.push(other),
            // a lone backslash at the very end (a continuation with no next line)
            None => {}
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> Vec<(String, String)> {
        parse(text, "t.properties").unwrap()
    }

    fn pair(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    #[test]
    fn separators_comments_and_blank_lines() {
        assert_eq!(
            pairs("# c\n! also a comment\n\n  a=1\nb: 2\nc 3\nd = 4\ne\t:\t5\nf\ng=\n"),
            vec![
                pair("a", "1"),
                pair("b", "2"),
                pair("c", "3"),
                pair("d", "4"),
                pair("e", "5"),
                pair("f", ""),
                pair("g", ""),
            ]
        );
        // only the first separator splits: the rest is the value
        assert_eq!(
            pairs("uri=http://h:8181?warehouse=w\ncredential: id:secret=x\n"),
            vec![
                pair("uri", "http://h:8181?warehouse=w"),
                pair("credential", "id:secret=x"),
            ]
        );
        // a '#' after the start of a line is part of the value
        assert_eq!(pairs("k=a#b\n"), vec![pair("k", "a#b")]);
    }

    #[test]
    fn escapes_as_properties_store_writes_them() {
        assert_eq!(
            pairs(
                "uri=http\\://127.0.0.1\\:8181/api\nheader.X\\=Y=v\\=w\nk\\ ey=a\\tb\\u00e9\\\\\n"
            ),
            vec![
                pair("uri", "http://127.0.0.1:8181/api"),
                pair("header.X=Y", "v=w"),
                pair("k ey", "a\tbé\\"),
            ]
        );
        // an escaped trailing space stays, an unescaped one goes
        assert_eq!(
            pairs("a=x\\ \nb=y  \n"),
            vec![pair("a", "x "), pair("b", "y")]
        );
    }

    #[test]
    fn continuation_lines() {
        assert_eq!(
            pairs("uri=http://h/\\\n    api/\\\n\tcatalog\nnext=1\nodd=a\\\\\nz=2\n"),
            vec![
                pair("uri", "http://h/api/catalog"),
                pair("next", "1"),
                pair("odd", "a\\"),
                pair("z", "2"),
            ]
        );
        // a '#' at the start of a continuation line is part of the value
        assert_eq!(pairs("k=a\\\n#b\n"), vec![pair("k", "a#b")]);
        // a continuation on the last line ends the value
        assert_eq!(pairs("k=a\\"), vec![pair("k", "a")]);
    }

    #[test]
    fn malformed_unicode_escape_names_the_line_not_the_value() {
        let err = parse(
            "type=rest\ncredential=id:TOPSECRET\\u12\n",
            "lake.properties",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("'lake.properties', line 2: malformed \\uXXXX escape"),
            "{err}"
        );
        assert!(!err.contains("TOPSECRET"), "{err}");
    }
}
