//! Secrets kept out of messages: the user info of a URL (`s3://key:secret@bucket/…`) is
//! shown as `***`, wherever a location is echoed. [`crate::Error`] applies
//! [`redact_userinfo`] to every message, context and source it shows, so no error built
//! from a location a user typed (a path read, a table location, a manifest's file path)
//! can carry one.
//!
//! Source: RFC 3986 §3.2.1 ("Use of the format `user:password` in the userinfo field is
//! deprecated … applications should not render as clear text any data after the first
//! colon"); icefloe shows none of the user info, as a key id names an account.

use std::borrow::Cow;

/// `text` with the user info of every `scheme://userinfo@host` in it replaced by `***`
/// (the authority ends at `/`, `?`, `#`, whitespace, a quote or the end of the text).
/// Azure's `abfs[s]://` and `wasb[s]://` URLs name the container there
/// (`abfss://<container>@<account>.dfs.core.windows.net/…`, no secret): theirs is kept
/// unless it holds a `:` (a password). Text without such a URL is returned as is,
/// unallocated.
pub fn redact_userinfo(text: &str) -> Cow<'_, str> {
    if !text.contains("://") || !text.contains('@') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(i) = rest.find("://") {
        let scheme_len = rest[..i]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .count();
        let scheme = rest[i - scheme_len..i].to_ascii_lowercase();
        let container = matches!(scheme.as_str(), "abfs" | "abfss" | "wasb" | "wasbs");
        let after = &rest[i + 3..];
        let end = after
            .find(|c: char| matches!(c, '/' | '?' | '#' | '\'' | '"' | '`') || c.is_whitespace())
            .unwrap_or(after.len());
        let authority = &after[..end];
        out.push_str(&rest[..i + 3]);
        match authority.rfind('@') {
            Some(at) if scheme_len > 0 && (!container || authority[..at].contains(':')) => {
                out.push_str("***");
                out.push_str(&authority[at..]);
                changed = true;
            }
            _ => out.push_str(authority),
        }
        rest = &after[end..];
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    out.push_str(rest);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::redact_userinfo;

    #[test]
    fn user_info_of_every_url_is_hidden() {
        assert_eq!(
            redact_userinfo("no credentials for 's3://AKIA:SUPERSECRET6@bucket/x.parquet'"),
            "no credentials for 's3://***@bucket/x.parquet'"
        );
        assert_eq!(
            redact_userinfo("a s3a://k@b/p and gs://u:p@c?x=1, then http://h/a@b"),
            "a s3a://***@b/p and gs://***@c?x=1, then http://h/a@b"
        );
        assert_eq!(
            redact_userinfo("file:///tmp/a@b.parquet"),
            "file:///tmp/a@b.parquet"
        );
        // Azure's container is no secret; a password there is
        assert_eq!(
            redact_userinfo("abfss://c@a.dfs.core.windows.net/t and ABFSS://c:pw@a/t"),
            "abfss://c@a.dfs.core.windows.net/t and ABFSS://***@a/t"
        );
        assert!(matches!(
            redact_userinfo("s3://bucket/key"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
